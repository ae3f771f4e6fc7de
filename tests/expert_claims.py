"""What the expert-pass tests share: the wrong claims a grade names for one text answer, and
an expert's answer read from the corpus file its pass kept."""

from __future__ import annotations

from pathlib import Path

import yaml

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.marking.claims import claims_made
from trainer.marking.scoring import score_attempt

CORPUS = Path(__file__).parent / "corpus"


def claims_named(drill_id: str, step_id: str, text: str) -> list[str]:
    """The wrong claims a grade names: an MoE-only claim is not one on a dense target."""
    drill = find_drill(drill_id)[0]
    moe = AnswerKey(drill).base.experts is not None
    return [made.claim.id for made in claims_made(drill.step(step_id), text)
            if not (made.claim.dense_target_only if moe else made.claim.moe_target_only)]


def expert_answer(corpus: str, answer_id: str) -> str:
    """Answer `answer_id` of tests/corpus/`corpus`."""
    answers = yaml.safe_load((CORPUS / corpus).read_text(encoding="utf-8"))
    return str(answers[answer_id])


def claims_of_answer(corpus: str, key: str) -> list[str]:
    """The wrong claims named for the answer keyed drill/step/KIND:id in `corpus`."""
    drill, step, _ = key.split("/")
    return claims_named(drill, step, expert_answer(corpus, key))


def answer_keys(corpus: str, *kinds: str) -> list[str]:
    """The keys (drill/step/KIND:id) of `corpus`'s answers of the given kinds ("R", "H", …)."""
    answers = yaml.safe_load((CORPUS / corpus).read_text(encoding="utf-8"))
    return [key for key in answers if any(f"/{kind}:" in key for kind in kinds)]


def flags_of_answer(corpus: str, key: str) -> list[str]:
    """The red flags a grade raises for the answer keyed drill/step/KIND:id in `corpus`,
    graded alone."""
    drill_id, step_id, _ = key.split("/")
    drill = find_drill(drill_id)[0]
    marks = mark_sheet(AnswerKey(drill), {step_id: expert_answer(corpus, key)})
    return [flag_id for flag_id, _ in score_attempt(drill, load_rubric(drill.rubric),
                                                    marks).red_flags]
