"""Expert pass 42, W1 and W2: a count worked from an answer marked wrong is carried forward,
never marked right because a rounded right answer of another layout, carried as an amount,
tips it over its floor; and feedback names the earlier answers a carried value follows from,
not every wrong one the step uses. Graded through the real CLI, on a variant of the 70B drill
re-targeted at Llama-2-70B on a B200 (budget 32 GB, 5.37 GB a 16k sequence, 5 sequences)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

Run = Callable[..., Result]
TARGET = ("--variant", "477270", "--model", "llama-2-70b", "--gpu", "b200")


@pytest.fixture(scope="module")
def right_sheet(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from click.testing import CliRunner

    from trainer.app.cli import cli

    out = tmp_path_factory.mktemp("variant")
    result = CliRunner().invoke(cli, ["variants", "llama2-70b-mi300x", "--model", "llama-2-70b",
                                      "--gpu", "b200", "--count", "17", "--out", str(out)])
    assert result.exit_code == 0, result.output
    sheet: dict[str, Any] = yaml.safe_load(
        (out / "llama2-70b-mi300x-477270-answers.yaml").read_text(encoding="utf-8"))
    assert sheet["1a"] == "32 GB" and sheet["2b-bytes-per-sequence"] == "5.37 GB"
    assert sheet["2b-max-sequences"] == "5 sequences"
    return sheet


def _graded(run: Run, tmp_path: Path, sheet: dict[str, Any], **typed: str) -> dict[str, Any]:
    path = tmp_path / "sheet.yaml"
    path.write_text(yaml.safe_dump({**sheet, **typed}), encoding="utf-8")
    result = run("grade", "llama2-70b-mi300x", "--answers", str(path), *TARGET, "--json",
                 ok=False)
    graded: dict[str, Any] = json.loads(result.output)
    return next(s for s in graded["steps"] if s["id"] == "2b-max-sequences")


def test_a_count_from_a_wrong_answer_is_carried_forward_not_marked_right(
        run: Run, tmp_path: Path, right_sheet: dict[str, Any]) -> None:
    # 32 / 5.3 = 6.04: six follows from the 5.3 GB marked wrong (1.3% off), not from the
    # sheet's right answers (42.9 GB for MHA's 42.95 GB is rounding, not 0.05 GB to carry)
    step = _graded(run, tmp_path, right_sheet, **{"2b-bytes-per-sequence": "5.3 GB",
                                                  "2b-max-sequences": "6 sequences"})
    assert (step["verdict"], step["carried_forward"]) == ("wrong", True)
    assert "It follows from your answer to 2b-bytes-per-sequence, which gives 6 sequences here" in \
        step["feedback"]


def test_a_count_rounded_up_from_right_answers_is_wrong(
        run: Run, tmp_path: Path, right_sheet: dict[str, Any]) -> None:
    step = _graded(run, tmp_path, right_sheet, **{"2b-max-sequences": "6 sequences"})
    assert step["verdict"] == "wrong" and step["misconceptions"] == ["rounded-up"]


def test_feedback_names_only_the_answer_a_carried_count_follows_from(
        run: Run, tmp_path: Path, right_sheet: dict[str, Any]) -> None:
    # 36 / 5.37 = 6.7 from the budget alone; 32 / 4.03 = 7.9 and 36 / 4.03 = 8.9 from the rest
    step = _graded(run, tmp_path, right_sheet, **{
        "1a": "36 GB", "2b-bytes-per-sequence": "4.03 GB", "2b-max-sequences": "6 sequences"})
    assert "It follows from your answer to 1a, which gives 6 sequences here" in step["feedback"]


def test_feedback_names_both_answers_a_count_follows_from_alone(
        run: Run, tmp_path: Path, right_sheet: dict[str, Any]) -> None:
    # 42 / 5.37 = 7.8 and 32 / 4.03 = 7.9: either wrong answer alone gives 7
    step = _graded(run, tmp_path, right_sheet, **{
        "1a": "42 GB", "2b-bytes-per-sequence": "4.03 GB", "2b-max-sequences": "7 sequences"})
    assert ("It follows from your answer to 1a or to 2b-bytes-per-sequence, either of which "
            "gives 7 sequences here") in step["feedback"]


def test_feedback_names_two_answers_a_count_follows_from_together(
        run: Run, tmp_path: Path, right_sheet: dict[str, Any]) -> None:
    step = _graded(run, tmp_path, right_sheet, **{
        "1a": "42 GB", "2b-bytes-per-sequence": "4.03 GB", "2b-max-sequences": "10 sequences"})
    assert ("It follows from your answers to 1a and 2b-bytes-per-sequence, which give 10 "
            "sequences here") in step["feedback"]
