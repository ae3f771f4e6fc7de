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

import functools
import math
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType, SimpleNamespace
from typing import Any

from trainer.capacity import serving_formulas as serving
from trainer.capacity.deployment import DTYPE_BYTES, GB, TB, Deployment
from trainer.capacity.identity_cache import by_identity
from trainer.errors import DoesNotFit, InvalidInput, UnknownName
from trainer.reading.exact import Fraction
from trainer.records import field_names, record

# ---------------------------------------------------------------------------------------------
# The formulas


@record
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
    # past the KV-head count each GPU holds a whole copy of one (the wrong path kv-head-split
    # cuts it to a fraction)
    return ops.max(1 - v.heads_split, v.kv_heads / v.gpus)


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


def _table_params(v: Any) -> Any:
    # The embedding table and the LM head (one table when they are tied).
    if v.vocab is None:
        return 0
    return v.vocab * v.hidden * (1 if v.tied_embeddings else 2)


def requantized_with_tables(v: Any) -> bool:
    """A stated checkpoint whose embedding and LM head stay wider than its linear weights (an
    AWQ release's fp16 tables beside int4 layers), served in another dtype: its linear weights
    are re-priced from its parameters and its tables kept, not the whole file scaled (the
    tables, scales and zeros are no int4 to double)."""
    return v.weights_dtype != v.native_weights_dtype and v.tables_dtype is not None \
        and v.params is not None and v.vocab is not None


@_formula("weights_bytes", "weights", "B")
def _weights_bytes(v: Any, ops: Any) -> Any:
    if v.weights_gb is not None:
        if mixed_mxfp4(v) and v.weights_dtype != "mxfp4" and v.experts is not None:
            # Only the experts were MXFP4 (GPT-OSS): another dtype re-prices them alone, and
            # the BF16 attention, router and tables stay as the checkpoint keeps them
            return v.weights_gb * v.gb_bytes + _expert_params(v) * (
                v.weight_bytes_per_param - v.native_bytes_per_param)
        if not requantized_with_tables(v):
            scale = v.weight_bytes_per_param / v.native_bytes_per_param
            return v.weights_gb * v.gb_bytes * scale
        # (a checkpoint that keeps its tables wider, served in another dtype: below)
    if v.tables_dtype is None:
        return v.params * v.weight_bytes_per_param
    # A checkpoint may keep its embedding and LM head wider than the rest (DeepSeek-V3: BF16).
    return (v.params * v.weight_bytes_per_param
            + _table_params(v) * (v.table_bytes_per_param - v.weight_bytes_per_param))


@_formula("embedding_table_bytes", "the input embedding table", "B")
def _embedding_table_bytes(v: Any, ops: Any) -> Any:
    return 0 if v.vocab is None else v.vocab * v.hidden * v.table_bytes_per_param


@_formula("unread_table_bytes",
          "the embedding table a decode step leaves unread (one row a token; none when tied)", "B")
def _unread_table_bytes(v: Any, ops: Any) -> Any:
    return 0 if v.vocab is None else _unread_table(v)


@_formula("replicated_attention_bytes",
          "attention weights and embedding table copied by DP attention", "B")
def _replicated_attention_bytes(v: Any, ops: Any) -> Any:
    if not v.dp_attention:
        return 0
    # Each DP rank embeds its own tokens, so the embedding table is whole on every GPU too
    # (SGLang: VocabParallelEmbedding(enable_tp=not dp_attention)); the LM head stays split.
    # (GPT-OSS: the experts alone are MXFP4, its attention stays in the tables' BF16)
    per_param = v.table_bytes_per_param if mixed_mxfp4(v) else v.weight_bytes_per_param
    copy = (v.attention_params * per_param
            + v.dp_copies_embedding * v.embedding_table_bytes)
    return (v.gpus - 1) * copy


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
    return v.max_concurrency * (v.think_seconds + v.reply_in_cycle * v.reply_seconds) \
        / v.reply_seconds


@_formula("batch_size", "batch", "sequences")
def _batch_size(v: Any, ops: Any) -> Any:
    return v.max_concurrency if v.batch is None else v.batch


@_formula("bytes_read_per_step", "bytes per step", "B")
def _bytes_read_per_step(v: Any, ops: Any) -> Any:
    return (v.read_weights * v.weights_read_per_step
            + v.read_kv * v.batch_size * v.kv_bytes_per_sequence)


@_formula("decode_step_seconds", "decode step", "s")
def _decode_step_seconds(v: Any, ops: Any) -> Any:
    if split_attention(v):
        return busiest_rank_bytes(v, ops) / (v.bandwidth_tbs * TB)
    return v.bytes_read_per_step / (v.gpus * v.bandwidth_tbs * TB)


def busiest_rank(deployment: Deployment) -> Fraction:
    """The bytes the busiest DP-attention rank reads in one step (busiest_rank_bytes)."""
    value: Fraction = busiest_rank_bytes(_base(deployment, EXACT_OPS, {}).space, EXACT_OPS)
    return value


def split_attention(v: Any) -> bool:
    """Whether the attention runs data-parallel over several ranks (a step waits for the
    busiest)."""
    return bool(v.dp_attention and v.gpus > 1 and v.attention_params)


def attention_copy_bytes(v: Any) -> Any:
    """One whole copy of the attention weights, as a DP-attention rank holds and reads it."""
    return v.attention_params * (v.table_bytes_per_param if mixed_mxfp4(v)
                                 else v.weight_bytes_per_param)


def busiest_rank_bytes(v: Any, ops: Any) -> Any:
    """Under DP attention each rank runs its own sequences' attention, and a step waits for
    the busiest: its attention copy, the KV of ceil(B ÷ GPUs) sequences and its share of the
    rest (one sequence on four GPUs: one rank reads a whole copy, the others a quarter)."""
    copy = attention_copy_bytes(v)
    rest = v.read_weights * (v.weights_read_per_step - ops.min(v.batch_size, v.gpus) * copy)
    busiest = (v.read_weights * copy + rest / v.gpus
               + v.read_kv * ops.ceil(v.batch_size / v.gpus) * v.kv_bytes_per_sequence)
    return ops.max(busiest, v.bytes_read_per_step / v.gpus)


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
    if split_attention(v):  # one sequence: one rank reads a whole attention copy
        alone = attention_copy_bytes(v) + (v.active_weights_bytes - attention_copy_bytes(v)) \
            / v.gpus
        return v.bandwidth_tbs * TB / alone
    return v.gpus * v.bandwidth_tbs * TB / v.active_weights_bytes


def _expert_params(v: Any) -> Any:
    # Every routed expert's parameters: the unused ones are (E - k) of E.
    if v.experts == v.experts_per_token:
        # Every expert active (params = active params): their share cannot be told apart, and
        # every step reads them all anyway, so the figures that use it do not depend on it.
        return 0
    return (v.params - v.active_params) * v.experts / (v.experts - v.experts_per_token)


def _expert_bytes_per_param(v: Any) -> Any:
    """Bytes of one routed expert parameter. An MXFP4 checkpoint quantizes the experts alone
    (GPT-OSS's modules_to_not_convert: attention, router, embedding and LM head stay BF16), so
    its experts are 17/32 B and the rest the tables' dtype; otherwise one price for all."""
    if mixed_mxfp4(v):
        return v.weight_bytes_per_param
    return v.weight_bytes_per_param if v.weights_gb is None else v.weights_bytes / v.params


def mixed_mxfp4(v: Any) -> bool:
    """An MXFP4 checkpoint of experts beside wider tables (GPT-OSS), served as it is or in
    another dtype."""
    return "mxfp4" in (v.weights_dtype, v.native_weights_dtype) and v.tables_dtype is not None


def _other_bytes(v: Any) -> Any:
    # Everything that is not a routed expert: attention, norms, router, shared experts, tables.
    return v.weights_bytes - _expert_params(v) * _expert_bytes_per_param(v)


@_formula("active_weights_bytes", "weights one token uses (MoE: its experts)", "B")
def _active_weights_bytes(v: Any, ops: Any) -> Any:
    if v.experts is None:
        return v.weights_bytes - serving.vision_bytes(v) - _unread_table(v)
    # The non-expert part whole, and k of E experts at the experts' own bytes
    used = _expert_params(v) * v.experts_per_token / v.experts
    return _other_bytes(v) - _unread_table(v) + used * _expert_bytes_per_param(v)


def _attention_copies_read(v: Any, ops: Any, batch: Any) -> Any:
    """Under DP attention every rank that serves a sequence reads its own whole copy of the
    attention weights (the embedding copies give one row a token): the copies beyond the
    one the weights count, as many as the ranks a batch of `batch` keeps busy."""
    if not v.dp_attention or not v.attention_params:
        return 0
    return (ops.min(batch, v.gpus) - 1) * attention_copy_bytes(v)


def _unread_table(v: Any) -> Any:
    # A step reads one embedding row per sequence, not the table (unless the table is also the
    # LM head). The seeds' roofline counts every weight once (reads_embedding = 1); a drill
    # that prices what a step really reads, or applies a bandwidth measured without the table
    # (shared/data), leaves it out.
    return 0 if v.tied_embeddings else (1 - v.reads_embedding) * v.embedding_table_bytes


@_formula("routed_expert_bytes", "every routed expert's weights (MoE; 0 for a dense model)", "B")
def _routed_expert_bytes(v: Any, ops: Any) -> Any:
    # What a batch's tokens choose among: speculative verification (serving_formulas) reads
    # the share of it that B × (k + 1) tokens touch.
    return 0 if v.experts is None else _expert_params(v) * _expert_bytes_per_param(v)


# Above this batch every expert is all but certainly touched: (1 - k/E)^1024 is negligible, and
# the cap keeps exact arithmetic small.
MOE_BATCH_CAP = 1024


@_formula("weights_read_per_step", "weights a decode step reads", "B")
def _weights_read_per_step(v: Any, ops: Any) -> Any:
    return _weights_read(v, ops, v.batch_size)


@_formula("weights_read_alone", "weights a decode step of one sequence alone reads", "B")
def _weights_read_alone(v: Any, ops: Any) -> Any:
    return _weights_read(v, ops, 1)  # an MoE's batch of one touches only its own experts


def _weights_read(v: Any, ops: Any, batch: Any) -> Any:
    # a vision tower: memory, not read by a text token's step
    unread = _unread_table(v) + serving.vision_bytes(v) - _attention_copies_read(v, ops, batch)
    if v.experts is None:
        return v.weights_bytes - unread
    # Expected share of experts that at least one of `batch` tokens is routed to.
    touching = 1 if v.batch_touches_one else ops.min(batch, MOE_BATCH_CAP)
    untouched = (1 - v.experts_per_token / v.experts) ** touching
    return (v.weights_bytes - unread
            - _expert_params(v) * untouched * _expert_bytes_per_param(v))


@_formula("lm_head_params", "LM head parameters (vocab × hidden)", "")
def _lm_head_params(v: Any, ops: Any) -> Any:
    # The wrong path all-params-per-prompt-token forgets the tables in the FLOP count only.
    return 0 if v.vocab is None else (1 - v.tables_in_flops_ignored) * v.vocab * v.hidden


@_formula("prompt_token_params", "parameters each prompt token multiplies (the layers')", "",
          needs=("params",))
def _prompt_token_params(v: Any, ops: Any) -> Any:
    # The embedding is a lookup and the LM head runs once per sequence, so neither is charged
    # per prompt token: the count behind the measured 550 TFLOP/s (shared/data/README.md).
    active = v.params if v.active_params is None else v.active_params
    tables = 1 if v.tied_embeddings else 2
    return active - tables * v.lm_head_params


@_formula("prefill_flops", "FLOPs to prefill one sequence", "FLOP", needs=("params",))
def _prefill_flops(v: Any, ops: Any) -> Any:
    attention = serving.attention_flops(v, ops, v.context)
    return 2 * v.prompt_token_params * v.context + 2 * v.lm_head_params + attention


@_formula("prefill_seconds", "prefill time at peak dense TFLOPS", "s",
          needs=("tflops", "params"))
def _prefill_seconds(v: Any, ops: Any) -> Any:
    return v.prefill_flops / (v.gpus * v.tflops * TB)


@_formula("decode_flops_per_step", "FLOPs of one decode step", "FLOP", needs=("params",))
def _decode_flops_per_step(v: Any, ops: Any) -> Any:
    active = v.params if v.active_params is None else v.active_params
    return 2 * active * v.batch_size


@_formula("crossover_batch", "batch where decode turns compute-bound", "sequences",
          needs=("tflops", "params"))
def _crossover_batch(v: Any, ops: Any) -> Any:
    if v.active_params is None:
        active = v.params
    else:
        # an MoE's FLOPs per token multiply every active weight but the input embedding, a
        # lookup (Qwen3-30B-A3B: 2 × 3.04B, not its 3.35B active), as mixtral-moe-decode says
        lookup = 0 if v.tied_embeddings or not v.vocab or not v.hidden else v.vocab * v.hidden
        active = v.active_params - lookup
    return v.tflops * v.weights_bytes / (2 * active * v.bandwidth_tbs)


@_formula("shared_prefix_tokens", "prefix tokens stored once (whole blocks)", "tokens")
def _shared_prefix_tokens(v: Any, ops: Any) -> Any:
    prefix = 0 if v.prefix_tokens is None else v.prefix_tokens
    return ops.floor(prefix / v.block_size) * v.block_size


@_formula("max_concurrency_with_prefix", "sequences that fit with the prefix shared", "sequences")
def _max_concurrency_with_prefix(v: Any, ops: Any) -> Any:
    shared, own = prefix_bytes(v, ops)
    return ops.max(0, ops.floor((v.kv_budget_bytes - shared) / own))


def prefix_bytes(v: Any, ops: Any) -> tuple[Any, Any]:
    """(bytes of the prefix stored once, bytes each sequence holds of its own). Only layers
    that keep every token share a prefix: a windowed layer holds each sequence's own window
    (the prefix slides out of it), and a hybrid model's recurrent state is each sequence's."""
    own_tokens = ops.ceil((v.context - v.shared_prefix_tokens) / v.block_size) * v.block_size
    if v.windowed_layers == 0:
        return (v.kv_bytes_per_token * v.shared_prefix_tokens,
                v.kv_bytes_per_token * own_tokens + v.recurrent_state_bytes_per_sequence)
    per_layer = v.kv_bytes_per_token / v.layers
    full_layers = v.layers - v.windowed_layers
    return (per_layer * full_layers * v.shared_prefix_tokens,
            per_layer * (full_layers * own_tokens
                         + v.windowed_layers * v.window_tokens_held_per_sequence))


@_formula("num_blocks", "KV blocks the budget holds", "")
def _num_blocks(v: Any, ops: Any) -> Any:
    return ops.max(0, ops.floor(v.kv_budget_bytes / (v.kv_bytes_per_token * v.block_size)))


@_formula("blocks_per_sequence", "blocks one sequence holds", "")
def _blocks_per_sequence(v: Any, ops: Any) -> Any:
    return ops.ceil(v.context / v.block_size)


def one_kind_of_page(d: Any) -> bool:
    """Whether every layer pages the same K and V (no window, no recurrent state): vLLM's
    blocks and its 'Maximum concurrency' are then one budget over one page. A model with
    windowed or recurrent layers is paged in KV-cache groups (hybrid page padding), which the
    plain figures do not count: they are not shown for it."""
    return not d.windowed_layers and d.attention_layers is None


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


def _exact_sqrt(x: Fraction) -> Fraction:
    # A square root is rarely rational: this one is exact to 2^-64 (relative to 1), far below
    # any tolerance, and stays a Fraction so the rest of the arithmetic stays exact.
    scaled = math.floor(Fraction(x) * 2**128)
    return Fraction(math.isqrt(max(0, scaled)), 2**64)


# `step` is 1 where its argument is at least 0, else 0 (a condition as a factor).
EXACT_OPS = SimpleNamespace(floor=_exact_floor, ceil=_exact_ceil, max=max, min=min,
                            step=_exact_step, sqrt=_exact_sqrt)


class _Namespace:
    """Inputs and formulas under one name each; each formula is computed once, on demand.

    Every input, and every override (over them), is an attribute of the instance from the
    start, and a formula's value becomes one the first time it is read: a formula that reads
    a value finds it without a call. (No input is named as a formula: _INPUT_NAMES.)"""

    def __init__(
        self, inputs: Mapping[str, Any], ops: Any, overrides: Mapping[str, Any] | None = None,
        more: Mapping[str, Any] | None = None, merged: bool = False,
    ) -> None:
        """`more`: set over `overrides`; `merged`: `overrides` holds the inputs already."""
        if not merged:
            self.__dict__.update(inputs)
        self._inputs = inputs
        self._ops = ops
        if overrides:
            self.__dict__.update(overrides)
        if more:
            self.__dict__.update(more)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        formula = FORMULAS.get(name)
        if formula is not None:
            value = formula.compute(self, self._ops)
        elif name in self._inputs:
            value = self._inputs[name]
        else:
            raise AttributeError(name)
        self.__dict__[name] = value
        return value


class _Traced:
    """A namespace that records, for each formula it computes, every name (input, formula or
    override) its value was read from, directly or through the formulas it read. A formula
    that reads none of the names an evaluation changes gives that evaluation the same value:
    so one deployment's formulas are computed once, and an evaluation with one input changed
    computes only the formulas that read it (`_Base`)."""

    def __init__(self, inputs: Mapping[str, Any], ops: Any, pins: Mapping[str, Any]) -> None:
        self._inputs = inputs
        self._ops = ops
        self._values: dict[str, Any] = dict(pins)
        self._reads: dict[str, frozenset[str]] = {}
        self._computed: list[str] = []  # the formulas of _reads, in the order computed
        self._stack: list[set[str]] = []

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        stack = self._stack
        if stack:
            stack[-1].add(name)
        if name in self._values:
            if stack and name in self._reads:
                stack[-1].update(self._reads[name])
            return self._values[name]
        formula = FORMULAS.get(name)
        if formula is not None:
            stack.append(set())
            try:
                value = formula.compute(self, self._ops)
            finally:
                reads = stack.pop()
            self._reads[name] = frozenset(reads)
            self._computed.append(name)
            if stack:
                stack[-1].update(reads)
        elif name in self._inputs:
            value = self._inputs[name]
        else:
            raise AttributeError(name)
        self._values[name] = value
        return value


class _Base:
    """One deployment's formulas, computed once (with `pins` set) and traced, and evaluations
    of it with other names set that reuse every formula value those names do not reach."""

    def __init__(self, deployment: Deployment, ops: Any, pins: Mapping[str, Any]) -> None:
        self.deployment = deployment
        self.ops = ops
        self.pins = dict(pins)
        self.space = _Traced(_shared_inputs(deployment), ops, self.pins)
        # for each set of names changed: the inputs, the pins and the formula values that read
        # none of them, and how many of the base's computed formulas that has looked at
        self._reusable: dict[frozenset[str], tuple[dict[str, Any], list[int]]] = {}

    def namespace(self, name: str, overrides: Mapping[str, Any]) -> _Namespace:
        """A namespace with the pins and `overrides` set, for reading `name`: every formula
        value of the base that reads none of the overridden names is already in it."""
        space = self.space
        try:
            getattr(space, name)
        except Exception:  # the evaluation below raises it again, as it always did
            reuse: dict[str, Any] = {}
        else:
            changed = frozenset(overrides)
            kept = self._reusable.get(changed)
            if kept is None:
                kept = self._reusable[changed] = ({**space._inputs, **self.pins}, [0])
            merged, seen = kept
            computed = space._computed
            if seen[0] < len(computed):
                # the formulas the base computed since: those that read none of the changed
                # names (no pin is a computed formula, no input a formula's name)
                reads, values = space._reads, space._values
                for n in computed[seen[0]:]:
                    if n not in changed and reads[n].isdisjoint(changed):
                        merged[n] = values[n]
                seen[0] = len(computed)
            return _Namespace(space._inputs, self.ops, merged, overrides, merged=True)
        return _Namespace(space._inputs, self.ops, {**reuse, **self.pins, **overrides})


_BASES: OrderedDict[tuple[int, int, tuple[tuple[str, Any], ...]], _Base] = OrderedDict()
MAX_BASES = 2048


def _base(deployment: Deployment, ops: Any, pins: Mapping[str, Any]) -> _Base:
    """The kept base of a deployment under these ops and pins (by identity: hashing a
    deployment costs more than most evaluations)."""
    key = (id(deployment), id(ops), tuple(pins.items()))
    base = _BASES.get(key)
    if base is None or base.deployment is not deployment:
        base = _BASES[key] = _Base(deployment, ops, pins)
        if len(_BASES) > MAX_BASES:
            _BASES.popitem(last=False)
    else:
        _BASES.move_to_end(key)
    return base


_INPUT_NAMES = field_names(Deployment)
if set(_INPUT_NAMES) & set(FORMULAS) or any(name.startswith("_") for name in _INPUT_NAMES):
    # A namespace holds its inputs as attributes: a formula of an input's name would be hidden
    raise RuntimeError("a Deployment field is named as a formula, or starts with '_'")


def _exact_inputs(d: Deployment) -> dict[str, Any]:
    inputs: dict[str, Any] = {}
    for name in _INPUT_NAMES:
        inputs[name] = _exact(getattr(d, name))
    inputs.update(_derived_inputs(d))
    return inputs


def _exact(value: Any) -> Any:
    """A field's value as the formulas read it: every whole number or ratio a Fraction."""
    return Fraction(value) if isinstance(value, int | Fraction) else value


def _derived_inputs(d: Deployment) -> dict[str, Any]:
    """The inputs worked out from the fields: the dtypes' bytes."""
    return {"kv_bytes_per_element": d.kv_bytes_per_element,
            "weight_bytes_per_param": d.weight_bytes_per_param,
            "native_bytes_per_param": DTYPE_BYTES[d.native_weights_dtype],
            "table_bytes_per_param": DTYPE_BYTES[d.tables_dtype or d.weights_dtype],
            # the draft's figures: given, or the target family's draft (serving_formulas)
            **serving.derived_inputs(d)}


class Solution(Mapping[str, Fraction]):
    """The exact value of every quantity for one deployment, computed on first access."""

    def __init__(
        self, deployment: Deployment, overrides: Mapping[str, Fraction] | None = None,
        shared: bool = False,
    ) -> None:
        """`overrides` set quantities or inputs to other values; with them, or `shared`, the
        formulas they do not reach come from the deployment's kept evaluation (worth it for a
        deployment evaluated many times, as a diagnosis does)."""
        self.deployment = deployment
        self._overrides: Mapping[str, Fraction] = overrides or {}
        self._shared = shared or bool(overrides)
        self._space: _Namespace | None = None  # made at the first quantity asked for
        # Another deployment whose kept evaluation this one's is, with the inputs that differ
        # (kept_solution): a wrong path's deployment is its step's with one input changed.
        self._parent: tuple[Deployment, dict[str, Any]] | None = None

    def __getitem__(self, name: str) -> Fraction:
        if name not in FORMULAS:
            raise UnknownName(
                f"unknown quantity {name!r}: use one of {', '.join(QUANTITIES)}"
            )
        for needed in FORMULAS[name].needs:
            if getattr(self.deployment, needed) is None:
                raise InvalidInput(f"{name} needs {needed}: give it (or a preset that has it)")
        space = self._space
        if space is None:
            if self._parent is not None:  # the parent's formulas less those the changes reach
                parent, changed = self._parent
                space = _base(parent, EXACT_OPS, {}).namespace(
                    name, {**changed, **self._overrides})
            elif self._shared and not self._overrides:  # the deployment's kept formulas
                shared: Fraction = getattr(_base(self.deployment, EXACT_OPS, {}).space, name)
                return shared
            elif self._shared:  # the deployment's kept formulas less those overrides reach
                space = _base(self.deployment, EXACT_OPS, {}).namespace(name, self._overrides)
            else:
                space = _Namespace(_shared_inputs(self.deployment), EXACT_OPS)
            self._space = space
        value: Fraction = getattr(space, name)
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
    if solution["usable_bytes"] <= 0:
        d = deployment
        capped = d.hbm_gb * d.utilization
        raise DoesNotFit(
            f"the reserve ({float(d.reserve_gb):,.1f} GB per GPU) leaves no usable memory: it "
            f"is at least the {float(capped):,.1f} GB the server may use of each GPU "
            f"({float(d.hbm_gb):,.1f} GB × {float(d.utilization):g}); lower the reserve "
            "(--reserve-gb) or raise the utilisation")
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
    if overrides:
        return Solution(deployment, overrides)[name]
    solution = by_identity(_SOLUTIONS_BY_ID, deployment, lambda: _kept_solution(deployment),
                    MAX_SOLUTIONS_BY_ID)
    return solution[name]


_SOLUTIONS_BY_ID: dict[int, tuple[Deployment, Solution]] = {}
MAX_SOLUTIONS_BY_ID = 1024


@functools.lru_cache(maxsize=512)
def _kept_solution(deployment: Deployment) -> Solution:
    # A Solution computes each quantity once; keeping it per deployment lets the many keys,
    # wrong paths and marks that ask one deployment for one quantity after another share it.
    solution = Solution(deployment)
    for parent, parent_inputs in _ROOTS:
        changed = _changed_inputs(parent, parent_inputs, deployment)
        if changed is not None:
            # A wrong path (or two) of a deployment just evaluated: only what it changes is
            # computed again, the rest is the parent's, exactly.
            solution._parent = (parent, changed)
            return solution
    _ROOTS.insert(0, (deployment, _shared_inputs(deployment)))
    del _ROOTS[MAX_ROOTS:]
    return solution


# The deployments last evaluated afresh by value_of, newest first, with their inputs
_ROOTS: list[tuple[Deployment, Mapping[str, Any]]] = []
MAX_ROOTS = 2
MAX_CHANGED_INPUTS = 6  # a deployment that differs in more inputs is evaluated afresh


def _changed_inputs(parent: Deployment, inputs: Mapping[str, Any], deployment: Deployment
                    ) -> dict[str, Any] | None:
    """The inputs (as _exact_inputs gives them) `deployment` sets otherwise than `parent`,
    whose are `inputs` (by type and value: 2 is not 2.0); None when they are too many to be
    worth an evaluation in part. A field that holds the parent's very object is the same
    (a wrong path's deployment is the parent's, replaced in a field or two)."""
    changed: dict[str, Any] = {}
    mine, theirs = deployment.__dict__, parent.__dict__
    for name in _INPUT_NAMES:
        value = mine[name]
        if value is theirs[name]:
            continue
        exact, before = _exact(value), inputs[name]
        if type(exact) is type(before) and exact == before:
            continue
        changed[name] = exact
        if len(changed) > MAX_CHANGED_INPUTS:
            return None
    for name, exact in _derived_inputs(deployment).items():
        before = inputs[name]
        if not (type(exact) is type(before) and exact == before):
            changed[name] = exact
    return changed


# ---------------------------------------------------------------------------------------------
# Symbolic form


def expression(name: str, deployment: Deployment) -> Any:
    """The sympy expression of a quantity for this deployment's structure (MLA, windows...)."""
    import sympy  # the only sympy import; paid only for symbolic forms

    if name not in FORMULAS:
        raise UnknownName(f"unknown quantity {name!r}: use one of {', '.join(QUANTITIES)}")
    symbols = symbolic_inputs(deployment)
    ops = SimpleNamespace(floor=sympy.floor, ceil=sympy.ceiling, max=sympy.Max, min=sympy.Min,
                          step=lambda x: sympy.Heaviside(x, 1), sqrt=sympy.sqrt)
    return getattr(_Namespace(symbols, ops), name)


def _unchanged(x: Any) -> Any:
    return x


# Floors and ceilings left out: the continuous form of a quantity, which a diagnosis inverts.
RELAXED_OPS = SimpleNamespace(floor=_unchanged, ceil=_unchanged, max=max, min=min,
                              step=_exact_step, sqrt=_exact_sqrt)


def relaxed_value(
    deployment: Deployment, name: str, overrides: Mapping[str, Fraction] | None = None,
    pins: Mapping[str, Fraction] | None = None,
) -> Fraction:
    """A quantity (or an input) with floors and ceilings left out, exactly; `overrides` sets
    inputs or intermediate quantities (weights_bytes, batch_size) to other values. `pins`: set
    too (under `overrides`), in every evaluation of this deployment alike, so the formulas
    computed with the pins alone are kept and shared between evaluations."""
    base = _base(deployment, RELAXED_OPS, pins or {})
    # Nothing set but the pins: the kept evaluation's own value (a namespace would copy it).
    space = base.namespace(name, overrides) if overrides else base.space
    value: Fraction = getattr(space, name)
    return value


class Relaxed:
    """relaxed_value of one deployment with the same overrides and pins, for any number of
    names: each formula computed once for all of them."""

    def __init__(self, deployment: Deployment, overrides: Mapping[str, Fraction],
                 pins: Mapping[str, Fraction]) -> None:
        self._base = _base(deployment, RELAXED_OPS, pins)
        self._overrides = overrides
        self._space: _Namespace | None = None

    def __getitem__(self, name: str) -> Fraction:
        if self._space is None:
            self._space = self._base.namespace(name, self._overrides)
        value: Fraction = getattr(self._space, name)
        return value


def exact_inputs(deployment: Deployment) -> Mapping[str, Any]:
    """The deployment's inputs as the formulas read them (Fractions, dtype bytes), kept."""
    return _shared_inputs(deployment)


def relaxed_reads(deployment: Deployment, name: str, pins: Mapping[str, Fraction] | None = None
                  ) -> frozenset[str] | None:
    """Every name (input, formula or pin) the relaxed value of `name` with `pins` set is read
    from: setting any other name leaves the value as it is. None when it cannot be computed."""
    space = _base(deployment, RELAXED_OPS, pins or {}).space
    try:
        getattr(space, name)
    except Exception:  # the evaluation says what is wrong where it is asked for
        return None
    return space._reads.get(name, frozenset((name,)))


def exact_reads(deployment: Deployment, name: str) -> frozenset[str] | None:
    """Every name (input or formula) the exact value of `name` is read from: a deployment that
    differs from this one only in other inputs gives it the same value. None when it cannot be
    computed."""
    space = _base(deployment, EXACT_OPS, {}).space
    try:
        getattr(space, name)
    except Exception:  # the evaluation says what is wrong where it is asked for
        return None
    return space._reads.get(name, frozenset((name,)))


def changed_inputs(parent: Deployment, deployment: Deployment) -> Mapping[str, Any]:
    """The inputs (as the formulas read them, dtype bytes included) `deployment` sets
    otherwise than `parent` (by type and value: 2 is not 2.0), with their values."""
    changed: dict[str, Any] = {}
    mine, theirs = deployment.__dict__, parent.__dict__
    for name in _INPUT_NAMES:
        value, before = mine[name], theirs[name]
        if value is before or (type(value) is type(before) and value == before):
            continue
        exact, before = _exact(value), _exact(before)
        if not (type(exact) is type(before) and exact == before):
            changed[name] = exact
    if changed:
        derived, before_derived = _derived_inputs(deployment), \
            _base(parent, EXACT_OPS, {}).space._inputs
        for name, exact in derived.items():
            before = before_derived[name]
            if not (type(exact) is type(before) and exact == before):
                changed[name] = exact
    return MappingProxyType(changed)


def value_of_changed(parent: Deployment, deployment: Deployment, changed: Mapping[str, Any],
                     name: str) -> Fraction:
    """value_of(deployment, name) for a deployment that is `parent` with `changed` inputs
    (changed_inputs): only what they reach is computed again, the rest is the parent's."""
    def make() -> Solution:
        solution = Solution(deployment)
        if changed:
            solution._parent = (parent, dict(changed))
        return solution

    return by_identity(_SOLUTIONS_BY_ID, deployment, make, MAX_SOLUTIONS_BY_ID)[name]


@functools.lru_cache(maxsize=1024)
def _shared_inputs(deployment: Deployment) -> Mapping[str, Any]:
    """The exact inputs of a deployment, read-only and kept: a diagnosis evaluates one
    deployment hundreds of times with one input changed, and a key evaluates every step
    along every wrong path."""
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
                          step=lambda x: sympy.Heaviside(x, 1), sqrt=sympy.sqrt)
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
                              "tables_dtype", "dp_attention", "tied_embeddings")
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


