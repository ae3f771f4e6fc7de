"""What the tool says of a right text answer (a review of its feedback, /tmp/feedback1.md): a
proposal the candidate refuses, or reports as a mistake, raises no red flag and costs no
credit; the proposal made still does."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import Result

Run = Callable[..., Result]
DRILL = "long-context-tier"
FLAG = "Proposed raising max_model_len for every user"


def graded(run: Run, tmp_path: Path, answer: str) -> dict:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({"pool-policy": answer}), encoding="utf-8")
    return json.loads(run("grade", DRILL, "--answers", str(sheet), "--json", ok=False).output)


def flags(report: dict) -> str:
    return json.dumps(report["rubric"]["red_flags"])


def test_refusing_to_raise_the_cap_for_everyone_raises_no_red_flag(run: Run,
                                                                   tmp_path: Path) -> None:
    report = graded(run, tmp_path, "I would refuse to raise the cap for everyone: one 128k "
                                   "session pins 32 chat sessions worth of KV. Instead a "
                                   "separate long-context pool with FP8 KV, admitted by quota.")
    assert FLAG not in flags(report)


def test_a_proposal_reported_as_a_mistake_raises_no_red_flag(run: Run, tmp_path: Path) -> None:
    report = graded(run, tmp_path, "Raising the cap for everyone would be a mistake; separate "
                                   "pool with FP8 KV, admitted by quota.")
    assert FLAG not in flags(report)


def test_the_proposal_made_still_raises_the_red_flag(run: Run, tmp_path: Path) -> None:
    report = graded(run, tmp_path, "Just raise max_model_len to 128k for everyone; paging "
                                   "means short chats never pay for it.")
    assert FLAG in flags(report)
