"""Expert pass 54 (130 text answers and 6 numeric sheets written before grading, on the tree
after pass 53's fixes): red flags wrong 2 of 31, wrong answers missed 22 of 51, credit
statements false 22 of about 414, numeric explanations wrong 2 of about 30. The general
faults behind the wrong flags, the false statements and the numeric explanations, each
tested here through the real matcher, scorer or CLI; the misses are claimed in the drills."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made
from trainer.reading.reader import read_answer


def _claims(drill_id: str, step_id: str, text: str) -> list[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return [made.claim.id for made in claims_made(step, text)]


def _grade(run: Callable[..., Result], tmp_path: Path, drill: str, answers: dict[str, str],
           *options: str) -> dict[str, object]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps(answers), encoding="utf-8")
    result = run("grade", drill, "--answers", str(sheet), "--json", *options, ok=False)
    assert result.exit_code in (0, 1), result.output  # graded (1: not passed), no misuse
    graded: dict[str, object] = json.loads(result.output)
    return graded


@pytest.mark.parametrize(("typed", "value"), [
    ("96/8 = 12 ... actually 24", 24), ("12, make that 24", 24),
    ("12, actually", 12)])
def test_a_value_corrected_after_its_working_is_the_one_read(typed: str, value: int) -> None:
    # (NW1: "96/8 = 12 ... actually 24" was marked right as 12)
    assert read_answer(typed).readings[0].quantity.value == value


def test_working_that_leaves_steps_out_is_not_said_to_give_the_answer(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (NW2: "(160 - 70.55)*0.9 ... ≈ 150" was told "Your working gives 80.5 sequences, which
    # is right": 80.5 is GB, and the dots say the working went on)
    graded = _grade(run, tmp_path, "llama31-8b-h100",
                    {"followup-70b-tp-sessions": "(160 - 70.55)*0.9 ... ≈ 150"})
    step = next(s for s in graded["steps"]  # type: ignore[attr-defined]
                if s["id"] == "followup-70b-tp-sessions")
    assert step["verdict"] == "wrong" and "working" not in step["feedback"].lower()


def test_working_is_right_only_where_it_comes_to_the_value_not_within_a_wide_band(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (the follow-up's 20% band admits 80.5 for 97; working that comes to 80.5 is not right)
    graded = _grade(run, tmp_path, "llama31-8b-h100",
                    {"followup-70b-tp-sessions": "(160 - 70.55)*0.9 = 150"})
    step = next(s for s in graded["steps"]  # type: ignore[attr-defined]
                if s["id"] == "followup-70b-tp-sessions")
    assert "which is right" not in step["feedback"]


@pytest.mark.parametrize("text", [
    '"2,000 users = 2,000 slots" confuses open conversations with requests in flight. '
    'L = λW: 30/s × ~7.9 s ≈ 238 in flight.',
    "2,000 users = 2,000 slots is a common mistake: L = λW gives about 238 in flight."])
def test_a_claim_said_to_confuse_or_to_be_a_mistake_is_not_made(text: str) -> None:
    # (W2: a quoted claim followed by "confuses …" was flagged as the claim)
    assert _claims("littles-law-capacity", "plan", text) == []


def test_the_claim_itself_is_still_made_without_the_judgement() -> None:
    assert _claims("littles-law-capacity", "plan", "2,000 users = 2,000 slots, so buy 20 GPUs.") \
        == ["online-users-as-slots"]


def test_hidden_over_heads_said_to_overstate_sessions_is_no_overstated_cache() -> None:
    # (W1: "224 instead of the config's 256 undercounts the cache … and overstates sessions")
    text = ("Taking head_dim as hidden / heads = 3584 / 16 = 224 instead of the config's 256 "
            "undercounts the cache by 12.5% (294 vs 336 KiB per token) and overstates sessions.")
    assert _claims("sliding-window-kv", "why-different", text) == []


def test_a_figure_in_another_clause_is_not_given_to_a_mention(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W20: "the preemption counter, …; if usage sits at 100% …" was said to quantify
    # preemption "with figures that are not the drill's")
    text = ("Watch KV-cache usage (p95), the preemption counter, and running vs waiting "
            "requests; if usage sits at 100% with preemptions, the estimate is stale.")
    graded = _grade(run, tmp_path, "llama31-8b-h100", {"policy": text})
    said = json.dumps(graded["rubric"])
    assert "preemption" in said and "not the drill's" not in said


def test_a_retargeted_grade_takes_no_figure_of_the_drills_own_card(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W22: on a B200, "PP2 … 174 sessions" (the H200's figure) was credited as quantified)
    text = ("TP8 x PP2 instead: each stage keeps 8 KV heads on 8 GPUs, so the node pair "
            "holds about 174 sessions of 32k.")
    graded = _grade(run, tmp_path, "llama31-405b-h200-tp", {"fix": text}, "--gpu", "b200")
    said = json.dumps(graded["rubric"])
    assert "174" not in said


def test_the_drills_own_grade_still_takes_that_figure(
        run: Callable[..., Result], tmp_path: Path) -> None:
    text = ("TP8 x PP2 instead: each stage keeps 8 KV heads on 8 GPUs, so the node pair "
            "holds about 174 sessions of 32k.")
    graded = _grade(run, tmp_path, "llama31-405b-h200-tp", {"fix": text})
    assert "174" in json.dumps(graded["rubric"])


@pytest.mark.parametrize(("typed", "value"), [
    ("90-100, say 96 sessions", 96), ("between 150 and 170, say 163", 163),
    ("90 - 100, probably 96", 96)])
def test_a_value_picked_from_a_range_is_read_and_the_range_is_no_working(
        typed: str, value: int) -> None:
    # (found practising prefix-caching in tmux: "90-100, say 96 sessions" was read as -10,
    # and "between 150 and 170, say 163" was told "head_dim = 150 (the figure in your working)")
    read = read_answer(typed, "sequences")
    assert read.readings[0].quantity.value == value and read.working_parts == ()


def test_a_subtraction_before_the_value_is_still_working() -> None:
    read = read_answer("72 - 16, say 56 GB", "GB")
    assert read.readings[0].quantity.value == 56 * 10**9 and read.working_parts
