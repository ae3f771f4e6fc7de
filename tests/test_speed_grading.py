"""Grading in proportion to what is wrong (issue 39): what the right answers rule out is worked
out only when a wrong answer asks, so a right sheet never evaluates the wrong paths for it,
and a wrong answer after right ones still hears what they rule out. No timing is asserted."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from trainer.drills import loader, variants
from trainer.marking import checker

SHEETS = Path(__file__).parent / "sheets"


def _right_sheet(drill_id: str) -> dict[str, str]:
    data = yaml.safe_load((SHEETS / f"{drill_id}-correct.yaml").read_text(encoding="utf-8"))
    return {str(step): str(answer) for step, answer in data.items()}


def test_a_right_sheet_never_asks_what_its_answers_rule_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    drill, _ = loader.find_drill("llama31-8b-h100")
    key = variants.answer_key(drill, None)
    answers = _right_sheet("llama31-8b-h100")

    def refuse(*args: object) -> frozenset[str]:
        raise AssertionError("what a right answer rules out was worked out for a right sheet")

    monkeypatch.setattr(checker, "_rules_out", refuse)
    marks = checker.mark_sheet(key, answers)
    assert all(m.verdict in ("correct", "answered") for m in marks.values() if m.answer)


def test_a_wrong_answer_after_right_ones_hears_what_they_rule_out(
        monkeypatch: pytest.MonkeyPatch) -> None:
    drill, _ = loader.find_drill("llama31-8b-h100")
    key = variants.answer_key(drill, None)
    answers = _right_sheet("llama31-8b-h100")
    last = "sessions"  # the givens' model, as the right answers before it
    answers[last] = "1 sequence"
    asked: list[str] = []
    rules_out = checker._rules_out

    def counted(key_: object, step_id: str, mark: checker.Mark) -> frozenset[str]:
        asked.append(step_id)
        return rules_out(key_, step_id, mark)  # type: ignore[arg-type]

    monkeypatch.setattr(checker, "_rules_out", counted)
    marks = checker.mark_sheet(key, answers)
    assert marks[last].verdict == "wrong"
    assert asked, "the wrong answer was marked without what the right ones rule out"
    assert len(asked) == len(set(asked))  # each right answer's worked out once
