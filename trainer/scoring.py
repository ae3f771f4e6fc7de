"""A whole attempt against its rubric: the four dimensions with their evidence, the level the
attempt sounds like, and the red flags it raised."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction

from trainer.checker import Mark
from trainer.model import Concept, Dimension, Drill, Rubric

_SEPARATORS = re.compile(r"[\s\-_/]+")


def normalise(text: str) -> str:
    """Lower case, hyphens, slashes and runs of space folded to one space."""
    return " " + _SEPARATORS.sub(" ", text.lower()).strip() + " "


def contains(text: str, phrase: str) -> bool:
    """Whole-word containment on normalised text ("fp8 kv" matches "FP8-KV cache")."""
    needle = normalise(phrase).strip()
    if not needle:
        return False
    pattern = r"(?<![a-z0-9])" + re.escape(needle) + r"(?![a-z0-9])"
    return re.search(pattern, normalise(text)) is not None


@dataclass(frozen=True)
class DimensionScore:
    id: str
    title: str
    score: Fraction
    max: int
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class RubricScore:
    dimensions: tuple[DimensionScore, ...]
    level: str | None
    level_title: str | None
    red_flags: tuple[tuple[str, str], ...] = field(default=())  # (id, what it says + where)

    def dimension(self, dimension_id: str) -> DimensionScore:
        return next(d for d in self.dimensions if d.id == dimension_id)


def _numeric_score(dimension: Dimension, marks: Mapping[str, Mark],
                   credit_carried: float) -> DimensionScore:
    numeric = [m for m in marks.values() if m.is_numeric]
    correct = [m.step_id for m in numeric if m.verdict == "correct"]
    carried = [m.step_id for m in numeric if m.carried_forward]
    earned = len(correct) + Fraction(str(credit_carried)) * len(carried)
    score = _round_half(dimension.max * earned / len(numeric)) if numeric else Fraction(0)
    evidence = [f"{len(correct)} of {len(numeric)} numeric steps correct"]
    if carried:
        evidence.append(f"carried forward ({credit_carried:g} credit): {', '.join(carried)}")
    wrong = [m.step_id for m in numeric if m.verdict == "wrong" and not m.carried_forward]
    if wrong:
        evidence.append(f"wrong: {', '.join(wrong)}")
    return DimensionScore(dimension.id, dimension.title, score, dimension.max, tuple(evidence))


def concept_credit(concept: Concept, text: str) -> tuple[Fraction, str]:
    """1 when a phrase and (if any are required) a figure are present; ½ for the phrase alone."""
    phrase = next((p for p in concept.phrases if contains(text, p)), None)
    if phrase is None:
        return Fraction(0), ""
    if not concept.figures:
        return Fraction(1), f"'{phrase}'"
    figure = next((f for f in concept.figures if contains(text, f)), None)
    if figure is None:
        return Fraction(1, 2), f"'{phrase}' but not quantified"
    return Fraction(1), f"'{phrase}' with '{figure}'"


def _concept_score(dimension: Dimension, drill: Drill,
                   marks: Mapping[str, Mark]) -> DimensionScore | None:
    texts = {
        m.step_id: m.answer for m in marks.values()
        if not m.is_numeric and m.answer and m.answer.strip()
    }
    asked = {c for step in drill.steps for c in step.concepts}
    concepts = [c for c in dimension.concepts if c.id in asked]
    if not concepts:
        return None  # this drill does not ask for this dimension
    earned = Fraction(0)
    evidence: list[str] = []
    for concept in concepts:
        best, where = Fraction(0), ""
        for step_id, text in texts.items():
            credit, note = concept_credit(concept, text)
            if credit > best:
                best, where = credit, f"{concept.label}: {note} in {step_id}"
        earned += best
        if where:
            evidence.append(where)
    total = len(concepts)
    score = _round_half(dimension.max * earned / total) if total else Fraction(0)
    if not evidence:
        evidence.append("nothing in the text answers earned this dimension")
    return DimensionScore(dimension.id, dimension.title, score, dimension.max, tuple(evidence))


def _round_half(value: Fraction) -> Fraction:
    return Fraction(round(value * 2), 2)


def score_attempt(drill: Drill, rubric: Rubric, marks: Mapping[str, Mark]) -> RubricScore:
    scored = (
        _numeric_score(d, marks, rubric.carried_forward_credit) if d.scored_from == "numeric"
        else _concept_score(d, drill, marks)
        for d in rubric.dimensions
    )
    dimensions = tuple(d for d in scored if d is not None)
    by_id = {d.id: d.score for d in dimensions}
    level_id = level_title = None
    for level in rubric.levels:
        if all(by_id.get(dim, minimum) >= minimum for dim, minimum in level.requires.items()):
            level_id, level_title = level.id, level.title
    return RubricScore(dimensions, level_id, level_title, _red_flags(drill, rubric, marks))


def _red_flags(drill: Drill, rubric: Rubric,
               marks: Mapping[str, Mark]) -> tuple[tuple[str, str], ...]:
    raised: list[tuple[str, str]] = []
    listened = set(drill.red_flags) if drill.red_flags else {f.id for f in rubric.red_flags}
    for flag in rubric.red_flags:
        if flag.id not in listened:
            continue
        steps = [m.step_id for m in marks.values() if m.misconception in flag.misconceptions]
        for m in marks.values():
            if m.is_numeric or not m.answer:
                continue
            if any(contains(m.answer, p) for p in flag.phrases) and not any(
                contains(m.answer, u) for u in flag.unless
            ):
                steps.append(m.step_id)
        if steps:
            raised.append((flag.id, f"{flag.says} (in {', '.join(steps)})"))
    return tuple(raised)
