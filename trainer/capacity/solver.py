"""The capacity model of design.md: every formula written once, evaluated two ways.

Each formula is a small Python function over a namespace `v` (the deployment's inputs and the
other formulas) and an `ops` table (floor, ceil, max, min). Called with exact `Fraction`s it
gives the reference numbers, quickly and without sympy; called with sympy symbols it gives the
symbolic expression (`expression()`), used for the `:formula` view and checked against the
exact evaluation by a property test. sympy is imported only when a symbolic form is asked for.

Wrong paths (misconceptions) are the same formulas with one assumption changed: a changed input
(query heads for KV heads, K and V counted once, no reserve...) or, for `per-gpu-vs-total`, a
figure read per GPU where the whole was meant (or the other way round).
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from fractions import Fraction
from types import MappingProxyType, SimpleNamespace
from typing import Any, Literal

from trainer.capacity import serving_formulas as serving
from trainer.errors import DoesNotFit, InvalidInput, UnknownName

GB = 10**9
TB = 10**12
GIB = 2**30

DTYPE_BYTES: dict[str, Fraction] = {
    "fp32": Fraction(4),
    "bf16": Fraction(2),
    "fp16": Fraction(2),
    "fp8": Fraction(1),
    "int8": Fraction(1),
    "int4": Fraction(1, 2),
}
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8")
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")

# Upper bounds on every input: a user can type any number, the solver only computes sane ones.
_LIMITS: dict[str, int] = {
    "layers": 10_000,
    "heads": 100_000,
    "kv_heads": 100_000,
    "head_dim": 100_000,
    "hidden": 10_000_000,
    "vocab": 100_000_000,
    "mla_latent": 1_000_000,
    "mla_rope": 1_000_000,
    "gpus": 1_000_000,
    "hbm_gb": 1_000_000,
    "bandwidth_tbs": 1_000_000,
    "context": 1_000_000_000,
    "block_size": 1_000_000,
    "batch": 1_000_000_000,
    "window": 1_000_000_000,
    "prompt_tokens": 1_000_000_000,
    "params": 10**15,
    "active_params": 10**15,
    "weights_gb": 10**9,
    "reserve_gb": 1_000_000,
    "experts": 100_000,
    "experts_per_token": 100_000,
    "tflops": 1_000_000,
    "prefix_tokens": 1_000_000_000,
    "measured_step_ms": 10**9,
    "attention_params": 10**15,
    "reply_seconds": 10**6,
    **serving.LIMITS,
}


@dataclass(frozen=True)
class Deployment:
    """Every input of the capacity model: a model shape on some GPUs, served one way.

    Sizes in GB are decimal (10^9 B) as vendors and the seeds use them; `gb_bytes` exists so
    that the `gb-gib` wrong path can be evaluated by changing it.
    """

    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    hbm_gb: Fraction
    bandwidth_tbs: Fraction
    context: int
    hidden: int | None = None
    # The vocabulary, for counting prefill FLOPs as the measured rate did: a prompt token
    # multiplies the layers' weights, not the embedding table (a lookup) nor the LM head (run
    # once per sequence, on the last token). None: 2 × all parameters per token.
    vocab: int | None = None
    tied_embeddings: bool = False  # the LM head is the embedding table (counted once in params)
    params: Fraction | None = None
    weights_gb: Fraction | None = None  # a stated size at `native_weights_dtype`
    native_weights_dtype: str = "bf16"
    active_params: Fraction | None = None
    attention: str = "gqa"  # "gqa" (also MHA and MQA) or "mla"
    mla_latent: int = 0
    mla_rope: int = 0
    window: int | None = None
    windowed_layers: int = 0
    gpus: int = 1
    weights_dtype: str = "bf16"
    kv_dtype: str = "bf16"
    utilization: Fraction = Fraction(1)
    reserve_gb: Fraction = Fraction(0)  # per GPU
    block_size: int = 1
    batch: int | None = None  # None: run at the maximum concurrency
    prompt_tokens: int | None = None  # the prompt part of `context`, for prompt-only-context
    experts: int | None = None  # MoE: routed experts per layer
    experts_per_token: int | None = None  # MoE: experts each token is routed to
    tflops: Fraction | None = None  # dense bf16 TFLOPS per GPU, for prefill and the crossover
    prefix_tokens: int | None = None  # a prompt prefix every sequence shares (prefix caching)
    measured_step_ms: Fraction | None = None  # a decode step measured on real hardware
    # Data-parallel attention: every GPU keeps a whole copy of the attention weights
    # (`attention_params` of them) and the whole KV of its own sequences, none of the others'.
    dp_attention: int = 0
    attention_params: Fraction | None = None
    # A conversation's cycle: a reply being generated (in flight), then the user reading and
    # typing (nothing in flight), for Little's law between requests and open conversations.
    reply_seconds: Fraction | None = None
    # Serving-system inputs (trainer/capacity/serving_formulas.py: disaggregation, speculation,
    # chunked prefill, offload, Little's law, hybrid models).
    link_gbs: Fraction | None = None  # a KV transfer link, GB/s in one direction
    output_tokens: int | None = None  # tokens generated per request
    long_prompt_tokens: int | None = None  # a long prompt arriving while others decode
    tpot_ms: Fraction | None = None  # the time-per-output-token target
    arrival_rate: Fraction | None = None  # requests per second
    think_seconds: Fraction | None = None  # a user's pause between a reply and the next turn
    cpu_kv_gb: Fraction | None = None  # host memory set aside for parked KV
    spec_tokens: int | None = None  # k tokens drafted per verification step
    acceptance_rate: Fraction | None = None  # α, the chance one drafted token is accepted
    draft_params: Fraction | None = None
    draft_layers: int | None = None
    draft_kv_heads: int | None = None
    draft_head_dim: int | None = None
    attention_layers: int | None = None  # hybrid: layers with a KV cache (the rest recurrent)
    state_elements: int | None = None  # hybrid: values one recurrent layer keeps per sequence
    # Assumptions the wrong paths change; the right values are the defaults.
    kv_factor: int = 2
    mla_factor: int = 1
    gb_bytes: int = GB
    subtract_weights: int = 1
    read_weights: int = 1
    kv_bytes_override: Fraction | None = None
    link_scale: int = 1  # 8: a link's Gb/s read as GB/s
    swap_directions: int = 2
    draft_cost: int = 1
    accept_all: int = 0
    decode_in_mixed_step: int = 1
    mixed_step_additive: int = 0  # 1: a mixed step as decode step + chunk, not max()
    think_in_flight: int = 0

    def changed(self, **changes: Any) -> Deployment:
        return dataclasses.replace(self, **changes)

    @property
    def kv_bytes_per_element(self) -> Fraction:
        if self.kv_bytes_override is not None:
            return self.kv_bytes_override
        return DTYPE_BYTES[self.kv_dtype]

    @property
    def weight_bytes_per_param(self) -> Fraction:
        return DTYPE_BYTES[self.weights_dtype]

    def _validate_vocab(self) -> None:
        assert self.vocab is not None
        if self.hidden is None:
            raise InvalidInput("vocab needs hidden: the embedding table is vocab × hidden")
        active = self.params if self.active_params is None else self.active_params
        tables = self.vocab * self.hidden * (1 if self.tied_embeddings else 2)
        if active is not None and tables >= active:
            raise InvalidInput(f"vocab {self.vocab} × hidden {self.hidden} leaves no parameters "
                               "for the layers: check vocab, hidden and params")

    def validate(self) -> Deployment:
        """Raise InvalidInput naming the first value no real deployment could have."""
        for name in ("layers", "heads", "kv_heads", "head_dim", "gpus", "context", "block_size"):
            _require_positive_int(name, getattr(self, name))
        for name in ("hbm_gb", "bandwidth_tbs"):
            _require_positive(name, getattr(self, name))
        for name in ("hidden", "batch", "window", "prompt_tokens", "vocab"):
            value = getattr(self, name)
            if value is not None:
                if name == "batch":
                    _require_int_at_least(name, value, 0)
                else:
                    _require_positive_int(name, value)
        for name in ("params", "weights_gb", "active_params", "tflops", "measured_step_ms",
                     "attention_params", "reply_seconds"):
            value = getattr(self, name)
            if value is not None:
                _require_positive(name, value)
        for name in ("experts", "experts_per_token", "prefix_tokens"):
            value = getattr(self, name)
            if value is not None:
                _require_positive_int(name, value)
        if (self.experts is None) != (self.experts_per_token is None):
            raise InvalidInput("an MoE model needs both experts and experts_per_token")
        if self.experts is not None and self.experts_per_token is not None:
            if self.experts_per_token > self.experts:
                raise InvalidInput(
                    f"experts_per_token {self.experts_per_token} exceeds experts {self.experts}"
                )
            if self.active_params is None or self.params is None:
                raise InvalidInput("an MoE model needs params and active_params")
            if self.active_params > self.params:
                raise InvalidInput("active_params cannot exceed params")
        if self.prefix_tokens is not None and self.prefix_tokens > self.context:
            raise InvalidInput(
                f"prefix_tokens {self.prefix_tokens} exceeds the context {self.context}: the "
                "shared prefix is part of each sequence's context"
            )
        if self.params is None and self.weights_gb is None:
            raise InvalidInput("the weight size is unknown: give --params or --weights-gb")
        if self.vocab is not None:
            self._validate_vocab()
        if self.think_seconds is not None:
            _require_int_at_least("think_seconds", self.think_seconds, 0, integral=False)
        if self.dp_attention not in (0, 1):
            raise InvalidInput(f"dp_attention must be 0 or 1, got {_plain(self.dp_attention)}")
        if self.dp_attention and self.attention_params is None:
            raise InvalidInput("data-parallel attention copies the attention weights to every "
                               "GPU: give attention_params (or a model preset that has it)")
        _require_int_at_least("reserve_gb", self.reserve_gb, 0, integral=False)
        if not 0 < self.utilization <= 1:
            raise InvalidInput(
                f"utilization {float(self.utilization):g} is outside (0, 1]: "
                "give the fraction of HBM the server may use, e.g. 0.9"
            )
        if self.kv_dtype not in KV_DTYPES:
            raise InvalidInput(
                f"unknown KV dtype {self.kv_dtype!r}: use one of {', '.join(KV_DTYPES)}"
            )
        for name in ("weights_dtype", "native_weights_dtype"):
            if getattr(self, name) not in WEIGHT_DTYPES:
                raise InvalidInput(
                    f"unknown weights dtype {getattr(self, name)!r}: "
                    f"use one of {', '.join(WEIGHT_DTYPES)}"
                )
        if self.attention not in ("gqa", "mla"):
            raise InvalidInput(f"unknown attention kind {self.attention!r}: use gqa or mla")
        if self.attention == "mla":
            _require_positive_int("mla_latent", self.mla_latent)
            _require_int_at_least("mla_rope", self.mla_rope, 0)
        elif self.kv_heads > self.heads:
            raise InvalidInput(
                f"kv_heads {self.kv_heads} exceeds heads {self.heads}: "
                "a model has at most one KV head per query head"
            )
        elif self.kv_heads % self.gpus and self.gpus % self.kv_heads:
            divisors = [n for n in range(1, min(self.kv_heads, 64) + 1) if self.kv_heads % n == 0]
            raise InvalidInput(
                f"{self.kv_heads} KV heads cannot be shared evenly by {self.gpus} GPUs: give "
                f"--gpus {' or '.join(map(str, divisors[:6]))} (each GPU holds a share of the "
                f"heads) or a multiple of {self.kv_heads} (each holds a copy)"
            )
        if not 0 <= self.windowed_layers <= self.layers:
            raise InvalidInput(
                f"windowed_layers {self.windowed_layers} must be between 0 and layers "
                f"({self.layers})"
            )
        if self.windowed_layers and self.window is None:
            raise InvalidInput("windowed_layers is set but window is not: give the window size")
        if self.prompt_tokens is not None and self.prompt_tokens > self.context:
            raise InvalidInput(
                f"prompt_tokens {self.prompt_tokens} exceeds the context {self.context}: "
                "the live context includes the prompt"
            )
        serving.validate(self)
        return self


def _too_large(name: str, value: Fraction | int) -> None:
    limit = _LIMITS.get(name)
    if limit is not None and value > limit:
        raise InvalidInput(f"{name} {value} is larger than any real deployment: at most {limit:,}")


def _require_positive(name: str, value: Fraction | int) -> None:
    if value <= 0:
        raise InvalidInput(f"{name} must be greater than 0, got {_plain(value)}")
    _too_large(name, value)


def _require_positive_int(name: str, value: Fraction | int) -> None:
    _require_int_at_least(name, value, 1)


def _require_int_at_least(
    name: str, value: Fraction | int, least: int, *, integral: bool = True
) -> None:
    if integral and Fraction(value).denominator != 1:
        raise InvalidInput(f"{name} must be a whole number, got {_plain(value)}")
    if value < least:
        raise InvalidInput(f"{name} must be at least {least}, got {_plain(value)}")
    _too_large(name, value)


def _plain(value: Fraction | int) -> str:
    fraction = Fraction(value)
    return str(fraction.numerator) if fraction.denominator == 1 else f"{float(fraction):g}"


# ---------------------------------------------------------------------------------------------
# The formulas


@dataclass(frozen=True)
class Formula:
    name: str
    label: str
    unit: str  # display unit of the result: B, tokens, sequences, s, tokens/s, FLOP, "" (count)
    compute: Callable[[Any, Any], Any]
    needs: tuple[str, ...] = ()  # optional inputs this formula cannot do without


FORMULAS: dict[str, Formula] = {}

# Inputs a drill step may ask for directly (the shape questions), with their units.
INPUT_UNITS: dict[str, str] = {
    "layers": "",
    "heads": "",
    "kv_heads": "",
    "head_dim": "",
    "hidden": "",
    "gpus": "",
    "context": "tokens",
    "kv_bytes_per_element": "B",
    "weight_bytes_per_param": "B",
    **serving.INPUT_UNITS,
}


def _formula(
    name: str, label: str, unit: str, needs: tuple[str, ...] = ()
) -> Callable[[Callable[[Any, Any], Any]], Any]:
    def register(compute: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        FORMULAS[name] = Formula(name, label, unit, compute, needs)
        return compute

    return register


@_formula("kv_width", "d_kv (KV width per layer)", "")
def _kv_width(v: Any, ops: Any) -> Any:
    if v.attention == "mla":
        return v.mla_latent + v.mla_rope
    return v.kv_heads * v.head_dim


@_formula("kv_heads_per_gpu", "KV heads per GPU", "")
def _kv_heads_per_gpu(v: Any, ops: Any) -> Any:
    return ops.max(1, v.kv_heads / v.gpus)


@_formula("kv_bytes_per_token_per_gpu", "KV per token, per GPU", "B")
def _kv_bytes_per_token_per_gpu(v: Any, ops: Any) -> Any:
    if v.attention == "mla":  # one latent per layer, no K/V pair, whole on every GPU
        return v.mla_factor * v.kv_layers * v.kv_width * v.kv_bytes_per_element
    # Under DP attention a token's K and V for every head live on the one GPU serving it.
    heads = v.kv_heads if v.dp_attention else v.kv_heads_per_gpu
    return v.kv_factor * v.kv_layers * heads * v.head_dim * v.kv_bytes_per_element


@_formula("kv_bytes_per_token", "KV per token", "B")
def _kv_bytes_per_token(v: Any, ops: Any) -> Any:
    if v.dp_attention:  # one copy, on the GPU that serves the sequence
        return v.kv_bytes_per_token_per_gpu
    return v.gpus * v.kv_bytes_per_token_per_gpu


@_formula("tokens_held_per_sequence", "tokens held per sequence", "tokens")
def _tokens_held(v: Any, ops: Any) -> Any:
    return ops.ceil(v.context / v.block_size) * v.block_size


@_formula("window_tokens_held_per_sequence", "tokens held per window", "tokens")
def _window_tokens_held(v: Any, ops: Any) -> Any:
    if v.window is None:
        return v.tokens_held_per_sequence
    return ops.ceil(ops.min(v.context, v.window) / v.block_size) * v.block_size


@_formula("kv_bytes_per_sequence", "KV per sequence", "B")
def _kv_bytes_per_sequence(v: Any, ops: Any) -> Any:
    if v.windowed_layers == 0:  # a hybrid model's recurrent state comes on top (else 0)
        return (v.kv_bytes_per_token * v.tokens_held_per_sequence
                + v.recurrent_state_bytes_per_sequence)
    per_layer = v.kv_bytes_per_token / v.layers
    full_layers = v.layers - v.windowed_layers
    return per_layer * (
        full_layers * v.tokens_held_per_sequence
        + v.windowed_layers * v.window_tokens_held_per_sequence
    )


@_formula("weights_bytes", "weights", "B")
def _weights_bytes(v: Any, ops: Any) -> Any:
    if v.weights_gb is not None:
        scale = v.weight_bytes_per_param / v.native_bytes_per_param
        return v.weights_gb * v.gb_bytes * scale
    return v.params * v.weight_bytes_per_param


@_formula("replicated_attention_bytes", "attention weights copied by DP attention", "B")
def _replicated_attention_bytes(v: Any, ops: Any) -> Any:
    if not v.dp_attention:
        return 0
    return (v.gpus - 1) * v.attention_params * v.weight_bytes_per_param


@_formula("weights_per_gpu_bytes", "weights on each GPU", "B")
def _weights_per_gpu_bytes(v: Any, ops: Any) -> Any:
    return (v.weights_bytes + v.replicated_attention_bytes) / v.gpus


@_formula("usable_bytes", "usable memory", "B")
def _usable_bytes(v: Any, ops: Any) -> Any:
    return v.gpus * (v.hbm_gb * v.gb_bytes * v.utilization - v.reserve_gb * v.gb_bytes)


@_formula("kv_budget_bytes", "KV budget", "B")
def _kv_budget_bytes(v: Any, ops: Any) -> Any:
    return v.usable_bytes - v.subtract_weights * (v.weights_bytes + v.replicated_attention_bytes)


@_formula("max_tokens", "max tokens", "tokens")
def _max_tokens(v: Any, ops: Any) -> Any:
    return ops.max(0, ops.floor(v.kv_budget_bytes / v.kv_bytes_per_token))


@_formula("max_concurrency", "max sequences", "sequences")
def _max_concurrency(v: Any, ops: Any) -> Any:
    if v.dp_attention:  # each GPU holds whole sequences in its own share of the budget
        per_gpu = ops.floor(v.kv_budget_bytes / v.gpus / v.kv_bytes_per_sequence)
        return v.gpus * ops.max(0, per_gpu)
    return ops.max(0, ops.floor(v.kv_budget_bytes / v.kv_bytes_per_sequence))


@_formula("open_conversations", "open conversations (Little's law)", "sequences",
          needs=("reply_seconds", "think_seconds"))
def _open_conversations(v: Any, ops: Any) -> Any:
    # In flight = arrivals × time in flight; a conversation is in flight only while a reply is
    # generated, so open conversations = in flight × (think + reply) ÷ reply.
    return v.max_concurrency * (v.think_seconds + v.reply_seconds) / v.reply_seconds


@_formula("batch_size", "batch", "sequences")
def _batch_size(v: Any, ops: Any) -> Any:
    return v.max_concurrency if v.batch is None else v.batch


@_formula("bytes_read_per_step", "bytes per step", "B")
def _bytes_read_per_step(v: Any, ops: Any) -> Any:
    return v.read_weights * v.weights_read_per_step + v.batch_size * v.kv_bytes_per_sequence


@_formula("decode_step_seconds", "decode step", "s")
def _decode_step_seconds(v: Any, ops: Any) -> Any:
    return v.bytes_read_per_step / (v.gpus * v.bandwidth_tbs * TB)


@_formula("tokens_per_second", "aggregate", "tokens/s")
def _tokens_per_second(v: Any, ops: Any) -> Any:
    return v.batch_size / v.decode_step_seconds


@_formula("tokens_per_second_per_sequence", "per sequence", "tokens/s")
def _tokens_per_second_per_sequence(v: Any, ops: Any) -> Any:
    return 1 / v.decode_step_seconds


@_formula(
    "batch1_ceiling_tokens_per_second",
    "batch-1 ceiling",
    "tokens/s",
)
def _batch1_ceiling(v: Any, ops: Any) -> Any:
    return v.gpus * v.bandwidth_tbs * TB / v.active_weights_bytes


@_formula("active_weights_bytes", "weights one token uses (MoE: its experts)", "B")
def _active_weights_bytes(v: Any, ops: Any) -> Any:
    if v.experts is None:
        return v.weights_bytes
    return v.weights_bytes * v.active_params / v.params


# Above this batch every expert is all but certainly touched: (1 - k/E)^1024 is negligible, and
# the cap keeps exact arithmetic small.
MOE_BATCH_CAP = 1024


@_formula("weights_read_per_step", "weights a decode step reads", "B")
def _weights_read_per_step(v: Any, ops: Any) -> Any:
    if v.experts is None:
        return v.weights_bytes
    # Expected share of experts that at least one of `batch` tokens is routed to.
    expert_params = (v.params - v.active_params) * v.experts / (v.experts - v.experts_per_token)
    shared_params = v.params - expert_params
    untouched = (1 - v.experts_per_token / v.experts) ** ops.min(v.batch_size, MOE_BATCH_CAP)
    per_param = v.weights_bytes / v.params
    return (shared_params + expert_params * (1 - untouched)) * per_param


@_formula("lm_head_params", "LM head parameters (vocab × hidden)", "")
def _lm_head_params(v: Any, ops: Any) -> Any:
    return 0 if v.vocab is None else v.vocab * v.hidden


@_formula("prompt_token_params", "parameters each prompt token multiplies (the layers')", "")
def _prompt_token_params(v: Any, ops: Any) -> Any:
    # The embedding is a lookup and the LM head runs once per sequence, so neither is charged
    # per prompt token: the count behind the measured 550 TFLOP/s (shared/data/README.md).
    active = v.params if v.active_params is None else v.active_params
    tables = 1 if v.tied_embeddings else 2
    return active - tables * v.lm_head_params


@_formula("prefill_flops", "FLOPs to prefill one sequence", "FLOP")
def _prefill_flops(v: Any, ops: Any) -> Any:
    attention = 2 * v.layers * v.heads * v.head_dim * v.context**2
    return 2 * v.prompt_token_params * v.context + 2 * v.lm_head_params + attention


@_formula("prefill_seconds", "prefill time at peak dense TFLOPS", "s", needs=("tflops",))
def _prefill_seconds(v: Any, ops: Any) -> Any:
    return v.prefill_flops / (v.gpus * v.tflops * TB)


@_formula("decode_flops_per_step", "FLOPs of one decode step", "FLOP")
def _decode_flops_per_step(v: Any, ops: Any) -> Any:
    active = v.params if v.active_params is None else v.active_params
    return 2 * active * v.batch_size


@_formula("crossover_batch", "batch where decode turns compute-bound", "sequences",
          needs=("tflops",))
def _crossover_batch(v: Any, ops: Any) -> Any:
    active = v.params if v.active_params is None else v.active_params
    return v.tflops * v.weights_bytes / (2 * active * v.bandwidth_tbs)


@_formula("shared_prefix_tokens", "prefix tokens stored once (whole blocks)", "tokens")
def _shared_prefix_tokens(v: Any, ops: Any) -> Any:
    prefix = 0 if v.prefix_tokens is None else v.prefix_tokens
    return ops.floor(prefix / v.block_size) * v.block_size


@_formula("max_concurrency_with_prefix", "sequences that fit with the prefix shared", "sequences")
def _max_concurrency_with_prefix(v: Any, ops: Any) -> Any:
    own_tokens = ops.ceil((v.context - v.shared_prefix_tokens) / v.block_size) * v.block_size
    shared = v.kv_bytes_per_token * v.shared_prefix_tokens
    return ops.max(0, ops.floor((v.kv_budget_bytes - shared) / (v.kv_bytes_per_token * own_tokens)))


@_formula("num_blocks", "KV blocks the budget holds", "")
def _num_blocks(v: Any, ops: Any) -> Any:
    return ops.max(0, ops.floor(v.kv_budget_bytes / (v.kv_bytes_per_token * v.block_size)))


@_formula("blocks_per_sequence", "blocks one sequence holds", "")
def _blocks_per_sequence(v: Any, ops: Any) -> Any:
    return ops.ceil(v.context / v.block_size)


@_formula("engine_max_concurrency", "vLLM's 'Maximum concurrency' (blocks ÷ blocks per request)",
          "")
def _engine_max_concurrency(v: Any, ops: Any) -> Any:
    return v.num_blocks / v.blocks_per_sequence


@_formula("block_waste_fraction", "share of a sequence's blocks left empty", "")
def _block_waste_fraction(v: Any, ops: Any) -> Any:
    return (v.tokens_held_per_sequence - v.context) / v.tokens_held_per_sequence


@_formula("achieved_bandwidth_fraction", "measured step against the bandwidth roofline", "",
          needs=("measured_step_ms",))
def _achieved_bandwidth_fraction(v: Any, ops: Any) -> Any:
    return v.decode_step_seconds / (v.measured_step_ms / 1000)


for _spec in serving.FORMULAS:
    FORMULAS[_spec.name] = Formula(_spec.name, _spec.label, _spec.unit, _spec.compute, _spec.needs)

QUANTITIES: tuple[str, ...] = tuple(FORMULAS)


def _exact_floor(x: Fraction) -> Fraction:
    return Fraction(math.floor(x))


def _exact_ceil(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x))


def _exact_step(x: Fraction) -> Fraction:
    return Fraction(1 if x >= 0 else 0)


# `step` is 1 where its argument is at least 0, else 0 (a condition as a factor).
EXACT_OPS = SimpleNamespace(floor=_exact_floor, ceil=_exact_ceil, max=max, min=min,
                            step=_exact_step)


class _Namespace:
    """Inputs and formulas under one name each; each formula is computed once, on demand."""

    def __init__(
        self, inputs: Mapping[str, Any], ops: Any, overrides: Mapping[str, Any] | None = None
    ) -> None:
        self._inputs = inputs
        self._ops = ops
        self._cache: dict[str, Any] = dict(overrides or {})

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        if name in self._cache:
            return self._cache[name]
        if name in FORMULAS:
            value = FORMULAS[name].compute(self, self._ops)
        elif name in self._inputs:
            value = self._inputs[name]
        else:
            raise AttributeError(name)
        self._cache[name] = value
        return value


_INPUT_NAMES = tuple(field.name for field in dataclasses.fields(Deployment))


def _exact_inputs(d: Deployment) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for name in _INPUT_NAMES:
        value = getattr(d, name)
        inputs[name] = Fraction(value) if isinstance(value, int | Fraction) else value
    inputs["kv_bytes_per_element"] = d.kv_bytes_per_element
    inputs["weight_bytes_per_param"] = d.weight_bytes_per_param
    inputs["native_bytes_per_param"] = DTYPE_BYTES[d.native_weights_dtype]
    return inputs


class Solution(Mapping[str, Fraction]):
    """The exact value of every quantity for one deployment, computed on first access."""

    def __init__(
        self, deployment: Deployment, overrides: Mapping[str, Fraction] | None = None
    ) -> None:
        self.deployment = deployment
        self._space = _Namespace(_exact_inputs(deployment), EXACT_OPS, overrides)

    def __getitem__(self, name: str) -> Fraction:
        if name not in FORMULAS:
            raise UnknownName(
                f"unknown quantity {name!r}: use one of {', '.join(QUANTITIES)}"
            )
        for needed in FORMULAS[name].needs:
            if getattr(self.deployment, needed) is None:
                raise InvalidInput(f"{name} needs {needed}: give it (or a preset that has it)")
        value: Fraction = getattr(self._space, name)
        return value

    def _available(self) -> list[str]:
        d = self.deployment
        return [q for q in QUANTITIES if all(getattr(d, n) is not None for n in FORMULAS[q].needs)]

    def __iter__(self) -> Iterator[str]:
        return iter(self._available())

    def __contains__(self, name: object) -> bool:
        return name in self._available()

    def __len__(self) -> int:
        return len(self._available())


def solve(deployment: Deployment) -> Solution:
    """Exact values for a validated deployment; DoesNotFit when the weights alone overflow."""
    solution = Solution(deployment)
    if solution["kv_budget_bytes"] < 0:
        d = deployment
        raise DoesNotFit(
            f"the weights ({_gb(solution['weights_bytes'])}) do not fit in the usable memory "
            f"({_gb(solution['usable_bytes'])} on {d.gpus} GPU{'s' if d.gpus > 1 else ''}): "
            "add GPUs (--gpus), quantize the weights (--weights-dtype), or lower the reserve"
        )
    return solution


def _gb(value: Fraction) -> str:
    return f"{float(value) / GB:,.1f} GB"


def value_of(
    deployment: Deployment, name: str, overrides: Mapping[str, Fraction] | None = None
) -> Fraction:
    """One quantity, without the does-it-fit check (wrong paths may not fit). `overrides`
    replaces quantities by given values, to recompute from a candidate's own earlier answers."""
    return Solution(deployment, overrides)[name]


# ---------------------------------------------------------------------------------------------
# Symbolic form


def expression(name: str, deployment: Deployment) -> Any:
    """The sympy expression of a quantity for this deployment's structure (MLA, windows...)."""
    import sympy  # the only sympy import; paid only for symbolic forms

    if name not in FORMULAS:
        raise UnknownName(f"unknown quantity {name!r}: use one of {', '.join(QUANTITIES)}")
    symbols = symbolic_inputs(deployment)
    ops = SimpleNamespace(floor=sympy.floor, ceil=sympy.ceiling, max=sympy.Max, min=sympy.Min,
                          step=lambda x: sympy.Heaviside(x, 1))
    return getattr(_Namespace(symbols, ops), name)


def _unchanged(x: Any) -> Any:
    return x


# Floors and ceilings left out: the continuous form of a quantity, which a diagnosis inverts.
RELAXED_OPS = SimpleNamespace(floor=_unchanged, ceil=_unchanged, max=max, min=min,
                              step=_exact_step)


def relaxed_value(
    deployment: Deployment, name: str, overrides: Mapping[str, Fraction] | None = None
) -> Fraction:
    """A quantity (or an input) with floors and ceilings left out, exactly; `overrides` sets
    inputs or intermediate quantities (weights_bytes, batch_size) to other values."""
    value: Fraction = getattr(_Namespace(_shared_inputs(deployment), RELAXED_OPS, overrides), name)
    return value


@functools.lru_cache(maxsize=64)
def _shared_inputs(deployment: Deployment) -> Mapping[str, Any]:
    """The exact inputs of a deployment, read-only and kept: a diagnosis evaluates one
    deployment hundreds of times with one input changed."""
    return MappingProxyType(_exact_inputs(deployment))


def expression_in(
    name: str, deployment: Deployment, unknown: str, fixed: Mapping[str, Fraction] | None = None
) -> tuple[Any, Any]:
    """(expression, symbol): the sympy form of `name` as a function of one input or
    intermediate quantity (`unknown`) alone, every other input at this deployment's exact
    value (or at `fixed`), floors and ceilings left out. Built from the formulas, never from
    text."""
    import sympy

    numbers = {
        key: sympy.Rational(value.numerator, value.denominator)
        if isinstance(value, Fraction) else value
        for key, value in _exact_inputs(deployment).items()
    }
    symbol = sympy.Symbol(unknown, positive=True)
    ops = SimpleNamespace(floor=_unchanged, ceil=_unchanged, max=sympy.Max, min=sympy.Min,
                          step=lambda x: sympy.Heaviside(x, 1))
    overrides: dict[str, Any] = {
        key: sympy.Rational(value.numerator, value.denominator)
        for key, value in (fixed or {}).items() if key != unknown
    }
    overrides[unknown] = symbol
    return getattr(_Namespace(numbers, ops, overrides), name), symbol


def symbolic_inputs(deployment: Deployment) -> dict[str, Any]:
    """A sympy symbol for each numeric input; structural choices stay as they are."""
    import sympy

    exact = _exact_inputs(deployment)
    symbols: dict[str, Any] = {}
    for name, value in exact.items():
        structural = name in ("attention", "kv_dtype", "weights_dtype", "native_weights_dtype",
                              "dp_attention", "tied_embeddings")
        if structural or value is None:
            symbols[name] = value
        else:
            symbols[name] = sympy.Symbol(name, positive=True)
    if deployment.windowed_layers == 0:
        symbols["windowed_layers"] = 0
    return symbols


def symbol_values(deployment: Deployment) -> dict[Any, Any]:
    """The substitution that turns `expression()` into this deployment's exact numbers."""
    import sympy

    return {
        sympy.Symbol(name, positive=True): sympy.Rational(value.numerator, value.denominator)
        for name, value in _exact_inputs(deployment).items()
        if isinstance(value, Fraction) and name not in ("dp_attention", "tied_embeddings")
        and not (name == "windowed_layers" and value == 0)
    }


# ---------------------------------------------------------------------------------------------
# Wrong paths


@dataclass(frozen=True)
class WrongPath:
    id: str
    mistake: str  # what the candidate did
    advice: str  # one line on how to avoid it
    change: Callable[[Deployment], Deployment | None]  # None: the path does not apply
    # A second form of the same mistake, where a quantity can make it in two places.
    also: Callable[[Deployment], Deployment | None] | None = None


def _query_heads(d: Deployment) -> Deployment | None:
    if d.attention == "mla" or d.kv_heads == d.heads:
        return None
    return d.changed(kv_heads=d.heads)


def _hidden_for_kv_width(d: Deployment) -> Deployment | None:
    if d.attention == "mla" or d.hidden is None:
        return None
    return d.changed(kv_heads=Fraction(d.hidden, d.head_dim))


def _head_dim_from_hidden(d: Deployment) -> Deployment | None:
    if d.attention == "mla" or d.hidden is None or Fraction(d.hidden, d.heads) == d.head_dim:
        return None
    return d.changed(head_dim=Fraction(d.hidden, d.heads))


def _prompt_only(d: Deployment) -> Deployment | None:
    if d.prompt_tokens is None:
        return None
    return d.changed(context=d.prompt_tokens)


WRONG_PATHS: dict[str, WrongPath] = {
    path.id: path
    for path in (
        WrongPath(
            "query-heads",
            "used the query (attention) heads where the KV heads belong",
            "KV is stored per KV head: with GQA many query heads share one; read kv_heads.",
            _query_heads,
        ),
        WrongPath(
            "forgot-kv-factor-2",
            "counted K and V once instead of twice",
            "Every layer stores a key AND a value vector per KV head: the leading factor is 2.",
            lambda d: None if d.attention == "mla" else d.changed(kv_factor=1),
        ),
        WrongPath(
            "mla-kv-pair",
            "stored the MLA latent twice, as if it were a K and a V",
            "MLA caches one compressed latent (plus its rope part) per layer: no factor 2.",
            lambda d: d.changed(mla_factor=2) if d.attention == "mla" else None,
        ),
        WrongPath(
            "forgot-weights",
            "left the model weights out (of the memory they take, or of the bytes a decode "
            "step reads)",
            "The weights sit in HBM, and every decode step streams them all: budget = usable "
            "memory − weights − reserve; bytes per step = weights + batch × KV per sequence.",
            lambda d: d.changed(subtract_weights=0),
            also=lambda d: d.changed(read_weights=0),
        ),
        WrongPath(
            "forgot-reserve",
            "left out the reserve for activations, workspace and fragmentation",
            "Subtract the runtime's reserve (activations, CUDA graphs, fragmentation) per GPU.",
            lambda d: None if d.reserve_gb == 0 else d.changed(reserve_gb=Fraction(0)),
        ),
        WrongPath(
            "full-hbm",
            "assumed all of HBM is usable",
            "Servers cap memory (gpu_memory_utilization, e.g. 0.9): multiply HBM by it first.",
            lambda d: None if d.utilization == 1 else d.changed(utilization=Fraction(1)),
        ),
        WrongPath(
            "gb-gib",
            "mixed GB (10^9 B) and GiB (2^30 B)",
            "Vendors' GB are 10^9 bytes; KiB/GiB are powers of 2. Convert once, explicitly.",
            lambda d: d.changed(gb_bytes=GIB),
        ),
        WrongPath(
            "bits-for-bytes",
            "used the dtype's bits as bytes (16 for bf16)",
            "bf16/fp16 are 2 bytes per element, fp8/int8 1, fp32 4: divide bits by 8.",
            lambda d: d.changed(kv_bytes_override=d.kv_bytes_per_element * 8),
        ),
        WrongPath(
            "fp32-kv",
            "sized the KV cache in fp32 (4 bytes per element)",
            "The KV cache is stored in the serving dtype (bf16: 2 B, fp8: 1 B), not fp32.",
            lambda d: None if d.kv_dtype == "fp32" else d.changed(kv_bytes_override=Fraction(4)),
        ),
        WrongPath(
            "hidden-for-kv-width",
            "used the hidden size as the KV width of a layer",
            "The KV width is kv_heads × head_dim, which GQA makes far smaller than hidden.",
            _hidden_for_kv_width,
        ),
        WrongPath(
            "head-dim-from-hidden",
            "took head_dim as hidden ÷ heads",
            "Read head_dim from the config: Gemma-2 (256) and others do not use hidden ÷ heads.",
            _head_dim_from_hidden,
        ),
        WrongPath(
            "prompt-only-context",
            "counted only the prompt as live context",
            "A live sequence holds its prompt AND every token generated so far (and history).",
            _prompt_only,
        ),
        WrongPath(
            "all-params-per-prompt-token",
            "charged every parameter, embedding table and LM head included, to every prompt "
            "token (2 × all parameters per token)",
            "A prompt token multiplies the layers' weights only: the embedding is a lookup and "
            "the LM head runs once per sequence. Llama-3.1-8B: 2 × 6.98B FLOPs per prompt "
            "token, not 2 × 8.03B; the measured 550 TFLOP/s was counted that way.",
            lambda d: None if d.vocab is None or d.tflops is None else d.changed(vocab=None),
        ),
        WrongPath(
            "rounded-up",
            "rounded a count up (or kept its fraction)",
            "Only whole sequences are served: take the floor of the quotient, never round up.",
            lambda d: None,  # a rounding of the answer, added by the answer key
        ),
        WrongPath(
            "per-gpu-vs-total",
            "gave a per-GPU figure where the whole (or the whole where one GPU) was asked",
            "With tensor parallelism say which you mean: per GPU, or summed over all GPUs.",
            lambda d: None,  # a rescaling of the answer, handled in wrong_values
        ),
        *(WrongPath(p.id, p.mistake, p.advice, p.change) for p in serving.WRONG_PATHS),
    )
}


def wrong_values(
    deployment: Deployment, name: str, ids: tuple[str, ...] | None = None
) -> list[tuple[str, Fraction]]:
    """(path id, value) of `name` along each applicable wrong path, where it differs from the
    truth. `per-gpu-vs-total` gives two values: the figure for one GPU and for all of them."""
    truth = value_of(deployment, name)
    found: list[tuple[str, Fraction]] = []
    for path_id in ids if ids is not None else tuple(WRONG_PATHS):
        path = WRONG_PATHS.get(path_id)
        if path is None:
            raise UnknownName(
                f"unknown misconception {path_id!r}: use one of {', '.join(WRONG_PATHS)}"
            )
        if path_id == "per-gpu-vs-total":
            if deployment.gpus > 1:
                found.append((path_id, truth / deployment.gpus))
                found.append((path_id, truth * deployment.gpus))
                if truth.denominator == 1 and truth % deployment.gpus:
                    found.append((path_id, Fraction(math.floor(truth / deployment.gpus))))
            continue
        for change in (path.change, path.also):
            changed = None if change is None else change(deployment)
            if changed is None:
                continue
            try:
                value = value_of(changed, name)
            except ZeroDivisionError:
                continue
            if value != truth and (path_id, value) not in found:
                found.append((path_id, value))
    return found


def paired_wrong_values(deployment: Deployment, name: str
                        ) -> list[tuple[tuple[str, str], Fraction]]:
    """((first id, second id), value) of `name` with two wrong paths taken together, where the
    value differs from the truth and from each path alone."""
    truth = value_of(deployment, name)
    paths = [p for p in WRONG_PATHS.values() if p.id not in _RESCALINGS]
    alone = {value for _, value in wrong_values(deployment, name)}
    found: list[tuple[tuple[str, str], Fraction]] = []
    for i, first in enumerate(paths):
        once = first.change(deployment)
        if once is None:
            continue
        for second in paths[i + 1:]:
            twice = second.change(once)
            if twice is None:
                continue
            try:
                value = value_of(twice, name)
            except ZeroDivisionError:
                continue
            if value != truth and value not in alone:
                found.append(((first.id, second.id), value))
    return found


# Paths that rescale the answer rather than change the deployment.
_RESCALINGS = frozenset({"per-gpu-vs-total", "rounded-up"})


# ---------------------------------------------------------------------------------------------
# Derivation: the working, with units at every step


@dataclass(frozen=True)
class DerivationStep:
    name: str
    label: str
    working: str
    result: str


def derivation(deployment: Deployment, solution: Solution | None = None) -> list[DerivationStep]:
    """Each quantity with the numbers that produce it, as a person would write them down."""
    from trainer.reading.formatting import format_bytes, format_seconds
    from trainer.reading.numbers import format_number

    d = deployment
    s = solution if solution is not None else Solution(d)
    gpus = f"{d.gpus:,} GPU" if d.gpus == 1 else f"{d.gpus:,} GPUs"

    def n(x: Any) -> str:
        return format_number(Fraction(x))

    def b(x: Any) -> str:
        return format_bytes(Fraction(x))

    # The KV lines sit one under another: one unit family for all of them (128 KiB beside
    # 512 MiB, or 70.3 KB beside 562 KB; never 70.3 KB beside 549 KiB).
    kv_lines = [s["kv_bytes_per_token_per_gpu"], s["kv_bytes_per_token"],
                s["kv_bytes_per_sequence"], s["kv_bytes_per_token"] / d.layers]
    family: Literal["binary", "si"] = "binary" if all(
        "iB" in format_bytes(Fraction(x), system="both") for x in kv_lines if x >= 1024
    ) else "si"

    def both(x: Any) -> str:
        exact = format_bytes(Fraction(x), system="both").split(" (")[0]
        return exact if x < 1000 else f"{exact} ({format_bytes(Fraction(x), system=family)})"

    def plural(count: int, word: str) -> str:
        return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"

    e = s.deployment.kv_bytes_per_element
    dtype = f"{n(e)} B ({d.kv_dtype})"
    steps: list[DerivationStep] = []

    def add(name: str, working: str, result: str) -> None:
        steps.append(DerivationStep(name, FORMULAS[name].label, working, result))

    if d.attention == "mla":
        per_gpu = (
            f"{n(d.layers)} layers × ({n(d.mla_latent)} latent + {n(d.mla_rope)} rope) "
            f"× {dtype}, no K/V pair"
        )
    else:
        add("kv_width", f"{n(d.kv_heads)} KV heads × {n(d.head_dim)} head_dim",
            f"{n(s['kv_width'])} elements")
        if d.gpus > 1 and not d.dp_attention:
            note = " (replicated)" if d.gpus > d.kv_heads else ""
            add("kv_heads_per_gpu", f"max(1, {n(d.kv_heads)} KV heads ÷ {n(d.gpus)} GPUs)",
                f"{n(s['kv_heads_per_gpu'])} KV heads{note}")
        heads = d.kv_heads if d.dp_attention else s["kv_heads_per_gpu"]
        layers = "layers" if d.attention_layers is None else "attention layers"
        per_gpu = (
            f"{n(d.kv_factor)} (K and V) × {n(s['kv_layers'])} {layers} × "
            f"{n(heads)} KV heads × {n(d.head_dim)} head_dim × {dtype}"
        )
    if d.gpus > 1 and d.dp_attention:
        add("kv_bytes_per_token_per_gpu", per_gpu + ", on the one GPU serving the sequence",
            both(s["kv_bytes_per_token_per_gpu"]))
        add("kv_bytes_per_token", "one copy (data-parallel attention)",
            both(s["kv_bytes_per_token"]))
    elif d.gpus > 1:
        add("kv_bytes_per_token_per_gpu", per_gpu, both(s["kv_bytes_per_token_per_gpu"]))
        whole = "the latent is held whole on every GPU" if d.attention == "mla" else "summed"
        add("kv_bytes_per_token",
            f"{n(d.gpus)} GPUs × {both(s['kv_bytes_per_token_per_gpu'])} ({whole})",
            both(s["kv_bytes_per_token"]))
    else:
        add("kv_bytes_per_token", per_gpu, both(s["kv_bytes_per_token"]))

    held = s["tokens_held_per_sequence"]
    blocks = ""
    if d.block_size > 1:
        blocks = f" ({n(held / d.block_size)} blocks of {n(d.block_size)})"
    if d.windowed_layers:
        full = d.layers - d.windowed_layers
        working = (
            f"{both(s['kv_bytes_per_token'] / d.layers)} per layer-token × "
            f"({n(full)} full layers × {n(held)} tokens + {n(d.windowed_layers)} windowed "
            f"layers × {n(s['window_tokens_held_per_sequence'])} tokens)"
        )
    else:
        working = f"{both(s['kv_bytes_per_token'])} × {n(held)} tokens{blocks}"
        if d.attention_layers is not None:
            working += f" + {b(s['recurrent_state_bytes_per_sequence'])} recurrent state"
    add("kv_bytes_per_sequence", working, both(s["kv_bytes_per_sequence"]))

    if d.weights_gb is not None:
        working = f"{n(d.weights_gb)} GB as stated ({d.native_weights_dtype})"
        if d.weights_dtype != d.native_weights_dtype:
            working += (
                f" × {n(d.weight_bytes_per_param)} B ÷ {n(DTYPE_BYTES[d.native_weights_dtype])} B"
                f" ({d.weights_dtype})"
            )
    else:
        assert d.params is not None
        working = f"{n(d.params)} params × {n(d.weight_bytes_per_param)} B ({d.weights_dtype})"
    add("weights_bytes", working, b(s["weights_bytes"]))
    if d.dp_attention and d.attention_params is not None:
        add("replicated_attention_bytes",
            f"({n(d.gpus)} − 1) extra copies × {n(d.attention_params)} attention params × "
            f"{n(d.weight_bytes_per_param)} B", b(s["replicated_attention_bytes"]))
        add("weights_per_gpu_bytes",
            f"({b(s['weights_bytes'])} + {b(s['replicated_attention_bytes'])}) ÷ {gpus}",
            b(s["weights_per_gpu_bytes"]))

    util = f" × {format_number(d.utilization, sig=4)}" if d.utilization != 1 else ""
    reserve = f" − {n(d.reserve_gb)} GB reserve" if d.reserve_gb else ""
    add("usable_bytes", f"{gpus} × ({n(d.hbm_gb)} GB HBM{util}{reserve})", b(s["usable_bytes"]))
    copies = (f" − {b(s['replicated_attention_bytes'])} attention copies"
              if d.dp_attention else "")
    add("kv_budget_bytes", f"{b(s['usable_bytes'])} − {b(s['weights_bytes'])} weights{copies}",
        b(s["kv_budget_bytes"]))
    add("max_tokens", f"{b(s['kv_budget_bytes'])} ÷ {n(s['kv_bytes_per_token'])} B, rounded down",
        f"{n(s['max_tokens'])} tokens")
    if d.dp_attention:
        add("max_concurrency",
            f"{gpus} × ({b(s['kv_budget_bytes'] / d.gpus)} per GPU ÷ "
            f"{b(s['kv_bytes_per_sequence'])}, rounded down)",
            plural(int(s["max_concurrency"]), "sequence"))
    else:
        add("max_concurrency",
            f"{b(s['kv_budget_bytes'])} ÷ {b(s['kv_bytes_per_sequence'])}, rounded down",
            plural(int(s["max_concurrency"]), "sequence"))
    batch = int(s["batch_size"])
    if d.experts is not None:
        add("weights_read_per_step",
            f"shared weights + experts touched by {plural(batch, 'token')} × "
            f"{n(d.experts_per_token)} of {n(d.experts)} experts", b(s["weights_read_per_step"]))
    add("bytes_read_per_step",
        f"{b(s['weights_read_per_step'])} weights + {n(batch)} × "
        f"{b(s['kv_bytes_per_sequence'])} KV",
        b(s["bytes_read_per_step"]))
    add("decode_step_seconds",
        f"{b(s['bytes_read_per_step'])} ÷ ({gpus} × {n(d.bandwidth_tbs)} TB/s)",
        format_seconds(s["decode_step_seconds"]))
    step = format_seconds(s["decode_step_seconds"])
    add("tokens_per_second", f"{plural(batch, 'sequence')} ÷ {step}",
        f"{format_number(s['tokens_per_second'])} tokens/s")
    add("tokens_per_second_per_sequence", f"1 token ÷ {step}",
        f"{format_number(s['tokens_per_second_per_sequence'])} tokens/s")
    active = "active weights" if d.experts is not None else "weights"
    add("batch1_ceiling_tokens_per_second",
        f"{gpus} × {n(d.bandwidth_tbs)} TB/s ÷ {b(s['active_weights_bytes'])} {active}",
        f"{format_number(s['batch1_ceiling_tokens_per_second'])} tokens/s")
    return steps


def warnings(deployment: Deployment, solution: Solution) -> list[str]:
    """What a careful engineer would say about these numbers before anyone relies on them."""
    d, s = deployment, solution
    found: list[str] = []
    if d.utilization == 1:
        found.append(
            "utilization 1.0: all of HBM is assumed usable; servers cap it "
            "(vLLM gpu_memory_utilization 0.9), so pass --utilization"
        )
    if d.reserve_gb == 0:
        found.append(
            "no reserve: activations, CUDA graphs and fragmentation need a few GB per GPU, "
            "so this overstates capacity; pass --reserve-gb"
        )
    if s["max_concurrency"] == 0:
        found.append(
            "not one sequence fits at this context: shorten the context, add GPUs, "
            "or shrink the KV cache (fp8 KV, fewer KV heads)"
        )
    elif d.batch is not None and d.batch > s["max_concurrency"]:
        found.append(
            f"batch {d.batch} exceeds the {int(s['max_concurrency'])} sequences that fit: "
            "its KV cache would not fit in memory"
        )
    if d.gpus > d.kv_heads and d.attention != "mla":
        found.append(
            f"{d.gpus} GPUs exceed {d.kv_heads} KV heads: each GPU keeps a replica, "
            "so the KV per token grows with every GPU added"
        )
    return found
