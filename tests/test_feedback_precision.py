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


def _practised(run: Run, drill: str, answers: str) -> str:
    return " ".join(run("practice", drill, input=answers, ok=False).output.split())


def test_a_random_count_gets_no_pair_of_unrelated_factors(run: Run) -> None:
    said = _practised(run, "sliding-window-kv",
                      "128\n32,768\n4295 MB\n4.29\n12\n12\n224\n294 KiB\n5.55\n8\n37\n")
    assert "read as 37 sequences: expected 4 sequences." in said
    assert "bits for bytes and took a GB figure as GiB" not in said


def test_the_steps_own_mistake_giving_the_number_is_not_followed_by_a_slip(run: Run) -> None:
    # 60 GB: all of HBM usable (the step's listed mistake), or 8 GB of fp8 weights: one said
    said = _practised(run, "llama31-8b-h100", "32\n8\n128\n2\n128 KiB\n60 GB\n")
    assert "A slip of one input gives the same number" not in said
