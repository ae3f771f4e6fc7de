"""The inputs of the capacity model: a model shape on some GPUs, served one way (`Deployment`),
with the bytes of each dtype and an upper bound on every input, checked when one is built:
a user can type any number, the solver only computes sane ones."""

from __future__ import annotations

from typing import Any

from trainer.capacity import serving_formulas as serving
from trainer.errors import InvalidInput
from trainer.reading.exact import Fraction
from trainer.records import field_names, record

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
    # OCP MX FP4: 4-bit values and one 8-bit (E8M0) scale per block of 32, so 4.25 bits
    # (GPT-OSS's experts; vLLM's Mxfp4Config).
    "mxfp4": Fraction(17, 32),
}
KV_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8")
WEIGHT_DTYPES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4")

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
    "vision_params": 10**15,
    "reply_seconds": 10**6,
    **serving.LIMITS,
}


@record
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
    # The dtype a checkpoint keeps its embedding and LM head in when it differs from the rest
    # (DeepSeek-V3: FP8 weights, BF16 tables). None: the weights' dtype.
    tables_dtype: str | None = None
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
    # A vision tower the weights count (Gemma-3's SigLIP): held in memory, never read by a
    # text token's decode step
    vision_params: Fraction | None = None
    # 1: a decode step reads every weight once, the seeds' roofline; 0: it skips the embedding
    # table (one row per sequence is read), as the measured bandwidths in shared/data count.
    reads_embedding: int = 1
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
    recurrent_layers: int | None = None  # hybrid: layers with a state (default: the others)
    # Assumptions the wrong paths change; the right values are the defaults.
    kv_factor: int = 2
    mla_factor: Fraction | int = 1  # 2: the latent as a K and V pair; 1/N: split over N GPUs
    gb_bytes: int = GB
    subtract_weights: int = 1
    read_weights: int = 1
    read_kv: int = 1  # 0: a decode step's bytes counted as the weights alone
    kv_bytes_override: Fraction | None = None
    link_scale: int | Fraction = 1  # 8: a link's Gb/s read as GB/s (1/8: GB/s read as Gb/s)
    swap_directions: int = 2
    draft_cost: int = 1
    accept_all: int = 0
    accept_linear: int = 0  # 1: expected tokens as k × α; 2: as 1 + k × α
    decode_in_mixed_step: int = 1
    mixed_step_additive: int = 0  # 1: a mixed step as decode step + chunk, not max()
    chunk_attention: int = 1  # 0: a prefill chunk's attention over earlier chunks ignored
    tables_in_flops_ignored: int = 0  # 1: every parameter charged to every prompt token
    dp_copies_embedding: int = 1  # 0: DP attention's copy counted without the embedding table
    think_in_flight: int = 0
    kv_on_every_layer: int = 0  # 1: a hybrid's KV counted on every layer, its state kept
    heads_split: int = 0  # 1: a KV head split across GPUs past the head count (half a head)
    verify_as_decode: int = 0  # 1: an MoE target's verification priced as one decode step
    batch_touches_one: int = 0  # 1: an MoE batch's experts counted as one token's (active share)
    draft_kv_held: int = 1  # 0: the draft's own KV left out of a sequence's bytes
    latency_binds: int = 1  # 0: the batch sized by memory alone, the TPOT target left out
    reply_in_cycle: int = 1  # 0: a conversation's cycle counted as its think time alone

    def changed(self, **changes: Any) -> Deployment:
        # records.replace, without its call of __init__ (every field is an init field and
        # nothing is checked there): a wrong path's deployment is made thousands of times a key
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"Deployment has no field {sorted(unknown)[0]!r}")
        made = object.__new__(Deployment)
        made.__dict__.update(self.__dict__)
        made.__dict__.update(changes)
        return made

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
        for flag in ("dp_attention", "reads_embedding"):
            if getattr(self, flag) not in (0, 1):
                raise InvalidInput(f"{flag} must be 0 or 1, got {_plain(getattr(self, flag))}")
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
        for name in ("weights_dtype", "native_weights_dtype", "tables_dtype"):
            if name == "tables_dtype" and self.tables_dtype is None:
                continue
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
            degrees = tp_degrees(self.heads, self.kv_heads)
            raise InvalidInput(
                f"{self.kv_heads} KV heads cannot be shared evenly by {self.gpus} GPUs: give "
                f"--gpus {' or '.join(map(str, degrees))} (each GPU holds a share of the KV "
                "heads, or a copy of one, and whole query heads)"
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


MAX_TP_DEGREES = 8  # degrees a refusal lists


def tp_degrees(heads: int, kv_heads: int | None = None) -> list[int]:
    """The tensor-parallel degrees that work: each divides the query heads and divides, or is
    a multiple of, the KV heads (None: MLA, no KV heads)."""
    return [n for n in range(1, heads + 1)
            if heads % n == 0 and (kv_heads is None or kv_heads % n == 0 or n % kv_heads == 0)
            ][:MAX_TP_DEGREES]


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




_FIELD_NAMES = frozenset(field_names(Deployment))
