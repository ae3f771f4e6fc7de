"""Expert pass 80 (172 text answers, written before grading, graded unread on stop 72's
commit aa1193e): 2 of 86 right or hedged answers red-flagged, 2 flags naming a claim not
made, 30 of 43 partly right answers missed (26 of them planted a wrong number, which a text
is not marked down for: docs/marking.md says why) and 2 of 43 wrong ones, 14 of 540 credits
false, no sentence wrong. Fixed here: the candidate's own verdict ("so I'm right and halving
gives 48 instead of 97") is no colleague's; a claim quoted and then said to be what others
expect ("'Just buy 40% more GPUs' is what product expects; not before …") is reported."""

from __future__ import annotations

from tests.expert_claims import answer_keys, claims_named, claims_of_answer

CORPUS = "expert_pass80_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


def test_the_candidate_s_own_verdict_is_no_colleague_s() -> None:
    assert _said("llama31-70b-tp2-h100/per-gpu-vs-total-explain/H:A076") == []


def test_a_claim_said_to_be_what_others_expect_is_reported() -> None:
    assert _said("observed-concurrency-lower/action/H:A132") == []


def test_right_and_hedged_answers_on_those_steps_claim_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 4 and all(_said(key) == [] for key in keys)


def test_the_wrong_answers_on_those_steps_are_still_caught() -> None:
    keys = answer_keys(CORPUS, "W")
    assert len(keys) == 2 and all(_said(key) for key in keys)


def test_fp8_kv_said_to_win_back_less_than_double_is_named_wherever_the_lever_is() -> None:
    # expert pass 78, A130 (and pass 77's "FP8 KV gives maybe 30% more sessions"): the claim
    # the 8B policy held, now on every step that weighs FP8 KV for a GQA or MLA model
    said = claims_named("observed-concurrency-lower", "action",
                        "Hold the order, re-plan at the measured live context (~58/card). Then "
                        "turn on FP8 KV, which gets back about 40%; prefix caching; context "
                        "caps.")
    assert "fp8-kv-under-doubles" in said


def test_fp8_kv_that_more_than_recovers_a_40_percent_gap_is_not_that_claim() -> None:
    said = claims_named("observed-concurrency-lower", "action",
                        "levers first: fp8 KV 58 → ~116/card (more than recovers the 40%), "
                        "prefix caching for shared sys prompt")
    assert "fp8-kv-under-doubles" not in said


def test_a_pool_that_can_show_low_sm_utilisation_while_full_is_no_utilisation_signal() -> None:
    # expert pass 81, A104 (hedged, graded on the stop's last tree)
    said = claims_named("long-context-tier", "operations",
                        "Not GPU util - decode is memory-bound, a pool can show low SM "
                        "utilization while its KV is full. Watch per pool: KV-cache usage p95.")
    assert "compute-utilisation-as-signal" not in said
