"""Expert pass 44, the precision of what a wrong number is told: an earlier answer typed again
is said to be that (not a GB/GiB mix or a count rounded up that happen to give the number), and
an answer carried forward names the wrong answers it follows from, not every step of the sheet.
The sheets are the expert's (tests/corpus/feedback_sheets_pass44), graded through the CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "corpus" / "feedback_sheets_pass44"


def _step(run: Run, drill: str, sheet: str, step_id: str) -> dict[str, Any]:
    result = run("grade", drill, "--answers", str(SHEETS / sheet), "--json", ok=False)
    steps: list[dict[str, Any]] = json.loads(result.output)["steps"]
    return next(s for s in steps if s["id"] == step_id)


def test_a_budget_typed_again_for_the_reported_card_is_said_to_be_the_earlier_one(
        run: Run) -> None:
    # 107 GB, the candidate's budget on the marketed 141 GB, is 115 GB in GiB only by chance
    step = _step(run, "llama31-8b-h100", "l8-copyreal.yaml", "kv-budget-real-card")
    assert "It is your answer to kv-budget (107 GB) again" in step["feedback"]
    assert step["misconceptions"] == []


def test_a_count_kept_from_one_byte_per_parameter_is_no_count_rounded_up(run: Run) -> None:
    step = _step(run, "llama31-70b-tp2-h100", "t2b-relcopy.yaml",
                 "sessions-released-checkpoint")
    assert "It is your answer to sessions (134 sequences) again" in step["feedback"]
    assert "rounded-up" not in step["misconceptions"]


def test_an_answer_carried_from_one_slip_names_that_slip_alone(run: Run) -> None:
    # the reserve left out of 1a, carried through; 2a's and 3c's right answers play no part
    step = _step(run, "llama2-70b-mi300x", "m3-noreserve.yaml", "4c")
    assert "It follows from your answer to 1a, which gives 75 sequences here" in step["feedback"]


def test_a_value_with_many_ways_to_it_names_none_of_them(run: Run) -> None:
    step = _step(run, "llama2-70b-mi300x", "m3-noreserve.yaml", "5b-aggregate")
    assert step["carried_forward"]
    assert " or to " not in step["feedback"] and len(step["feedback"]) < 200


def test_a_replica_count_floored_is_named_before_a_mistake_right_answers_rule_out(
        run: Run) -> None:
    # 173 in flight ÷ 105 per replica = 1.65: one replica is the ceiling left out; the weights
    # alone also give 1, but the right 21.6 ms step time read the KV
    step = _step(run, "littles-law-capacity", "ll-floor.yaml", "replicas")
    assert step["misconceptions"] == ["rounded-down"]


def test_a_ratio_of_two_right_answers_is_guessed_at_no_input(run: Run) -> None:
    # 82 ÷ 53 = 1.547, typed 1.6: both counts right, so no reserve of 4 GB made it
    step = _step(run, "llama31-405b-h200-tp", "t4r1.yaml", "sessions-ratio")
    assert step["diagnosis"] is None and "reserve" not in step["feedback"]


def test_flops_from_half_the_parameters_are_no_8_bit_copy(run: Run) -> None:
    step = _step(run, "prefill-vs-decode", "pd-dflops.yaml", "decode-flops")
    assert "8-bit copy" not in step["feedback"]
    assert "one FLOP counted a parameter where a multiply-add is two" in step["feedback"]


def test_a_count_right_from_ones_own_budget_says_its_source_once(run: Run) -> None:
    # the full-HBM budget (121 GB) was named at kv-budget; 225 sessions follow from it and
    # are within the step's 20%: said once, not again as "what you get if you assumed …"
    step = _step(run, "llama31-8b-h100", "l8-fullhbm.yaml", "sessions")
    assert step["verdict"] == "correct"
    assert step["feedback"].count("Right within the step's tolerance") == 1


def test_a_share_said_as_a_count_of_a_whole_is_their_ratio(run: Run) -> None:
    # "4 of 1504" tokens of a 94-block request: 0.266%, read as 4% before
    step = _step(run, "paged-blocks-vllm", "pb-tw.yaml", "tail-waste")
    assert step["verdict"] == "correct"
