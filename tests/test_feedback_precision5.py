"""The eighth blind feedback review (/tmp/w4/review8.md) and corpus Q: an answer that follows
from the candidate's own earlier numbers is credited as carried forward, not said to "not
follow from them alone"; a ratio of two wrong answers is not carried from one of them and the
key's other; a block count worked from the weights as shown is right; and a claim's excuse in
a clause about something else ("while at 96 it is memory-bound") does not excuse it. Each test
failed before, but the last, which keeps what the clause rule must not break."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import Mark, mark_sheet
from trainer.marking.claims import claims_made

Run = Callable[..., Result]


def marked(drill_id: str, answers: dict[str, str]) -> dict[str, Mark]:
    return mark_sheet(AnswerKey(find_drill(drill_id)[0]), answers)


# a weak 70B sheet: a budget of 54 GB, 5.4 GB a sequence, 10 sequences (13 on the real card)
WEAK_70B = {"1a": "54 GB", "2b-bytes-per-sequence": "5.4 GB", "2b-max-sequences": "10",
            "2b-max-sequences-real-card": "13", "3a-bytes-per-step": "192 GB",
            "3a-step-time": "36 ms"}


def test_an_aggregate_follows_from_the_count_and_the_step_typed() -> None:
    # 10 sequences ÷ 36 ms = 278 tokens/s; the real card's 13 no longer stands for the batch
    marks = marked("llama2-70b-mi300x", {**WEAK_70B, "3b-aggregate": "278"})
    assert marks["3b-aggregate"].carried_forward


def test_twice_your_3a_batch_is_twice_the_candidates_own_count() -> None:
    # "running at twice your step 3a batch": 20 sequences × 2.7 GB of fp8 KV + 138 GB
    marks = marked("llama2-70b-mi300x", {**WEAK_70B, "5-bytes-per-step": "192 GB"})
    assert marks["5-bytes-per-step"].carried_forward


LITTLE = {"memory-sessions": "26", "latency-batch": "26", "operating-step": "21 ms",
          "request-time": "0.02 s"}  # a request's 400 output tokens left out


def test_a_request_time_without_its_tokens_still_carries_forward() -> None:
    marks = marked("littles-law-capacity", {**LITTLE, "qps-per-gpu": "1,300"})
    assert marks["qps-per-gpu"].carried_forward


def test_a_mean_in_flight_carried_forward_keeps_its_fraction() -> None:
    # 30 requests/s × 0.02 s = 0.6 in flight: Little's L is a mean, not a floored count
    marks = marked("littles-law-capacity", {**LITTLE, "in-flight": "0.6"})
    assert marks["in-flight"].carried_forward


def test_an_estimate_rounded_from_its_own_quotient_follows() -> None:
    # 64 GB ÷ (512 KiB × 4,096) = 29.8 sessions, typed 30 on a within-20% step
    marks = marked("llama31-8b-h100", {"bytes-per-token": "524288", "kv-budget": "64 GB",
                                        "sessions": "30"})
    assert marks["sessions"].carried_forward


def test_a_step_that_states_its_context_is_worked_from_the_other_answers() -> None:
    # 56 GB ÷ 512 KiB = 106,811 tokens over the 6,827 the step states, not the 2,458 answered
    marks = marked("observed-concurrency-lower", {
        "bytes-per-token": "524288", "kv-budget": "56 GB", "implied-context": "2458",
        "real-sessions": "15"})
    assert marks["real-sessions"].carried_forward


def test_a_ratio_of_two_wrong_counts_is_not_one_of_them_over_the_keys_other() -> None:
    # 175 (their TP16) ÷ 58 (the key's TP8) = 3.02, but their own TP8 was 7
    marks = marked("llama31-405b-h200-tp", {"sessions-tp8": "7", "sessions-tp16": "175",
                                            "sessions-ratio": "3"})
    assert not marks["sessions-ratio"].carried_forward


def test_blocks_worked_from_the_weights_as_shown_are_right(run: Run, tmp_path: Path) -> None:
    # (0.9 × 81,920 MiB − 15.23 GB − 4 GB) ÷ 0.875 MiB = 63,301.6: one above the key's floor
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("num-blocks: '63,301'\n", encoding="utf-8")
    out = run("grade", "paged-blocks-vllm", "--answers", str(sheet), "--model", "qwen2.5-7b",
              "--gpu", "a100", ok=False).output  # exit 1: the rest of the sheet is blank
    assert "✓  num-blocks" in out


def test_a_knife_edge_note_never_prints_an_exponent(run: Run) -> None:
    key = run("variants", "paged-blocks-vllm", "--count", "1", "--model", "qwen2.5-7b",
              "--gpu", "a100").output
    assert "is as right: the quotient, 60,798.9," in key and "e+04" not in key


def test_a_claim_is_not_excused_by_a_clause_about_something_else() -> None:
    step = find_drill("decode-roofline-vs-measured")[0].step("batch1-why")
    text = ("So batch 1 is further off because it's actually compute-bound, while at 96 "
            "you're memory-bound and the roofline applies.")
    assert "decode-compute-bound" in [made.claim.id for made in claims_made(step, text)]


def test_an_excuse_written_with_its_own_while_still_excuses() -> None:
    step = find_drill("long-context-tier")[0].step("pricing")
    text = "Per-token pricing charges it for throughput while the real constraint is memory."
    assert claims_made(step, text) == ()
