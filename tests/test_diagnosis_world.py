"""Diagnosis that holds on slips nobody listed (issue 26): the hand-computed one-input slips
of tests/corpus/world_slips.yaml (another GPU's or model's figure, a common setting, a power
of two, the drill's own variants), graded through `kvdrill grade --json`, are named with the
input changed and its wrong value; random wrong answers are seldom diagnosed; a tie with a
listed mistake names the mistake first and the slip beside it; and the words say it."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result
from random_answers import random_answers

from trainer.drills.loader import load_drill_file
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.files.paths import drill_paths
from trainer.marking import chance, world
from trainer.marking.checker import mark_sheet
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
CORPUS = Path(__file__).parent / "corpus" / "world_slips.yaml"
# Issue 33: a number three or more slips give is explained by none of them (it was four
# readings at once), which costs the recall of factor-2 answers: 72.5% measured.
NAMED_AT_LEAST = Fraction(2, 3)
RANDOM_ANSWERS = 300
RANDOM_DIAGNOSED_AT_MOST = Fraction(5, 100)
SAME_VALUE = Fraction(1, 200)  # an implied value as the corpus writes it (141, 150.75 GB)


@cache
def slips() -> tuple[dict[str, Any], ...]:
    return tuple(yaml.safe_load(CORPUS.read_text(encoding="utf-8"))["entries"])


def graded_step(run: Run, tmp_path: Path, drill: str, answers: dict[str, str],
                step_id: str) -> dict[str, Any]:
    """One step of `kvdrill grade DRILL --answers SHEET --json`, as the checker reads it."""
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump(answers, allow_unicode=True), encoding="utf-8")
    out = json.loads(run("grade", drill, "--answers", str(sheet), "--json", ok=False).output)
    found: dict[str, Any] = next(s for s in out["steps"] if s["id"] == step_id)
    return found


def names(step: dict[str, Any], input_name: str, value: Fraction) -> bool:
    """Whether the step's diagnosis names this input at this value, among its readings."""
    diagnosis = step["diagnosis"]
    if diagnosis is None:
        return False
    return any(r["input"] == input_name
               and abs(Fraction(str(r["implied"])) - value) <= value * SAME_VALUE
               for r in diagnosis["readings"])


def test_the_world_corpus_has_sixty_slips_across_twelve_drills() -> None:
    assert len(slips()) >= 60
    assert len({entry["drill"] for entry in slips()}) >= 12


def test_grade_json_names_the_changed_input_and_its_value_for_four_slips_in_five(
        run: Run, tmp_path: Path) -> None:
    missed = []
    for entry in slips():
        step = graded_step(run, tmp_path, entry["drill"], {entry["step"]: entry["answer"]},
                           entry["step"])
        assert step["verdict"] == "wrong", entry
        if not names(step, entry["input"], Fraction(str(entry["value"]))):
            missed.append((entry["drill"], entry["step"], entry["answer"], step["diagnosis"]))
    named = len(slips()) - len(missed)
    assert named >= NAMED_AT_LEAST * len(slips()), missed


@pytest.mark.parametrize("entry", [e for e in slips() if "tie" in e],
                         ids=lambda e: f"{e['drill']}:{e['step']}:{e['answer']}")
def test_a_listed_mistake_that_gives_the_number_is_named_first_and_at_most_one_slip_beside(
        run: Run, tmp_path: Path, entry: dict[str, Any]) -> None:
    step = graded_step(run, tmp_path, entry["drill"], {entry["step"]: entry["answer"]},
                       entry["step"])
    assert step["misconception"] == entry["tie"]
    said = len(step["misconceptions"]) + (len((step["diagnosis"] or {}).get("readings", ())))
    assert said <= 2, step["feedback"]


def test_the_feedback_says_the_slip_in_words(run: Run, tmp_path: Path) -> None:
    # 141 × 0.9 − 16 − 4 = 106.9 GB: an H200's memory in an H100 question
    step = graded_step(run, tmp_path, "llama31-8b-h100", {"kv-budget": "~106.9 GB"},
                       "kv-budget")
    assert "as if the GPU had 141 GB (an H200's)" in step["feedback"]
    assert (step["diagnosis"]["input"], step["diagnosis"]["implied"],
            step["diagnosis"]["true"]) == ("hbm_gb", 141, 80)


def test_an_answer_that_follows_from_the_earlier_answers_is_carried_forward_alone(
        run: Run, tmp_path: Path) -> None:
    # 72 − 16 − 2 = 54 GB (a 2 GB headroom) and 320 KiB per token carry forward to
    # 54e9 ÷ (327,680 × 4,096) = 40.2 sessions: that, and nothing else, is said
    step = graded_step(run, tmp_path, "llama31-8b-h100",
                       {"kv-budget": "54 GB", "bytes-per-token": "320 KiB",
                        "sessions": "about 40"}, "sessions")
    assert step["carried_forward"] is True
    assert (step["misconceptions"], step["diagnosis"]) == ([], None), step["feedback"]


@cache
def keys() -> dict[str, AnswerKey]:
    drills = [load_drill_file(path) for path in sorted(drill_paths())]
    return {drill.id: answer_key(drill, None) for drill in drills}


def world_random_answers() -> list[tuple[str, str, str]]:
    return random_answers(lambda drill_id: keys()[drill_id], RANDOM_ANSWERS, 26)


def test_random_wrong_answers_are_diagnosed_at_most_one_time_in_twenty(
        run: Run, tmp_path: Path) -> None:
    graded = [graded_step(run, tmp_path, drill, {step_id: answer}, step_id)
              for drill, step_id, answer in world_random_answers()]
    wrong = [step for step in graded if step["verdict"] == "wrong"]
    diagnosed = [step["feedback"] for step in wrong if step["diagnosis"] is not None]
    assert len(wrong) >= RANDOM_ANSWERS * 0.9
    assert len(diagnosed) <= RANDOM_DIAGNOSED_AT_MOST * len(wrong), diagnosed


# ---------------------------------------------------------------------------------------------
# Readings the blind corpus asked for (tests/test_diagnosis_blind.py)


@cache
def key_of(drill_id: str) -> AnswerKey:
    return keys()[drill_id]


def readings(drill_id: str, step_id: str, answer: str) -> list[tuple[str, Fraction]]:
    """(input, implied value) of each reading the diagnosis gives, first first."""
    mark = mark_sheet(key_of(drill_id), {step_id: answer})[step_id]
    if mark.diagnosis is None:
        return []
    return [(r.input, r.implied) for r in (mark.diagnosis.slip, *mark.diagnosis.others)]


def test_an_moe_sized_from_its_active_parameters_is_named() -> None:
    # 141 × 8 × 0.9 − 37 − 8 × 4 = 1,015.2 − 69 = 946.2 GB: DeepSeek-V3's 37B active
    # parameters at FP8 for its 671B weights
    assert readings("deepseek-v3-mla-h200", "kv-budget", "946 GB")[0] == ("weights_gb", 37)


def test_a_card_as_announced_is_named() -> None:
    # 29.29 tokens/s × 8 ÷ 5.3 = 44.21: the B200's announced 8 TB/s in the MI300X's place
    assert readings("llama2-70b-mi300x", "3b-per-sequence", "44.2 tokens/s")[0] == (
        "bandwidth_tbs", 8)


def test_a_count_floored_per_gpu_is_solved_through_its_floors() -> None:
    # DP attention: 8 GPUs × ⌊23.9⌋ = 184 sessions at 16,384 tokens (88 at 32,768); fp8 KV
    # gives 184 too, and is the listed kind of slip, so it comes first
    assert ("context", 16384) in readings("deepseek-v3-mla-h200", "sessions-dp-attention",
                                          "184 sequences")


def test_a_large_count_worked_with_rounded_figures_is_named() -> None:
    # a 2 GB headroom for 4: 156,283 tokens exactly; worked by hand with rounded figures,
    # 156,272 (0.007% off)
    assert readings("paged-blocks-vllm", "colocated-max-len", "156272") == [
        ("reserve_gb", 2)]


def test_readings_that_give_the_number_exactly_are_all_said() -> None:
    # 184 DP-attention sessions: a 16,384 context and fp8 KV both halve the KV per session;
    # both are said, what a deployment sets (the context) before the dtype
    assert readings("deepseek-v3-mla-h200", "sessions-dp-attention", "184 sequences") == [
        ("context", 16384), ("kv_bytes_per_element", 1)]


def test_a_digit_typed_again_needs_four_figures() -> None:
    # 2·88·8·128·1 = 180,224 B = 176 KiB: 80 layers typed 88
    assert readings("llama31-70b-tp2-h100", "bytes-per-token", "176 KiB") == []
    assert readings("llama31-70b-tp2-h100", "bytes-per-token", "176.0 KiB") == [
        ("layers", 88)]


def test_equally_likely_candidates_are_admitted_cheapest_first() -> None:
    # a budget for one of the two: a value of 200 covers ten times the answers a value of 50
    # does (at three figures), so the 50 is admitted, though listed second
    assert chance.admitted([200.0, 50.0], 3, False, 100.0, 0.01, budget=0.0039,
                           classes=[(0, 2), (0, 2)]) == {1}
    assert chance.admitted([200.0, 50.0], 3, False, 100.0, 0.01, budget=0.0039) == {0}


def test_a_ratio_of_two_steps_is_solved_through_both() -> None:
    # sessions displaced = a 128k session's bytes ÷ a 4,096-token chat's: 131,072 ÷ 4,096 =
    # 32; with 128k read as 128,000 the long session is 128,000 tokens and the chat keeps its
    # own 4,096, so 31.25 (a slip applied to both steps would leave 32)
    assert readings("long-context-tier", "displaced", "31.25") == [("context", 128000)]


def test_an_input_a_step_sets_from_another_given_is_named_as_that_given() -> None:
    # the estimate sizes each chat at the dashboard's prompt (`with: {context: prompt_tokens}`):
    # 51.94 GB ÷ (131,072 B × 6,144) = 64.5 with the givens' 6,144-token context read for the
    # 1,280-token prompt; the slip is of prompt_tokens, the given the step asks about. (Its
    # floor, 64, is the `sessions` step's answer, and is said to be that instead.)
    assert readings("multi-turn-growth", "prompt-only-sessions", "64.5 sequences") == [
        ("prompt_tokens", 6144)]


def test_an_unrounded_count_gets_no_slip_beside_the_rounding() -> None:
    # 36.2 is the hybrid drill's sessions before the floor (the listed rounding mistake): no
    # input slip says more than the formula unchanged does
    mark = mark_sheet(key_of("hybrid-state-kv"), {"sessions": "36.2"})["sessions"]
    assert (mark.verdict, mark.misconceptions, mark.diagnosis) == ("wrong", ("rounded-up",),
                                                                   None)


def test_a_one_digit_answer_says_too_little_for_a_diagnosis() -> None:
    # "3" for a ratio of 2.98: one digit could be any slip, or none
    assert readings("llama31-405b-h200-tp", "sessions-ratio", "3") == []
    assert readings("hybrid-state-kv", "hybrid-advantage", "7") == []


def test_a_card_named_by_two_figures_keeps_its_own_first() -> None:
    # 192 GB is the MI300X's datasheet memory and the B200's as announced: the MI300X's
    assert world.card_of("hbm_gb", Fraction(192)) == "mi300x"
