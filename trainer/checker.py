"""One answer against its reference: read it safely, compare within the step's tolerance,
name the known mistake a wrong value matches, and credit error carried forward."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Literal

from trainer.errors import AnswerParseError
from trainer.model import Step
from trainer.reader import parse_answer, reread_with_trailing_unit
from trainer.reference import AnswerKey, Reference, dim_of_unit, show
from trainer.solver import WRONG_PATHS
from trainer.units import (
    BYTES,
    DIMENSIONLESS,
    SEQUENCES,
    TOKENS,
    Dim,
)

Verdict = Literal["correct", "wrong", "invalid", "unanswered", "answered"]

ESTIMATE_TOLERANCE = Fraction(1, 5)  # the seed's "within 20%" for estimates
# An earlier answer this far from its reference is absurd, and earns no carried-forward credit.
CARRY_FACTOR = 10


@dataclass(frozen=True)
class Mark:
    """The verdict on one step, with everything a transcript or report shows about it."""

    step_id: str
    kind: str
    answer: str | None
    verdict: Verdict
    expected: Fraction | None = None  # base units
    unit: str = ""
    parsed: Fraction | None = None  # base units
    shown: str = ""  # how the answer was read
    misconception: str | None = None
    carried_forward: bool = False
    feedback: str = ""

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric"


def tolerance_of(step: Step) -> Fraction:
    tolerance = Fraction(str(step.tolerance))
    return max(tolerance, ESTIMATE_TOLERANCE) if step.estimate else tolerance


def close(value: Fraction, target: Fraction, tolerance: Fraction) -> bool:
    if target == 0:  # "none fit": 0, or anything under half a sequence
        return abs(value) < Fraction(1, 2)
    return abs(value - target) <= tolerance * abs(target)


def _accepted_dims(expected: Dim) -> tuple[Dim, ...]:
    # "128 KiB/token" answers "KV bytes per token"; "10.7 GB/sequence" a per-sequence figure.
    return (expected, expected / TOKENS, expected / SEQUENCES)


def check_text(step: Step, answer: str | None) -> Mark:
    if answer is None or not answer.strip():
        return Mark(step.id, "text", answer, "unanswered", feedback="no answer given")
    return Mark(step.id, "text", answer, "answered")


def check_numeric(
    step: Step,
    answer: str | None,
    reference: Reference,
    carried: Fraction | None = None,
) -> Mark:
    """Mark one numeric answer. `carried` is the value recomputed from the candidate's own
    earlier answers (error carried forward), when they differ from the references."""
    unit = reference.unit
    base = Mark(step.id, "numeric", answer, "unanswered", reference.value, unit)
    if answer is None or not answer.strip():
        return _replace(base, feedback=f"no answer given; expected {reference.display}")
    try:
        parsed = parse_answer(answer, default_unit=unit or None)
    except AnswerParseError as error:
        understood = f" (read so far: {error.understood!r})" if error.understood else ""
        return _replace(base, verdict="invalid", feedback=f"{error}{understood}; not marked")
    expected_dim = dim_of_unit(unit)
    if parsed.quantity.dim not in _accepted_dims(expected_dim):
        # "52e9 / 131072 tokens" means (52e9 / 131072) tokens, not 52e9 per 131072 tokens.
        reread = reread_with_trailing_unit(answer)
        if reread is not None and reread.quantity.dim in _accepted_dims(expected_dim):
            parsed = reread
    quantity = parsed.quantity
    if quantity.dim not in _accepted_dims(expected_dim):
        return _replace(
            base, verdict="wrong", parsed=quantity.value, shown=parsed.shown,
            feedback=f"read as {parsed.shown}, but the question asks for "
                     f"{_dimension_words(expected_dim)}; expected {reference.display}",
        )
    readings = [parsed]
    if not parsed.had_unit and expected_dim == BYTES and unit not in ("", "B"):
        # A bare 131072 where KiB is asked is a byte count, not 131,072 KiB.
        readings.append(parse_answer(answer, default_unit="B"))
    if not parsed.had_unit and unit == "%":
        # A bare 0.734 where a percentage is asked is a fraction: 73.4%.
        readings.append(parse_answer(answer))
    tolerance = tolerance_of(step)
    targets = (reference.value, *reference.alternatives)
    for reading in readings:
        if any(close(reading.quantity.value, target, tolerance) for target in targets):
            return _replace(base, verdict="correct", parsed=reading.quantity.value,
                            shown=reading.shown, feedback=f"read as {reading.shown}: correct")
    for reading in readings:
        value = reading.quantity.value
        seen = _replace(base, parsed=value, shown=reading.shown)
        is_carried = carried is not None and close(value, carried, tolerance)
        matches = [(abs(value - wrong), order, path_id)
                   for order, (path_id, wrong) in enumerate(reference.wrong)
                   if close(value, wrong, tolerance)]
        # The nearest when two mistakes are close; on a tie, the one the step lists first.
        path = WRONG_PATHS[min(matches)[2]] if matches else None
        if not (is_carried or path):
            continue
        feedback = f"read as {reading.shown}: expected {reference.display}."
        if path is not None:
            feedback += f" This is the value you get if you {path.mistake}. {path.advice}"
        if is_carried:
            assert carried is not None
            feedback += (f" It follows from your earlier answers ({show(carried, unit)}): "
                         "carried forward.")
        return _replace(seen, verdict="wrong", carried_forward=is_carried,
                        misconception=None if path is None else path.id, feedback=feedback)
    return _replace(base, verdict="wrong", parsed=parsed.quantity.value, shown=parsed.shown,
                    feedback=f"read as {parsed.shown}: expected {reference.display}")


def _dimension_words(dim: Dim) -> str:
    return "a plain number" if dim == DIMENSIONLESS else str(dim)


def _replace(mark: Mark, **changes: Any) -> Mark:
    return replace(mark, **changes)


def carried_value(key: AnswerKey, step: Step, marks: Mapping[str, Mark]) -> Fraction | None:
    """The step's value recomputed from the candidate's earlier answers, when those were
    wrong but not absurd (within a factor of ten of their references)."""
    carried: dict[str, Fraction] = {}
    sources = step.ratio_of if step.ratio_of is not None else step.depends_on
    for earlier_id in sources:
        mark = marks.get(earlier_id)
        if mark is None or mark.parsed is None or mark.verdict == "correct":
            continue
        truth = key.reference(earlier_id).value
        if mark.parsed <= 0 or truth <= 0:
            continue
        if not (truth / CARRY_FACTOR <= mark.parsed <= truth * CARRY_FACTOR):
            continue
        carried[earlier_id] = mark.parsed
    if not carried:
        return None
    value = key.recompute(step.id, carried)
    if value is None or value == key.reference(step.id).value:
        return None
    if value == 0:
        return None  # a carried value that makes the step trivial earns nothing
    return value


def mark_sheet(key: AnswerKey, answers: Mapping[str, str | None]) -> dict[str, Mark]:
    """Every step of the drill marked, in order, each with its carried-forward value."""
    marks: dict[str, Mark] = {}
    for step in key.drill.steps:
        answer = answers.get(step.id)
        if step.kind == "text":
            marks[step.id] = check_text(step, answer)
            continue
        reference = key.reference(step.id)
        carried = carried_value(key, step, marks)
        marks[step.id] = check_numeric(step, answer, reference, carried)
    return marks
