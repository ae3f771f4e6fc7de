"""Expert pass 93 (172 text answers, written before grading, graded unread on stop 77's 6c045c2):
1 of 43 right and 4 of 43 hedged answers red-flagged, 21 of 43 partly right answers missed, 34
of 676 credits false, 11 sentences wrong (every one a red flag's, most of them on the five
answers flagged falsely). Its right and hedged answers are kept as a guard, with four wrong or
partly right answers whose flag named what they did not say and eight partly right answers whose
one wrong claim went unnamed."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, claims_of_answer, expert_answer, flags_of_answer
from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made

CORPUS = "expert_pass93_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "R", "H"))
def test_a_right_or_hedged_answer_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


@pytest.mark.parametrize(("key", "claim_id"), [
    ("llama2-70b-mi300x/3c-explain/P:A050", "kv-read-adds-no-time"),
    ("llama2-70b-mi300x/5a/P:A058", "aggregate-rate-unchanged"),
    ("llama31-405b-h200-tp/why-less/P:A066", "budget-only-doubles"),
    ("deepseek-v3-mla-h200/why-mla/P:A018", "dp-attention-full-8x"),
    ("observed-concurrency-lower/action/P:A130", "smaller-blocks-recover-fragmentation"),
    ("prefix-caching/when-not/P:A154", "whole-prompt-hashed"),
    ("decode-roofline-vs-measured/long-why/P:A014", "wrong-engine-fix"),
    ("paged-blocks-vllm/refusal/P:A138", "scheduler-knobs-fix-it"),
])
def test_the_one_calm_wrong_claim_of_a_partly_right_answer_is_named(key: str,
                                                                      claim_id: str) -> None:
    assert claims_of_answer(CORPUS, key) == [claim_id]


def test_decode_tokens_kept_out_of_the_token_budget_are_named_as_that_mistake() -> None:
    # "the decode tokens … do not count against that budget, so the whole budget is the chunk"
    # is about max_num_batched_tokens, not the chunk taking the whole 25 ms
    assert claims_of_answer(CORPUS, "chunked-prefill-tpot/trade-off/P:A002") == [
        "decode-tokens-outside-the-token-budget"]


def test_a_dropped_factor_two_is_not_blamed_on_gqa() -> None:
    # the answer never names GQA nor 163,840 B: the GQA claim's sentence would misread it
    assert claims_of_answer(CORPUS, "llama2-70b-mi300x/1b/W:A039") == ["no-factor-of-two"]


def test_watching_gpu_utilisation_is_not_read_as_raising_gpu_memory_utilization() -> None:
    assert "utilization-to-the-whole-card" not in claims_of_answer(
        CORPUS, "llama31-8b-h100/policy/W:A083")


def test_the_scheduler_knob_flag_names_the_swap_space_the_answer_proposed() -> None:
    drill = find_drill("paged-blocks-vllm")[0]
    made = claims_made(drill.step("refusal"),
                       expert_answer(CORPUS, "paged-blocks-vllm/refusal/W:A139"))
    assert [m.claim.id for m in made] == ["scheduler-knobs-fix-it"]
    assert "swap space" in made[0].sentence


@pytest.mark.parametrize(("drill_id", "step_id", "text", "claim_id"), [
    # a denial that names no place the claim fails to hold is no rebuttal of it
    ("speculative-decoding", "when-it-pays",
     "Each verification costs 5 target steps, not one.", "verify-costs-several-steps"),
    ("speculative-decoding", "when-it-pays",
     "Each verification costs 5 target steps. Not great, so leave it off.",
     "verify-costs-several-steps"),
    # "here it doesn't" answers only the clause just before it
    ("llama2-70b-mi300x", "5a",
     "Here it doesn't stay flat: twice the sequences is twice the step, 68 ms.",
     "twice-the-work-twice-the-step"),
])
def test_a_claim_followed_by_an_unrelated_denial_is_still_named(
        drill_id: str, step_id: str, text: str, claim_id: str) -> None:
    from tests.expert_claims import claims_named
    assert claim_id in claims_named(drill_id, step_id, text)


def test_a_qualifier_the_sentence_goes_on_from_is_no_rebuttal() -> None:
    # corpus BG's wrong answer: the "not in …" item is part of the claim, not a denial of it
    from tests.expert_claims import claims_named
    text = ("LM head is used only at end of generation for the final logits, not in every "
            "decode step, so decode does not read it.")
    assert "lm-head-skipped" in claims_named("decode-roofline-vs-measured", "embedding-why",
                                             text)
