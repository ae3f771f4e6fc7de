"""Seeded, physically sensible parameter draws from a drill's variant space.

The same drill and seed always give the same givens (string seeds hash deterministically), so
an interviewer's sheet, the candidate's practice and the grading all see one variant."""

from __future__ import annotations

import itertools
import math
import random
import re
from collections.abc import Callable, Iterable
from typing import Any

from trainer.capacity.presets import (
    DEFAULT_CONTEXT,
    GPU_FIELDS,
    MODEL_FIELDS,
    ModelPreset,
    find_gpu,
    model_from_spec,
    model_of,
    model_spec,
    same_shape,
    same_weights,
)
from trainer.capacity.serving_formulas import recurrent_layers
from trainer.capacity.solver import value_of
from trainer.drills.model import Drill, linked_names
from trainer.drills.reference import ROPE_SCALING_REACH, AnswerKey, rope_base
from trainer.errors import KvdrillError, UsageError
from trainer.reading.exact import Fraction
from trainer.reading.numbers import format_number
from trainer.records import replace

MAX_SEED = 2**63 - 1
DRAW_ATTEMPTS = 64


def draw(drill: Drill, seed: int, known: dict[str, bool] | None = None) -> dict[str, Any]:
    """The givens of variant `seed`: the drill's givens with each varied one drawn from its
    choices, redrawn until the main configuration fits at least one sequence and every step's
    reference can be computed. `known` remembers which givens were found sensible, for callers
    that draw many variants."""
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"variant seed {seed} is out of range: use 0 to {MAX_SEED}")
    if not drill.vary:
        raise UsageError(f"drill {drill.id} has no variant space (no 'vary' in its file)")
    rng = random.Random(f"{drill.id}:{seed}")
    for _ in range(DRAW_ATTEMPTS):
        givens = dict(drill.givens)
        for key in sorted(drill.vary):
            choice = rng.choice(drill.vary[key])
            names = linked_names(key)
            values = choice if len(names) > 1 else (choice,)
            givens.update(zip(names, values, strict=True))
        _sixteen_bits_of_the_model(drill, givens)
        fingerprint = repr(sorted(givens.items()))
        if known is None:
            if sensible(drill, givens):
                return givens
            continue
        if fingerprint not in known:
            known[fingerprint] = sensible(drill, givens)
        if known[fingerprint]:
            return givens
    raise KvdrillError(
        f"drill {drill.id}: no sensible variant found for seed {seed} in {DRAW_ATTEMPTS} draws: "
        "widen its 'vary' choices"
    )


def _sixteen_bits_of_the_model(drill: Drill, givens: dict[str, Any]) -> None:
    """A 16-bit cache beside a drawn model is that model's 16-bit dtype (Llama-2's fp16,
    Llama-3.1's bf16), as vLLM's kv-cache-dtype auto keeps it; the bytes are the same."""
    if "model" not in drill.vary or "kv_dtype" in drill.vary \
            or givens.get("kv_dtype") not in _SIXTEEN_BITS:
        return
    released = model_of(givens["model"]).weights_dtype
    if released in _SIXTEEN_BITS:
        givens["kv_dtype"] = released


def sensible(drill: Drill, givens: dict[str, Any]) -> bool:
    """Weights fit, the main configuration holds a sequence (and every batch a step runs),
    every reference computes."""
    try:
        key = AnswerKey(drill, givens)
        if value_of(key.base, "kv_budget_bytes") <= 0:
            return False
        if value_of(key.base, "max_concurrency") < 1:
            return False
        if _batch_past_memory(key) is not None:
            return False
        if _engine_refuses(key) is not None:
            return False
        for step in drill.steps:
            if step.kind == "numeric":
                key.reference(step.id)
    except (KvdrillError, ZeroDivisionError):
        return False
    return True


def _engine_refuses(key: AnswerKey) -> str | None:
    """Why a server whose start-up line a step reads would not start (X below 1: one request
    of its max_model_len does not fit), or None."""
    for step_id in key.drill.requires.engine_starts:
        d = key.deployment(step_id)
        if value_of(d, "engine_max_concurrency") < 1:
            shown = key.display_givens()
            return (f"its step {step_id} reads the start-up line of a server with "
                    f"max_model_len {d.context:,}, and on {shown['gpus']} × "
                    f"{shown['gpu_name']} one request of that length does not fit the KV "
                    "cache (X < 1), so vLLM refuses to start: choose a larger card with "
                    "--gpu, or a smaller model")
    return None


def space_size(drill: Drill, target: Any = None) -> int:
    """How many combinations the variant space has (sensible or not); re-targeted, the
    choices of what the target replaces (the model's, the card's) count once."""
    replaced: set[str] = set()
    if target is not None:
        model, gpu = target_parts(target)
        replaced |= (_MODEL_GIVENS | {"model"}) if model is not None else set()
        replaced |= (_GPU_GIVENS | {"gpu"}) if gpu is not None else set()
    size = 1
    for key, choices in drill.vary.items():
        if not set(linked_names(key)) <= replaced:
            size *= len(set(choices))
    return size


def answer_key(drill: Drill, variant: int | None, target: Any = None) -> AnswerKey:
    """The key of the drill's own givens (variant None) or of a drawn variant, re-targeted at
    another model or GPU when `target` (make_target) says so."""
    if target is None:
        return AnswerKey(drill) if variant is None else AnswerKey(drill, draw(drill, variant))
    givens = dict(drill.givens) if variant is None else draw(drill, variant)
    key = AnswerKey(drill, retarget(drill, givens, target))
    key.retargeted = target_label(target)
    key.target_digest = target_digest(target)
    return key


# ---------------------------------------------------------------------------------------------
# A drill re-targeted at a model and a GPU of the user's choosing (--model, --gpu): the drill's
# own givens (or a variant's draw) with the model and the card replaced, everything the old
# model fixed (its shape, its stated weights, its released checkpoint) dropped, and the serving
# choices (context, utilisation, reserve, KV dtype, a deliberate weights dtype) kept. The
# target is stored with the attempt (plain JSON, presets.model_spec), so review, export and
# cohort re-derive the same numbers.

Target = dict[str, Any]
# Givens that belong to the drill's own model or card, replaced with it.
_MODEL_GIVENS = frozenset({*MODEL_FIELDS, "native_weights_dtype", "checkpoint"})
_GPU_GIVENS = frozenset({*GPU_FIELDS, "memory"})
# A drill's lesson needs the model to have what the lesson is about: tag → (what, the kind of
# model that has it, presets that do (the first that runs on the card asked for are named),
# test).
LESSONS: dict[str, tuple[str, str, tuple[str, ...], Callable[[ModelPreset], bool]]] = {
    "mla": ("multi-head latent attention (MLA)", "a model with kv_lora_rank",
            ("deepseek-v3", "deepseek-v2-lite"), lambda m: m.attention == "mla"),
    "sliding-window": ("sliding-window attention", "a model with a sliding window",
                       ("gpt-oss-20b", "gemma-3-27b", "mistral-7b-v0.1", "gemma-2-9b",
                        "gpt-oss-120b"),
                       lambda m: bool(m.window and m.windowed_layers)),
    "moe": ("mixture-of-experts", "an MoE model",
            ("qwen3-30b-a3b", "gpt-oss-20b", "mixtral-8x7b", "deepseek-v2-lite",
             "gpt-oss-120b"), lambda m: m.experts is not None),
    # the MHA cache against the model's own GQA one: a model with a KV head per query head
    # has no GQA cache to set beside it (the ratio would be 1)
    "mha-vs-gqa": ("how much grouped-query attention saves over MHA",
                   "a model with fewer KV heads than query heads",
                   ("llama-3.3-70b", "qwen3-32b", "llama-3.1-8b", "qwen3-8b"),
                   lambda m: m.attention != "mla" and m.kv_heads < m.heads),
    "hybrid": ("a hybrid of attention and recurrent (Mamba) layers", "a hybrid model",
               ("jamba-1.5-mini",),
               lambda m: m.attention_layers is not None and bool(m.state_elements)),
}
LESSON_EXAMPLES = 3  # models named in a lesson's refusal
_RELEASED_EXAMPLE = "llama-3.1-70b or llama-3.1-405b"  # presets whose releases are listed


def make_target(model: ModelPreset | None, gpu: str | None) -> Target | None:
    """The target as stored with an attempt, or None for the drill as written."""
    if model is None and gpu is None:
        return None
    if model is not None and model.weights_unknown:
        # calc can be told the weights (--weights-gb); a drill re-targeted cannot
        raise UsageError(model.weights_unknown.split(": give --weights-gb")[0] + ": a drill "
                         "cannot be re-targeted at weights kvdrill cannot size")
    return {"model": None if model is None else model_spec(model),
            "gpu": None if gpu is None else find_gpu(gpu).id}


def target_parts(target: Any) -> tuple[ModelPreset | None, str | None]:
    """A stored target read back (untrusted): the model and the GPU preset id; UsageError
    naming what is wrong."""
    if not isinstance(target, dict) or set(target) - {"model", "gpu"}:
        raise UsageError("target: a re-target is {\"model\": ..., \"gpu\": ...}")
    try:
        model = None if target.get("model") is None else model_from_spec(target["model"])
        gpu = target.get("gpu")
        if gpu is not None and (not isinstance(gpu, str) or len(gpu) > 100):
            raise UsageError("gpu: not a GPU preset id")
        gpu_id = None if gpu is None else find_gpu(gpu).id
    except KvdrillError as error:
        raise UsageError(f"target: {error}") from None
    if model is None and gpu_id is None:
        raise UsageError("target: names neither a model nor a GPU")
    return model, gpu_id


def target_label(target: Target | None) -> str | None:
    """"Qwen3-32B on H200", for titles and lists; None for the drill as written."""
    if target is None:
        return None
    model, gpu = target_parts(target)
    parts = [model.name if model is not None else "its own model",
             find_gpu(gpu).name if gpu is not None else "its own GPU"]
    return " on ".join(parts)


def target_digest(target: Target | None) -> str | None:
    """A short SHA-256 of the target as stored (a preset's id, or every field a config gave
    but its path): two folders both named MyModel whose configs differ have different digests,
    where their labels are the same."""
    if target is None:
        return None
    import hashlib
    import json

    model = target.get("model")
    if isinstance(model, dict) and isinstance(model.get("config"), dict):
        # where the config lies is not what it says: ./MyModel and /abs/MyModel are one model
        model = {**model, "config": {k: v for k, v in model["config"].items() if k != "path"}}
    text = json.dumps({**target, "model": model}, sort_keys=True, ensure_ascii=True,
                      default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def retarget(drill: Drill, givens: dict[str, Any], target: Target) -> dict[str, Any]:
    """The givens with the target's model and GPU in place of the drill's; UsageError with one
    sentence when the drill's lesson needs what the model lacks or the numbers cannot work."""
    model, gpu = target_parts(target)
    measured_card = (drill.requires.measured_on or {}).get("gpu")
    if gpu is not None and measured_card is not None and \
            find_gpu(gpu).id == find_gpu(measured_card).id:
        gpu = None  # the card its rates were measured on: they stay, not its datasheet's
    if model is not None:
        # first: a drill that is its own model's has no other requirement worth naming
        _check_own_model(drill, model, gpu)
    _check_requirements(drill, model, gpu)
    # what the model lacks for the lesson is said before what the card lacks: a card's
    # advice ("choose a card that is one device") is no use where no card would do
    if model is not None:
        _check_lesson(drill, model, gpu)
    changed = replaced_givens(givens, model, gpu)
    if model is not None:
        _check_reach(drill, changed.get("context"), model, givens.get("model"),
                     changed.get("gpu") if isinstance(changed.get("gpu"), str) else gpu)
    if model is not None:
        _check_same_tokenizer_draft(drill, model, changed, target)
    if gpu is not None:
        _check_one_device(drill, model, gpu)
    why = _not_sensible(drill, changed)
    if why is None and drill.requires.weights_dominate:
        _check_weights_dominate(drill, changed, target)
    if why is not None:
        raise UsageError(f"drill {drill.id} cannot be re-targeted at "
                         f"{_refused_target(drill, target)}: "
                         f"{_examples_that_run(drill, why, gpu, model)}")
    return changed


def _check_weights_dominate(drill: Drill, givens: dict[str, Any], target: Target) -> None:
    """A drill whose lesson is that a batch shares one weight read (each user costs little)
    refused where one sequence's KV at its context already outweighs the weights a step
    reads: there each user's own KV is most of the step."""
    from trainer.reading.formatting import format_bytes

    try:
        key = AnswerKey(drill, givens)
        own = value_of(key.base, "kv_bytes_per_sequence")
        weights = value_of(key.base, "weights_read_per_step")
        batch = value_of(key.base, "max_concurrency")
    except (KvdrillError, ZeroDivisionError):
        return
    shown = key.display_givens()
    if batch < 2:
        # one sequence is no batch: nothing shares the weight read (phi-4 on an L40S)
        raise UsageError(
            f"drill {drill.id} cannot be re-targeted at {_refused_target(drill, target)}: its "
            "lesson is "
            f"that a batch shares one read of the weights, and only {int(batch)} sequence of "
            f"{shown['context']} tokens fits on {shown['gpus']} × {shown['gpu_name']}: "
            f"{_better_card(key, 'memory', _smaller(key))}")
    if own < weights:
        return
    raise UsageError(
        f"drill {drill.id} cannot be re-targeted at {_refused_target(drill, target)}: its "
        "lesson is that "
        f"a batch shares one read of the weights, so each user costs little, and here one "
        f"{shown['context']}-token sequence's KV ({format_bytes(own)}) outweighs the weights a "
        f"step reads ({format_bytes(weights)}), so each user's own KV is most of the step: "
        "choose a larger model, or a drill about long context such as "
        "long-context-tier")


def _refused_target(drill: Drill, target: Target) -> str:
    """The target a refusal names: its model, and the card it would run on (the drill's own
    card said as such where no --gpu was given: "its own GPU" reads as the model's)."""
    model, gpu = target_parts(target)
    card = find_gpu(gpu).name if gpu is not None else \
        f"{find_gpu(str(drill.givens.get('gpu'))).name} (the drill's own card)"
    return f"{model.name if model is not None else 'its own model'} on {card}"


def _examples_that_run(drill: Drill, said: str, gpu: str | None,
                       model: ModelPreset | None = None) -> str:
    """A refusal's list of targets (the drafted families', models whose release is listed)
    cut to those the drill runs with on the card asked for, tried; where none does, the advice
    says so instead of naming a model that would be refused too."""
    from trainer.capacity.serving_formulas import DRAFTED_TARGETS

    def that_run(listed: str) -> str:
        names = listed.replace(" or ", ", ").split(", ")
        return _or_list([name for name in names if _runs(drill, model_of(name), gpu)] or [""])

    if DRAFTED_TARGETS in said:
        # the big targets first; on a small card, the drafted families' smaller members
        runs = that_run(DRAFTED_TARGETS) or that_run(_SMALL_DRAFTED_TARGETS)
        said = said.replace(f"such as {DRAFTED_TARGETS}", f"such as {runs}") if runs else \
            said.replace(f"such as {DRAFTED_TARGETS}", "on a larger card (none kvdrill drafts "
                                                       "for fits this one)")
    larger = re.search(r"choose a larger [^:]* model, such as ([a-z0-9.\-]+)$", said)
    if larger and gpu is not None and not _runs(drill, bigger := model_of(larger.group(1)), gpu):
        # the family's larger model does not fit the card asked for: say on which it runs
        from trainer.capacity.presets import gpus as gpu_presets

        by_memory = sorted(gpu_presets().values(), key=lambda card: card.hbm_gb)
        cards = _first_two(card.id for card in by_memory if _runs(drill, bigger, card.id))
        said += f" on {_or_list(cards)}" if cards else ", on no card kvdrill knows"
    if larger and model_of(larger.group(1)).experts is not None:
        # a mixture of experts gains nothing either: the refusal must not read as if it would
        said += (" (a mixture of experts, on which the drill shows speculation losing, "
                 "since verifying k + 1 tokens touches most of its experts)")
    released = f"choose a model whose preset lists that release, such as {_RELEASED_EXAMPLE}, "
    if released in said:
        runs = that_run(_RELEASED_EXAMPLE)
        said = said.replace(released, f"choose a model whose preset lists that release, such "
                                      f"as {runs}, ") if runs else \
            said.replace(f"{released}or size it", "size it")
    # calc needs the model named, and the drill the context it holds
    model_id = next((m.group(1) for m in [re.search(r"preset for (\S+) records no", said)]
                     if m), None)
    if said.endswith("size it with kvdrill calc") and (model is not None or model_id):
        # (a config.json is named by its path, which calc reads; a preset by its id)
        said += f" --model {_named(model) if model is not None else model_id}"
    return said


# Targets of the drafted families small enough for a 24-48 GB card (their drafts: Llama-3.2-1B,
# Qwen3-0.6B, Gemma-3-1B)
_SMALL_DRAFTED_TARGETS = "llama-3.1-8b, qwen3-8b or qwen3-4b"


# Smaller presets that share a target's tokenizer where kvdrill's draft families
# (serving_formulas.DRAFT_FAMILIES) have no draft: GPT-OSS-120B's o200k_harmony (201,088) is
# GPT-OSS-20B's. A refusal names it and why it does not draft. (Llama-2 and Mistral's families
# draft with their 7B: the drill runs, and says where speculation does not pay.)
_SAME_TOKENIZER = {"gpt-oss-120b": "gpt-oss-20b"}
# The tokenizer a refusal names, where it has a name of its own
_TOKENIZER_NAMES = {"gpt-oss-120b": "GPT-OSS's o200k_harmony tokenizer"}


def _check_same_tokenizer_draft(drill: Drill, model: ModelPreset, givens: dict[str, Any],
                                target: Target) -> None:
    """A speculative drill re-targeted at a model whose family has no draft, though a smaller
    preset shares its tokenizer: refused with the true reason, that model's speed-up (a draft
    that large reads too much to gain anything), not "no draft shares its tokenizer"."""
    from trainer.capacity.serving_formulas import DRAFT_FIELDS, DRAFTED_TARGETS, family_draft

    sibling = None if model.from_config else _SAME_TOKENIZER.get(model.id)
    speedup_step = next((step.id for step in drill.steps
                         if step.answer == "spec_speedup" and not step.with_), None)
    if sibling is None or speedup_step is None or "spec_tokens" not in givens or \
            family_draft(model).params is not None:
        return
    from trainer.reading.formatting import format_bytes

    draft = model_of(sibling)
    trial = dict(givens, draft_params=draft.params, draft_layers=draft.layers,
                 draft_kv_heads=draft.kv_heads, draft_head_dim=draft.head_dim)
    try:
        key = AnswerKey(drill, trial)
        if value_of(key.base, "kv_budget_bytes") <= 0 or \
                value_of(key.base, "max_concurrency") < 1:
            return  # the target alone does not fit: _not_sensible says so
        d = key.deployment(speedup_step)
        speedup = value_of(d, "spec_speedup")
        read = value_of(d, "active_weights_bytes")
        drafted = value_of(d, "draft_weights_bytes")
        size = f"at {float(draft.params) / 10**9:.2f}B parameters it"
        if draft.experts is not None:
            # An MoE draft reads only the experts its tokens are routed to, not every weight:
            # its own decode step (its experts, its windows) on the target's card and batch.
            own = key.build(dict(key.step_givens(drill.step(speedup_step)), model=sibling,
                                 **{name: None for name in ("weights_dtype", "checkpoint",
                                                            "spec_tokens", "acceptance_rate",
                                                            *DRAFT_FIELDS)}))
            draft_step = value_of(own, "decode_step_seconds")
            drafted = value_of(own, "weights_read_per_step")
            speedup = (value_of(d, "spec_expected_tokens") * value_of(d, "decode_step_seconds")
                       / (int(d.spec_tokens or 0) * draft_step
                          + value_of(d, "spec_verify_seconds")))
            size = (f"as an MoE of {float(draft.params) / 10**9:.2f}B parameters "
                    f"({float(draft.active_params or 0) / 10**9:.2f}B active) it")
            read = value_of(d, "weights_read_per_step")
    except (KvdrillError, ZeroDivisionError):
        return
    shown = key.display_givens()
    verify = ""
    if model.experts is not None and model.experts_per_token is not None:
        # the MoE target's verification of k + 1 tokens touches more experts than a step:
        # most of the loss, said beside the draft's read (expert pass 51, M2)
        try:
            verify_share = value_of(d, "spec_verify_expert_share")
            verify_read = value_of(d, "spec_verify_weights_bytes")
        except (KvdrillError, ZeroDivisionError):
            verify_share = None
        if verify_share is not None:
            one = Fraction(model.experts_per_token, model.experts)
            verify = (f", and verifying {format_number(int(d.spec_tokens or 0) + 1)} tokens "
                      f"touches {format_number(100 * verify_share, sig=3)}% of its experts "
                      f"({format_bytes(verify_read)}), not the {format_number(100 * one, sig=2)}% "
                      "one token does")
    reads = (f"{size} reads {format_bytes(drafted)} "
             f"per drafted token against the {format_bytes(read)} a {model.name} step reads"
             f"{verify}, so at k = {shown['spec_tokens']} and acceptance "
             f"{shown['acceptance_rate']} speculation would run at {float(speedup):.2f}× the "
             "speed")
    if speedup <= 1:
        tokenizer = _TOKENIZER_NAMES.get(model.id, "its tokenizer")
        said = (f"the only draft kvdrill knows that shares {tokenizer}, {draft.name}, is too "
                f"large to gain anything: {reads}, a slowdown")
    else:
        said = (f"{draft.name} shares {model.name}'s tokenizer, and {reads}, but kvdrill "
                "drafts only with the small draft it sets for each family (Llama-3.2-1B for "
                f"Llama-3, Qwen3-0.6B for Qwen3) and sets none for {model.name}'s")
    raise UsageError(f"drill {drill.id} cannot be re-targeted at {_refused_target(drill, target)}: "
                     + _examples_that_run(drill, f"{said}: choose a target such as "
                                                 f"{DRAFTED_TARGETS}", target.get("gpu")))


_SIXTEEN_BITS = ("fp16", "bf16")


def replaced_givens(givens: dict[str, Any], model: ModelPreset | None,
                    gpu: str | None) -> dict[str, Any]:
    """The givens with the model and the card replaced, unchecked: what a re-target draws
    (two variants whose givens differ only in what the target replaces are one variant)."""
    changed = dict(givens)
    if model is not None:
        own = changed.get("model")
        released = model_of(own).weights_dtype if own else None
        if own and (own == model.id or (same_weights(model, model_of(own))
                                        and not model.weights_unknown)):
            # the drill's own model named again (or its twin, weight for weight): its release,
            # stated size and checkpoint stay (a measured step's 15.01 GB read is the twin's)
            own_givens = {name: changed[name] for name in _MODEL_GIVENS if name in changed}
        else:
            own_givens = {}
        for name in _MODEL_GIVENS:
            changed.pop(name, None)
        changed.update(own_givens)
        # A weights dtype that restates the old model's release goes with it; a deliberate one
        # (FP8 weights for a BF16 model) is a serving choice and stays.
        if not own_givens and changed.get("weights_dtype") in (None, released):
            changed.pop("weights_dtype", None)
        # A 16-bit cache (Llama-2's fp16, or a variant's drawn beside another model) is the
        # new model's 16-bit dtype: vLLM's kv-cache-dtype auto keeps the model's (the bytes
        # are the same)
        if not own_givens and changed.get("kv_dtype") in _SIXTEEN_BITS \
                and model.weights_dtype in _SIXTEEN_BITS:
            changed["kv_dtype"] = model.weights_dtype
        changed["model"] = model.id if not model.from_config else model
    if gpu is not None:
        for name in _GPU_GIVENS:
            changed.pop(name, None)
        if givens.get("memory") == "reported" and find_gpu(gpu).reported_mib is not None:
            changed["memory"] = "reported"
        changed["gpu"] = gpu
    if (model is not None or gpu is not None) and changed.get("block_size") == 16:
        target_model = model if model is not None else \
            (model_of(changed["model"]) if isinstance(changed.get("model"), str) else None)
        card = changed.get("gpu")
        forced = find_gpu(card).mla_block_size if isinstance(card, str) else None
        if target_model is not None and target_model.attention == "mla" and forced:
            changed["block_size"] = forced  # the engine's MLA backend pages this way
    return changed


def _check_reach(drill: Drill, context: Any, model: ModelPreset, own: Any,
                 card: str | None = None) -> None:
    """Past its own positions a model is served with RoPE scaling (Qwen's YaRN, by 4); past
    that reach nobody serves it at that context, and a drill whose sessions (or a step's)
    hold more is refused, unless the drill's own model is past it too (then the drill asks
    "what if it were served that long", and so may any model)."""
    if not model.max_context or (isinstance(own, str) and own == model.id):
        return
    reach = 1 if drill.requires.within_positions or model.learned_positions \
        else ROPE_SCALING_REACH

    def base(m: ModelPreset) -> int:
        # scaling stretches the trained length (Qwen3: 32,768 under 40,960 positions)
        return m.max_context if reach == 1 else rope_base(m)

    own_reach = base(model_of(own)) if isinstance(own, str) else None
    held = [(None, context)] + [(step.id, step.with_.get("context")) for step in drill.steps
                                if "model" not in step.with_]  # a pinned model is not ours
    for step_id, tokens in held:
        if not isinstance(tokens, int) or tokens <= reach * base(model):
            continue
        if own_reach and tokens > reach * own_reach:
            continue  # the drill's own model is stretched as far: a what-if, said in it
        where = "sessions hold" if step_id is None else f"step {step_id} holds"
        positions = "positions (max_position_embeddings)" if base(model) == model.max_context \
            else "trained positions (original_max_position_embeddings)"
        how_far = (f"{model.name}'s {model.max_context:,} positions, which it learned as an "
                   "embedding: no scaling stretches them" if model.learned_positions else
                   f"{model.name}'s {model.max_context:,} positions (max_position_embeddings), "
                   "past which vLLM refuses to start without RoPE scaling" if reach == 1 else
                   f"{reach} × {model.name}'s {base(model):,} {positions}, further than "
                   "kvdrill stretches a trained context by RoPE scaling (unless the drill's "
                   "own model is stretched as far)")
        raise UsageError(
            f"drill {drill.id}'s {where} {tokens:,} tokens, more than {how_far}: choose a "
            f"model with a longer context{_longer_context(drill, model, card)}, or size "
            f"{model.name} with kvdrill calc --model {_named(model)}"
            + (f" --seq {model.max_context}" if model.max_context < DEFAULT_CONTEXT else ""))


def _longer_context(drill: Drill, model: ModelPreset, card: str | None) -> str:
    """" (such as phi-4 or qwen3-4b)": the two catalogue models nearest the target's size (at
    most twice it; its own family first) with which the drill runs on this card, or "" when
    none of the few tried does (expert pass 60, N4: the refusal named none)."""
    if _TRYING:
        return ""
    from trainer.capacity.presets import models as model_presets

    family = _family(model.id)
    near = sorted((m for m in model_presets().values()
                   if m.id != model.id and m.params <= 2 * model.params
                   and (m.max_context or 0) > (model.max_context or 0)),
                  key=lambda m: (_family(m.id) != family, abs(math.log(m.params / model.params))))
    runs = _first_two(m.id for m in near[:_SMALLER_TRIED] if _runs(drill, m, card))
    return f" (such as {_or_list(runs)})" if runs else ""


def _asks_reported(drill: Drill) -> bool:
    """Whether the drill, or one of its steps, sizes the card by its driver-reported memory."""
    return drill.givens.get("memory") == "reported" or any(
        (step.with_ or {}).get("memory") == "reported" for step in drill.steps)


def _named(model: ModelPreset) -> str:
    """The --model that names this model again in a command to run: a preset's id, or the
    config's path as given (shell-quoted)."""
    import shlex

    return shlex.quote(model.config_path) if model.from_config and model.config_path \
        else model.id


def _check_own_model(drill: Drill, model: ModelPreset, gpu: str | None) -> None:
    """A drill whose lesson is its own model's (`requires: own_model`) refuses any other,
    naming a drill that does run on that model (tried, not guessed) or else calc."""
    needs = drill.requires
    own = drill.givens.get("model")
    # its own model, or a model its own variants draw (the file's author vouched for it); not
    # another of the same shape, whose figures the file does not hold (the weights a measured
    # step reads)
    drawn = tuple(str(m) for m in drill.vary.get("model", ()))
    vouched = model.id == str(own) or _drawn(drill, model)
    measured = model_of(str(own))
    # (Meta-Llama-3-8B is Llama-3.1-8B's decoder, layer for layer and weight for weight)
    kin = vouched or same_shape(model, measured)
    if needs.own_model and kin and needs.measured_on and not vouched \
            and not _measured_weights(model, measured):
        # the measured decoder, but not the weights measured (an FP8 checkpoint of it): a
        # measured step read the 16-bit weights, and this checkpoint was never run
        raise UsageError(
            f"drill {drill.id} was measured on {measured.name}'s {measured.weights_dtype} "
            f"weights, and {model.name} is that decoder with {_weights_said(model)}, never "
            f"measured: {runnable_suggestion(model, gpu, besides=drill.id)}")
    if needs.own_model and not kin:
        gpu_only = not needs.measured_on and _own_runs_on(drill, gpu)
        others = [m for m in drawn if m != str(own)]
        whose = (f"takes only the models its figures were worked out for, "
                 f"{_or_list([str(own), *others])}"
                 + (f", at the rates measured on an {find_gpu(str(needs.measured_on['gpu'])).name}"
                    if needs.measured_on and needs.measured_on.get("gpu") else "")
                 if others
                 else f"is {measured.name}'s own ({needs.own_model})")
        raise UsageError(
            f"drill {drill.id} {whose}: "
            f"{'re-target it with --gpu only, or ' if gpu_only else ''}"
            f"{runnable_suggestion(model, gpu, besides=drill.id)}")


def _measured_weights(model: ModelPreset, own: ModelPreset) -> bool:
    """Whether the model's weights are the measured model's, byte for byte (its own config.json
    as released): not a quantised checkpoint of it, nor one whose weights cannot be sized."""
    return same_weights(model, own) and not model.weights_unknown


def _weights_said(model: ModelPreset) -> str:
    if model.weights_unknown:
        return "a quantization kvdrill cannot size"
    return f"{model.weights_dtype} weights"


def _drawn(drill: Drill, model: ModelPreset) -> bool:
    """Whether the model is one the drill's own variants draw: by its preset id, or a
    config.json read weight for weight as one of them, whatever its folder is called."""
    drawn = tuple(str(m) for m in drill.vary.get("model", ()))
    return model.id in drawn or (model.from_config and any(
        same_weights(model, model_of(m)) for m in drawn))


def _own_runs_on(drill: Drill, gpu: str | None) -> bool:
    """Whether the drill, on its own model, runs on `gpu` (its own card when None): tried, so
    "re-target it with --gpu only" is said only where it works."""
    return gpu is None or _runs(drill, None, gpu)


def _runs(drill: Drill, model: ModelPreset | None, gpu: str | None) -> bool:
    """Whether the drill re-targets at this model (its own when None) and card, tried as the
    user would run it; kept, so a refusal tries each suggestion once."""
    global _TRYING
    tried = (drill.id, "" if model is None else repr(model_spec(model)), gpu)
    if tried not in _RUNS:
        _RUNS[tried] = False  # while it is tried: a refusal that tries it again is told no
        _TRYING += 1
        try:
            retarget(drill, dict(drill.givens), make_target(model, gpu) or {})
            _RUNS[tried] = True
        except KvdrillError:
            _RUNS[tried] = False
        finally:
            _TRYING -= 1
    return _RUNS[tried]


# how many re-targetings are being tried: a refusal met while trying one is only a "no", so
# it tries no suggestions of its own
_TRYING = 0


def _card_option(drill: Drill, card: str | None) -> str:
    """" --gpu G" to name `card` in a command for the drill, or "" for its own card."""
    own = drill.givens.get("gpu")
    if card is None or (own is not None and find_gpu(str(own)).id == find_gpu(card).id):
        return ""
    return f" --gpu {find_gpu(card).id}"


# Drills that take most models, in the order a suggestion tries them, and the cards it tries
# them on (the target's first).
_GENERAL_DRILLS = ("llama31-8b-h100", "multi-turn-growth", "mixtral-moe-decode",
                   "deepseek-v3-mla-h200", "hybrid-state-kv", "prefix-caching")
_ROOMY_CARDS = ("h200", "mi300x", "mi325x")
_TWO_CARD_PARAMS = 30 * 10**9  # a dense model this large is served on two cards or more
_RUNS: dict[tuple[str, str, str | None], bool] = {}


def runnable_suggestion(model: ModelPreset, gpu: str | None, besides: str,
                        card_only: bool = False) -> str:
    """"drill it with kvdrill practice D --model M [--gpu G]" for the first general drill
    that really re-targets at the model (tried, as the user would run it), else "size M with
    kvdrill calc --model M"."""
    from trainer.drills.loader import find_drill

    def calc(on: str) -> str:
        # calc's default context is 4,096 tokens: a model with fewer positions is sized at its
        # own
        if model.max_context and model.max_context < DEFAULT_CONTEXT:
            on += f" --seq {model.max_context}"
        return f"size {model.name} with kvdrill calc --model {_named(model)}{on}"

    if _TRYING:
        # a refusal met while trying a suggestion is only a "no", its words unseen: it needs
        # no suggestion of its own, nor the GPUs calc would size the model on
        return calc("")
    if card_only:  # only the card was asked for: a drill that runs on it as written
        return _first_on_card(str(gpu), besides, find_drill) or \
            calc(f" --gpu {find_gpu(gpu).id}" if gpu else "")
    # calc on the card asked for, with the GPUs that hold the weights
    return _first_runnable(model, gpu, besides, find_drill) or calc(_calc_card(model, gpu))


def _calc_card(model: ModelPreset, gpu: str | None) -> str:
    """" --gpu G" (with " --gpus N", the fewest of 1, 2, 4, 8 that hold the weights with room
    for the cache) for calc to size the model on the card asked for; "" where none do."""
    from trainer.capacity.presets import build_deployment
    from trainer.capacity.solver import solve

    if gpu is None:
        return ""
    card = find_gpu(gpu).id
    for gpus in (1, 2, 4, 8):
        try:
            solution = solve(build_deployment(model, card, {"gpus": gpus})[0])
        except (KvdrillError, ArithmeticError, ValueError):
            continue
        if solution["kv_budget_bytes"] > 0:
            return f" --gpu {card}" + (f" --gpus {gpus}" if gpus > 1 else "")
    return ""


def _first_on_card(gpu: str, besides: str, find_drill: Callable[[str], Any]) -> str | None:
    for drill_id in _GENERAL_DRILLS:
        if drill_id == besides:
            continue
        general = find_drill(drill_id)[0]
        if _runs(general, None, gpu):
            return f"drill it with kvdrill practice {drill_id}{_card_option(general, gpu)}"
    return None


# the card the user asked for, while the drill's own card is tried for the model's reason
_ASKED_CARD: list[str] = []


def _first_runnable(model: ModelPreset, gpu: str | None, besides: str,
                    find_drill: Callable[[str], Any]) -> str | None:
    cards = tuple(dict.fromkeys((gpu, None, *_ROOMY_CARDS)))
    # the drill about the model's own kind first: MoE, MLA, hybrid, windows, a dense model
    # that takes two cards (Gemma-2-9B to sliding-window-kv, a 70B to the TP=2 drill)
    kind = ("mixtral-moe-decode" if model.experts is not None else "deepseek-v3-mla-h200"
            if model.attention == "mla" else "hybrid-state-kv" if model.state_elements
            else "sliding-window-kv" if model.window and model.windowed_layers
            else "llama31-70b-tp2-h100" if model.params >= _TWO_CARD_PARAMS else "")
    # a drill on the card asked about first, any drill; then the others on other cards
    asked = gpu if gpu is not None else next(iter(_ASKED_CARD[-1:]), None)
    passes = ((asked,), cards) if asked is not None else (cards,)
    for tried, drill_id in ((tried, drill_id) for tried in passes
                            for drill_id in dict.fromkeys((kind, *_GENERAL_DRILLS))):
        if drill_id in ("", besides):
            continue
        general = find_drill(drill_id)[0]
        # a drill that works this very model in a step of its own (Gemma-2-9B beside
        # Mistral-7B in sliding-window-kv) is drilled as written
        own = {str(general.givens.get("model"))} | {
            str(step.with_.get("model")) for step in general.steps if "model" in step.with_}
        as_written = model.id in own and not model.from_config
        for card in tried:
            if not _runs(general, None if as_written else model, card):
                continue
            named = "" if as_written or (model.id == str(general.givens.get("model"))
                                         and not model.from_config) \
                else f" --model {_named(model)}"
            elsewhere = f" (that drill does not run on {find_gpu(gpu).name})" \
                if gpu is not None and card != gpu else ""
            if as_written and model.id != str(general.givens.get("model")):
                # the drill is another model's; say where it works this one
                step = next(step.id for step in general.steps
                            if str(step.with_.get("model")) == model.id)
                elsewhere += f" (its step {step} is on {model.name})"
            return (f"drill it with kvdrill practice {drill_id}{named}"
                    f"{_card_option(general, card)}{elsewhere}")
    return None


def _check_lesson(drill: Drill, model: ModelPreset, gpu: str | None) -> None:
    for tag, (what, kind, examples, has) in LESSONS.items():
        if tag in drill.tags and not has(model):
            # an MoE whose experts its preset does not describe (Jamba-1.5-Mini: 16 experts
            # every other layer, 12B of 52B active) has them; kvdrill does not size them
            undescribed = tag == "moe" and model.active_params is not None \
                and model.params is not None and model.active_params < model.params
            lacks = (f"whose experts kvdrill's {model.name} does not describe (only its "
                     "active count)" if undescribed else f"which {model.name} does not have")
            raise UsageError(f"drill {drill.id} is a lesson in {what}, {lacks}: choose "
                             f"{_lesson_models(drill, kind, examples, has, gpu)}")
    if model.attention_layers is not None and "hybrid" not in drill.tags:
        # Its questions ask for "the layers" of KV per token; a hybrid or pruned model keeps KV
        # on only some of them, which no question of the drill says.
        others = model.layers - model.attention_layers
        recurrent = recurrent_layers(model) if model.state_elements else 0
        if recurrent > others:
            # a parallel hybrid (Falcon-H1): attention on every layer it has, and beside it a
            # state the drill's sequences never count (expert pass 55: "keeps KV on 32 of its
            # 32 layers" was given as the reason)
            raise UsageError(
                f"drill {drill.id} prices a sequence as its KV alone, and {model.name} also "
                f"keeps a fixed state of {format_number(model.state_elements or 0)} values "
                f"beside the attention of {_layers_phrase(recurrent, model.layers)}, which the "
                "drill does not count: choose a model with attention only, or "
                f"{runnable_suggestion(model, None, besides=drill.id)}")
        rest = ", ".join(part for part in (
            f"{recurrent} are recurrent layers that keep a fixed state" if recurrent else "",
            (f"{others - recurrent} are layers with no cache of their own" if recurrent
             else f"{others} are layers with no attention") if others > recurrent else "")
            if part)
        raise UsageError(
            f"drill {drill.id} asks for KV on every layer, and {model.name} keeps KV on "
            f"{model.attention_layers} of its {model.layers} layers ({rest}): "
            f"choose a model with attention on every layer, or "
            f"{runnable_suggestion(model, None, besides=drill.id)}")


def _layers_phrase(some: int, layers: int) -> str:
    return f"each of its {layers} layers" if some == layers else f"{some} of its {layers} layers"


def _lesson_models(drill: Drill, kind: str, examples: tuple[str, ...],
                   has: Callable[[ModelPreset], bool], gpu: str | None) -> str:
    """The kind of model a lesson needs, with the presets of that kind the drill runs on at
    `gpu` (its own card when None), tried; where none does, those it runs on elsewhere."""
    presets = [model_of(name) for name in examples]
    runs = [m.id for m in presets if _runs(drill, m, gpu)][:LESSON_EXAMPLES]
    if not runs and gpu is not None:
        # none of the usual examples fits this card: the smallest of the catalogue's models
        # of the kind that do (Llama-3.2-1B on an L4)
        from trainer.capacity.presets import models

        for m in sorted(models().values(), key=lambda m: m.params):
            if len(runs) == LESSON_EXAMPLES - 1:
                break
            if m.id not in examples and has(m) and _runs(drill, m, gpu):
                runs.append(m.id)
    if runs:
        return f"{kind}, such as {_or_list(runs)}"
    card = "its own card" if gpu is None else find_gpu(gpu).name
    elsewhere = [m.id for m in presets if _runs(drill, m, None)][:LESSON_EXAMPLES]
    if elsewhere:
        return (f"{kind}; none kvdrill knows fits the drill on {card}: on its own card, "
                f"{_or_list(elsewhere)}")
    return kind


def _or_list(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def _not_sensible(drill: Drill, givens: dict[str, Any]) -> str | None:
    """Why these givens cannot carry the drill, or None: weights that leave no memory for the
    KV cache, not one sequence of the drill's context, or a step that cannot be computed for
    this model and card (said as its reason, never as "divides by zero")."""
    try:
        key = AnswerKey(drill, givens)
        # a step the model cannot carry on any card (no release in FP8, no draft of its
        # tokenizer) is said before the card's memory: a larger card would not help
        model_reason = None
        for step in drill.steps:
            if step.kind == "numeric":
                try:
                    key.reference(step.id)
                except KvdrillError as error:
                    if not str(error).endswith("ratio of zero"):
                        model_reason = error
                        break
                except ZeroDivisionError:
                    continue
        if model_reason is not None and _of_the_model(model_reason):
            raise model_reason
        if (why := _does_not_fit(key)) is not None:
            return why
        for step in drill.steps:
            if step.kind == "numeric":
                key.reference(step.id)
    except KvdrillError as error:
        if str(error).endswith("ratio of zero"):  # a comparison with a count that is zero
            return _zero_count(drill, givens)
        said = str(error).split(": ", 2)[-1] if str(error).startswith("drill ") else str(error)
        # the presets' advice is calc's (--weights-gb): a drill takes no such option
        return said.replace("give --weights-gb and --weights-dtype yourself",
                            "choose a model whose preset lists that release, such as "
                            f"{_RELEASED_EXAMPLE}, or size it with kvdrill calc")
    except ZeroDivisionError:
        return _zero_count(drill, givens)
    return None


# What a reference's error says of the model, whatever the card (kept apart from errors of
# memory and counts, which a larger card may cure)
_MODEL_REASONS = ("records no", "no draft", "shares its tokenizer", "vocabulary of")


def _of_the_model(error: KvdrillError) -> bool:
    return any(reason in str(error) for reason in _MODEL_REASONS)


def _zero_count(drill: Drill, givens: dict[str, Any]) -> str:
    """The count that came out at zero, in the drill's terms."""
    key = AnswerKey(drill, givens)
    shown = key.display_givens()
    card = f"{shown['gpus']} × {shown['gpu_name']}"
    try:
        if "tpot_ms" in givens and value_of(key.base, "latency_bound_batch") < 1:
            return (f"reading the weights alone takes longer than the {shown['tpot_ms']} ms "
                    f"TPOT target on {card}, so no batch meets it: "
                    f"{_better_card(key, 'faster', _smaller(key))}")
    except (KvdrillError, ZeroDivisionError):
        pass
    return (f"one of its counts comes out at zero on {card} (no sequence, no batch to divide "
            f"by): {_better_card(key, 'memory', _smaller(key))}")


def _check_requirements(drill: Drill, model: ModelPreset | None, gpu: str | None) -> None:
    """What the drill's file says its lesson needs (`requires:`), checked against the target;
    UsageError with the reason and what to choose instead."""
    needs = drill.requires
    if needs.measured_on:
        card, shape = needs.measured_on.get("gpu"), needs.measured_on.get("model")
        where = find_gpu(card).name if card else "its card"
        what = model_of(shape).name if shape else "its model"
        if gpu is not None and card is not None and find_gpu(gpu).id != find_gpu(card).id:
            instead = runnable_suggestion(model or model_of(shape or "llama-3.1-8b"), gpu,
                                          besides=drill.id, card_only=model is None)
            raise UsageError(
                f"drill {drill.id} is built on rates measured on an {where} with "
                f"{what}'s shape, which do not carry to {find_gpu(gpu).name}: {instead}")
        if model is not None and shape is not None and not same_shape(model, model_of(shape)) \
                and not _drawn(drill, model):  # its variants' models carry
            raise UsageError(
                f"drill {drill.id} is built on rates measured with {what}'s shape on an "
                f"{where}, which do not carry to {model.name}: "
                f"{runnable_suggestion(model, gpu, besides=drill.id)}")
    if gpu is not None and find_gpu(gpu).reported_mib is None and _asks_reported(drill):
        from trainer.capacity.presets import gpus as gpu_presets

        known = [g.id for g in gpu_presets().values() if g.reported_mib is not None
                 and _runs(drill, model, g.id)]
        if not known and model is not None:
            # no card holds this model in the drill: the model is what to change, and the
            # reason is the one its own card gives
            try:
                _ASKED_CARD.append(gpu)  # another drill it suggests runs there if it can
                try:
                    retarget(drill, dict(drill.givens), make_target(model, None) or {})
                finally:
                    _ASKED_CARD.pop()
            except UsageError as model_reason:
                asked = find_gpu(gpu).name
                own_card = find_gpu(str(drill.givens.get("gpu"))).name
                said = str(model_reason).replace(f" on {own_card} (the drill's own card):",
                                                 f" on {asked}:", 1)
                if _MODELS_FOR_THIS_DRILL.search(said):
                    # the models it names run this drill on its own card, not on this one
                    own = find_gpu(str(drill.givens.get("gpu")))
                    raise UsageError(
                        f"{said}, with --gpu {own.id} (kvdrill has no sourced figure for what "
                        f"{asked}'s driver reports, which this drill asks for)") from None
                # another drill or calc it suggests runs as suggested: the card stays
                raise UsageError(f"{said} (nor does this drill run on {asked}: "
                                 "it asks what the card's driver reports, for which kvdrill "
                                 "has no sourced figure)") from None
        cards = f"choose a card it has one for ({', '.join(known)})" if known else \
            "choose another model or card"
        raise UsageError(
            f"drill {drill.id} asks what the driver of a real card reports, and kvdrill has no "
            f"sourced figure for {find_gpu(gpu).name}'s: {cards}")
    if needs.dense and model is not None and model.experts is not None:
        raise UsageError(
            f"drill {drill.id} prices a step as one read of every weight, shared by the batch, "
            f"and {model.name} is a mixture of experts whose step reads only the experts its "
            f"batch touches (at a small batch, far fewer than all): choose a dense "
            f"model{_dense_models(drill, model, gpu)}, or "
            f"{runnable_suggestion(model, gpu, besides=drill.id)}")
    if needs.tokenizer_of and model is not None:
        draft = model_of(needs.tokenizer_of)
        if model.vocab is None or model.vocab != draft.vocab:
            vocab = "an unknown vocabulary" if model.vocab is None else \
                f"a vocabulary of {model.vocab:,}"
            raise UsageError(
                f"drill {drill.id} drafts with {draft.name} (a vocabulary of {draft.vocab:,}), "
                f"whose tokenizer {model.name} ({vocab}) does not share: a draft must come "
                f"from the target's family; choose a Llama-3 target such as llama-3.1-8b or "
                f"llama-3.3-70b")
    if needs.kv_heads and model is not None and model.attention == "mla":
        raise UsageError(
            f"drill {drill.id} counts the cache in KV heads, and {model.name} caches one "
            f"latent per token with no KV heads: choose a model with grouped KV heads, or "
            f"{runnable_suggestion(model, gpu, besides=drill.id)}")
    if needs.several_kv_heads and model is not None and model.attention != "mla" and \
            model.kv_heads == 1:
        raise UsageError(
            f"drill {drill.id} weighs cutting the KV heads to one (multi-query attention) as "
            f"an option, and {model.name} already has a single KV head: choose a model with "
            f"grouped KV heads, or {runnable_suggestion(model, gpu, besides=drill.id)}")
    gpus = drill.givens.get("gpus")
    if needs.tp_within_kv_heads and model is not None and model.attention != "mla" and \
            isinstance(gpus, int) and model.kv_heads < gpus:
        raise UsageError(
            f"drill {drill.id} starts from TP={gpus} with nothing copied, and {model.name} has "
            f"{model.kv_heads} KV heads, already copied {gpus // model.kv_heads}× at TP={gpus}: "
            f"choose a model with at least {gpus} KV heads, or "
            f"{runnable_suggestion(model, gpu, besides=drill.id)}")
    _check_global_layers(drill, model, gpu)
    if needs.full_attention and model is not None and model.window and model.windowed_layers:
        # (a model with layers that keep no KV is refused by _check_lesson for every drill but
        # the hybrid one)
        raise UsageError(
            f"drill {drill.id} needs every layer to keep the whole context, and {model.name} "
            f"has {model.windowed_layers} {_local_layers(model)}: choose "
            f"a model with full attention on every layer, or "
            f"{runnable_suggestion(model, gpu, besides=drill.id)}")


# a refusal that ends by naming models for this drill ("…, such as llama-3.3-70b or qwen3-32b")
_MODELS_FOR_THIS_DRILL = re.compile(r"choose a [^:]*?, such as [a-z0-9.\-]+(?:, [a-z0-9.\-]+)*"
                                    r"(?: or [a-z0-9.\-]+)?$")


def _check_global_layers(drill: Drill, model: ModelPreset | None, gpu: str | None) -> None:
    """A lesson whose session cache grows with the context refuses a model windowed on every
    layer (Mistral-7B-v0.1): its cache stops at the window, and halving the context buys
    nothing."""
    if not drill.requires.global_layers or model is None or not model.window:
        return
    if model.windowed_layers >= (model.attention_layers or model.layers):
        raise UsageError(
            f"drill {drill.id} grows each session's cache with its context, and every layer "
            f"of {model.name} keeps only its {model.window:,}-token window: choose a model "
            f"with full-attention layers, or {runnable_suggestion(model, gpu, besides=drill.id)}")


def _local_layers(model: ModelPreset) -> str:
    """Its layers that keep part of the context, in its own terms."""
    if model.chunked_attention:
        return (f"chunked-attention layers, which keep only the tokens of their current "
                f"{model.window:,}-token chunk")
    return "windowed layers, which keep only their window"


def _check_one_device(drill: Drill, model: ModelPreset | None, gpu: str) -> None:
    """A card software sees as several GPUs (MI250X: two GCDs of 64 GB) is refused: a drill
    sizes each card as one device, with one utilisation cap and one reserve, and the vendor
    figures are the card's sum."""
    card = find_gpu(gpu)
    if card.devices <= 1:
        return
    from trainer.capacity.presets import gpus as gpu_presets

    each = format_number(card.hbm_gb / card.devices)
    own = AnswerKey(drill).base  # the drill's own dtypes: FP8 weights or KV want an FP8 path
    fp8_drill = own.weights_dtype.startswith("fp8") or own.kv_dtype.startswith("fp8")
    fp8 = " (and vLLM has no FP8 path on it)" if card.fp8_tflops is None and fp8_drill else ""
    instead = next((g.id for g in gpu_presets().values() if g.devices == 1 and g.id != card.id
                    and g.name.split()[0] == card.name.split()[0] and _runs(drill, model, g.id)),
                   None)
    raise UsageError(
        f"drill {drill.id} sizes each card as one GPU, and software sees the {card.name} as "
        f"{card.devices} GPUs (GCDs) of {each} GB each, every one with its own "
        f"gpu_memory_utilization cap and reserve, so one replica on it is {card.devices}-way "
        f"parallel{fp8}: choose a card that is one device"
        + (f", such as {instead}" if instead else ""))


def _lesson_lost(key: AnswerKey, card: str) -> str | None:
    """Why a lesson stated as a ratio below a bound (TP=16 buys less than twice TP=8's
    sessions) does not hold on the target (8 × H100: 6 sessions at TP=8, 35 at TP=16);
    None when it does."""
    bound = key.drill.requires.ratio_below
    if bound is None:
        return None
    step = key.drill.step(bound.step)
    ratio = key.reference(step.id).value
    if ratio < Fraction(str(bound.below)) or step.ratio_of is None:
        return None
    top, bottom = (key.reference(other).value for other in step.ratio_of)
    unit = f" {key.drill.step(step.ratio_of[0]).unit}".rstrip()
    still = ""
    if bound.still is not None and bound.still_words is not None:
        other = key.reference(bound.still).value
        if other > top:
            # the ratio fails for want of room in the smaller layout, not because the cause
            # went away: said, lest the refusal read as "TP=16 is fine here" (expert pass 55)
            still = (f"; the cause is still there, hidden by how little room is left "
                     f"{bound.bottom}: {bound.still_words} would hold "
                     f"{format_number(other)}{unit} against {format_number(top)} {bound.top}")
    return (f"its lesson is that {bound.lesson}, and on {card} the ratio does not show it "
            f"({format_number(top)}{unit} {bound.top} against {format_number(bottom)} "
            f"{bound.bottom}, {format_number(ratio, sig=3)}×{still}): "
            f"{_better_card(key, 'memory', '')}")


def _batch_under_target(key: AnswerKey, card: str) -> str | None:
    """Why a lesson of a batch sharing one weight read under a TPOT target has no batch on
    the target: the weights alone take nearly all of the step (Qwen3-8B on an L40S: 19 of
    20 ms, one sequence); None when it has. (A tail that fits no request is said by the
    solution, not refused: the lesson is what the tail costs.)"""
    least = key.drill.requires.latency_batch
    if not least:
        return None
    shown = key.display_givens()
    batch = value_of(key.base, "latency_bound_batch")
    if batch < least:
        weights_ms = value_of(key.base, "weights_read_per_step") / (
            key.base.bandwidth_tbs * key.base.gpus * 10**9)
        meets = "no sequence meets it" if batch < 1 else "only 1 sequence meets it" \
            if batch == 1 else f"only {int(batch)} sequences meet it"
        return (f"reading the weights alone takes {format_number(weights_ms, sig=3)} ms of each "
                f"step on {card} against the {shown['tpot_ms']} ms TPOT target, so {meets} "
                "and no batch shares the weight read: "
                f"{_better_card(key, 'faster', _smaller(key))}")
    return None


def _batch_past_memory(key: AnswerKey) -> str | None:
    """Why a step's batch (64 sessions decoding together) cannot run: more sessions than the
    KV cache holds at that step's context; None when every batch fits."""
    for step in key.drill.steps:
        batch = step.with_.get("batch") if step.kind == "numeric" else None
        if not isinstance(batch, int) or batch <= 1:
            continue
        d = key.deployment(step.id)
        held = value_of(replace(d, batch=None), "max_concurrency")
        if held < batch:
            shown = key.display_givens()
            return (f"its step {step.id} runs a batch of {batch} sessions, and only "
                    f"{int(held)} fit on {shown['gpus']} × {shown['gpu_name']} at "
                    f"{d.context:,} tokens: {_better_card(key, 'memory', _smaller(key))}")
    return None


def _smaller(key: AnswerKey) -> str:
    """", or a smaller model (such as qwen3-8b)" where the drill takes another model (a drill
    of its own model takes none): the two largest catalogue models below the target's size
    with which the drill runs on this card, tried as the user would run them, or none named
    when none of the few tried does."""
    if key.drill.requires.own_model:
        return ""
    model = _target_model(key)
    if not isinstance(model, ModelPreset) or _TRYING or _ASKED_CARD:
        # (while the drill's own card stands in for one it cannot run on, models that run on
        # the stand-in would not run on the card asked for)
        return ", or a smaller model"
    from trainer.capacity.presets import models as model_presets

    gpu = key.givens.get("gpu")
    card = str(gpu) if gpu is not None else None
    d = key.base
    usable = d.gpus * (d.hbm_gb * d.utilization - d.reserve_gb) * 10**9
    weights_per_param = value_of(d, "weights_bytes") / model.params
    # clearly smaller (a 30B is no cure for a 32B), and its weights at the target's bytes per
    # parameter fit the card: the rest are not worth a re-targeting each
    candidates = [m for m in model_presets().values()
                  if m.params <= model.params * Fraction(85, 100)
                  and m.params * weights_per_param < usable]
    # the target's own family first (Qwen3-8B for Qwen3-32B): a drill that needs the family's
    # tokenizer (a draft) runs with it where a larger model of another family does not
    family = _family(model.id)
    below = _spread([*_spread(m for m in candidates if _family(m.id) == family)[:2],
                     *sorted((m for m in candidates if _family(m.id) != family),
                             key=lambda m: m.params, reverse=True)], by_size=False)
    runs = _first_two(m.id for m in below if _runs(key.drill, m, card))
    return f", or a smaller model (such as {_or_list(runs)})" if runs else ", or a smaller model"


# how many smaller models a refusal tries before it names none (each is a re-targeting)
_SMALLER_TRIED = 6


def _family(model_id: str) -> str:
    """"qwen3" of qwen3-32b and qwen3-8b, "llama-3.1" of llama-3.1-70b: the id before its size."""
    return re.split(r"-\d+(?:\.\d+)?[bm]\b", model_id, maxsplit=1)[0]


def _spread(models: Iterable[ModelPreset], by_size: bool = True) -> list[ModelPreset]:
    """The largest first (or in the order given), one of each size (a model within 5% of one
    kept is passed over: the 70Bs fail together), at most _SMALLER_TRIED of them."""
    kept: list[ModelPreset] = []
    ordered = sorted(models, key=lambda m: m.params, reverse=True) if by_size else list(models)
    for m in ordered:
        if all(abs(m.params - other.params) > other.params * Fraction(5, 100) for other in kept):
            kept.append(m)
    return kept[:_SMALLER_TRIED]


def _dense_models(drill: Drill, moe: ModelPreset, gpu: str | None) -> str:
    """" (such as qwen3-32b)": the two largest dense catalogue models no larger than the
    mixture of experts `moe` with which the drill runs on this card, tried as the user would
    run them; "" when none of the few tried does (or the card stands in for another)."""
    if _TRYING or _ASKED_CARD:
        return ""
    from trainer.capacity.deployment import DTYPE_BYTES
    from trainer.capacity.presets import models as model_presets

    card = find_gpu(str(gpu if gpu is not None else drill.givens.get("gpu")))
    memory = int(drill.givens.get("gpus") or 1) * card.hbm_gb * 10**9
    dense = _spread(m for m in model_presets().values()
                    if m.experts is None and m.params <= moe.params
                    and m.params * DTYPE_BYTES.get(m.weights_dtype, 2) < memory)
    runs = _first_two(m.id for m in dense if _runs(drill, m, gpu))
    return f" (such as {_or_list(runs)})" if runs else ""


def _target_model(key: AnswerKey) -> Any:
    """The key's model as a preset (a config's model as given; None for the drill's own)."""
    named = key.givens.get("model")
    return model_of(named) if isinstance(named, str) else named


def _no_card_runs(key: AnswerKey, smaller: str) -> str:
    """A refusal's advice where no card kvdrill knows runs the drill with this model."""
    model = _target_model(key)
    name = model.name if isinstance(model, ModelPreset) else "this model"
    return (f"no card kvdrill knows runs this drill with {name}" +
            (f": choose {smaller.removeprefix(', or ')}" if smaller else ""))


def _larger_card(key: AnswerKey, smaller: str) -> str:
    """The advice of a refusal for memory: the cards it runs on, or that none does."""
    named = _cards_that_hold(key)
    if named is None:
        return _no_card_runs(key, smaller)
    return f"choose a larger card with --gpu{named}{smaller}"


def _cards_that_hold(key: AnswerKey) -> str | None:
    """" (such as b200 or mi300x)": the two smallest cards whose memory, at the drill's GPU
    count, utilisation and reserve, holds the weights and one sequence of its context, and on
    which the drill runs with this model, tried as the user would run it; None when it runs on
    none, "" when the sizes are unknown."""
    from trainer.capacity.presets import gpus as gpu_presets

    d = key.base
    try:
        need = value_of(d, "weights_bytes") + value_of(d, "kv_bytes_per_sequence")
    except (KvdrillError, ZeroDivisionError):
        return ""
    model = _target_model(key)
    if model is not None and not isinstance(model, ModelPreset):
        return ""
    fits = sorted((g.hbm_gb, card_id) for card_id, g in gpu_presets().items()
                  if g.devices == 1  # (an MI250X is two GPUs to software: refused)
                  and d.gpus * (g.hbm_gb * d.utilization - d.reserve_gb) * 10**9 > need
                  and g.hbm_gb > d.hbm_gb)
    return _such_as(key.drill, model, [card_id for _, card_id in fits])


def _such_as(drill: Drill, model: ModelPreset | None, cards: list[str]) -> str | None:
    """" (such as b200 or mi300x)": the first two of `cards` on which the drill runs with this
    model (a card that holds the weights may still miss the drill's batch, target or reserve;
    each is tried in order until two run); None when none does."""
    if _TRYING:
        return ""
    runs = _first_two(card for card in cards if _runs(drill, model, card))
    return f" (such as {_or_list(runs)})" if runs else None


def _first_two(names: Iterable[str]) -> list[str]:
    """The first two of `names` (each tried only as far as two are found)."""
    return list(itertools.islice(names, 2))


def _better_card(key: AnswerKey, better: str, smaller: str) -> str:
    """The advice of a refusal a card with more bandwidth ("faster") or more memory cures:
    the cards the drill runs on with this model that have more of it, the least first, or
    that none does."""
    from trainer.capacity.presets import gpus as gpu_presets

    d = key.base
    model = _target_model(key)
    attribute = "bandwidth_tbs" if better == "faster" else "hbm_gb"
    mine = getattr(d, attribute)
    cards = [card_id for _, card_id in sorted(
        (getattr(g, attribute), card_id) for card_id, g in gpu_presets().items()
        if g.devices == 1 and getattr(g, attribute) > mine)]
    wording = "a faster card" if better == "faster" else "a card with more memory"
    if model is not None and not isinstance(model, ModelPreset):
        return f"choose {wording} with --gpu{smaller}"
    such = _such_as(key.drill, model, cards)
    if such is None:
        return _no_card_runs(key, smaller)
    return f"choose {wording} with --gpu{such}{smaller}"


def _does_not_fit(key: AnswerKey) -> str | None:
    """Why the drill's own sizing cannot run on the target: weights that leave no memory for
    the KV cache, or not one sequence of the drill's context; None when one fits."""
    from trainer.reading.formatting import format_bytes

    shown = key.display_givens()
    card = f"{shown['gpus']} × {shown['gpu_name']}"
    # another model only where the drill takes one (a drill of its own model takes none)
    smaller = _smaller(key)
    if value_of(key.base, "kv_budget_bytes") <= 0:
        from trainer.capacity.presets import gpus as gpu_presets

        d = key.base
        weights = value_of(d, "weights_bytes")
        largest = max(gpu_presets().values(), key=lambda g: g.hbm_gb)
        usable = d.gpus * (largest.hbm_gb * d.utilization - d.reserve_gb) * 10**9
        if weights >= usable:  # no larger card to choose
            model = key.givens.get("model")
            model = model_of(model) if isinstance(model, str) else model
            instead = runnable_suggestion(model, None, besides=key.drill.id) \
                if isinstance(model, ModelPreset) else "size it with kvdrill calc"
            raw = d.gpus * largest.hbm_gb * 10**9
            # (470 GB on two 256 GB MI325X fit the HBM, not what the drill's utilisation and
            # reserve leave of it)
            where = (f"on {key.base.gpus} × {largest.name}" if weights >= raw else
                     f"in what {key.base.gpus} × {largest.name} leave after the drill's "
                     f"utilisation and reserve ({format_bytes(usable)})")
            return (f"its weights ({format_bytes(weights)}) do not fit {where}, the largest "
                    f"card kvdrill knows: {instead}")
        raw = d.gpus * d.hbm_gb * 10**9
        against = (format_bytes(weights), format_bytes(raw))
        if against[0] == against[1]:  # 141.1 GB of weights on a 141 GB card
            against = (f"{format_number(weights / 10**9, sig=4)} GB",
                       f"{format_number(raw / 10**9, sig=4)} GB")
        said = (f"do not fit on {card} ({against[0]} against {against[1]})" if weights >= raw else
                f"({format_bytes(weights)}) leave no memory for the KV cache on {card}")
        return f"its weights {said}: {_larger_card(key, smaller)}"
    if value_of(key.base, "max_concurrency") < 1:
        return (f"not one sequence of the drill's {shown['context']}-token context fits on "
                f"{card}: {_larger_card(key, smaller)}")
    if (crowded := _batch_past_memory(key)) is not None:
        return crowded
    if (refused := _engine_refuses(key)) is not None:
        return refused
    for step in key.drill.steps:
        # the draft's weights and KV beside the target's: a speedup for no sequence is none
        if step.answer == "spec_max_concurrency" and \
                value_of(key.deployment(step.id), "spec_max_concurrency") < 1:
            return (f"with the draft's weights and KV resident beside the target's, not one "
                    f"sequence of {shown['context']} tokens fits on {card}: "
                    f"{_better_card(key, 'memory', smaller)}")
    positive = key.drill.requires.counts_positive
    listed = () if isinstance(positive, bool) else tuple(positive)
    for step in key.drill.steps if positive else ():
        # a lesson that compares counts (64 chats against 23 uncapped) has none at zero
        if (positive is True or step.id in listed) and step.kind == "numeric" \
                and step.answer in ("max_concurrency", "max_concurrency_with_prefix") \
                and value_of(key.deployment(step.id), step.answer) < 1:
            context = key.deployment(step.id).context
            return (f"its step {step.id} holds not one sequence of {context:,} tokens on "
                    f"{card}: {_better_card(key, 'memory', smaller)}")
    if (slow := _batch_under_target(key, card)) is not None:
        return slow
    if (lost := _lesson_lost(key, card)) is not None:
        return lost
    for step in key.drill.steps:
        # A step's own setting (a second engine at half the memory, fewer GPUs) must leave
        # room too: no step of the drill has a budget at or below zero as written.
        if step.kind == "numeric" and step.with_ and \
                value_of(key.deployment(step.id), "kv_budget_bytes") <= 0:
            pinned = step.with_.get("model")
            model_name = model_of(str(pinned)).name if isinstance(pinned, str) else \
                shown["model_name"]
            gpus = key.deployment(step.id).gpus
            card_id = step.with_.get("gpu")
            card_name = find_gpu(card_id).name if isinstance(card_id, str) else \
                shown["gpu_name"]
            reserve = key.deployment(step.id).reserve_gb
            # a step's own larger reserve is what leaves no room, when the drill's would not
            own_reserve = reserve != key.base.reserve_gb and \
                value_of(replace(key.deployment(step.id), reserve_gb=key.base.reserve_gb),
                         "kv_budget_bytes") > 0
            whose = (f"whose weights and that step's {format_number(reserve)} GB reserve "
                     "leave") if own_reserve else "whose weights leave"
            return (f"its step {step.id} sizes {model_name} on {gpus} × {card_name}, {whose} "
                    "no memory for the KV cache there: "
                    + ("choose a larger card with --gpu" if isinstance(card_id, str) else
                       _better_card(key, "memory", "" if pinned else smaller)))
    return None



