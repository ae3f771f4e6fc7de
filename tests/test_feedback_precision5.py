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


def _graded(run: Run, tmp_path: Path, drill: str, answers: str, *args: str) -> str:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(answers, encoding="utf-8")
    return run("grade", drill, "--answers", str(sheet), *args, ok=False).output


# The seed's Solid computes 128 KiB per token and about 100 sessions; this sheet forgot the
# factor 2 for K and V and carried it through every count
FACTOR_ONCE = """\
shape-layers: '32'
shape-kv-heads: '8'
shape-head-dim: '128'
shape-dtype-bytes: 2 bytes
bytes-per-token: 64 KiB
kv-budget: 52 GB
live-tokens: 793k
sessions: '193'
sessions-fp8: '387'
sessions-32k: '24'
kv-budget-real-card: '56.97'
sessions-real-card: '212'
followup-128k-sessions: '6'
followup-70b-tp-sessions: '97'
"""


def test_a_sheet_that_forgot_k_and_v_twice_is_not_solid(run: Run, tmp_path: Path) -> None:
    out = _graded(run, tmp_path, "llama31-8b-h100", FACTOR_ONCE)
    assert "Sounds like: not yet Solid: it needs bytes-per-token and sessions answered right" in out


def test_a_level_reached_says_what_the_next_needs(run: Run, tmp_path: Path) -> None:
    right = FACTOR_ONCE.replace("64 KiB", "128 KiB").replace("793k", "396,728") \
        .replace("'193'", "'96'").replace("'387'", "'193'").replace("'24'", "'12'") \
        .replace("'212'", "'106'").replace("'6'", "'3'")
    out = _graded(run, tmp_path, "llama31-8b-h100", right)
    assert "Sounds like: Solid; Senior needs Assumptions 3/4 (this attempt 0)" in out


def test_a_retargeted_red_flag_does_not_quote_the_drills_own_model(run: Run,
                                                                 tmp_path: Path) -> None:
    out = _graded(run, tmp_path, "llama31-8b-h100", "shape-kv-heads: '28'\n",
                  "--model", "qwen2.5-7b", "--gpu", "h200")
    flag = next(line for line in out.splitlines() if line.startswith("Red flag: Used the query"))
    assert "GQA group size" in flag and "Llama-3.1-8B" not in flag


def _claimed(drill: str, step: str, text: str) -> list[str]:
    return [made.claim.id for made in claims_made(find_drill(drill)[0].step(step), text)]


def test_the_interconnect_given_as_why_sessions_fell_short_is_a_claim() -> None:
    said = "Communication between the two nodes over InfiniBand is slow, so the GPUs wait."
    assert "interconnect-explains-sessions" in _claimed("llama31-405b-h200-tp", "why-less", said)


def test_a_slower_all_reduce_said_beside_the_memory_reason_is_no_claim() -> None:
    said = ("Every token is stored twice at TP16, so only 1.5x the sessions; and TP16 adds an "
            "inter-node all-reduce per layer, slower too.")
    assert "interconnect-explains-sessions" not in _claimed("llama31-405b-h200-tp", "why-less",
                                                            said)


def test_a_pitch_right_for_one_thing_only_is_not_said_right() -> None:
    said = "The pitch is right for exactly one thing: the FLOPs per token."
    assert "pitch-is-right" not in _claimed("mixtral-moe-decode", "what-moe-saves", said)


def test_a_pitch_called_right_outright_is_a_claim() -> None:
    said = "The pitch is right: it is a 12.9B model when it runs, so it costs like one."
    assert "pitch-is-right" in _claimed("mixtral-moe-decode", "what-moe-saves", said)


def test_a_total_typed_after_its_per_gpu_figure_is_the_one_read() -> None:
    marks = marked("llama31-8b-h100", {"followup-70b-tp-sessions": "48 per GPU, 97 total"})
    assert marks["followup-70b-tp-sessions"].verdict == "correct"


def test_a_per_gpu_step_reads_the_per_gpu_figure_of_two() -> None:
    marks = marked("llama31-70b-tp2-h100",
                   {"bytes-per-token-per-gpu": "160 KiB total, 80 KiB per GPU"})
    assert marks["bytes-per-token-per-gpu"].verdict == "correct"
