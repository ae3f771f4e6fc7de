"""The serving-system quantities: disaggregated prefill, speculative decoding, chunked prefill,
KV offload (swap or recompute), Little's law, and hybrid models with a recurrent state.

Written like the capacity model in solver.py (each formula a small function over the namespace
`v` and an `ops` table, evaluated exactly with Fractions or symbolically with sympy), but kept
in their own module: solver.py imports this one and registers its formulas, inputs, limits and
wrong paths in one place. This module imports nothing of the project but errors, so the
imports still flow one way; the draft model of a target's family is read from the model
presets, which hand their catalogue over when they are imported (`draft_from_catalogue`).

Units: bytes, seconds, FLOP; a link in GB/s (10^9 B/s, one direction); TPOT in ms; an arrival
rate in requests (sequences) per second.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from trainer.errors import InvalidInput
from trainer.reading.exact import Fraction
from trainer.reading.numbers import format_number
from trainer.records import record

GB = 10**9
TB = 10**12

# The inputs this module adds to a Deployment, with the most any real deployment could have.
LIMITS: dict[str, int] = {
    "link_gbs": 1_000_000,
    "output_tokens": 100_000_000,
    "long_prompt_tokens": 1_000_000_000,
    "tpot_ms": 1_000_000,
    "arrival_rate": 100_000_000,
    "think_seconds": 100_000_000,
    "cpu_kv_gb": 100_000_000,
    "spec_tokens": 64,
    "acceptance_rate": 1,
    "draft_params": 10**15,
    "draft_layers": 10_000,
    "draft_kv_heads": 100_000,
    "draft_head_dim": 100_000,
    "attention_layers": 10_000,
    "recurrent_layers": 10_000,
    "state_elements": 10**12,
}
WHOLE_INPUTS = ("output_tokens", "long_prompt_tokens", "spec_tokens", "draft_layers",
                "draft_kv_heads", "draft_head_dim", "attention_layers", "recurrent_layers",
                "state_elements")
INPUTS = tuple(LIMITS)

# Inputs a drill step may ask for directly, with their units.
INPUT_UNITS = {"attention_layers": "", "spec_tokens": ""}


def validate(d: Any) -> None:
    """Raise InvalidInput naming the first serving input no real deployment could have."""
    for name in INPUTS:
        value = getattr(d, name)
        if value is None:
            continue
        if name in WHOLE_INPUTS and Fraction(value).denominator != 1:
            raise InvalidInput(f"{name} must be a whole number, got {float(value):g}")
        if name in ("think_seconds", "state_elements", "recurrent_layers"):
            if value < 0:
                raise InvalidInput(f"{name} must be at least 0, got {float(value):g}")
        elif value <= 0:
            raise InvalidInput(f"{name} must be greater than 0, got {float(value):g}")
        if value > LIMITS[name]:
            raise InvalidInput(f"{name} {value} is larger than any real deployment: at most "
                               f"{LIMITS[name]:,}")
    if d.acceptance_rate is not None and not 0 < d.acceptance_rate < 1:
        raise InvalidInput(f"acceptance_rate {float(d.acceptance_rate):g} is outside (0, 1): "
                           "give the chance that a draft token is accepted, e.g. 0.7")
    if (d.spec_tokens is None) != (d.acceptance_rate is None):
        raise InvalidInput("speculative decoding needs both spec_tokens and acceptance_rate")
    if d.attention_layers is not None:
        if d.attention_layers > d.layers:
            raise InvalidInput(f"attention_layers {d.attention_layers} exceeds layers "
                               f"({d.layers})")
        if d.windowed_layers:
            raise InvalidInput("a hybrid model (attention_layers) with sliding windows is not "
                               "modelled: give one or the other")
        if d.state_elements is None:
            raise InvalidInput("a hybrid model (attention_layers) needs state_elements: the "
                               "values each recurrent layer keeps per sequence")
    if d.recurrent_layers is not None:
        if d.attention_layers is None:
            raise InvalidInput("recurrent_layers needs attention_layers: the layers of a "
                               "hybrid model that keep a KV cache")
        if d.recurrent_layers > d.layers:
            raise InvalidInput(f"recurrent_layers {d.recurrent_layers} exceeds layers "
                               f"({d.layers})")


@record
class Spec:
    name: str
    label: str
    unit: str  # as in solver.Formula
    compute: Callable[[Any, Any], Any]
    needs: tuple[str, ...] = ()


FORMULAS: list[Spec] = []


def _formula(name: str, label: str, unit: str, needs: tuple[str, ...] = ()
             ) -> Callable[[Callable[[Any, Any], Any]], Callable[[Any, Any], Any]]:
    def register(compute: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
        FORMULAS.append(Spec(name, label, unit, compute, needs))
        return compute

    return register


def _link_bytes_per_second(v: Any) -> Any:
    return v.link_scale * v.link_gbs * GB


# ---- Hybrid models: KV only in the attention layers, a constant state in the others ---------


@_formula("kv_layers", "layers that hold a KV cache", "")
def _kv_layers(v: Any, ops: Any) -> Any:
    return v.layers if v.attention_layers is None or v.kv_on_every_layer else v.attention_layers


@_formula("recurrent_state_bytes_per_sequence", "recurrent (Mamba) state per sequence", "B")
def _recurrent_state(v: Any, ops: Any) -> Any:
    if v.attention_layers is None:
        return 0
    # The state is kept in the model's dtype (vLLM's mamba cache dtype "auto"), whatever
    # the KV cache's dtype.
    return recurrent_layers(v) * v.state_elements * v.native_bytes_per_param


def recurrent_layers(v: Any) -> Any:
    """The layers that keep a state: all but the attention layers, unless the model says
    otherwise (a block of MLP alone keeps none; a parallel hybrid's layers keep both)."""
    if v.recurrent_layers is not None:
        return v.recurrent_layers
    return v.layers - v.attention_layers


@_formula("state_equivalent_tokens", "tokens of KV that weigh as much as the state", "tokens",
          needs=("attention_layers",))
def _state_equivalent_tokens(v: Any, ops: Any) -> Any:
    return v.recurrent_state_bytes_per_sequence / v.kv_bytes_per_token


# ---- Disaggregated prefill and decode --------------------------------------------------------


@_formula("kv_transfer_seconds", "moving one sequence's KV over the link", "s",
          needs=("link_gbs",))
def _kv_transfer_seconds(v: Any, ops: Any) -> Any:
    return v.kv_bytes_per_sequence / _link_bytes_per_second(v)


@_formula("disagg_ttft_seconds", "time to first token: prefill, then the KV transfer", "s",
          needs=("link_gbs", "tflops"))
def _disagg_ttft_seconds(v: Any, ops: Any) -> Any:
    return v.prefill_seconds + v.kv_transfer_seconds


@_formula("decode_gpu_seconds_per_request", "decode GPU time one request takes", "s",
          needs=("output_tokens",))
def _decode_gpu_seconds_per_request(v: Any, ops: Any) -> Any:
    # A step serves `batch` sequences at once, so each request pays 1/batch of every step.
    return v.output_tokens * v.decode_step_seconds / v.batch_size


@_formula("prefill_gpus_per_decode_gpu", "prefill GPUs needed per decode GPU", "",
          needs=("output_tokens", "tflops"))
def _prefill_gpus_per_decode_gpu(v: Any, ops: Any) -> Any:
    return v.prefill_seconds / v.decode_gpu_seconds_per_request


# ---- Speculative decoding --------------------------------------------------------------------
#
# The draft must share the target's tokenizer, token for token, or the target cannot check what
# it proposes: so the draft is a small model of the target's own family (DRAFT_FAMILIES). A
# deployment that gives no draft of its own (draft_params, draft_layers, ...) drafts with its
# family's, read from the model presets (`derived_inputs`, which the solver adds to the inputs);
# a family with no smaller sibling sharing its tokenizer has no draft, and every quantity of the
# draft says why in one sentence (InvalidInput), which a re-targeted drill prints as its refusal.


@record
class DraftFamily:
    """Targets that share one tokenizer, and the preset that drafts for them (None: none does,
    for the reason given)."""

    name: str
    members: tuple[str, ...]  # the preset ids of the family start with one of these
    draft: str | None
    larger: str = ""  # a target of the family larger than its draft, for a refusal to name
    why_none: str = ""


# One target per family that has a draft, for a refusal to name.
# (Qwen2.5-7B and larger and Gemma-3-4B and larger pad their tables past their drafts': vLLM
# refuses those pairs, so none is named)
# (dense ones: an MoE target's verification touches many more experts than a decode step, and
# speculation is no speed-up on Qwen3-30B-A3B at batch 1)
DRAFTED_TARGETS = "llama-3.3-70b, qwen3-32b, qwen3-8b or gemma-2-9b"
DRAFT_FAMILIES: tuple[DraftFamily, ...] = (
    # Llama 3, 3.1, 3.2 and 3.3 (and Nemotron-Super-49B, a pruned Llama-3.3-70B) share one
    # tokenizer of 128,256 entries.
    DraftFamily("Llama-3", ("llama-3-", "llama-3.1-", "llama-3.2-", "llama-3.3-"),
                "llama-3.2-1b", "llama-3.1-8b"),
    # Qwen3, dense and MoE (Qwen3-Coder too): 151,936 entries.
    DraftFamily("Qwen3", ("qwen3-",), "qwen3-0.6b", "qwen3-8b"),
    # Qwen2 and Qwen2.5 share one tokenizer (the 7B and larger pad the table to 152,064 rows).
    DraftFamily("Qwen2.5", ("qwen2.5-", "qwen2-"), "qwen2.5-0.5b", "qwen2.5-3b"),
    # Gemma-3: 262,144 entries (the 4B to 27B releases pad the table to 262,208 for images).
    # (no larger Gemma-3 drafts with it in vLLM: their padded tables are refused)
    DraftFamily("Gemma-3", ("gemma-3-",), "gemma-3-1b"),
    # Gemma-2: 256,000 entries.
    DraftFamily("Gemma-2", ("gemma-2-",), "gemma-2-2b", "gemma-2-9b"),
    # Llama-2: one SentencePiece tokenizer of 32,000 entries across its sizes (not Mistral's,
    # though as long).
    DraftFamily("Llama-2", ("llama-2-",), "llama-2-7b", "llama-2-70b"),
    # Mistral-7B-v0.1 and the Mixtral base releases: one SentencePiece tokenizer of 32,000.
    DraftFamily("Mistral", ("mistral-7b-v0.1", "mixtral-8x7b", "mixtral-8x22b"),
                "mistral-7b-v0.1", "mixtral-8x7b"),
    # Mistral's v3 tokenizer of 32,768 entries: Mistral-7B-v0.3 and Mixtral-8x22B-Instruct.
    # (its one larger target, 281 GB, fits on no single card the drills know: none is named)
    DraftFamily("Mistral v3", ("mistral-7b-v0.3", "mixtral-8x22b-instruct"), "mistral-7b-v0.3"),
    DraftFamily("GPT-OSS", ("gpt-oss-",), None, why_none=(
        "no model smaller than GPT-OSS-20B shares GPT-OSS's o200k_harmony tokenizer (201,088 "
        "entries), GPT-OSS-20B reads too much per token to draft for GPT-OSS-120B, and the "
        "EAGLE heads trained for GPT-OSS are a drafting head on the target, not a draft "
        "model")),
    # Families with no smaller member to draft with (a refusal says so rather than "no draft
    # shares its tokenizer", which reads as if one might)
    DraftFamily("DeepSeek-V3", ("deepseek-v3",), None, why_none=(
        "DeepSeek-V3 speculates with its own multi-token-prediction layer, shipped with its "
        "weights (vLLM's deepseek_mtp method), not with a separate draft model, and no smaller "
        "model shares its tokenizer (129,280 entries), so there is no draft for this drill to "
        "run beside it")),
    DraftFamily("DeepSeek-V2", ("deepseek-v2",), None, why_none=(
        "no model smaller than DeepSeek-V2-Lite shares DeepSeek-V2's tokenizer (102,400 "
        "entries), so there is no draft for this drill to run beside it")),
    DraftFamily("Kimi-K2", ("kimi-k2",), None, why_none=(
        "kvdrill knows no smaller model that shares Kimi-K2's tokenizer (163,840 entries), so "
        "there is no draft for this drill to run beside it")),
    DraftFamily("Llama-4", ("llama-4-",), None, why_none=(
        "Llama-4's tokenizer (202,048 entries) is shared only by Scout and Maverick, each "
        "reading 17B active parameters per token: neither is small enough to draft for the "
        "other, so there is no draft for this drill to run beside it")),
)
# The fields that tell a model preset apart, as a deployment holds them: not those a wrong path
# changes (KV heads, head_dim, the windows), so that a mistake keeps the target's draft.
_SHAPE_FIELDS = ("layers", "hidden", "heads", "vocab", "experts", "experts_per_token",
                 "attention", "attention_layers")


@record
class Draft:
    """The draft a target's family drafts with (its preset's figures), or why there is none."""

    name: str | None = None
    family: str | None = None
    params: Fraction | None = None
    layers: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    window: int | None = None  # a windowed draft (Gemma): its window, on windowed_layers
    windowed_layers: int = 0
    why_none: str | None = None


def _plain(value: Any) -> Any:
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    return value


def _shape(source: Any) -> tuple[Any, ...]:
    return tuple(_plain(getattr(source, name, None)) for name in _SHAPE_FIELDS)


# The model catalogue the drafts are read from. presets.py hands it over when it is imported
# (it imports this module, so this one cannot import it back); every deployment is built
# through presets, so it is there before any draft is asked for.
_catalogue: list[Callable[[], Mapping[str, Any]]] = []


def draft_from_catalogue(models: Callable[[], Mapping[str, Any]]) -> None:
    _catalogue[:] = [models]
    _family_draft.cache_clear()


@functools.lru_cache(maxsize=256)
def _family_draft(shape: tuple[Any, ...], kv_heads: Any = None) -> Draft:
    """The draft of the family whose presets have this shape (a config of a known model reads
    as its preset); a model of no known shape by its vocabulary, where one draft has it.
    `kv_heads` tells apart presets of one shape in different families (Llama-2-7B has
    Mistral-7B-v0.1's shape with 32 KV heads, not 8, and not its tokenizer)."""
    if not _catalogue:
        raise RuntimeError("the model catalogue was not handed to serving_formulas")
    table = _catalogue[0]()
    ids = [key for key, model in table.items() if _shape(model) == shape]
    found = {_family_of(key) for key in ids}
    if len(found) > 1:
        ids = [key for key in ids if _plain(table[key].kv_heads) == kv_heads]
        found = {_family_of(key) for key in ids}
    # a shape shared with a model of no family, or of two, says nothing
    families = {f for f in found if f is not None} if len(found) == 1 else set()
    vocab = shape[_SHAPE_FIELDS.index("vocab")]
    if not ids:  # a model read from a config.json: the family whose models alone have a
        # vocabulary of its size (Llama-2's 32,000 SentencePiece entries are not Mistral's;
        # Gemma-3-12B's 262,208 rows are Gemma-3's, whose 1B draft pads to 262,144)
        owners = {_family_of(key) for key, model in table.items() if model.vocab == vocab}
        families = {f for f in owners if f is not None} if len(owners) == 1 else set()
    if len(families) != 1:
        said = "" if vocab is None else f" (a vocabulary of {vocab:,})"
        return Draft(why_none=(
            f"kvdrill knows no draft model that shares its tokenizer{said}, and a draft "
            f"must come from the target's own family: choose a target such as "
            f"{DRAFTED_TARGETS}"))
    family = families.pop()
    if family.draft is None:
        return Draft(family=family.name, why_none=(
            f"{family.why_none}: choose a target whose family has a draft, such as "
            f"{DRAFTED_TARGETS}"))
    draft = table[family.draft]
    if vocab is not None and draft.vocab is not None and vocab != draft.vocab:
        # vLLM's draft-model speculation checks the two vocabulary sizes are equal: a table
        # padded to other rows (Qwen2.5-7B and larger, Gemma-3-4B and larger) is refused
        return Draft(family=family.name, why_none=(
            f"vLLM drafts only with a model whose vocabulary size equals the target's, and "
            f"{draft.name}'s table has {draft.vocab:,} rows against the target's {vocab:,} "
            f"(the same tokenizer, padded differently), so vLLM refuses the pair: choose a "
            f"target such as {DRAFTED_TARGETS}"))
    return Draft(name=draft.name, family=family.name, params=Fraction(draft.params),
                 layers=draft.layers, kv_heads=draft.kv_heads, head_dim=draft.head_dim,
                 window=draft.window if draft.windowed_layers else None,
                 windowed_layers=draft.windowed_layers)


def _family_of(preset: str) -> DraftFamily | None:
    """The family a preset id belongs to: the one naming it most closely ("mixtral-8x22b-
    instruct" is Mistral v3's, though it starts like the base release of another family)."""
    matched = [(len(member), family) for family in DRAFT_FAMILIES
               for member in family.members if preset.startswith(member)]
    return max(matched, key=lambda pair: pair[0])[1] if matched else None


def family_draft(d: Any) -> Draft:
    """The draft of a deployment's (or a namespace's) target family, or why it has none: a
    target no larger than its family's draft has none either."""
    draft = _family_draft(_shape(d), _plain(getattr(d, "kv_heads", None)))
    params = getattr(d, "params", None)
    if draft.params is not None and params is not None and params <= draft.params:
        family = next(f for f in DRAFT_FAMILIES if f.name == draft.family)
        instead = f"a larger {draft.family} model, such as {family.larger}" if family.larger \
            else f"a target such as {DRAFTED_TARGETS}"
        return Draft(family=draft.family, why_none=(
            f"{draft.name} is the {draft.family} family's draft, and a target no larger than "
            f"its draft gains nothing from it: choose {instead}"))
    return draft


DRAFT_FIELDS = ("draft_params", "draft_layers", "draft_kv_heads", "draft_head_dim")


def derived_inputs(d: Any) -> dict[str, Any]:
    """The draft's figures as the formulas read them: the deployment's own where it gives a
    draft (draft_params and the rest), else its family's draft's (a speculative deployment);
    with the draft's window (None: none) and windowed layers. The same names for every
    deployment, so that two deployments' inputs compare name by name."""
    values: dict[str, Any] = {name: _exact(getattr(d, name)) for name in DRAFT_FIELDS}
    values["draft_window"] = None
    values["draft_windowed_layers"] = Fraction(0)
    if d.spec_tokens is None or d.draft_params is not None:
        return values
    draft = family_draft(d)
    if draft.params is None:
        return values
    values.update(draft_params=draft.params, draft_layers=Fraction(draft.layers or 0),
                  draft_kv_heads=Fraction(draft.kv_heads or 0),
                  draft_head_dim=Fraction(draft.head_dim or 0),
                  draft_window=None if draft.window is None else Fraction(draft.window),
                  draft_windowed_layers=Fraction(draft.windowed_layers))
    return values


def _exact(value: Any) -> Any:
    return Fraction(value) if isinstance(value, int | Fraction) else value


def _draft(v: Any, name: str) -> Any:
    """A figure of the draft; InvalidInput saying why the target has no draft."""
    value = getattr(v, name)
    if value is None:
        raise InvalidInput(family_draft(v).why_none or "speculative decoding needs a draft: "
                           "give draft_params, draft_layers, draft_kv_heads and draft_head_dim")
    return value


@_formula("draft_weights_bytes", "draft model weights", "B", needs=("spec_tokens",))
def _draft_weights_bytes(v: Any, ops: Any) -> Any:
    # The draft is served in the target's dtype.
    return _draft(v, "draft_params") * v.weight_bytes_per_param


@_formula("draft_kv_bytes_per_token", "draft model KV per token (every layer)", "B",
          needs=("spec_tokens",))
def _draft_kv_bytes_per_token(v: Any, ops: Any) -> Any:
    return (v.kv_factor * _draft(v, "draft_layers") * _draft(v, "draft_kv_heads")
            * _draft(v, "draft_head_dim") * v.kv_bytes_per_element)


@_formula("draft_kv_bytes_per_sequence", "draft model KV per sequence", "B",
          needs=("spec_tokens",))
def _draft_kv_bytes_per_sequence(v: Any, ops: Any) -> Any:
    if v.draft_window is None:
        return v.draft_kv_bytes_per_token * v.tokens_held_per_sequence
    # A windowed draft (Gemma's) keeps only its window in its windowed layers.
    per_layer = v.draft_kv_bytes_per_token / v.draft_layers
    window = ops.ceil(ops.min(v.context, v.draft_window) / v.block_size) * v.block_size
    return per_layer * ((v.draft_layers - v.draft_windowed_layers) * v.tokens_held_per_sequence
                        + v.draft_windowed_layers * window)


@_formula("draft_step_seconds", "one draft decode step", "s", needs=("spec_tokens",))
def _draft_step_seconds(v: Any, ops: Any) -> Any:
    kv = v.read_kv * v.batch_size * v.draft_kv_bytes_per_sequence
    return (v.read_weights * v.draft_weights_bytes + kv) / (v.gpus * v.bandwidth_tbs * TB)


@_formula("spec_expected_tokens", "tokens one verification step yields, on average", "tokens",
          needs=("spec_tokens",))
def _spec_expected_tokens(v: Any, ops: Any) -> Any:
    # Token i + 1 of the k drafted is kept only if all before it were: 1 + α + … + α^k,
    # plus the target's own token at the first rejection (or after all k).
    a, k = v.acceptance_rate, v.spec_tokens
    if v.accept_linear:  # the wrong path: each drafted token kept with α, independently
        return k * a + (v.accept_linear - 1)
    geometric = (1 - a ** (k + 1)) / (1 - a)
    return v.accept_all * (k + 1) + (1 - v.accept_all) * geometric


# Above this many tokens every expert is all but certainly touched ((1 - k/E)^1024 is
# negligible), as the solver caps a decode batch; the cap keeps exact arithmetic small.
EXPERT_TOKENS_CAP = 1024


def _untouched_experts(v: Any, ops: Any, tokens: Any) -> Any:
    """The expected share of an MoE layer's experts that none of `tokens` is routed to."""
    return (1 - v.experts_per_token / v.experts) ** ops.min(tokens, EXPERT_TOKENS_CAP)


@_formula("decode_expert_share", "share of the experts a decode step at the batch touches", "",
          needs=("experts",))
def _decode_expert_share(v: Any, ops: Any) -> Any:
    return 1 - _untouched_experts(v, ops, v.batch_size)


@_formula("spec_verify_expert_share",
          "share of the experts verifying k + 1 tokens per sequence touches", "",
          needs=("spec_tokens", "experts"))
def _spec_verify_expert_share(v: Any, ops: Any) -> Any:
    return 1 - _untouched_experts(v, ops, v.batch_size * (v.spec_tokens + 1))


@_formula("spec_verify_weights_bytes",
          "weights one verification reads (MoE: the experts its k + 1 tokens per sequence "
          "touch)", "B", needs=("spec_tokens",))
def _spec_verify_weights_bytes(v: Any, ops: Any) -> Any:
    if v.experts is None:  # a dense target reads every weight once, for 1 token or k + 1
        return v.weights_read_per_step
    # Each of B × (k + 1) tokens is routed to its own k of E experts: a verification reads
    # 1 − (1 − k/E)^(B(k+1)) of the expert bytes where a decode step reads 1 − (1 − k/E)^B.
    tokens = v.batch_size * (v.spec_tokens + 1)
    more = _untouched_experts(v, ops, v.batch_size) - _untouched_experts(v, ops, tokens)
    return v.weights_read_per_step + v.routed_expert_bytes * more


@_formula("spec_verify_seconds", "one verification step (k + 1 tokens per sequence)", "s",
          needs=("spec_tokens",))
def _spec_verify_seconds(v: Any, ops: Any) -> Any:
    if v.experts is None:  # memory-bound, it reads what one decode step reads
        return v.decode_step_seconds
    if v.verify_as_decode:  # (the mistake of pricing an MoE's like a dense target's)
        return v.decode_step_seconds
    read = (v.read_weights * v.spec_verify_weights_bytes
            + v.read_kv * v.batch_size * v.kv_bytes_per_sequence)
    return read / (v.gpus * v.bandwidth_tbs * TB)


@_formula("spec_round_seconds", "k draft steps and one verification step", "s",
          needs=("spec_tokens",))
def _spec_round_seconds(v: Any, ops: Any) -> Any:
    return v.draft_cost * v.spec_tokens * v.draft_step_seconds + v.spec_verify_seconds


@_formula("spec_speedup", "speed-up over plain decoding", "", needs=("spec_tokens",))
def _spec_speedup(v: Any, ops: Any) -> Any:
    return v.spec_expected_tokens * v.decode_step_seconds / v.spec_round_seconds


@_formula("spec_max_concurrency", "sequences that fit beside the draft", "sequences",
          needs=("spec_tokens",))
def _spec_max_concurrency(v: Any, ops: Any) -> Any:
    budget = v.kv_budget_bytes - v.subtract_weights * v.draft_weights_bytes
    per_sequence = v.kv_bytes_per_sequence + v.draft_kv_held * v.draft_kv_bytes_per_sequence
    return ops.max(0, ops.floor(budget / per_sequence))


@_formula("spec_compute_bound_batch", "batch where verifying k + 1 tokens turns compute-bound",
          "sequences", needs=("spec_tokens", "tflops"))
def _spec_compute_bound_batch(v: Any, ops: Any) -> Any:
    return v.crossover_batch / (v.spec_tokens + 1)


@_formula("spec_breakeven_batch",
          "batch above which speculation slows the server (no KV, no draft)", "sequences",
          needs=("spec_tokens", "tflops"))
def _spec_breakeven_batch(v: Any, ops: Any) -> Any:
    # Above the compute-bound batch a verify step costs B × (k + 1) tokens of FLOPs for B × E
    # tokens kept; plain decode at B below the ridge costs one weight read for B tokens. They
    # yield the same tokens per second at B = ridge × E ÷ (k + 1).
    return v.crossover_batch * v.spec_expected_tokens / (v.spec_tokens + 1)


def attention_flops(v: Any, ops: Any, tokens: Any) -> Any:
    """Causal attention's FLOPs over a prompt of `tokens`: 4 × heads × head_dim per (query,
    key) pair and layer, T²/2 pairs on a full layer (2 × layers × heads × head_dim × T²). A
    sliding-window layer pairs each token with at most `window` keys: W²/2 + (T − W) × W
    pairs once T passes W, i.e. (2TW − W²)/2."""
    per_pair = 2 * v.heads * v.head_dim
    if v.window is None or v.windowed_layers == 0:
        return per_pair * v.layers * tokens**2
    held = ops.min(tokens, v.window)
    full = v.layers - v.windowed_layers
    return per_pair * (full * tokens**2 + v.windowed_layers * (2 * tokens * held - held**2))


# ---- Chunked prefill against a TPOT target ---------------------------------------------------


@_formula("mixed_step_kv_seconds", "reading the running sequences' KV (their attention)", "s")
def _mixed_step_kv_seconds(v: Any, ops: Any) -> Any:
    return v.batch_size * v.kv_bytes_per_sequence / (v.gpus * v.bandwidth_tbs * TB)


@_formula("weights_read_seconds", "reading the weights once", "s")
def _weights_read_seconds(v: Any, ops: Any) -> Any:
    return v.read_weights * v.weights_read_per_step / (v.gpus * v.bandwidth_tbs * TB)


def _decode_token_flops(v: Any) -> Any:
    # A decode token multiplies the layers' weights and the LM head.
    return 2 * (v.prompt_token_params + v.lm_head_params) * v.batch_size


# A mixed step (Sarathi-Serve): decode tokens and chunk tokens go through the same matmuls, so
# the weights are read once and the matmuls take max(weight read, FLOPs ÷ FLOP/s); the decode
# tokens' attention reads their KV on top. step = KV read + max(weights ÷ BW, FLOPs ÷ FLOP/s).
# The wrong path `mixed-step-additive` prices it as a whole decode step plus the chunk's FLOPs.


@_formula("chunk_time_budget_seconds",
          "time a mixed step's matmuls may take under the TPOT target (TPOT − KV read)", "s",
          needs=("tpot_ms",))
def _chunk_time_budget_seconds(v: Any, ops: Any) -> Any:
    taken = v.mixed_step_kv_seconds + v.mixed_step_additive * v.weights_read_seconds
    return v.tpot_ms / 1000 - v.decode_in_mixed_step * taken


@_formula("max_chunk_tokens", "largest prefill chunk under the TPOT target", "tokens",
          needs=("tpot_ms", "tflops", "long_prompt_tokens"))
def _max_chunk_tokens(v: Any, ops: Any) -> Any:
    shares_matmuls = v.decode_in_mixed_step * (1 - v.mixed_step_additive)
    room = (v.chunk_time_budget_seconds * v.gpus * v.tflops * TB
            - shares_matmuls * _decode_token_flops(v))
    # The costliest step is the last chunk's: its C tokens attend to the T − C before them
    # and to each other, C × (T − C/2) pairs at 4 × layers × heads × head_dim FLOPs each.
    # cost(C) = (2 P + 2 a T) C − a C² with a = 2 × layers × heads × head_dim; cost(C) = room
    # at C = 2 room ÷ (B + √(B² − 4 a room)), B = 2 P + 2 a T (the smaller root, written so
    # that a = 0, the chunk's attention ignored, gives room ÷ 2P).
    tokens = v.long_prompt_tokens
    a = v.chunk_attention * 2 * v.layers * v.heads * v.head_dim
    b = 2 * v.prompt_token_params + 2 * a * tokens
    root = ops.sqrt(ops.max(0, b**2 - 4 * a * room))
    chunk = ops.min(tokens, ops.max(0, ops.floor(2 * room / (b + root))))
    # No chunk fits if the weight read alone overruns what the KV read leaves.
    return chunk * ops.step(v.chunk_time_budget_seconds - shares_matmuls * v.weights_read_seconds)


@_formula("chunked_prefill_steps", "mixed steps a long prompt's prefill takes", "",
          needs=("tpot_ms", "tflops", "long_prompt_tokens"))
def _chunked_prefill_steps(v: Any, ops: Any) -> Any:
    return ops.ceil(v.long_prompt_tokens / v.max_chunk_tokens)


@_formula("chunked_ttft_seconds", "time to first token of the long prompt, chunked", "s",
          needs=("tpot_ms", "tflops", "long_prompt_tokens"))
def _chunked_ttft_seconds(v: Any, ops: Any) -> Any:
    return v.chunked_prefill_steps * v.tpot_ms / 1000


@_formula("long_prompt_prefill_seconds", "the long prompt prefilled in one piece", "s",
          needs=("tflops", "long_prompt_tokens"))
def _long_prompt_prefill_seconds(v: Any, ops: Any) -> Any:
    tokens = v.long_prompt_tokens
    flops = (2 * v.prompt_token_params * tokens + 2 * v.lm_head_params
             + attention_flops(v, ops, tokens))
    return flops / (v.gpus * v.tflops * TB)


@_formula("unchunked_stall_seconds", "the step every stream waits when the prompt is not chunked",
          "s", needs=("tflops", "long_prompt_tokens"))
def _unchunked_stall_seconds(v: Any, ops: Any) -> Any:
    decode_compute = _decode_token_flops(v) / (v.gpus * v.tflops * TB)
    shared = ops.max(v.weights_read_seconds, decode_compute + v.long_prompt_prefill_seconds)
    additive = v.weights_read_seconds + v.long_prompt_prefill_seconds
    return v.mixed_step_kv_seconds + v.mixed_step_additive * additive \
        + (1 - v.mixed_step_additive) * shared


# ---- Swap or recompute, and a CPU KV tier ----------------------------------------------------


@_formula("swap_seconds", "swapping one sequence's KV out and back in", "s",
          needs=("link_gbs",))
def _swap_seconds(v: Any, ops: Any) -> Any:
    return v.swap_directions * v.kv_transfer_seconds


@_formula("swap_breakeven_link", "link speed below which recomputing a short sequence wins",
          "B/s", needs=("tflops",))
def _swap_breakeven_link(v: Any, ops: Any) -> Any:
    # Per token: swapping moves `directions` × KV bytes; recomputing costs 2 × the layers'
    # params in FLOPs (the attention term, small for short sequences, left out; the LM head
    # runs once either way, in the re-prefill or in the step after a swap-in, so it cancels).
    return (v.swap_directions * v.kv_bytes_per_token * v.gpus * v.tflops * TB
            / (2 * v.prompt_token_params))


@_formula("swap_recompute_crossover_tokens", "length above which swapping beats recomputing",
          "tokens", needs=("tflops", "link_gbs"))
def _swap_recompute_crossover_tokens(v: Any, ops: Any) -> Any:
    # swap(N) = d × KV/token × N ÷ link;  recompute(N) = (2 P N + 2 L H h N²) ÷ FLOP/s, P the
    # layers' params (the LM head runs once either way and cancels).
    # Equal at N* = (FLOP/s × d × KV/token ÷ link − 2 P) ÷ (2 L H h); below it recompute wins.
    flops = v.gpus * v.tflops * TB
    swap_per_token = v.swap_directions * v.kv_bytes_per_token / _link_bytes_per_second(v)
    attention = 2 * v.layers * v.heads * v.head_dim
    return ops.max(0, (flops * swap_per_token - 2 * v.prompt_token_params) / attention)


@_formula("cpu_tier_sessions", "sessions a CPU KV tier can park", "sequences",
          needs=("cpu_kv_gb",))
def _cpu_tier_sessions(v: Any, ops: Any) -> Any:
    return ops.max(0, ops.floor(v.cpu_kv_gb * v.gb_bytes / v.kv_bytes_per_sequence))


# ---- Little's law ----------------------------------------------------------------------------


def _text_weights(v: Any) -> Any:
    """Every weight a text token's step reads on the plain roofline: all of them but a vision
    tower the weights count (which a text step never runs)."""
    return v.weights_bytes - vision_bytes(v)


def vision_bytes(v: Any) -> Any:
    """The bytes of a vision tower the weights count (Gemma-3's SigLIP): resident, but a text
    token's decode step never runs it. Priced as the weights are: a quantized checkpoint's
    stated size (weights_gb) keeps a vision tower in 16 bits, scaled as the weights are."""
    if not v.vision_params:
        return 0
    if v.weights_gb is None:
        return v.vision_params * v.weight_bytes_per_param
    return v.vision_params * 2 * v.weight_bytes_per_param / v.native_bytes_per_param


@_formula("latency_bound_batch", "largest batch whose decode step meets the TPOT target",
          "sequences", needs=("tpot_ms",))
def _latency_bound_batch(v: Any, ops: Any) -> Any:
    readable = v.tpot_ms / 1000 * v.gpus * v.bandwidth_tbs * TB
    return ops.max(0, ops.floor((readable - v.read_weights * _text_weights(v))
                                / v.kv_bytes_per_sequence))


@_formula("operating_batch", "sequences in flight per replica: memory and latency allow",
          "sequences", needs=("tpot_ms",))
def _operating_batch(v: Any, ops: Any) -> Any:
    if not v.latency_binds:
        return v.max_concurrency
    return ops.min(v.max_concurrency, v.latency_bound_batch)


@_formula("operating_step_seconds", "decode step at that batch", "s", needs=("tpot_ms",))
def _operating_step_seconds(v: Any, ops: Any) -> Any:
    read = (v.read_weights * _text_weights(v)
            + v.read_kv * v.operating_batch * v.kv_bytes_per_sequence)
    return read / (v.gpus * v.bandwidth_tbs * TB)


@_formula("request_seconds", "time a request spends decoding", "s",
          needs=("tpot_ms", "output_tokens"))
def _request_seconds(v: Any, ops: Any) -> Any:
    return v.output_tokens * v.operating_step_seconds


@_formula("sustainable_qps", "requests per second one replica sustains", "sequences/s",
          needs=("tpot_ms", "output_tokens"))
def _sustainable_qps(v: Any, ops: Any) -> Any:
    return v.operating_batch / v.request_seconds  # Little's law: λ = L ÷ W


@_formula("requests_in_flight", "requests in flight (Little's law)", "sequences",
          needs=("tpot_ms", "output_tokens", "arrival_rate"))
def _requests_in_flight(v: Any, ops: Any) -> Any:
    think = 0 if v.think_seconds is None else v.think_seconds
    return v.arrival_rate * (v.request_seconds + v.think_in_flight * think)


@_formula("open_conversations_at_rate",
          "open conversations at an arrival rate (in flight or the user thinking)", "sequences",
          needs=("tpot_ms", "output_tokens", "arrival_rate", "think_seconds"))
def _open_conversations_at_rate(v: Any, ops: Any) -> Any:
    return v.arrival_rate * (v.reply_in_cycle * v.request_seconds + v.think_seconds)


@_formula("replicas_for_load", "replicas the arrival rate needs", "",
          needs=("tpot_ms", "output_tokens", "arrival_rate"))
def _replicas_for_load(v: Any, ops: Any) -> Any:
    return ops.ceil(v.requests_in_flight / v.operating_batch)


# ---- Wrong paths -----------------------------------------------------------------------------


@record
class PathSpec:
    id: str
    mistake: str
    advice: str
    change: Callable[[Any], Any]  # a Deployment to a changed one, or None where it does not apply
    also: Callable[[Any], Any] | None = None  # a second form of the same mistake
    describe: Callable[[Any], str] | None = None  # the mistake in a deployment's own figures
    not_for: Callable[[Any, str], bool] | None = None  # quantities it is not the mistake of


def _verify_shares(d: Any) -> str:
    """" (… touch 27.6% of the experts, not 6.2%)" for a batch the deployment states."""
    if d.experts is None or d.experts_per_token is None or d.spec_tokens is None \
            or d.batch is None:
        return ""
    kept = 1 - d.experts_per_token / d.experts
    one, verify = (1 - kept ** min(tokens, EXPERT_TOKENS_CAP)
                   for tokens in (d.batch, d.batch * (d.spec_tokens + 1)))
    tokens = "token" if d.batch == 1 else "tokens"
    return (f": verifying, its {format_number(d.batch * (d.spec_tokens + 1))} tokens touch "
            f"{format_number(100 * verify)}% of the experts; a decode step's "
            f"{format_number(d.batch)} {tokens}, {format_number(100 * one)}%")


def active_as_resident(d: Any) -> Any:
    """An MoE's deployment with only its active parameters as its weights (the experts' count
    and routing kept: they name the model's family and its draft); a given checkpoint size is
    scaled by the share, which wrong_paths prices by what a token reads instead."""
    if d.experts is None or d.active_params is None or d.params is None \
            or d.active_params >= d.params:
        return None
    return d.changed(params=d.active_params, weights_gb=None if d.weights_gb is None
                     else d.weights_gb * d.active_params / d.params)


def _active_share_alone(d: Any, name: str) -> bool:
    """A quantity that reads an MoE's active share only (one token's experts): taking the
    active parameters for all of them is no mistake there, and scaling the share again is
    not the mistake `moe-active-as-resident` names."""
    return name in ("active_weights_bytes", "batch1_ceiling_tokens_per_second",
                    "weights_read_alone") or (
        name in ("weights_read_per_step", "decode_step_seconds", "tokens_per_second",
                 "tokens_per_second_per_sequence") and d.batch == 1)


WRONG_PATHS: tuple[PathSpec, ...] = (
    PathSpec(
        "link-bits-as-bytes",
        "mixed a link's gigabits and gigabytes per second (400 Gb/s is 50 GB/s, not 400)",
        "Network links are quoted in bits: a link of N Gb/s moves N ÷ 8 GB/s. Divide by 8 "
        "once, and only a figure given in bits.",
        lambda d: None if d.link_gbs is None else d.changed(link_scale=8),
        also=lambda d: None if d.link_gbs is None else d.changed(link_scale=Fraction(1, 8)),
        describe=lambda d: "mixed a link's gigabits and gigabytes per second" + (
            "" if d.link_gbs is None else
            f" ({format_number(d.link_gbs * 8)} Gb/s is {format_number(d.link_gbs)} GB/s, "
            f"not {format_number(d.link_gbs * 8)})"),
    ),
    PathSpec(
        "one-way-swap",
        "counted a swap one way only",
        "A preempted sequence's KV goes out to the CPU and comes back before it resumes: "
        "count both directions.",
        lambda d: None if d.link_gbs is None else d.changed(swap_directions=1),
    ),
    PathSpec(
        "draft-time-ignored",
        "left out the time of the k draft steps",
        "Each round runs the draft k times before the target verifies: round = k × draft "
        "step + one target step.",
        lambda d: None if d.spec_tokens is None else d.changed(draft_cost=0),
    ),
    PathSpec(
        "moe-verify-as-one-step",
        "priced the verification of an MoE target as one decode step",
        "A dense target's verification of k + 1 tokens reads what one decode step reads; an "
        "MoE target's k + 1 tokens per sequence are each routed to their own experts: with e "
        "of E experts a token, B sequences touch 1 − (1 − e/E)^(B(k+1)) of them, not "
        "1 − (1 − e/E)^B.",
        lambda d: None if d.spec_tokens is None or d.experts is None
        else d.changed(verify_as_decode=1),
        describe=lambda d: "priced the verification of an MoE target as one decode step"
        + _verify_shares(d),
    ),
    PathSpec(
        "draft-kv-forgotten",
        "left the draft model's own KV out of each sequence's bytes",
        "The draft keeps a KV cache of its own for every sequence it drafts for: a sequence "
        "holds the target's KV and the draft's.",
        lambda d: None if d.spec_tokens is None else d.changed(draft_kv_held=0),
    ),
    PathSpec(
        "all-drafts-accepted",
        "assumed every drafted token is accepted (k + 1 tokens per step)",
        "Token i is kept only if all before it were: expected tokens = (1 − α^(k+1)) ÷ (1 − α).",
        lambda d: None if d.spec_tokens is None else d.changed(accept_all=1),
    ),
    PathSpec(
        "linear-acceptance",
        "counted each drafted token as accepted with α on its own (k × α tokens a round, or "
        "1 + k × α with the target's own)",
        "A drafted token counts only if every one before it was accepted, and the target adds "
        "its own token at the first rejection: expected tokens = (1 − α^(k+1)) ÷ (1 − α), "
        "not k × α.",
        lambda d: None if d.spec_tokens is None else d.changed(accept_linear=1),
        also=lambda d: None if d.spec_tokens is None else d.changed(accept_linear=2),
    ),
    PathSpec(
        "mixed-step-without-decode",
        "gave the whole TPOT target to the prefill chunk",
        "A mixed step still reads every running sequence's KV for their attention, and its "
        "matmuls carry the decode tokens too: the chunk gets only what they leave.",
        lambda d: None if d.tpot_ms is None else d.changed(decode_in_mixed_step=0),
    ),
    PathSpec(
        "chunk-attention-ignored",
        "sized the chunk without its attention, as if every chunk were the first",
        "Later chunks attend to every prompt token before them: the last chunk of a T-token "
        "prompt does 4 × layers × heads × head_dim × C × (T − C/2) attention FLOPs on top of "
        "2 × P_layers × C. Size C for that step, or the last steps overrun the target.",
        lambda d: None if d.long_prompt_tokens is None else d.changed(chunk_attention=0),
    ),
    PathSpec(
        "mixed-step-additive",
        "priced a mixed step as a whole decode step plus the chunk's FLOPs",
        "Decode and chunk tokens share the step's matmuls: the weights are read once for both "
        "(Sarathi-Serve), and the step costs the larger of that read and the FLOPs. step ≈ "
        "decode KV read + max(weight read, (batch + C) tokens' FLOPs ÷ FLOP/s).",
        lambda d: None if d.tpot_ms is None else d.changed(mixed_step_additive=1),
    ),
    PathSpec(
        "latency-limit-ignored",
        "sized the batch by memory alone, leaving out the TPOT target",
        "A replica runs the smaller of two batches: what the KV memory holds, and what keeps "
        "each decode step within the TPOT target; long requests make the step slower, so the "
        "latency limit often binds first.",
        lambda d: None if d.tpot_ms is None else d.changed(latency_binds=0),
    ),
    PathSpec(
        "think-time-only",
        "counted a conversation's cycle as its think time alone, leaving out the reply",
        "A conversation is open while its reply is generated and while its user thinks: open "
        "= in flight × (reply + think) ÷ reply, or arrival rate × (W + think time).",
        lambda d: None if d.think_seconds is None else d.changed(reply_in_cycle=0),
    ),
    PathSpec(
        "think-time-in-flight",
        "counted open conversations (think time included) as requests in flight",
        "A user reading the reply holds no KV: in flight = arrival rate × time in the "
        "system, not × (time in system + think time).",
        lambda d: None if not d.think_seconds else d.changed(think_in_flight=1),
    ),
    PathSpec(
        "hybrid-kv-all-layers",
        "gave every layer of a hybrid model a KV cache",
        "Only the attention layers of a hybrid (Jamba: 4 of 32) cache K and V; the Mamba "
        "layers keep a fixed-size state instead.",
        lambda d: None if d.attention_layers is None else d.changed(attention_layers=d.layers),
        # ... or keeps the state and still gives every layer KV ("the state weighs as much as
        # 66 tokens" where it is 532: the KV per token taken over all 32 layers)
        lambda d: None if d.attention_layers is None else d.changed(kv_on_every_layer=1),
    ),
    PathSpec(
        "moe-active-as-resident",
        "counted only the active parameters of an MoE as its weights",
        "Every expert of an MoE stays resident (the router may send a token to any of them): "
        "the weights are all the parameters; only the FLOPs, and the batch-1 read, are the "
        "active share's.",
        lambda d: active_as_resident(d),
        not_for=_active_share_alone,
    ),
    PathSpec(
        "batch-reads-active-share",
        "took a batch's read of an MoE's weights as one token's, the active share",
        "Each token of a batch is routed to its own experts: with e of E experts a token, B "
        "tokens touch 1 − (1 − e/E)^B of them, nearly all of them at a batch of 64. The active "
        "share is what one token alone reads.",
        lambda d: None if d.experts is None or d.batch == 1
        else d.changed(batch_touches_one=1),
    ),
    PathSpec(
        "embedding-table-read",
        "counted the whole embedding table as read by a decode step (the plain roofline's "
        "simplification, which this drill does not make)",
        "A step looks each token up in the embedding table, one row, and multiplies by the "
        "LM head (read whole unless it is the same table): the table is memory, not reads.",
        lambda d: None if d.reads_embedding or d.tied_embeddings or d.vocab is None
        else d.changed(reads_embedding=1),
    ),
    PathSpec(
        "state-on-every-layer",
        "kept a recurrent state on every layer of a hybrid, the attention layers too",
        "Only the recurrent (Mamba) layers keep a state (Jamba: 28 of 32); the attention "
        "layers keep K and V instead.",
        lambda d: None if d.attention_layers is None or not d.state_elements
        else d.changed(recurrent_layers=d.layers),
    ),
    PathSpec(
        "state-forgotten",
        "left out the recurrent layers' state",
        "Each Mamba layer keeps a state per sequence whatever its length: add it to every "
        "sequence's bytes.",
        lambda d: None if not d.state_elements else d.changed(state_elements=0),
    ),
)


# ---- Display -------------------------------------------------------------------------------

PLACEHOLDERS = (
    "link_gbs", "link_gbits", "output_tokens", "long_prompt_tokens", "tpot_ms", "arrival_rate",
    "think_seconds", "cpu_kv_gb", "spec_tokens", "acceptance_rate", "draft_params_b",
    "draft_layers", "draft_kv_heads", "draft_head_dim", "attention_layers", "recurrent_layers",
    "state_elements", "tflops", "layer_params_b", "lm_head_params_b", "draft_name",
    "draft_family", "draft_window_note", "moe_routing_note",
)


def display(d: Any, number: Callable[..., str]) -> dict[str, str]:
    """Every placeholder above, formatted for a prompt; "unknown" where the drill has none."""
    def shown(value: Any, scale: Any = 1) -> str:
        return "unknown" if value is None else number(Fraction(value) * scale, sig=4)

    recurrent = None if d.attention_layers is None else recurrent_layers(d)
    draft = derived_inputs(d)
    named = family_draft(d) if d.spec_tokens is not None and d.draft_params is None else Draft()
    window_note = "" if draft["draft_window"] is None else (
        f"; {number(draft['draft_windowed_layers'])} of its layers keep only a "
        f"{number(draft['draft_window'])}-token window")
    routing = "" if d.experts is None else (
        f" An MoE step reads only the experts its tokens are routed to: "
        f"{number(d.experts_per_token)} of {number(d.experts)} per token in each MoE layer.")
    active = d.params if d.active_params is None else d.active_params
    head = None if d.vocab is None or d.hidden is None else d.vocab * d.hidden
    layer_params = active if head is None or active is None else \
        active - head * (1 if d.tied_embeddings else 2)
    values: Mapping[str, str] = {
        "link_gbs": shown(d.link_gbs),
        "link_gbits": shown(d.link_gbs, 8),
        "output_tokens": shown(d.output_tokens),
        "long_prompt_tokens": shown(d.long_prompt_tokens),
        "tpot_ms": shown(d.tpot_ms),
        "arrival_rate": shown(d.arrival_rate),
        "think_seconds": shown(d.think_seconds),
        "cpu_kv_gb": shown(d.cpu_kv_gb),
        "spec_tokens": shown(d.spec_tokens),
        "acceptance_rate": shown(d.acceptance_rate),
        "draft_params_b": shown(draft["draft_params"], Fraction(1, 10**9)),
        "draft_layers": shown(draft["draft_layers"]),
        "draft_kv_heads": shown(draft["draft_kv_heads"]),
        "draft_head_dim": shown(draft["draft_head_dim"]),
        "draft_name": named.name or "the draft",
        "draft_family": named.family or "the target's",
        "draft_window_note": window_note,
        "moe_routing_note": routing,
        "attention_layers": shown(d.attention_layers),
        "recurrent_layers": shown(recurrent),
        "state_elements": shown(d.state_elements),
        "tflops": shown(d.tflops),
        "layer_params_b": shown(layer_params, Fraction(1, 10**9)),
        "lm_head_params_b": shown(head, Fraction(1, 10**9)),
    }
    return dict(values)
