"""What the feedback says of a sheet of answers, asked the way a test asks it: the marks, the
wrong claims a text answer makes, and one rubric dimension's evidence in words."""

from __future__ import annotations

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.scoring import score_attempt


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


def claimed(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def evidence(drill_id: str, answers: dict[str, str], dimension_id: str) -> str:
    drill = find_drill(drill_id)[0]
    score = score_attempt(drill, load_rubric(drill.rubric), marked(drill_id, answers))
    return " ".join(next(d for d in score.dimensions if d.id == dimension_id).evidence)
