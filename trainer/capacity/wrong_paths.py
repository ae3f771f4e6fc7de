"""Wrong paths (misconceptions): the capacity model's formulas with one assumption changed, a
changed input (query heads for KV heads, K and V counted once, no reserve...) or, for
`per-gpu-vs-total`, a figure read per GPU where the whole was meant (or the other way round).
Evaluating a step along each path gives the wrong values that betray each mistake."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from trainer.capacity import serving_formulas as serving
from trainer.capacity.deployment import GIB, Deployment
from trainer.capacity.identity_cache import by_identity
from trainer.capacity.solver import changed_inputs, exact_reads, value_of, value_of_changed
from trainer.errors import KvdrillError, UnknownName
from trainer.reading.exact import Fraction
from trainer.records import record

# ---------------------------------------------------------------------------------------------
# Wrong paths


@record
class WrongPath:
    id: str
    mistake: str  # what the candidate did
    advice: str  # one line on how to avoid it
    change: Callable[[Deployment], Deployment | None]  # None: the path does not apply
    # A second form of the same mistake, where a quantity can make it in two places.
    also: Callable[[Deployment], Deployment | None] | None = None
    # The mistake in a given deployment's terms (its real dtype), where `mistake` is general.
    describe: Callable[[Deployment], str] | None = None
    # The quantities the path is not the mistake of, though it changes them (an MoE's active
    # share taken for its weights is no mistake where a step asks for the active share).
    not_for: Callable[[Deployment, str], bool] | None = None

    def mistake_in(self, d: Deployment | None) -> str:
        """What the candidate did, in `d`'s terms where the path has them."""
        return self.describe(d) if self.describe is not None and d is not None else \
            self.mistake


def _bits_for_bytes_text(d: Deployment) -> str:
    bits = d.kv_bytes_per_element * 8
    shown = str(bits.numerator) if bits.denominator == 1 else f"{float(bits):g}"
    return f"used the dtype's bits as bytes ({shown} for {d.kv_dtype})"


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


def _active_as_resident(d: Deployment) -> Deployment | None:
    """An MoE taken for its active share, its weights what one token reads: the drill's own
    active figure (3.72 GB for GPT-OSS-20B, whose active share is mostly BF16), not the
    checkpoint's average bytes per parameter. (serving_formulas' path, priced by the solver.)"""
    changed: Deployment | None = serving.active_as_resident(d)
    if changed is None:
        return changed
    # (a model sized by its parameters too: Qwen3-30B-A3B's 6.08 GB a token reads, not its
    # 3.35B active parameters counted with the embedding table, 6.7 GB)
    priced: Deployment = changed.changed(weights_gb=value_of(d, "active_weights_bytes") / 10**9)
    return priced


# serving paths whose change needs the solver, which serving_formulas does not import
_PRICED: dict[str, Callable[[Deployment], Deployment | None]] = {
    "moe-active-as-resident": _active_as_resident}


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
            "mla-rope-left-out",
            "left the decoupled RoPE key out of the MLA cache",
            "MLA caches the compressed latent AND a small decoupled RoPE key per layer: the "
            "cache's width is their sum, stored for every token.",
            lambda d: d.changed(mla_rope=0) if d.attention == "mla" and d.mla_rope else None,
        ),
        WrongPath(
            "mla-latent-split",
            "split the MLA latent over the GPUs as if it had heads, each GPU keeping a share "
            "of it",
            "MLA's latent has no heads to split: under tensor parallelism every GPU keeps the "
            "whole latent of every token, so a token costs a whole latent on each GPU.",
            lambda d: d.changed(mla_factor=Fraction(1, d.gpus))
            if d.attention == "mla" and d.gpus > 1 and not d.dp_attention else None,
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
            "forgot-kv",
            "counted the weights alone, leaving out the KV cache the batch reads",
            "Every decode step reads the whole KV of every live sequence as well as the "
            "weights: bytes per step = weights + batch × KV per sequence.",
            lambda d: d.changed(read_kv=0),
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
        *(WrongPath(
            f"{prefix.lower()}b-{prefix.lower()}ib",
            f"mixed {prefix}B (10^{3 * power} B) and {prefix}iB (2^{10 * power} B)",
            f"A {prefix}B is 10^{3 * power} bytes and a {prefix}iB 2^{10 * power}: convert "
            "once, explicitly.",
            lambda d: None,  # the other prefix's figure, added by the answer key
        ) for power, prefix in ((1, "K"), (2, "M"), (4, "T"))),
        WrongPath(
            "bits-for-bytes",
            "used the dtype's bits as bytes (16 for a 16-bit dtype)",
            "bf16/fp16 are 2 bytes per element, fp8/int8 1, fp32 4: divide bits by 8.",
            lambda d: d.changed(kv_bytes_override=d.kv_bytes_per_element * 8),
            describe=_bits_for_bytes_text,
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
            "kv-head-split",
            "split a KV head across GPUs past the head count (half a head each at TP=16 "
            "with 8 KV heads)",
            "A KV head is never split: tensor parallelism shards attention by whole heads, so "
            "past the KV-head count each GPU holds a whole copy of one.",
            lambda d: None if d.attention == "mla" or d.dp_attention or d.gpus <= d.kv_heads
            else d.changed(heads_split=1),
            describe=lambda d: "split a KV head across GPUs past the head count "
            f"({d.kv_heads} KV heads on {d.gpus} GPUs: {Fraction(d.kv_heads, d.gpus)} of a "
            "head each)",
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
            "the LM head runs once per sequence, so a prompt token costs 2 × the layers' "
            "parameters, not 2 × all of them (the measured 550 TFLOP/s was counted that way).",
            lambda d: None if d.vocab is None or d.tflops is None
            else d.changed(tables_in_flops_ignored=1),
        ),
        WrongPath(
            "rounded-up",
            "rounded a count up (or kept its fraction)",
            "Only whole ones count (sequences served, blocks of a prompt shared): take the "
            "floor of the quotient, never round up.",
            lambda d: None,  # a rounding of the answer, added by the answer key
        ),
        WrongPath(
            "rounded-down",
            "rounded a count down (or kept its fraction) where a whole one more is needed",
            "A request that needs part of one more block, replica or step needs all of it: "
            "take the ceiling of the quotient.",
            lambda d: None,  # a rounding of the answer, added by the answer key
        ),
        WrongPath(
            "dp-embedding-not-copied",
            "counted only the attention weights in DP attention's copy on every GPU",
            "Under DP attention each GPU embeds its own tokens, so the embedding table is whole "
            "on every GPU too (SGLang: VocabParallelEmbedding(enable_tp=not dp_attention)); "
            "the LM head stays split. Add (GPUs − 1) × vocab × hidden × bytes.",
            lambda d: None if not d.dp_attention or d.vocab is None
            else d.changed(dp_copies_embedding=0),
        ),
        WrongPath(
            "dp-copies-left-out",
            "left DP attention's copies out, as if each GPU held an eighth of the attention "
            "weights",
            "Under DP attention each GPU runs attention for its own sequences: it holds a whole "
            "copy of the attention weights (and the embedding table). Subtract the (GPUs − 1) "
            "extra copies from the budget before sharing it out.",
            lambda d: None if not d.dp_attention or not d.attention_params
            else d.changed(attention_params=Fraction(0), dp_copies_embedding=0),
            describe=lambda d: "left DP attention's copies out, as if each GPU held 1/"
                               f"{d.gpus} of the attention weights",
        ),
        WrongPath(
            "window-ignored",
            "counted every token on a sliding-window model's windowed layers",
            "A sliding-window layer keeps only the last `window` tokens' KV (the engine frees "
            "the rest) and attends to at most that many: KV = bytes/token/layer × (full "
            "layers × T + windowed layers × min(T, W)).",
            lambda d: None if d.window is None or d.windowed_layers == 0
            else d.changed(windowed_layers=0),
        ),
        WrongPath(
            "blocks-ignored",
            "left the blocks out: shared every prompt token and kept each session's own part "
            "unrounded",
            "A paged cache shares whole blocks only: the shared prefix is the prompt rounded "
            "down to a multiple of the block size, and each session's own tokens fill whole "
            "blocks, its last one rounded up.",
            lambda d: None if not d.prefix_tokens or not d.block_size or d.block_size == 1
            else d.changed(block_size=1),
        ),
        WrongPath(
            "window-on-every-layer",
            "applied the window to every layer, the global ones too",
            "Only the model's sliding layers keep a window; its global (full-attention) "
            "layers keep the whole context.",
            lambda d: None if d.window is None or d.windowed_layers in (0, d.layers)
            else d.changed(windowed_layers=d.layers),
            describe=lambda d: (f"applied the window to all {d.layers} layers, where "
                                f"{d.windowed_layers} slide and {d.layers - d.windowed_layers} "
                                "keep the whole context"),
        ),
        WrongPath(
            "per-gpu-vs-total",
            "gave a per-GPU figure where the whole (or the whole where one GPU) was asked",
            "With tensor parallelism say which you mean: per GPU, or summed over all GPUs.",
            lambda d: None,  # a rescaling of the answer, handled in wrong_values
            # (under MLA the latent split as if by heads is mla-latent-split, evaluated: it
            # moves bytes down and counts up, and leaves the budget alone)
        ),
        *(WrongPath(p.id, p.mistake, p.advice, _PRICED.get(p.id, p.change), p.also,
                    p.describe, p.not_for)
          for p in serving.WRONG_PATHS),
    )
}


def wrong_values(
    deployment: Deployment, name: str, ids: tuple[str, ...] | None = None
) -> list[tuple[str, Fraction]]:
    """(path id, value) of `name` along each applicable wrong path, where it differs from the
    truth. `per-gpu-vs-total` gives two values: the figure for one GPU and for all of them."""
    truth = value_of(deployment, name)
    reads = exact_reads(deployment, name)
    applicable = by_identity(_APPLICABLE, deployment, lambda: _applicable(deployment),
                             MAX_CHANGED)
    found: list[tuple[str, Fraction]] = []
    for path_id in ids if ids is not None else tuple(WRONG_PATHS):
        path = WRONG_PATHS.get(path_id)
        if path is None:
            raise UnknownName(
                f"unknown misconception {path_id!r}: use one of {', '.join(WRONG_PATHS)}"
            )
        if path.not_for is not None and path.not_for(deployment, name):
            continue
        if path_id == "per-gpu-vs-total":
            if deployment.gpus > 1:
                found.append((path_id, truth / deployment.gpus))
                found.append((path_id, truth * deployment.gpus))
                if truth.denominator == 1 and truth % deployment.gpus:
                    found.append((path_id, Fraction(math.floor(truth / deployment.gpus))))
            continue
        for changed, changes in applicable.get(path_id, ()):
            if reads is not None and changes.keys().isdisjoint(reads):
                continue  # the path changes nothing the value is read from: the truth again
            try:
                value = value_of_changed(deployment, changed, changes, name)
            except (ZeroDivisionError, KvdrillError):
                continue  # a path whose deployment cannot be evaluated (no draft) gives none
            if value != truth and (path_id, value) not in found:
                found.append((path_id, value))
    return found


# Each deployment's wrong-path deployments, made once and kept with it (by identity: hashing a
# deployment costs more than most evaluations): every step of a key that shares a deployment
# walks the same paths, and one kept object finds its kept evaluation at once.
_CHANGED: dict[int, tuple[Deployment, dict[tuple[str, int], Deployment | None]]] = {}
MAX_CHANGED = 512


def changed_by(deployment: Deployment, path: WrongPath, which: int = 0) -> Deployment | None:
    """`path.change(deployment)` (`which` 1: `path.also`), kept: None where it does not apply."""
    slots = by_identity(_CHANGED, deployment, dict, MAX_CHANGED)
    slot = (path.id, which)
    if slot not in slots:
        change = path.change if which == 0 else path.also
        slots[slot] = None if change is None else change(deployment)
    return slots[slot]


_CHANGES: dict[int, tuple[Deployment, dict[tuple[str, int], Mapping[str, Any]]]] = {}


def _changes(deployment: Deployment, path: WrongPath, which: int) -> Mapping[str, Any]:
    """The inputs path's deployment (changed_by, not None) sets otherwise, kept like it."""
    slots = by_identity(_CHANGES, deployment, dict, MAX_CHANGED)
    slot = (path.id, which)
    if slot not in slots:
        changed = changed_by(deployment, path, which)
        assert changed is not None
        slots[slot] = changed_inputs(deployment, changed)
    return slots[slot]


# Each deployment's wrong-path deployments with the inputs each changes, listed once: a key
# walks every path for each of a deployment's steps, and most paths change nothing.
_Applicable = dict[str, list[tuple[Deployment, Mapping[str, Any]]]]
_APPLICABLE: dict[int, tuple[Deployment, _Applicable]] = {}


def _applicable(deployment: Deployment) -> _Applicable:
    """path id → (changed deployment, the inputs it changes) of `change`, then `also`, for
    each path that applies to `deployment`."""
    applicable: _Applicable = {}
    for path in WRONG_PATHS.values():
        for which in (0, 1):
            changed = changed_by(deployment, path, which)
            if changed is not None:
                applicable.setdefault(path.id, []).append(
                    (changed, _changes(deployment, path, which)))
    return applicable


def paired_wrong_values(deployment: Deployment, name: str
                        ) -> list[tuple[tuple[str, str], Fraction]]:
    """((first id, second id), value) of `name` with two wrong paths taken together, where the
    value differs from the truth and from each path alone."""
    truth = value_of(deployment, name)
    paths = [p for p in WRONG_PATHS.values() if p.id not in _RESCALINGS]
    alone = {value for _, value in wrong_values(deployment, name)}
    found: list[tuple[tuple[str, str], Fraction]] = []
    for i, first in enumerate(paths):
        once = changed_by(deployment, first)
        if once is None:
            continue
        for second in paths[i + 1:]:
            twice = changed_by(once, second)
            if twice is None:
                continue
            try:
                value = value_of(twice, name)
            except (ZeroDivisionError, KvdrillError):
                continue
            if value != truth and value not in alone:
                found.append(((first.id, second.id), value))
    return found


# Paths that rescale the answer rather than change the deployment.
_RESCALINGS = frozenset({"per-gpu-vs-total", "rounded-up", "rounded-down", "kb-kib", "mb-mib",
                         "tb-tib"})
# The binary and decimal prefixes mixed, one path per prefix (each named in its own words).
UNIT_MIXES = {1: "kb-kib", 2: "mb-mib", 3: "gb-gib", 4: "tb-tib"}
UNIT_MIX_IDS = frozenset(UNIT_MIXES.values())


