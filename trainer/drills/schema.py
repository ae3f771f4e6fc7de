"""The schema of drills/*.yaml and rubrics/*.yaml, as pydantic models.

These models are the truth of the file format (`kvdrill schema` exports them as JSON Schema);
unknown keys are errors. A file that validates becomes plain data (`validated_data`), from
which the loader makes the objects the code uses (model.py) and which it keeps, so a file
already validated is not validated again. Cross-references (quantities, misconception ids,
rubric concepts, step ids) are checked by lint, which knows the solver and the rubrics.
"""

from __future__ import annotations

import math
import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from trainer.drills.model import linked_names

Identifier = Annotated[str, Field(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
Scalar = int | float | str | None

_PERCENT = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*%\s*$")

# Givens that are names (presets, dtypes, the attention kind); every other given is a number.
TEXT_GIVENS = frozenset({"model", "gpu", "kv_dtype", "weights_dtype", "native_weights_dtype",
                         "attention", "memory", "checkpoint"})
MAX_MAGNITUDE = 10**15  # above any real count of parameters, bytes or tokens a drill states
MAX_CHOICES = 100


def _shown(value: Any) -> str:
    text = repr(value) if not isinstance(value, int) or abs(value) < 10**40 else "a huge number"
    return text if len(text) <= 40 else text[:39] + "…"


def check_given(name: str, value: Any, *, names_allowed: bool = False) -> None:
    """One given's value: text for a preset or dtype, else a finite number of sensible size.
    `names_allowed`: a step's `with` may name another given or quantity instead of a number.
    Raises ValueError("name: why"), which the loader points at the entry's own line."""
    if isinstance(value, bool):
        raise ValueError(f"{name}: {value} is a yes/no value: write "
                         + ("a name" if name in TEXT_GIVENS else "a number in digits"))
    if name in TEXT_GIVENS:
        if value is not None and not isinstance(value, str):
            raise ValueError(f"{name}: {_shown(value)} must be text (a preset id or a dtype "
                             "such as bf16)")
        return
    if isinstance(value, str):
        if names_allowed:
            return
        raise ValueError(f"{name}: {_shown(value)} is not a number: write it in digits "
                         "(4096, 0.9, 16), with no unit or word")
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{name}: {value} is not a finite number")
    if isinstance(value, int | float) and abs(value) > MAX_MAGNITUDE:
        raise ValueError(f"{name}: {_shown(value)} is too large for a drill's figure "
                         f"(at most 10^{len(str(MAX_MAGNITUDE)) - 1})")


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=False)


class Derived(Strict):
    """A per-step value computed from the base givens: `of` quantity × `times`."""

    of: str = Field(description="A solver quantity evaluated on the drill's givens.")
    times: float = Field(default=1, gt=0, le=1000, description="A factor applied to it.")


class FitGpus(Strict):
    """The fewest GPUs, of those listed, on which a step's deployment holds one sequence: a
    follow-up that moves to a bigger model keeps its lesson on a smaller card (Llama-3.1-70B in
    FP8 on two H100s, on four A100 40GBs)."""

    fit: tuple[int, ...] = Field(min_length=1, max_length=8,
                                 description="GPU counts to try, fewest first.")

    @field_validator("fit")
    @classmethod
    def _counts(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if any(not 2 <= n <= 64 for n in value) or list(value) != sorted(set(value)):
            raise ValueError("fit: GPU counts between 2 and 64, fewest first, each once")
        return value


WithValue = int | float | str | Derived | FitGpus | None


class RatioBelow(Strict):
    """A lesson stated as a ratio step below a bound (TP=16 buys less than twice TP=8's
    sessions): `top` and `bottom` say what the ratio's two steps are ("at TP=16")."""

    step: Identifier
    below: float = Field(gt=0, le=1000)
    lesson: str = Field(min_length=1, max_length=200)
    top: str = Field(min_length=1, max_length=40)
    bottom: str = Field(min_length=1, max_length=40)
    # where the ratio fails only because the smaller layout has little room (the weights fill
    # 8 × 80 GB), a step whose value against `top`'s shows the lesson's cause still there
    # (TP8 × PP2's sessions against TP=16's), said in the refusal with `still_words`
    still: Identifier | None = None
    still_words: str | None = Field(default=None, min_length=1, max_length=40)


def parse_tolerance(value: float | str) -> float:
    """A relative tolerance: 0.02, or "2%"."""
    if isinstance(value, str):
        match = _PERCENT.match(value)
        if not match:
            raise ValueError(
                f"tolerance {value!r} must be a fraction like 0.02 or a percent like '2%'"
            )
        value = float(match.group(1)) / 100
    if not 0 <= value <= 1:
        raise ValueError(f"tolerance {value!r} must be between 0 and 1 (0% to 100%)")
    return float(value)


class Anchors(Strict):
    """Answers to a text step at the seed's levels, as essay graders calibrate on anchor papers:
    `kvdrill lint` scores them and fails unless junior < mid < senior and the bare list of the
    right terms scores below the mid answer."""

    junior: str = Field(min_length=1, max_length=4000,
                        description="The basic idea in plain words, little quantified.")
    mid: str = Field(min_length=1, max_length=4000,
                     description="The right idea with a figure or two, in plain words.")
    senior: str = Field(min_length=1, max_length=8000,
                        description="Policy and trade-offs with numbers, thresholds, owners.")
    buzzwords: str = Field(min_length=1, max_length=2000,
                           description="The senior answer's terms as a bare list, no reasoning.")
    wrong: str | None = Field(default=None, min_length=1, max_length=4000,
                              description="A fluent answer making one of the step's wrong "
                                          "claims: lint wants it at or below the junior one.")


Phrase = Annotated[str, Field(min_length=1, max_length=200)]


class WrongClaim(Strict):
    """A wrong claim an interviewer would flag on this step (the seeds' red flags, the drill's
    wrong paths): matched when each part is said in one item of a sentence, none negated."""

    id: Identifier
    says: str = Field(min_length=1, max_length=500,
                      description="What is wrong with it, in a sentence the candidate reads.")
    parts: tuple[tuple[Phrase, ...], ...] = Field(
        min_length=1, max_length=4,
        description="The claim's parts, each any one of its phrases: the subject, the "
                    "direction (halves, doubles, more, per GPU), the object.")
    contradicts: tuple[str, ...] = Field(
        default=(), description="Concept ids the claim says the opposite of: an answer making "
                                "it earns nothing for them.")
    unless: tuple[Phrase, ...] = Field(
        default=(), description="Phrases that, in the same sentence, show the claim is "
                                "refuted rather than made.")
    own_target_only: bool = Field(
        default=False, description="The claim is wrong for the drill's own model and card "
                                   "and may be true of another (one card holds the weights): "
                                   "not looked for on a re-targeted drill.")
    dense_target_only: bool = Field(
        default=False, description="The claim is wrong of a dense model and may be true of "
                                   "an MoE one (speculation at batch 1 may lose on an MoE "
                                   "target): not looked for where the drill's model is an MoE.")
    moe_target_only: bool = Field(
        default=False, description="The claim is true of a dense model and wrong of an MoE one "
                                   "(verifying k + 1 tokens costs one step: an MoE's touch "
                                   "more experts): looked for only where the model is an MoE.")

    @field_validator("parts")
    @classmethod
    def _parts(cls, value: tuple[tuple[str, ...], ...]) -> tuple[tuple[str, ...], ...]:
        if any(not part for part in value):
            raise ValueError("every part of a wrong claim needs at least one phrase")
        return value


class Step(Strict):
    """One question of a drill: numeric (checked against a solver quantity) or text (scored
    against rubric concepts)."""

    id: Identifier
    prompt: str = Field(min_length=1, max_length=4000,
                        description="The question; {{ name }} fills in a given (e.g. context).")
    kind: Literal["numeric", "text"] = "numeric"
    answer: str | None = Field(
        default=None, description="Solver quantity or input that is the reference (numeric)."
    )
    ratio_of: tuple[Identifier, Identifier] | None = Field(
        default=None, description="Numeric step whose reference is step A's value ÷ step B's."
    )
    with_: dict[str, WithValue] = Field(
        default_factory=dict, alias="with",
        description="This step's changes to the givens: a value, the name of another given "
                    "(kv_heads: heads), {of: quantity, times: 2}, null to drop a given, or "
                    "gpus: {fit: [2, 4, 8]}, the fewest GPUs that hold one sequence.",
    )
    unit: str | None = Field(default=None, description="Unit the reference is shown in: GB, B, ms…")
    tolerance: float = Field(default=0.01, description="Relative tolerance: 0.02 or '2%'.")
    estimate: bool = Field(default=False, description="An estimate: marked with a wider band.")
    accepts_bound: bool = Field(
        default=False, description="The question asks for a bound or a small share whose order "
                                   "of magnitude is what counts: an upper bound ('under 1%') is "
                                   "marked. Elsewhere a bound is refused: give the value.")
    seconds: int = Field(default=60, ge=5, le=3600, description="Time budget for the step.")
    hints: tuple[str, ...] = ()
    misconceptions: tuple[str, ...] = Field(
        default=(), description="Wrong-path ids the checker names when an answer matches one."
    )
    depends_on: tuple[Identifier, ...] = Field(
        default=(),
        description="Earlier steps (same `with`) whose answers stand for their quantities when "
                    "this step is re-marked with error carried forward.",
    )
    concepts: tuple[str, ...] = Field(
        default=(), description="Rubric concept ids a text answer here can earn."
    )
    model_answer: str | None = Field(default=None, max_length=8000,
                                     description="The model answer shown beside a text step.")
    formula: str | None = Field(default=None, description="Shown by :formula during practice.")
    anchors: Anchors | None = Field(
        default=None, description="A text step's anchor answers (junior, mid, senior, "
                                  "buzzwords), which the scorer must rank in that order.")
    wrong_claims: tuple[WrongClaim, ...] = Field(
        default=(), max_length=28,
        description="Wrong claims a text answer here is checked for (text steps).")
    skill: Identifier | None = Field(
        default=None, description="The skill a numeric step exercises (trainer/drills/skills.py): "
                                  "kv-bytes-per-token, kv-budget, concurrency, ...")

    @field_validator("with_", mode="before")
    @classmethod
    def _with(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, item in value.items():
                if not isinstance(item, dict):
                    check_given(str(name), item, names_allowed=True)
                elif "fit" in item and name != "gpus":
                    raise ValueError(f"with: {name}: 'fit' chooses a GPU count: use it "
                                     "for gpus only")
        return value

    @field_validator("tolerance", mode="before")
    @classmethod
    def _tolerance(cls, value: Any) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError("tolerance must be a fraction like 0.02 or a percent like '2%'")
        return parse_tolerance(value)

    @model_validator(mode="after")
    def _kind_fields(self) -> Step:
        if self.kind == "numeric":
            if (self.answer is None) == (self.ratio_of is None):
                raise ValueError("a numeric step needs exactly one of `answer` or `ratio_of`")
            if self.concepts:
                raise ValueError("`concepts` belong to text steps; a numeric step has `answer`")
            if self.anchors is not None:
                raise ValueError("`anchors` belong to text steps; a numeric step has `answer`")
            if self.wrong_claims:
                raise ValueError("`wrong_claims` belong to text steps; a numeric step names "
                                 "its wrong paths in `misconceptions`")
            if self.accepts_bound and not self.estimate:
                raise ValueError("`accepts_bound` marks a bound against the order of magnitude: "
                                 "the step must be an `estimate` too")
        elif self.skill is not None:
            raise ValueError("`skill` tags numeric steps; a text step is scored by `concepts`")
        elif self.accepts_bound:
            raise ValueError("`accepts_bound` is for numeric steps; a text step has no value")
        else:
            if self.answer is not None or self.ratio_of is not None:
                raise ValueError("a text step has no `answer`; give `concepts` and `model_answer`")
            if not self.model_answer:
                raise ValueError("a text step needs a `model_answer` to show beside the answer")
        return self


class Followup(Strict):
    """An interviewer's push after the main questions, and what a strong answer says."""

    prompt: str
    answer: str
    steps: tuple[Identifier, ...] = Field(default=(), description="Steps that drill it.")


class Requires(Strict):
    """What a drill's lesson needs of a model and a card it is re-targeted at; re-targeting
    refuses, in one sentence naming the reason, a target that lacks it."""

    measured_on: dict[Literal["gpu", "model", "data"], str] | None = Field(
        default=None, description="The card and model shape its measured rates come from "
                                  "(gpu and model preset ids, and the data file): re-targeting "
                                  "at another card or shape is refused.")
    tokenizer_of: Identifier | None = Field(
        default=None, description="A model preset (a draft) whose tokenizer the target must "
                                  "share: a target with another vocabulary is refused.")
    full_attention: bool = Field(
        default=False, description="The lesson needs every layer to keep the whole context "
                                   "(prefix sharing, growth of a conversation): a model with "
                                   "windowed or recurrent layers is refused.")
    global_layers: bool = Field(
        default=False, description="The lesson grows a session's cache with its context "
                                   "(halving the context halves it): a model windowed on every "
                                   "layer, whose cache stops at the window, is refused.")
    kv_heads: bool = Field(
        default=False, description="The lesson is about KV heads split or copied across GPUs: "
                                   "a model with multi-head latent attention (no KV heads) is "
                                   "refused.")
    tp_within_kv_heads: bool = Field(
        default=False, description="The lesson starts from tensor parallelism at most as wide "
                                   "as the KV heads (nothing copied): a model with fewer KV "
                                   "heads than the drill's GPUs is refused.")
    several_kv_heads: bool = Field(
        default=False, description="The lesson cuts the KV heads to one (multi-query "
                                   "attention) as an option: a model that already has a "
                                   "single KV head is refused.")
    weights_dominate: bool = Field(
        default=False, description="The lesson is that a batch shares one weight read, so each "
                                   "user costs little: a model and card where one sequence's KV "
                                   "at the drill's context outweighs the weights a step reads "
                                   "are refused.")
    dense: bool = Field(
        default=False, description="The lesson reads every weight on every step (a batch "
                                   "shares one weight read): a mixture-of-experts model, whose "
                                   "step reads the experts its batch touches, is refused.")
    within_positions: bool = Field(
        default=False, description="The lesson reproduces what the engine does at its own "
                                   "max_model_len: a model whose max_position_embeddings is "
                                   "below a context the drill holds is refused (vLLM refuses "
                                   "to start past it without RoPE scaling), not stretched.")
    own_model: str | None = Field(
        default=None, min_length=1, max_length=300,
        description="Why the lesson is its own model's and no other's (its prose compares "
                    "named models, or quotes that model's figures): any other --model is "
                    "refused with this reason; --gpu still re-targets it.")
    engine_starts: tuple[Identifier, ...] = Field(
        default=(), description="The steps that read a start-up line of a server that runs: "
                                "its 'Maximum concurrency' X is at least 1 (below it vLLM "
                                "refuses to start: one request of max_model_len does not fit). "
                                "Variants where X falls below 1 are not drawn, and a target "
                                "where it does is refused.")
    ratio_below: RatioBelow | None = Field(
        default=None, description="A ratio step the lesson needs below a bound: a target where "
                                  "the ratio reaches it is refused with the lesson in words.")
    latency_batch: int = Field(
        default=0, ge=0, le=64,
        description="The lesson shares one weight read among a batch under a TPOT target: a "
                    "model and card where the target admits fewer sequences than this (the "
                    "weights alone take nearly all of the step) are refused.")
    counts_positive: bool | tuple[Identifier, ...] = Field(
        default=False, description="Every count of sequences the lesson compares (with its "
                                   "history, without a cap, with a prefix shared), or those of "
                                   "the steps listed, is at least one: a model and card where "
                                   "such a count comes out at zero are refused.")


class Drill(Strict):
    id: Identifier
    title: str = Field(min_length=1, max_length=200)
    target_minutes: int = Field(
        ge=1, le=180, description="The steps' budgets summed, in whole minutes rounded up "
                                  "(kvdrill lint checks it).")
    tags: tuple[Identifier, ...] = ()
    rubric: Identifier
    solution: str = Field(pattern=r"^[A-Za-z0-9._-]+\.md\.j2$",
                          description="Template file name in solutions/.")
    source: str | None = Field(default=None, description="Where the drill comes from.")
    situation: str = Field(min_length=1, max_length=8000)
    givens: dict[str, Scalar] = Field(
        description="Solver inputs: model and gpu preset ids plus any calc input "
                    "(context, reserve_gb, utilization, kv_dtype, ...)."
    )
    vary: dict[str, tuple[Scalar | tuple[Scalar, ...], ...]] = Field(
        default_factory=dict,
        description="Choices a variant may draw for each given. Givens that must change "
                    "together share one entry: names joined by commas as the key, each "
                    "choice a list of their values in that order (e.g. a measured row: "
                    "'batch, context, bandwidth_tbs': [[32, 4096, 2.99], [64, 4096, 3.4]]).",
    )
    steps: tuple[Step, ...] = Field(min_length=1)
    followups: tuple[Followup, ...] = ()
    red_flags: tuple[Identifier, ...] = Field(
        default=(), description="Rubric red-flag ids this drill listens for."
    )
    requires: Requires = Field(default_factory=Requires,
                               description="What the lesson needs of a re-targeted model or card.")

    @field_validator("givens", mode="before")
    @classmethod
    def _givens(cls, value: Any) -> Any:
        if isinstance(value, dict):
            for name, item in value.items():
                check_given(str(name), item)
        return value

    @field_validator("vary", mode="before")
    @classmethod
    def _vary(cls, value: Any) -> Any:
        if not isinstance(value, dict):
            return value
        for name, choices in value.items():
            if not isinstance(choices, list | tuple):
                raise ValueError(f"{name}: give a list of choices, e.g. [2048, 4096, 8192]")
            if not choices:
                raise ValueError(f"{name}: the list of choices is empty: give at least one")
            if len(choices) > MAX_CHOICES:
                raise ValueError(f"{name}: {len(choices)} choices is more than "
                                 f"{MAX_CHOICES}: a variant space is a short list")
            names = linked_names(str(name))
            for choice in choices:
                if choice is None:
                    raise ValueError(f"{name}: a choice is empty (null): give a value")
                if len(names) == 1:
                    check_given(str(name), choice)
                    continue
                if not isinstance(choice, list | tuple) or len(choice) != len(names):
                    raise ValueError(f"{name}: each choice is a list of {len(names)} values, "
                                     f"one for each of {', '.join(names)}")
                for part, item in zip(names, choice, strict=True):
                    if item is None:
                        raise ValueError(f"{name}: a choice is empty (null): give a value")
                    check_given(part, item)
        return value

    @model_validator(mode="after")
    def _unique_steps(self) -> Drill:
        seen: set[str] = set()
        for step in self.steps:
            if step.id in seen:
                raise ValueError(f"step id {step.id!r} is used twice")
            if step.id in ("drill", "variant"):
                raise ValueError(f"step id {step.id!r} is kept for answer sheets, which name "
                                 "their drill and variant: give the step another id")
            seen.add(step.id)
        return self


class Concept(Strict):
    """Something a text answer should say: any of `phrases`, and, when `figures` is given,
    one of them in the same sentence too (a lever counts fully only when it is quantified).

    Phrases and figures match on word stems (snowball, English), so one entry covers its
    inflections ("halve" matches halves, halved, halving). A word that means something only in
    context ("unchanged", "price", "owns") goes in `generic`: it counts only when one of `about`
    is in the same sentence."""

    id: Identifier
    label: str
    phrases: tuple[str, ...] = Field(
        min_length=1, description="Phrases specific enough to name the concept on their own."
    )
    generic: tuple[str, ...] = Field(
        default=(), description="Phrases that name the concept only beside one of `about` "
                                "in the same sentence."
    )
    about: tuple[str, ...] = Field(
        default=(), description="Context terms a `generic` phrase needs in its sentence "
                                "(step time, bytes, KV, ...)."
    )
    figures: tuple[str, ...] = Field(
        default=(), description="Figures that quantify the concept; one must share the "
                                "phrase's sentence for full credit."
    )
    dense_target_only: bool = Field(
        default=False, description="The idea holds of a dense model only (verification as "
                                   "cheap as one decode step): not credited where the "
                                   "drill's model is an MoE.")
    ruled_out: bool = Field(
        default=False, description="The idea is a cause the drill rules out (fragmentation "
                                   "is negligible): a mention denied ('nor is it "
                                   "fragmentation') or put in another's mouth ('someone will "
                                   "say fragmentation') still says it; the wrong claim that it "
                                   "is the cause is the step's to flag.")

    factor: float | None = Field(
        default=None, gt=1, le=1000,
        description="The factor the idea states (FP8 KV: 2, half the bytes and about twice "
                    "the sessions): a mention whose sentence states only other factors ('1.5x', "
                    "'quadruples', 'a quarter') says another idea, and earns nothing.")
    quantified_only: tuple[str, ...] = Field(
        default=(), description="Phrases among `phrases` that name the idea only with one of "
                                "its `figures` in the same sentence ('latent' with '576'): "
                                "said without one ('an FP8 latent', 'the latent is not "
                                "replicated'), they name a topic and earn nothing.")
    not_of: tuple[str, ...] = Field(
        default=(), description="What a phrase names when said of it: just after the phrase "
                                "('fp8 weights') or before it with 'in' or 'at' ('weights in "
                                "fp8'), the mention is about that, not the idea, and earns "
                                "nothing (the cache's dtype is not the weights').")

    @model_validator(mode="after")
    def _quantified_only_needs_figures(self) -> Concept:
        stray = [p for p in self.quantified_only if p not in self.phrases]
        if stray or (self.quantified_only and not self.figures):
            raise ValueError(f"concept {self.id}: `quantified_only` lists phrases of "
                             "`phrases` that count with one of `figures`: "
                             + (f"{', '.join(stray)} not in `phrases`" if stray
                                else "give `figures`"))
        return self

    @model_validator(mode="after")
    def _generic_needs_about(self) -> Concept:
        if self.generic and not self.about:
            raise ValueError(f"concept {self.id}: `generic` phrases need `about` terms "
                             "(the context that makes them mean this concept)")
        return self


class Dimension(Strict):
    id: Identifier
    title: str
    strong: str = Field(description="What strong looks like, from the interview card's scores.")
    max: int = Field(ge=1, le=10)
    scored_from: Literal["numeric", "concepts"]
    concepts: tuple[Concept, ...] = ()


class Level(Strict):
    id: Identifier
    title: str
    sounds_like: str
    requires: dict[str, int] = Field(
        default_factory=dict, description="Minimum score per dimension id."
    )
    right: tuple[str, ...] = Field(
        default=(), description="Solver quantities the attempt must get right itself (not "
                                "carried forward) at the drill's own setting, the first step "
                                "asking each with no 'with': the seed's \"computes 128 KiB per "
                                "token and roughly 100 sessions\".")


class RedFlag(Strict):
    id: Identifier
    says: str
    misconceptions: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    unless: tuple[str, ...] = Field(default=(), description="Phrases that clear a phrase match.")


class Rubric(Strict):
    id: Identifier
    title: str
    dimensions: tuple[Dimension, ...] = Field(min_length=1)
    levels: tuple[Level, ...] = ()
    red_flags: tuple[RedFlag, ...] = ()
    carried_forward_credit: float = Field(default=0.5, ge=0, le=1)


def validated_data(document: Drill | Rubric) -> dict[str, Any]:
    """A validated file as plain data (JSON-safe): every default filled in, and for each step
    whether the file stated its tolerance."""
    data = document.model_dump(mode="json")
    if isinstance(document, Drill):
        for step, plain in zip(document.steps, data["steps"], strict=True):
            plain["tolerance_given"] = "tolerance" in step.model_fields_set
    return data
