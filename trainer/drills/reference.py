"""A drill's answer key: the givens (or a variant's draw) → one deployment per step → the
reference value of every numeric step, the values its wrong paths give, and re-computation
from a candidate's own earlier answers (error carried forward)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from functools import cached_property
from typing import Any

from trainer.capacity.deployment import DTYPE_BYTES, Deployment
from trainer.capacity.presets import (
    ModelPreset,
    build_deployment,
    find_gpu,
    fp8_released,
    model_of,
    published_active,
)
from trainer.capacity.serving_formulas import PLACEHOLDERS as SERVING_PLACEHOLDERS
from trainer.capacity.serving_formulas import display as serving_display
from trainer.capacity.serving_formulas import vision_bytes as serving_vision_bytes
from trainer.capacity.solver import (
    FORMULAS,
    INPUT_UNITS,
    Relaxed,
    Solution,
    exact_reads,
    value_of,
)
from trainer.capacity.wrong_paths import (
    UNIT_MIXES,
    WRONG_PATHS,
    changed_by,
    paired_wrong_values,
    wrong_values,
)
from trainer.drills.model import Derived, Drill, FitGpus, Step
from trainer.drills.placeholders import fill
from trainer.errors import DrillFileError, KvdrillError
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor
from trainer.reading.formatting import format_bytes, format_quantity, format_seconds
from trainer.reading.numbers import format_number
from trainer.reading.units import BYTES, TOKENS, Dim
from trainer.records import field, record

Givens = Mapping[str, Any]

# Inputs a step may ask for directly (the shape questions), with their units.
INPUT_ANSWERS = INPUT_UNITS
LITERAL_GIVENS = {"model", "gpu", "kv_dtype", "weights_dtype", "native_weights_dtype",
                  "attention", "memory", "checkpoint"}
# Floors and the quotient they round down. On an estimate step the unrounded value is as good
# an answer ("96.9 sessions" for ~96); where whole sequences are counted exactly it is the
# rounded-up mistake (a partial sequence is not served).
# A count's quotient before its floor: the first name over the product of the others.
UNROUNDED = {"max_concurrency": ("kv_budget_bytes", "kv_bytes_per_sequence"),
             "max_tokens": ("kv_budget_bytes", "kv_bytes_per_token"),
             "num_blocks": ("kv_budget_bytes", "kv_bytes_per_token", "block_size")}
# Ceilings and the quotient they round up: a fraction of one more block (or replica) needs
# the whole of it, so the unrounded value and the count below are the rounded-down mistake.
CEILINGS = {"blocks_per_sequence": ("context", "block_size"),
            "replicas_for_load": ("requests_in_flight", "operating_batch"),
            "chunked_prefill_steps": ("long_prompt_tokens", "max_chunk_tokens")}
# Quantities that count whole things (sequences, blocks) besides any step in sequences.
WHOLE_COUNTS = {"num_blocks", "max_concurrency", "max_concurrency_with_prefix",
                "spec_max_concurrency", "cpu_tier_sessions", "latency_bound_batch",
                "operating_batch"}
_DECIMAL_BINARY = Fraction(1000, 1024)
# A count whose quotient is this close to the next whole number (below a floor, above a
# ceiling) is on a knife edge: inputs rounded as they are shown, to three or four figures,
# give the neighbour, so both are right.
KNIFE_EDGE = Fraction(1, 400)
# A step asked exactly (tolerance 0) shows its inputs to four or five figures (a checkpoint's
# 72.66 GB of a 178.78 GB budget): only a quotient within their rounding is on the edge
# (257.998 → 258, which the checkpoint's exact bytes give), not 532.81 → 533 (expert pass 47).
KNIFE_EDGE_EXACT = Fraction(1, 20_000)


def quantity_unit(name: str) -> str:
    if name in FORMULAS:
        return FORMULAS[name].unit
    if name in INPUT_ANSWERS:
        return INPUT_ANSWERS[name]
    raise KeyError(name)


def dim_of_unit(unit: str | None) -> Dim:
    if not unit:
        return Dim()
    return unit_factor(unit).dim


@record
class Reference:
    """What a numeric step expects, in base units (bytes, tokens, sequences, seconds)."""

    step_id: str
    value: Fraction
    unit: str  # the unit the step shows it in
    alternatives: tuple[Fraction, ...]  # other values that are just as right
    whole_count: bool = False  # counts whole things exactly: nothing above the floor is right
    find_wrong: Callable[[], tuple[tuple[str, Fraction], ...]] = field(
        default=tuple, repr=False, compare=False
    )
    ceiling: bool = False  # a count rounded up exactly: nothing below the ceiling is right
    # The count on the other side of a knife edge, as right as the reference: a quotient
    # within KNIFE_EDGE of the next whole number (775.9 sequences, whose inputs shown to
    # three or four figures give 776)
    edge: Fraction | None = None
    quotient: Fraction | None = None  # the quotient the edge is read from, for the key
    knife: Fraction = KNIFE_EDGE  # how near the quotient must be to the edge
    # the ratio of the candidate's own two answers, each right (one of the alternatives)
    own: Fraction | None = None

    @cached_property
    def wrong(self) -> tuple[tuple[str, Fraction], ...]:
        """(misconception id, value) of each wrong path, computed when first asked for: checking
        that a variant is sensible needs only the references."""
        return self.find_wrong()

    @cached_property
    def display(self) -> str:
        # (kept: a key compares every wrong value and slip of the step with it)
        return show(self.value, self.unit)

    @property
    def edge_note(self) -> str:
        """Why the count beside the reference is right too, for a key ("" where none is)."""
        if self.edge is None or self.quotient is None:
            return ""
        digits = next(d for d in range(4, 16)
                      if float(f"{float(self.quotient):.{d}g}") != self.edge)
        # as many decimals as it takes not to read as the neighbour, never in exponent form
        decimals = max(1, digits - len(str(int(self.quotient))))
        return (f"{format_number(self.edge)} is as right: the quotient, "
                f"{float(self.quotient):,.{decimals}f}, is within "
                f"{format_number(self.knife * 100)}% of it, inside the rounding of the inputs")


def unit_slips(value: Fraction, unit: str, from_bytes: bool = True,
               proportional: bool = True) -> list[tuple[str, Fraction]]:
    """A byte figure with its prefix read the other way: the GiB figure labelled GB (52 GB
    written 48.4 GB) and the GB figure labelled GiB (52 GB written 52 GiB = 55.8 GB), at the
    prefix the value is naturally written with (K, M, G, T). `from_bytes`: whether a figure in
    another unit is worked out from bytes at all (a token count of prompt and history is not:
    no prefix of a byte unit can have slipped on its way); `proportional`: whether a time or
    rate is bytes over a rate (a step's read ÷ bandwidth), so that the slip rescales it."""
    dim = dim_of_unit(unit) if unit else None
    if dim == BYTES and value >= 1000:
        powers: tuple[int, ...] = (min(4, (len(str(int(value))) - 1) // 3),)
    elif not from_bytes:
        return []
    elif dim == TOKENS:
        powers = (1, 2, 3)  # tokens from a budget over bytes per token: KB, MB or GB slipped
    elif proportional and dim is not None and dim.bytes == 0 and (dim.seconds or dim.tokens):
        powers = (3,)  # bytes over a rate, with GB and GiB mixed on the way
    else:
        # Not every time is its bytes rescaled: a TTFT is whole steps of a TPOT, a prefill
        # its FLOPs. Where a GB figure read as GiB moves it, the gb-gib wrong path evaluates
        # that through the formulas instead.
        return []
    return [(UNIT_MIXES[p], value * factor) for p in powers for factor in
            (_DECIMAL_BINARY**p, 1 / _DECIMAL_BINARY**p)]


def _reads_bytes(deployment: Deployment, name: str) -> bool:
    """Whether `name`'s value is read from a byte figure (an input or a quantity in bytes, or
    per byte); True where the reads cannot be worked out."""
    def in_bytes(read: str) -> bool:
        if read in FORMULAS:
            return dim_of_unit(FORMULAS[read].unit).bytes != 0
        return read in _BYTE_INPUTS or dim_of_unit(INPUT_UNITS.get(read, "")).bytes != 0

    if name not in FORMULAS:  # an input, asked for itself
        return in_bytes(name)
    reads = exact_reads(deployment, name)
    return True if reads is None else any(in_bytes(read) for read in reads)


# Times and rates that are bytes over a rate (or its inverse): a GB read as GiB on the way
# rescales them by 1.0737.
TOKENS_FROM_BYTES = frozenset({"max_tokens", "state_equivalent_tokens"})
BYTES_OVER_A_RATE = frozenset({
    "decode_step_seconds", "tokens_per_second", "tokens_per_second_per_sequence",
    "batch1_ceiling_tokens_per_second", "kv_transfer_seconds", "draft_step_seconds",
    "spec_verify_seconds", "mixed_step_kv_seconds", "weights_read_seconds", "swap_seconds",
    "operating_step_seconds"})

# The inputs that are (or set) a byte figure: sizes, rates of bytes, dtypes' bytes.
_BYTE_INPUTS = frozenset({
    "hbm_gb", "bandwidth_tbs", "weights_gb", "reserve_gb", "link_gbs", "cpu_kv_gb",
    "kv_bytes_override", "gb_bytes", "link_scale", "kv_dtype", "weights_dtype",
    "native_weights_dtype", "tables_dtype", "kv_bytes_per_element", "weight_bytes_per_param",
    "native_bytes_per_param", "table_bytes_per_param"})


def show(value: Fraction, unit: str) -> str:
    """A value (base units) in a step's unit; bytes with no unit chosen read naturally: exact
    below 10 MB (327,680 B (320 KiB)), else in SI units (10.7 GB). A byte count that is not a
    whole number of bytes (a mistake's value, GB and GiB mixed) is only rounded (2.75 MB),
    from 1 KB up."""
    if not unit:
        return format_number(value)
    if unit == "B":
        exact = value < 10**7 and (value.denominator == 1 or value < 1000)
        return format_bytes(value, system="both" if exact else "auto")
    if unit == "s":
        return format_seconds(value)
    if unit == "sequences" and value == 1:
        return "1 sequence"
    return format_quantity(unit_factor(unit) * (value / unit_factor(unit).value), unit)


def _count_or(value: int | Fraction | None, missing: str) -> str:
    return missing if value is None else format_number(value)


def _as_number(value: Any) -> Any:
    if isinstance(value, float):
        return Fraction(str(value))
    if isinstance(value, Fraction) and value.denominator == 1:
        return int(value)
    return value


_PLAIN = (str, int, float, Fraction, type(None))
ROPE_SCALING_REACH = 4  # the factor YaRN is published with (Qwen2.5, Qwen3: 32k → 128k)
_DEPLOYMENTS: dict[tuple[str, str, str], Deployment] = {}
MAX_DEPLOYMENTS = 4096


def _runtime_words(card_name: str) -> dict[str, str]:
    amd, gaudi = card_name.startswith("AMD"), card_name.startswith("Intel Gaudi")
    return {"graphs": "HIP graphs" if amd else "HPU graphs" if gaudi else "CUDA graphs",
            "collectives": "RCCL" if amd else "HCCL" if gaudi else "NCCL",
            # the L40S and L4 carry GDDR6, every other preset HBM
            "memory": "GDDR6" if card_name.endswith(("L40S", "L4")) else "HBM",
            # Intel sells Gaudi as an AI accelerator, not a GPU
            "gpu_cards": "accelerators" if gaudi else "GPUs"}


_COUNT_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 6: "six", 8: "eight", 16: "sixteen"}
_SHARES = {1: "all", 2: "half", 4: "a quarter", 8: "an eighth", 16: "a sixteenth"}


def _fp8_weights_text(model: ModelPreset | None, d: Deployment,
                      shown: Mapping[str, str]) -> dict[str, str]:
    """How a step with `checkpoint: fp8-or-load` names its FP8 weights: the checkpoint
    released for the model where the preset records one, else the 16-bit release quantized
    at load by vLLM (--quantization fp8), whose linear layers are FP8 and whose embedding and
    LM head stay 16-bit (presets.FP8_OR_LOAD). The released wording is the drill's own."""
    name = shown["model_name"]
    tables = "the embedding and the LM head"
    if d.vocab and d.hidden:
        count = f"{format_number(d.vocab)} × {format_number(d.hidden)}"
        tables_params = (f"{count} parameters at 2 B" if d.tied_embeddings
                         else f"2 × {count} parameters at 2 B")
    else:
        tables_params = "unknown"
    if model is None or fp8_released(model) or model.weights_dtype not in ("bf16", "fp16") \
            or not d.vocab or not d.hidden:
        return {
            "fp8_source": "released",
            # (the situation's own line break, in the drill's words)
            "fp8_weights_come": "come as an FP8\ncheckpoint",
            "fp8_later_step": "(a later step asks what the released checkpoint really weighs)",
            "fp8_weights_question": (
                f"The FP8 checkpoints released for {name} are not one byte per parameter: they "
                f"keep {tables} in BF16. With the released checkpoint's size from the preset "
                f"({shown['fp8_checkpoint_gb']} GB),"),
            "fp8_exactly": "the few sessions the larger checkpoint costs are the point",
            "fp8_weights_gb": shown["fp8_checkpoint_gb"],
            "fp8_tables_params": tables_params,
            "fp8_formula_weights": "checkpoint weights",
            "fp8_converted": "the linear layers",
            "fp8_tables_kept": "the embedding and the LM head as they were",
        }
    wide = model.weights_dtype.upper()
    if d.tied_embeddings:
        tables = "the embedding table, which is also the LM head,"
    # (an MoE's experts are FusedMoE layers, which Fp8Config converts as well)
    converted = "the linear layers and the experts" if d.experts else "the linear layers"
    kept = (d.vocab * d.hidden * (1 if d.tied_embeddings else 2))
    size = (d.params or 0) + kept * (DTYPE_BYTES[model.weights_dtype] - 1)
    gb = format_number(Fraction(size) / 10**9, sig=4)
    return {
        "fp8_source": "load",
        "fp8_weights_come": f"are quantized to FP8 at load by vLLM\n(--quantization fp8) "
                            f"from {name}'s {wide} release",
        "fp8_later_step": "(a later step asks what that quantization really leaves)",
        "fp8_weights_question": (
            f"vLLM's FP8 quantization at load (--quantization fp8) is not one byte per "
            f"parameter: it converts {converted} to FP8 and keeps {tables} in "
            f"{wide}. With the weights it leaves of {name} ({gb} GB),"),
        "fp8_exactly": (f"what the {wide} table costs, if anything, is the point"
                        if d.tied_embeddings else
                        f"what the {wide} tables cost, if anything, is the point"),
        "fp8_tables_kept": ("the embedding table, which is also its LM head, as it was"
                            if d.tied_embeddings else
                            "the embedding and the LM head as they were"),
        "fp8_weights_gb": gb,
        "fp8_formula_weights": "weights quantized at load",
        "fp8_converted": converted,
        "fp8_tables_params": tables_params.replace("at 2 B", f"at 2 B in {wide}")
        if wide != "BF16" else tables_params,
    }


def _split_words(gpus: int | None) -> dict[str, str]:
    """How a step that chooses its GPU count (gpus: {fit: [2, 4, 8]}) says it: "two" GPUs,
    "half" of every token's KV on each, "across the pair"."""
    if gpus is None:
        return {"split_gpus": "unknown", "split_gpus_word": "unknown",
                "split_share": "unknown", "split_across": "unknown"}
    word = _COUNT_WORDS.get(gpus, format_number(gpus))
    return {"split_gpus": format_number(gpus), "split_gpus_word": word,
            "split_share": _SHARES.get(gpus, f"1/{gpus}"),
            "split_across": "across the pair" if gpus == 2 else f"across the {word} GPUs"}


MAX_RECOMPUTED = 4096  # recompute's values kept per key (a wrong sheet asks about 1,300)


class AnswerKey:
    """Reference values of one drill for one set of givens (the drill's own or a variant's)."""

    PLACEHOLDERS = (
        "model_name", "gpu_name", "hbm_gb", "bandwidth_tbs", "context", "layers", "heads",
        "kv_heads", "head_dim", "hidden", "weights_gb", "reserve_gb", "utilization", "gpus",
        "kv_dtype", "weights_dtype", "weights_in", "params_b", "batch", "block_size",
        "prompt_tokens",
        "prefix_tokens", "window", "hbm_marketed_gb", "bandwidth_datasheet_tbs",
        "hbm_reported_mib", "hbm_reported_gb",
        "attention_params_b", "reply_seconds", "fp8_checkpoint_gb", "weights_read_gb",
        "window_note", "attention_flops_rule", "weights_note", "head_dim_hint", "experts",
        "experts_per_token", "active_params_b", "windowed_layers", "idle_experts",
        "matmul_params_b", "matmul_active_b",
        "experts_read_batch64", "experts_noun", "active_weights_hint", "active_weights_formula",
        "graphs", "collectives", "memory", "gpu_cards",
        "session_kv_hint", "session_kv_product", "positions_note", "beyond_reach_note",
        "vision_note", "vision_read_note", "embedding_read_note", "active_read_note",
        "session_kv_formula",
        "resident_weights_formula", "shared_experts_note", "routed", "active_table_note",
        "moe_layer_word", "dense_mlp_note", "moe_layers_said", "windowed_said",
        "max_num_seqs_default", "block_size_note", "batch_cost_question",
        "claimed_active_b", "split_gpus", "split_gpus_word", "split_share", "split_across",
        "sequence_kv_hint", "half_context_hint", "ridge_hint", "rate_measured_on",
        "fp8_weights_come", "fp8_later_step", "fp8_weights_question", "fp8_exactly",
        "fp8_weights_gb", "fp8_tables_params", "fp8_source", "fp8_formula_weights",
        "fp8_tables_kept", "fp8_converted",
        *SERVING_PLACEHOLDERS,
    )

    def __init__(self, drill: Drill, givens: Givens | None = None) -> None:
        self.drill = drill
        self.givens: dict[str, Any] = dict(drill.givens if givens is None else givens)
        self._deployments: dict[str, Deployment] = {}
        self._references: dict[str, Reference] = {}
        self.base = self._build(self.givens, "givens")
        self._shown: dict[str, str] | None = None  # display_givens, once worked out
        # recompute's values: a wrong sheet's carried answers ask the same sets many times
        self._recomputed: dict[tuple[str, frozenset[tuple[str, Fraction]], bool],
                               Fraction | None] = {}
        # "Qwen3-32B on NVIDIA H200" when the drill was re-targeted (variants.answer_key)
        self.retargeted: str | None = None
        self.target_digest: str | None = None  # variants.target_digest of that target

    # -- deployments -------------------------------------------------------------------------

    def build(self, givens: Givens) -> Deployment:
        """The deployment another set of givens makes (a variant's, one choice changed)."""
        return self._build(givens, "variant")

    def _build(self, givens: Givens, what: str) -> Deployment:
        # The same givens make the same deployment: kept per process (plain givens only, whose
        # repr says all they are), so the keys of one variant (the draw's check, the key
        # written) share their deployments, and every evaluation kept with one.
        plain = all(isinstance(v, _PLAIN) for v in givens.values())
        kept = (self.drill.id, what, repr(sorted(givens.items()))) if plain else None
        if kept is not None and (found := _DEPLOYMENTS.get(kept)) is not None:
            return found
        values = {k: _as_number(v) for k, v in givens.items() if k not in ("model", "gpu")}
        try:
            deployment, _ = build_deployment(givens.get("model"), givens.get("gpu"), values,
                                             origin="drill")
        except KvdrillError as error:
            raise DrillFileError(f"drill {self.drill.id}: {what}: {error}") from None
        if kept is not None:
            if len(_DEPLOYMENTS) >= MAX_DEPLOYMENTS:
                _DEPLOYMENTS.clear()
            _DEPLOYMENTS[kept] = deployment
        return deployment

    def step_givens(self, step: Step) -> dict[str, Any]:
        givens = dict(self.givens)
        for key, value in step.with_.items():
            if value is None:
                givens.pop(key, None)
            elif isinstance(value, Derived):
                base = self._base_value(value.of, step)
                givens[key] = base * Fraction(str(value.times))
            elif isinstance(value, FitGpus):
                givens[key] = value.fit[-1]  # chosen below, once the other changes are in
            elif isinstance(value, str) and key not in LITERAL_GIVENS:
                givens[key] = self._base_value(value, step)
            else:
                givens[key] = value
        fit = step.with_.get("gpus")
        if isinstance(fit, FitGpus):
            givens["gpus"] = self._fewest_gpus(step, givens, fit.fit)
        return givens

    def _fewest_gpus(self, step: Step, givens: dict[str, Any], counts: tuple[int, ...]) -> int:
        """The fewest of `counts` GPUs on which the step's deployment has memory for the KV
        cache and holds one sequence; the most, when none does (the drill then refuses the
        target, naming that many GPUs)."""
        for count in counts[:-1]:
            try:
                d = self._build({**givens, "gpus": count}, f"step {step.id}")
                if value_of(d, "kv_budget_bytes") > 0 and value_of(d, "max_concurrency") >= 1:
                    return count
            except (KvdrillError, ZeroDivisionError):
                continue
        return counts[-1]

    def step_gpus(self) -> int | None:
        """The GPU count a step that chooses one (gpus: {fit: ...}) settled on."""
        for step in self.drill.steps:
            if isinstance(step.with_.get("gpus"), FitGpus):
                return int(self.deployment(step.id).gpus)
        return None

    def _base_value(self, name: str, step: Step) -> Fraction:
        if name in FORMULAS:
            return value_of(self.base, name)
        if hasattr(self.base, name) and isinstance(getattr(self.base, name), int | Fraction):
            return Fraction(getattr(self.base, name))
        raise DrillFileError(
            f"drill {self.drill.id}: step {step.id}: 'with' names {name!r}, which is neither "
            "a given nor a solver quantity"
        )

    def deployment(self, step_id: str) -> Deployment:
        if step_id not in self._deployments:
            step = self.drill.step(step_id)
            if not step.with_:
                self._deployments[step_id] = self.base
            else:
                self._deployments[step_id] = self._build(self.step_givens(step),
                                                         f"step {step_id}")
        return self._deployments[step_id]

    # -- references --------------------------------------------------------------------------

    def reference(self, step_id: str) -> Reference:
        if step_id not in self._references:
            self._references[step_id] = self._reference(self.drill.step(step_id))
        return self._references[step_id]

    def _reference(self, step: Step) -> Reference:
        unit = step.unit or ""
        if step.ratio_of is not None:
            a, b = (self.reference(other).value for other in step.ratio_of)
            if b == 0:
                raise DrillFileError(f"drill {self.drill.id}: step {step.id}: ratio of zero")
            # the ratio before the counts were floored is as right (31.3 ÷ 3.93 = 7.97 sessions
            # against 31 ÷ 3 = 10.3: the bytes per session differ 8×)
            ua, ub = (self._unrounded(self.drill.step(other)) for other in step.ratio_of)
            before = () if ua is None or ub is None or not ub or ua / ub == a / b \
                else (ua / ub,)
            return Reference(step.id, a / b, unit, before)
        assert step.answer is not None
        answer: str = step.answer
        deployment = self.deployment(step.id)
        value = self.value(answer, deployment)
        unrounded = self._unrounded(step)
        whole = not step.estimate and value.denominator == 1 and (
            unit == "sequences" or step.answer in WHOLE_COUNTS)
        alternatives = () if whole or unrounded is None else (unrounded,)
        below: Fraction | None = None  # the quotient a ceiling rounds up
        if not step.estimate and step.answer in CEILINGS:
            top, bottom = (self.value(q, deployment) for q in CEILINGS[step.answer])
            below = top / bottom if bottom else None

        edge: Fraction | None = None
        quotient: Fraction | None = None
        knife = KNIFE_EDGE_EXACT if step.tolerance == 0 else KNIFE_EDGE
        if whole and unrounded is not None and value < unrounded < value + 1 \
                and value + 1 - unrounded <= knife * unrounded:
            edge, quotient = value + 1, unrounded
        elif below is not None and value - 1 < below < value \
                and below - (value - 1) <= knife * below:
            edge, quotient = value - 1, below

        def find_wrong() -> tuple[tuple[str, Fraction], ...]:
            # Exact values only: a formula that returns a plain 0 (or a float, from a measured
            # rate) along a wrong path is made a Fraction, as every reference is.
            found = [(path, v if isinstance(v, Fraction) else Fraction(v))
                     for path, v in self._wrong(step, deployment) if v >= 0]
            # a token count is rescaled by a prefix slip only where it is bytes over bytes per
            # token (a budget's tokens, a state's worth): a crossover or a chunk is not
            of_bytes = _reads_bytes(deployment, answer) and (
                answer not in FORMULAS or dim_of_unit(unit) != TOKENS
                or answer in TOKENS_FROM_BYTES)
            found += unit_slips(value, unit, of_bytes,
                                answer in BYTES_OVER_A_RATE)
            # the quotient one floor took away; not a count floored per rank and summed (DP
            # attention's 8 × 57 = 456 against 457.9 pooled: that is the pooling mistake)
            if whole and unrounded is not None and value < unrounded < value + 1:
                found += [("rounded-up", unrounded)]
                if edge != value + 1:
                    found.append(("rounded-up", value + 1))
            if below is not None and below < value:
                found += [("rounded-down", below)]
                if edge != value - 1:
                    found.append(("rounded-down", value - 1))
            if answer == "max_concurrency" and deployment.dp_attention \
                    and deployment.gpus > 1:
                # each rank's count rounded up: 16 ranks × 8 for 7.91 a rank (expert pass 49)
                per_rank = value_of(deployment, "kv_budget_bytes") / deployment.gpus \
                    / value_of(deployment, "kv_bytes_per_sequence")
                if per_rank % 1:
                    above = math.floor(per_rank) + 1
                    found.append(("rounded-up", Fraction(deployment.gpus * above)))
            if step.answer == "shared_prefix_tokens" and deployment.prefix_tokens and \
                    deployment.prefix_tokens % deployment.block_size:
                found.append(("rounded-up", value + deployment.block_size))  # a partial block
            return tuple(dict.fromkeys(found))  # one entry per (mistake, value)

        return Reference(step.id, value, unit, alternatives, whole, find_wrong,
                         ceiling=below is not None and below < value, edge=edge,
                         quotient=quotient, knife=knife)

    def _unrounded(self, step: Step) -> Fraction | None:
        """A count step's quotient before its floor (None where it has none)."""
        if step.answer not in UNROUNDED:
            return None
        deployment = self.deployment(step.id)
        top, *under = (self.value(q, deployment) for q in UNROUNDED[step.answer])
        bottom = math.prod(under, start=Fraction(1))
        return top / bottom if top > 0 and bottom else None

    def value(self, name: str, deployment: Deployment) -> Fraction:
        if name in FORMULAS:
            # Kept with the deployment, not the key: the keys of one variant (the draw's check,
            # the key written) share their deployments (_build), and so their evaluations.
            return value_of(deployment, name)
        return Fraction(getattr(deployment, name))

    def _wrong(self, step: Step, deployment: Deployment) -> list[tuple[str, Fraction]]:
        assert step.answer is not None
        # Every known mistake is checked where it changes the value, the step's own list
        # first (a tie names the one the author expected).
        order = step.misconceptions + tuple(p for p in WRONG_PATHS if p not in step.misconceptions)
        if step.answer in FORMULAS:
            return wrong_values(deployment, step.answer, order)
        # A shape question (layers, KV heads, head_dim, bytes per element): the input itself
        # along each wrong path.
        truth = self.value(step.answer, deployment)
        found = []
        for path_id in order:
            changed = changed_by(deployment, WRONG_PATHS[path_id])
            if changed is not None and (value := Fraction(getattr(changed, step.answer))) != truth:
                found.append((path_id, value))
        if step.answer == "head_dim" and deployment.hidden is not None:
            found.append(("hidden-for-kv-width", Fraction(deployment.hidden)))
        return found

    def paired_wrong(self, step_id: str) -> tuple[tuple[tuple[str, str], Fraction], ...]:
        """Two mistakes made at once (80 − 16 = 64 GB: no utilisation cap and no reserve), for
        an answer that no single mistake explains."""
        step = self.drill.step(step_id)
        if step.answer is None or step.answer not in FORMULAS:
            return ()
        return tuple(paired_wrong_values(self.deployment(step_id), step.answer))

    def recompute(self, step_id: str, carried: Mapping[str, Fraction], relaxed: bool = False
                  ) -> Fraction | None:
        """The step's value computed from earlier answers (step id → value in base units)
        standing for the quantities those steps ask; None when it cannot be recomputed.
        `relaxed`: with the floors left out (29.8 sessions, where the count is 29)."""
        kept = (step_id, frozenset(carried.items()), relaxed)
        if kept not in self._recomputed:
            if len(self._recomputed) >= MAX_RECOMPUTED:
                self._recomputed.clear()
            self._recomputed[kept] = self._recompute(step_id, carried, relaxed)
        return self._recomputed[kept]

    def _recompute(self, step_id: str, carried: Mapping[str, Fraction], relaxed: bool
                   ) -> Fraction | None:
        step = self.drill.step(step_id)
        if step.ratio_of is not None:
            a_id, b_id = step.ratio_of
            a = carried.get(a_id, self.reference(a_id).value)
            b = carried.get(b_id, self.reference(b_id).value)
            return None if b == 0 else a / b
        if step.answer is None or step.answer not in FORMULAS:
            return None
        overrides: dict[str, Fraction] = {}
        # a given this step works out of an earlier step's quantity ("twice your 3a batch"):
        # the candidate's answer to that step, as the step depends on it, sets the given
        derived = {v.of: (name, v.times) for name, v in step.with_.items()
                   if isinstance(v, Derived)}
        for earlier_id, value in carried.items():
            earlier = self.drill.step(earlier_id)
            if earlier.answer is None:
                continue
            if earlier_id in step.depends_on and earlier.answer in derived:
                name, times = derived[earlier.answer]
                overrides[name] = value * Fraction(str(times))
                continue
            overrides[earlier.answer] = value
        if step.answer in overrides:
            return None
        if step.answer == "max_concurrency" and "max_tokens" in overrides:
            # "how many sessions is that?" of the live tokens answered: their count ÷ the
            # context, where a sequence holds its tokens' KV and nothing else
            return self._sessions_of_tokens(step_id, overrides["max_tokens"], relaxed)
        try:
            if relaxed:
                return Relaxed(self.deployment(step_id), overrides, {})[step.answer]
            return Solution(self.deployment(step_id), overrides)[step.answer]
        except (ZeroDivisionError, ValueError, OverflowError):
            return None

    def _sessions_of_tokens(self, step_id: str, tokens: Fraction, relaxed: bool
                            ) -> Fraction | None:
        d = self.deployment(step_id)
        held = value_of(d, "tokens_held_per_sequence")
        if d.dp_attention or not held or value_of(d, "kv_bytes_per_sequence") != \
                value_of(d, "kv_bytes_per_token") * held:
            return None  # (a window, a recurrent state or a rank's own pool: no such quotient)
        return tokens / held if relaxed else Fraction(math.floor(tokens / held))

    # -- display -----------------------------------------------------------------------------

    def display_givens(self) -> dict[str, str]:
        """Every {{ name }} a prompt may use, formatted for a reader: worked out once per key
        (a key's givens do not change), a copy each call."""
        if self._shown is None:
            self._shown = self._display_givens()
        return dict(self._shown)

    def _batch_cost_question(self) -> str:
        """What a drill whose lesson is a shared weight read asks of batching: the seed's "why
        it costs each user so little" where the weights are at least half of what a full
        batch's step reads, else what batching shares and what it does not (Llama-3.2-1B on
        an A100: the weights are 4% of the step, and each user gets a twentieth of the speed
        of one alone)."""
        if not self.drill.requires.weights_dominate:
            return ""
        d = self.base
        try:
            weights = value_of(d, "weights_read_per_step")
            kv = value_of(d, "kv_bytes_per_sequence") * value_of(d, "max_concurrency")
        except (KvdrillError, ZeroDivisionError):
            return "why serving many users at once costs each of them so little"
        if 2 * weights >= weights + kv:
            return "why serving many users at once costs each of them so little"
        return ("what serving many users at once shares among them and what it does not, "
                "and so what each user costs here")

    def _rate_measured_on(self, model: Any) -> str:
        """Where a measured rate (the 550 TFLOP/s prefill) comes from, said of this key's
        model: "measured on this card" for the model it was measured with (or its twin weight
        for weight), and, for a model the drill's variants draw (Qwen2.5-7B), that it was
        measured with the other shape and is assumed for this one: never "measured" of a model
        nobody ran (expert pass 58, W3)."""
        from trainer.capacity.presets import same_weights

        measured = self.drill.requires.measured_on or {}
        shape = measured.get("model")
        if not shape or not model:
            return "measured on this card"
        own, preset = model_of(shape), model_of(model)
        if preset.id == own.id or same_weights(preset, own):
            return "measured on this card"
        return f"measured on this card with {own.name}'s shape, assumed for {preset.name}"

    def _display_givens(self) -> dict[str, str]:
        d = self.base
        model = self.givens.get("model")
        gpu = self.givens.get("gpu")
        weights = value_of(d, "weights_bytes")
        shown: dict[str, str] = {
            "model_name": model_of(model).name if model else "the model",
            "gpu_name": find_gpu(gpu).name if gpu else "the GPU",
            # the card's runtime: CUDA graphs and NCCL, HIP graphs and RCCL (ROCm), HPU graphs
            # and HCCL (Gaudi)
            **_runtime_words(find_gpu(gpu).name if gpu else ""),
            "hbm_gb": format_number(d.hbm_gb, sig=4),
            "bandwidth_tbs": format_number(d.bandwidth_tbs, sig=4),
            "context": format_number(d.context),
            "layers": format_number(d.layers),
            "heads": format_number(d.heads),
            "kv_heads": format_number(d.kv_heads),
            "head_dim": format_number(d.head_dim),
            "hidden": format_number(d.hidden) if d.hidden else "unknown",
            "weights_gb": format_number(weights / 10**9, sig=4),
            "reserve_gb": format_number(d.reserve_gb, sig=4),
            "utilization": format_number(d.utilization, sig=4),
            "gpus": format_number(d.gpus),
            "kv_dtype": d.kv_dtype,
            "weights_dtype": d.weights_dtype,
            # (GPT-OSS: only the experts are MXFP4, attention, router and tables stay bf16)
            "weights_in": f"the experts' weights in {d.weights_dtype}, the rest in "
                          f"{d.tables_dtype}" if d.weights_dtype == "mxfp4" and d.tables_dtype
                          else f"weights in {d.weights_dtype}",
            "params_b": format_number((d.params or 0) / 10**9, sig=4),
            "attention_params_b": format_number((d.attention_params or 0) / 10**9, sig=3),
            "active_params_b": format_number((d.active_params or d.params or 0) / 10**9, sig=3),
            "experts": _count_or(d.experts, "no experts"),
            "experts_per_token": _count_or(d.experts_per_token, "no experts"),
            "think_seconds": _count_or(d.think_seconds, "unknown"),
            "reply_seconds": _count_or(d.reply_seconds, "unknown"),
            "batch": format_number(d.batch) if d.batch is not None else "the maximum",
            "block_size": format_number(d.block_size),
            "prompt_tokens": _count_or(d.prompt_tokens, "the prompt"),
            "prefix_tokens": _count_or(d.prefix_tokens, "no shared prefix"),
            "window": _count_or(d.window, "no window"),
            "windowed_layers": format_number(d.windowed_layers if d.window is not None else 0),
            **serving_display(d, format_number),
            **_split_words(self.step_gpus()),
        }
        released = (model_of(model).checkpoints or {}) if model else {}
        fp8 = released.get("fp8")
        shown["fp8_checkpoint_gb"] = (format_number(Fraction(str(fp8["weights_gb"])), sig=4)
                                      if fp8 else "unknown")
        shown.update(_fp8_weights_text(model_of(model) if model else None, d, shown))
        shown["head_dim_hint"] = _head_dim_hint(d)
        chosen = self.givens.get("checkpoint")
        if isinstance(chosen, str) and chosen in released:
            shown["weights_note"] = (
                f"The weights are {shown['model_name']}'s released {chosen.upper()} checkpoint, "
                f"which is not one byte per parameter: it keeps some layers in BF16, "
                f"{shown['weights_gb']} GB in all.")
        else:
            shown["weights_note"] = (f"The weights are {shown['weights_dtype']}, "
                                     f"{shown['weights_gb']} GB in all.")
        card = find_gpu(gpu) if gpu else None
        shown["hbm_marketed_gb"] = format_number(card.hbm_gb, sig=4) if card else shown["hbm_gb"]
        # vLLM's default max_num_seqs on the card: the most sequences it runs at once
        shown["max_num_seqs_default"] = format_number(card.default_max_num_seqs) if card \
            else "unknown"
        # a block size the drill sets that is not the engine's default on this card is a
        # launch flag the sheet says (Gaudi: 128)
        shown["block_size_note"] = (
            f" (vLLM's MLA backend on {card.name} pages the latent in blocks of "
            f"{format_number(d.block_size)})"
            if card is not None and d.attention == "mla" and d.block_size > 1
            and d.block_size == card.mla_block_size else
            f" (set with --block-size {format_number(d.block_size)}: vLLM's default on "
            f"{card.name} is {card.default_block_size})"
            if card is not None and d.block_size > 1 and d.block_size != card.default_block_size
            and card.default_block_size != 16 else "")
        shown["batch_cost_question"] = self._batch_cost_question()
        shown["bandwidth_datasheet_tbs"] = (format_number(card.bandwidth_tbs, sig=4) if card
                                            else shown["bandwidth_tbs"])
        shown["weights_read_gb"] = format_number(
            value_of(d, "weights_read_per_step") / 10**9, sig=4)
        shown.update(_window_text(d, shown["model_name"], bool(
            model and model_of(model).chunked_attention)))
        reported = card.reported_mib if card else None
        shown["hbm_reported_mib"] = format_number(reported) if reported else "unknown"
        shown["hbm_reported_gb"] = (format_number(reported * 2**20 / 10**9, sig=3)
                                    if reported else "unknown")
        shown.update(_moe_text(d))
        published = published_active(model_of(model)) if model else None
        # the count a team quoting the model would quote: its publisher's, where it has one
        shown["claimed_active_b"] = format_number(published / 10**9, sig=3) if published \
            else shown["active_params_b"]
        # FLOPs per token multiply every weight but the input embedding, a lookup (unless it is
        # also the LM head): GPT-OSS-20B runs 2 × 3.61B, not 2 × its 4.19B active
        lookup = 0 if d.tied_embeddings or not d.vocab or not d.hidden else d.vocab * d.hidden
        shown["matmul_params_b"] = format_number(((d.params or 0) - lookup) / 10**9, sig=4)
        shown["matmul_active_b"] = format_number(
            ((d.active_params or d.params or 0) - lookup) / 10**9, sig=3)
        if published and d.active_params and abs(published / d.active_params - 1) > 0.02:
            # a publisher's count that leaves out what kvdrill's includes: said, not hidden
            shown["active_read_note"] += (
                f" (Its publisher counts {format_number(published / 10**9, sig=3)}B active, "
                "leaving the embedding table out.)")
        shown.update(_session_text(d))
        shown.update(_sequence_hints(d, bool(model and model_of(model).chunked_attention)))
        shown["rate_measured_on"] = self._rate_measured_on(model)
        shown["ridge_hint"] = _ridge_hint(d)
        shown.update(self._pinned_positions_notes())
        shown["vision_note"] = vision_note(model_of(model) if model else None, d)
        shared = model_of(model).shared_experts if model else 0
        # an always-on shared expert beside the routed ones (Llama-4, DeepSeek): read by every
        # token, so part of the active share
        shown["shared_experts_note"] = "" if not shared else \
            f", {shared} shared expert{'s' if shared > 1 else ''}"
        shown["routed"] = "routed " if shared else ""
        shown.update(_moe_layers_text(model_of(model).moe_layers if model else None, d.layers))
        vision = serving_vision_bytes(_PricedWeights(d))
        shown["vision_read_note"] = "" if not vision else (
            f" (the {shown['weights_gb']} GB loaded less the "
            f"{format_number(vision / 10**9, sig=2)} GB vision tower, which a text token's "
            "step never runs)")
        # a step reads one embedding row per sequence, unless the table is also the LM head
        shown["embedding_read_note"] = (
            "the embedding table is also the LM head here, so all of it is read"
            if d.tied_embeddings else "a real step reads only a few rows of the embedding "
            "table; ignore that here")
        return shown

    def positions_note(self, step_id: str | None = None, beyond_only: bool = False) -> str:
        """positions_note for one step's deployment (its context, its pinned model); with
        `beyond_only`, only the sentence for a context past RoPE scaling's reach."""
        step = None if step_id is None else self.drill.step(step_id)
        pinned = None if step is None else step.with_.get("model")
        model = pinned if isinstance(pinned, str) else self.givens.get("model")
        d = self.base if step_id is None else self.deployment(step_id)
        notes = positions_notes(model_of(model) if model else None, d.context)
        return notes["beyond_reach_note" if beyond_only else "positions_note"].strip()

    def _pinned_positions_notes(self) -> dict[str, str]:
        """positions_note and beyond_reach_note of the drill's own model and of every model a
        step pins (Gemma-2-9B beside Mistral-7B), each at its step's context."""
        model = self.givens.get("model")
        found = [(model_of(model) if model else None, self.base.context)]
        for step in self.drill.steps:
            pinned = step.with_.get("model")
            if isinstance(pinned, str):
                try:
                    found.append((model_of(pinned), self.deployment(step.id).context))
                except KvdrillError:
                    continue
        said: dict[str, list[str]] = {"positions_note": [], "beyond_reach_note": []}
        for preset, context in found:
            for name, text in positions_notes(preset, context).items():
                if text and text not in said[name]:
                    said[name].append(text)
        return {name: "".join(texts) for name, texts in said.items()}

    def title(self, variant: int | None = None) -> str:
        """The drill's title for these givens: a variant's title names its own model and GPU."""
        title = fill(self.drill.title, self.display_givens())
        return title + (f" — variant {variant}" if variant is not None else "")


class _PricedWeights:
    """A deployment's weight prices as the solver's formulas read them (vision_bytes)."""

    def __init__(self, d: Deployment) -> None:
        self.vision_params = d.vision_params
        self.weights_gb = d.weights_gb
        self.weight_bytes_per_param = d.weight_bytes_per_param
        self.native_bytes_per_param = DTYPE_BYTES[d.native_weights_dtype]


def _moe_layers_text(moe_layers: int | None, layers: int) -> dict[str, str]:
    """How the text names the layers with experts, where not every layer has them (GLM-4.5-Air
    keeps a dense MLP in its first layer: a token reads it whole; expert pass 51)."""
    if not moe_layers or moe_layers >= layers:
        return {"moe_layer_word": "layer", "dense_mlp_note": "",
                "moe_layers_said": "Every layer's MLP is"}
    dense = layers - moe_layers
    other = "one other layer" if dense == 1 else f"{dense} other layers"
    return {"moe_layer_word": "MoE layer",
            "dense_mlp_note": f", the dense MLP{'' if dense == 1 else 's'} of its {other}",
            "moe_layers_said": f"{moe_layers} of its {layers} layers (the "
                               f"{'other one' if dense == 1 else f'other {dense}'} dense) have "
                               "an MLP of"}


def _moe_text(d: Deployment) -> dict[str, str]:
    """What a hint says of an MoE step: the experts a token passes by (E − k), the share of
    experts 64 tokens touch (said as "nearly every expert" only where it is all but all), and
    how one token's weights are priced (a mixed-precision checkpoint prices its experts apart)."""
    if d.experts is None or d.experts_per_token is None:
        return {"idle_experts": "no experts", "experts_noun": "experts", "active_read_note": "",
                "active_table_note": "",
                "resident_weights_formula": "weights = total params × bytes per param",
                "experts_read_batch64": "Every weight is read.",
                "active_weights_hint": "The model is dense: one token uses every weight.",
                "active_weights_formula": "active bytes = weights"}
    idle = d.experts - d.experts_per_token
    touched = 1 - Fraction(idle, d.experts) ** 64
    share = ("So nearly every expert is read." if touched >= Fraction(99, 100) else
             f"So about {format_number(100 * touched, sig=2)}% of the experts are read, not "
             "all of them.")
    table = value_of(d, "embedding_table_bytes")
    unread_table = not (d.tied_embeddings or d.reads_embedding or not table)
    if d.weights_dtype == "mxfp4" and d.tables_dtype is not None:
        whole = "Count those whole (the embedding table less: a step reads one row of it)" \
            if unread_table else "Count those whole"
        hint = (f"Only the experts are MXFP4 (17/32 B a parameter): attention, router, "
                f"embedding and LM head stay {d.tables_dtype.upper()}. {whole}, plus "
                f"{format_number(d.experts_per_token)} of {format_number(d.experts)} experts "
                "per layer at 17/32 B.")
        resident = (f"weights = expert params × 17/32 B (mxfp4) + the other params × "
                    f"{format_number(DTYPE_BYTES[d.tables_dtype])} B ({d.tables_dtype})")
        formula = (f"active bytes = non-expert weights ({d.tables_dtype})"
                   + (" − the embedding table" if unread_table else "") + " + "
                   f"{format_number(d.experts_per_token)}/{format_number(d.experts)} of the "
                   "expert weights (mxfp4)")
    elif unread_table:
        hint = ("The active parameters × bytes per parameter, less the embedding table: a "
                "step reads one row of it per token.")
        formula = "active bytes = active params × bytes per param − the embedding table"
        resident = "weights = total params × bytes per param"
    else:
        hint = "The active parameters × bytes per parameter."
        formula = "active bytes = active params × bytes per param"
        resident = "weights = total params × bytes per param"
    unread = "" if not unread_table else (
        f" A step reads one row of the embedding table per token, not the table: its "
        f"{format_number(table / 10**9, sig=3)} GB are resident but never read.")
    # what the active count includes and a step's bytes leave out, said where both are shown
    # ("3.35B active parameters" beside 6.08 GB, not 6.70)
    less = "" if not unread_table else (
        f" counting the input embedding, less its {format_number(table / 10**9, sig=3)} GB "
        "table, of which a step reads one row")
    return {"idle_experts": format_number(idle), "experts_read_batch64": share,
            "active_read_note": unread, "active_table_note": less,
            "resident_weights_formula": resident,
            "experts_noun": "expert" if d.experts_per_token == 1 else "experts",
            "active_weights_hint": hint, "active_weights_formula": formula}


def _session_text(d: Deployment) -> dict[str, str]:
    """How a session's KV is worked out for this model: bytes per token × context, or, where
    some layers are windowed, the full layers' context plus the windowed layers' window; and
    the product for a prompt to quote (128 KiB × 128 Ki tokens is 16 GiB)."""
    element = format_number(d.kv_bytes_per_element)
    per_token = f"2 × layers × KV heads × head_dim × {element} B per token"
    if d.attention == "mla":
        per_token = f"layers × (latent + rope) × {element} B per token"
    formula = "sessions = floor(KV budget ÷ (bytes/token × context))"
    if d.window is not None and d.windowed_layers:
        full = d.layers - d.windowed_layers
        held = min(d.context, d.window)
        hint = (f"Per layer, 2 × KV heads × head_dim × {element} B a token; the {full} full "
                f"layers hold the whole context, the {d.windowed_layers} windowed layers only "
                f"the last {format_number(held)} tokens (their window).") if full else (
            f"2 × layers × KV heads × head_dim × {element} B per token, times the last "
            f"{format_number(held)} tokens: every layer is windowed and holds only its window.")
        formula = ("sessions = floor(KV budget ÷ (bytes/token per layer × (full layers × "
                   "context + windowed layers × window)))") if full else (
            "sessions = floor(KV budget ÷ (bytes/token × window))")
    else:
        hint = f"{per_token}, times the context."
    per_token_bytes = value_of(d, "kv_bytes_per_token")
    session = per_token_bytes * d.context
    product = (f"{format_number(per_token_bytes / 1024, sig=4)} KiB × "
               f"{format_number(Fraction(d.context, 1024), sig=4)} Ki tokens is "
               f"{format_number(session / 2**30, sig=4)} GiB")
    return {"session_kv_hint": hint, "session_kv_product": product,
            "session_kv_formula": formula}


def positions_notes(model: Any, context: int) -> dict[str, str]:
    """What a sheet must say when its context is past the model's positions
    (max_position_embeddings): vLLM starts only with RoPE scaling (YaRN) set, and past the 4×
    that scaling is used to stretch a model nobody serves it so long. Empty within them; else
    a sentence with a leading space, to follow another in a situation."""
    positions = getattr(model, "max_context", 0) or 0
    if not positions or context <= positions:
        return {"positions_note": "", "beyond_reach_note": ""}
    name = model.name
    # YaRN stretches the trained length (original_max_position_embeddings) by its factor, as
    # vLLM derives max_model_len: Qwen3's is 32,768, below its 40,960 max_position_embeddings
    native = rope_base(model)
    times = Fraction(context, native)
    said = format_number(times, sig=2)
    beyond = ""
    if times > ROPE_SCALING_REACH:
        trained = "positions" if native == positions else \
            "trained positions (original_max_position_embeddings)"
        beyond = (f" {format_number(context)} tokens is {said}× {name}'s "
                  f"{format_number(native)} {trained}, beyond the {ROPE_SCALING_REACH}× that "
                  "RoPE scaling is used to stretch a model by: nobody serves it this long, so read "
                  "its figures as what the cache would hold, not as a serving plan.")
        return {"positions_note": beyond, "beyond_reach_note": beyond}
    if getattr(model, "from_config", False):
        # a config's trained length is not known here (Qwen3 states 40,960 for 32,768 trained)
        scaling = "YaRN, set in the config"
    else:
        # rounded up, so the factor named reaches the context (16,896 ÷ 16,384 = 1.031 needs
        # 1.032)
        factor = f"{math.ceil(times * 1000) / 1000:.3f}".rstrip("0").rstrip(".")
        scaling = (f"YaRN with a factor of at least {factor} over the "
                   f"{format_number(native)} trained positions, "
                   "original_max_position_embeddings") if native != positions else (
            f"YaRN with original_max_position_embeddings {format_number(positions)} and a "
            f"factor of at least {factor}")
    note = (f" {name} has {format_number(positions)} positions (max_position_embeddings): vLLM "
            f"refuses a max_model_len of {format_number(context)} unless the config adds RoPE "
            f"scaling ({scaling}), and whether quality holds that far "
            "is the model's question; the figures here are the cache's.")
    return {"positions_note": note, "beyond_reach_note": beyond}


def rope_base(model: Any) -> int:
    """The length YaRN stretches: the trained positions a preset states (Qwen3: 32,768), else
    max_position_embeddings."""
    return int(getattr(model, "rope_original_positions", None) or
               getattr(model, "max_context", 0) or 0)


def vision_note(model: Any, d: Deployment) -> str:
    """One sentence (with a leading space) where the model loads a vision tower its weights
    here leave out; empty where it does not."""
    uncounted = getattr(model, "uncounted_vision_params", None)
    if not uncounted:
        return ""
    # a vision tower is left in 16 bits by the quantized checkpoints (AWQ, GPTQ, MXFP4)
    per = DTYPE_BYTES[d.weights_dtype] if d.weights_dtype in ("fp32", "bf16", "fp16") \
        else Fraction(2)
    return (f" vLLM also loads {model.name}'s vision tower, about "
            f"{format_number(Fraction(uncounted) / 10**9, sig=2)}B parameters "
            f"({format_number(Fraction(uncounted) * per / 10**9, sig=2)} GB), which the weights "
            "here leave out: on a real card the KV cache is that much smaller.")


def _window_text(d: Deployment, model_name: str, chunked: bool = False) -> dict[str, str]:
    """What a prompt must say of a sliding window: that the model has one, how many layers use
    it (they keep only the window's KV), and the attention FLOPs it implies. Empty and the
    plain causal count for a model without one, so one situation serves every variant."""
    full_rule = "2 × layers × heads × head_dim × T²"
    if d.window is None or d.windowed_layers == 0:
        return {"window_note": "", "attention_flops_rule": full_rule, "windowed_said": ""}
    window = format_number(d.window)
    layers = (f"all {format_number(d.layers)} layers" if d.windowed_layers == d.layers
              else f"{format_number(d.windowed_layers)} of its {format_number(d.layers)} layers")
    note = (f"{model_name} attends over a sliding window of the last {window} tokens on {layers}: "
            f"such a layer keeps only the window's KV (the engine frees what falls out of it), "
            f"so a longer sequence holds {window} tokens there, not all of them.")
    if chunked:
        # (Llama-4: attention within chunks of 8,192 tokens, a layer holding between 1 and
        # 8,192 of them; sized at the most, as a window of that size)
        note = (f"{model_name} attends within chunks of {window} tokens on {layers}: such a "
                f"layer keeps only the tokens since its current chunk began, at most {window}, "
                "so a longer sequence is sized at that most there, not at all its tokens.")
    windowed = "4 × layers × heads × head_dim × (W²/2 + (T − W) × W)"
    if d.windowed_layers != d.layers:
        windowed = ("4 × heads × head_dim × (full layers × T²/2 + windowed layers × "
                    "(W²/2 + (T − W) × W))")
    rule = (f"{full_rule} up to the window; beyond it each token attends to at most W = "
            f"{window} keys, {windowed}")
    # (the working's "windowed layers" are the chunked ones of a Llama-4: said so; pass 51)
    said = (f"the chunked-attention layers holding only their current chunk's tokens (at most "
            f"{window}, sized as a window of {window})" if chunked else
            "the windowed layers holding only their window")
    return {"window_note": note, "attention_flops_rule": rule, "windowed_said": said}


def _sequence_hints(d: Deployment, chunked: bool) -> dict[str, str]:
    """The hints of a step that asks for one sequence's KV, and of one that halves the context,
    true of this model: bytes per token × context where every layer holds the whole context;
    where some layers keep only a window (Gemma-3: 52 of 62 hold 1,024 tokens), the
    full-attention layers × context plus the windowed layers × min(context, window), and
    halving the context halves only the first term (expert pass 58, W1)."""
    if d.window is None or not d.windowed_layers or d.attention == "mla":
        return {"sequence_kv_hint": "Bytes per token × context.",
                "half_context_hint": "Each sequence now holds half as many tokens."}
    window = format_number(d.window)
    kind = "chunked-attention" if chunked else "windowed"
    span = f"chunk (at most {window} tokens)" if chunked else f"{window}-token window"
    full = (d.attention_layers or d.layers) - d.windowed_layers
    if full <= 0:
        return {"sequence_kv_hint": f"Bytes per token × min(context, {window}): every layer "
                                    f"keeps only its {span}.",
                "half_context_hint": f"Every layer keeps only its {span}: a sequence holds "
                                     f"min(half the context, {window}) tokens."}
    return {"sequence_kv_hint": (f"Bytes per layer and token × (full-attention layers × context "
                                 f"+ {kind} layers × min(context, {window})): here {full} "
                                 f"layers hold the whole context, the {d.windowed_layers} "
                                 f"{kind} ones only their {span}."),
            "half_context_hint": (f"The {full} full-attention layers hold half as many tokens; "
                                  f"the {d.windowed_layers} {kind} layers still hold "
                                  f"min(half the context, {window}) tokens each"
                                  + (", so a sequence shrinks by less than half." if
                                     d.window < d.context else "."))}


def _ridge_hint(d: Deployment) -> str:
    """The hint of a step that asks where decode turns compute-bound, true of this model:
    FLOP/s ÷ bandwidth for a dense model in 2-byte weights; scaled by weight bytes ÷ (2 B ×
    the parameters a token multiplies) otherwise, which for an MoE is its total weights over
    its active ones (Qwen3-30B-A3B: 10× the dense ridge; expert pass 58, W2)."""
    if d.experts is not None and d.active_params is not None:
        return ("Plain decode turns compute-bound near FLOP/s ÷ bandwidth × total weight "
                "bytes ÷ (2 B × active parameters): at a large batch an MoE step reads every "
                "expert, but each token multiplies only its active ones (the embedding is a "
                "lookup); each sequence now brings k + 1 tokens to every weight read.")
    if DTYPE_BYTES.get(d.weights_dtype) == 2:
        return ("Plain decode turns compute-bound near FLOP/s ÷ bandwidth (2-byte weights); "
                "each sequence now brings k + 1 tokens to every weight read.")
    return ("Plain decode turns compute-bound near FLOP/s × weight bytes ÷ (2 × parameters × "
            "bandwidth); each sequence now brings k + 1 tokens to every weight read.")


def _head_dim_hint(d: Any) -> str:
    """A hint for head_dim that is true of this model: hidden ÷ heads where it gives the
    config's figure, a warning where it does not (Qwen3-32B: 5,120 ÷ 64 = 80, not 128)."""
    if d.hidden is None or d.attention == "mla":
        return "It is head_dim in the model's config.json."
    if Fraction(d.hidden, d.heads) == d.head_dim:
        return "hidden size ÷ attention heads works for this model, though not for every model."
    return ("hidden size ÷ attention heads does not give it for this model: the config.json "
            "states head_dim.")

