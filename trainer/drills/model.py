"""Drills, steps and rubrics as the code uses them: plain, immutable objects made from a file's
validated data. The file format itself, and its validation, is drills/schema.py (pydantic);
these classes have the same fields, so a drill read from a file validated once and kept
(loader) is made without importing pydantic."""

from __future__ import annotations

from typing import Any, Literal

from trainer.records import field, record

Scalar = int | float | str | None


def linked_names(key: str) -> tuple[str, ...]:
    """The givens a `vary` key draws: one name, or several joined by commas that change
    together (a measured row's batch, context and bandwidth)."""
    return tuple(part.strip() for part in key.split(","))


@record(slots=True)
class Derived:
    """A per-step value computed from the base givens: `of` quantity × `times`."""

    of: str
    times: float = 1


@record(slots=True)
class FitGpus:
    """The fewest GPUs, of those listed, on which a step's deployment holds one sequence."""

    fit: tuple[int, ...]


WithValue = int | float | str | Derived | FitGpus | None


@record(slots=True)
class RatioBelow:
    """A lesson stated as a ratio step below a bound (schema: RatioBelow)."""

    step: str
    below: float
    lesson: str
    top: str
    bottom: str
    still: str | None = None
    still_words: str | None = None


@record(slots=True)
class WrongClaim:
    """A claim an interviewer would flag on a text step: said when every part (any one of its
    phrases) is in one item of a sentence, none of them negated; `says` corrects it, and the
    answer loses the credit of the concepts it `contradicts`."""

    id: str
    says: str
    parts: tuple[tuple[str, ...], ...]
    contradicts: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()
    own_target_only: bool = False  # wrong of the drill's own card, maybe not of another's
    dense_target_only: bool = False  # wrong of a dense model, maybe not of an MoE
    moe_target_only: bool = False  # wrong of an MoE model, true of a dense one

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> WrongClaim:
        return cls(id=data["id"], says=data["says"],
                   parts=tuple(tuple(part) for part in data["parts"]),
                   contradicts=tuple(data.get("contradicts") or ()),
                   unless=tuple(data.get("unless") or ()),
                   own_target_only=bool(data.get("own_target_only")),
                   dense_target_only=bool(data.get("dense_target_only")),
                   moe_target_only=bool(data.get("moe_target_only")))


@record(slots=True)
class Step:
    """One question of a drill: numeric (checked against a solver quantity) or text (scored
    against rubric concepts)."""

    id: str
    prompt: str
    kind: Literal["numeric", "text"] = "numeric"
    answer: str | None = None
    ratio_of: tuple[str, str] | None = None
    with_: dict[str, WithValue] = field(default_factory=dict)
    unit: str | None = None
    tolerance: float = 0.01
    tolerance_given: bool = False  # the file states a tolerance (an estimate keeps it then)
    estimate: bool = False
    accepts_bound: bool = False  # an upper bound ('under 1%') is an answer here
    seconds: int = 60
    hints: tuple[str, ...] = ()
    misconceptions: tuple[str, ...] = ()
    depends_on: tuple[str, ...] = ()
    concepts: tuple[str, ...] = ()
    model_answer: str | None = None
    formula: str | None = None
    skill: str | None = None
    anchors: dict[str, str] | None = None  # junior, mid, senior, buzzwords, wrong (text steps)
    wrong_claims: tuple[WrongClaim, ...] = ()

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Step:
        with_ = {name: (FitGpus(tuple(value["fit"])) if "fit" in value else Derived(**value))
                 if isinstance(value, dict) else value
                 for name, value in (data.get("with_") or {}).items()}
        ratio = data.get("ratio_of")
        return cls(**{
            **data, "with_": with_, "ratio_of": tuple(ratio) if ratio is not None else None,
            "wrong_claims": tuple(WrongClaim.from_data(c) for c in data.get("wrong_claims") or ()),
            **{key: tuple(data.get(key) or ()) for key in
               ("hints", "misconceptions", "depends_on", "concepts")},
        })


@record(slots=True)
class Followup:
    """An interviewer's push after the main questions, and what a strong answer says."""

    prompt: str
    answer: str
    steps: tuple[str, ...] = ()


@record(slots=True)
class Requires:
    """What a drill's lesson needs of a re-targeted model or card (schema: Requires)."""

    measured_on: dict[str, str] | None = None
    tokenizer_of: str | None = None
    full_attention: bool = False
    global_layers: bool = False
    kv_heads: bool = False
    tp_within_kv_heads: bool = False
    several_kv_heads: bool = False
    weights_dominate: bool = False
    dense: bool = False
    within_positions: bool = False
    ratio_below: RatioBelow | None = None
    latency_batch: int = 0
    counts_positive: bool | tuple[str, ...] = False
    own_model: str | None = None
    engine_starts: tuple[str, ...] = ()


@record(slots=True)
class Drill:
    id: str
    title: str
    target_minutes: int
    rubric: str
    solution: str
    situation: str
    givens: dict[str, Scalar]
    steps: tuple[Step, ...]
    tags: tuple[str, ...] = ()
    source: str | None = None
    # A key of names joined by commas draws those givens together: each choice is a tuple.
    vary: dict[str, tuple[Any, ...]] = field(default_factory=dict)
    followups: tuple[Followup, ...] = ()
    red_flags: tuple[str, ...] = ()
    requires: Requires = field(default_factory=lambda: Requires())

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Drill:
        return cls(**{
            **data,
            "steps": tuple(Step.from_data(step) for step in data["steps"]),
            "followups": tuple(Followup(**{**f, "steps": tuple(f.get("steps") or ())})
                               for f in data.get("followups") or ()),
            "vary": {name: tuple(tuple(c) if isinstance(c, list | tuple) else c for c in choices)
                     for name, choices in (data.get("vary") or {}).items()},
            "tags": tuple(data.get("tags") or ()),
            "red_flags": tuple(data.get("red_flags") or ()),
            "requires": _requires(data.get("requires") or {}),
        })

    @property
    def budget_seconds(self) -> int:
        """The whole drill's clock: its steps' budgets, summed."""
        return sum(step.seconds for step in self.steps)

    def step(self, step_id: str) -> Step:
        index = _STEP_INDEXES.get(id(self.steps))
        if index is None or index[0] is not self.steps:
            # (marking a wrong sheet asks for a step thousands of times)
            if len(_STEP_INDEXES) >= 256:
                _STEP_INDEXES.clear()
            by_id: dict[str, Step] = {}
            for step in self.steps:
                by_id.setdefault(step.id, step)
            index = _STEP_INDEXES[id(self.steps)] = (self.steps, by_id)
        try:
            return index[1][step_id]
        except KeyError:
            raise KeyError(step_id) from None


# Each drill's steps by id, kept by the identity of its tuple of steps (beside it, so an id
# reused by another tuple never finds this one's)
_STEP_INDEXES: dict[int, tuple[tuple[Step, ...], dict[str, Step]]] = {}


@record(slots=True)
class Concept:
    """Something a text answer should say: any of `phrases`, and, when `figures` is given,
    one of them in the same sentence too (a lever counts fully only when it is quantified).
    A `generic` phrase counts only when one of `about` is in the same sentence."""

    id: str
    label: str
    phrases: tuple[str, ...]
    generic: tuple[str, ...] = ()
    about: tuple[str, ...] = ()
    figures: tuple[str, ...] = ()
    dense_target_only: bool = False  # true of a dense model, not credited on an MoE
    ruled_out: bool = False  # a cause the drill rules out: denied, it is still said
    factor: float | None = None  # the factor the idea states (FP8 KV: 2)
    quantified_only: tuple[str, ...] = ()  # "latent": a topic unless a figure quantifies it
    not_of: tuple[str, ...] = ()  # "fp8 weights": the phrase said of something else

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Concept:
        return cls(**_with_tuples(data, keep=("id", "label", "dense_target_only",
                                              "ruled_out", "factor")))


@record(slots=True)
class Dimension:
    id: str
    title: str
    strong: str
    max: int
    scored_from: Literal["numeric", "concepts"]
    concepts: tuple[Concept, ...] = ()


@record(slots=True)
class Level:
    id: str
    title: str
    sounds_like: str
    requires: dict[str, int] = field(default_factory=dict)
    right: tuple[str, ...] = ()  # quantities whose drill's own step must be answered right


@record(slots=True)
class RedFlag:
    id: str
    says: str
    misconceptions: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    unless: tuple[str, ...] = ()


@record(slots=True)
class Rubric:
    id: str
    title: str
    dimensions: tuple[Dimension, ...]
    levels: tuple[Level, ...] = ()
    red_flags: tuple[RedFlag, ...] = ()
    carried_forward_credit: float = 0.5

    @classmethod
    def from_data(cls, data: dict[str, Any]) -> Rubric:
        return cls(**{
            **data,
            "dimensions": tuple(
                Dimension(**{**d, "concepts": tuple(Concept.from_data(c)
                                                    for c in d.get("concepts") or ())})
                for d in data["dimensions"]),
            "levels": tuple(Level(**{**level, "right": tuple(level.get("right") or ())})
                            for level in data.get("levels") or ()),
            "red_flags": tuple(RedFlag(**_with_tuples(flag, keep=("id", "says")))
                               for flag in data.get("red_flags") or ()),
        })

    def concept(self, concept_id: str) -> Concept | None:
        for dimension in self.dimensions:
            for concept in dimension.concepts:
                if concept.id == concept_id:
                    return concept
        return None


def _requires(data: dict[str, Any]) -> Requires:
    ratio = data.get("ratio_below")
    return Requires(**{**data, "ratio_below": RatioBelow(**ratio) if ratio else None})


def _with_tuples(data: dict[str, Any], keep: tuple[str, ...]) -> dict[str, Any]:
    """Every field but those in `keep` as a tuple (JSON gives lists)."""
    return {key: value if key in keep else tuple(value or ()) for key, value in data.items()}
