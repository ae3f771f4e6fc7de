"""What a right answer is not said to claim (stop 64, corpora BB and BC, written blind and
measured unread): a proposal a memo advises against, and excuses in a senior's own words."""

from __future__ import annotations

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made


def _claims(drill_id: str, step_id: str, text: str) -> set[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return {made.claim.id for made in claims_made(step, text)}


def test_a_proposal_not_recommended_is_not_made() -> None:
    text = "Summary: Raising max_model_len globally is not recommended."
    assert "raise-cap-for-everyone" not in _claims("long-context-tier", "pool-policy", text)


def test_a_proposal_that_should_be_avoided_is_not_made() -> None:
    text = "Raising max_model_len globally should be avoided."
    assert "raise-cap-for-everyone" not in _claims("long-context-tier", "pool-policy", text)


def test_a_discouraged_proposal_is_not_made() -> None:
    text = "Raising max_model_len globally is discouraged."
    assert "raise-cap-for-everyone" not in _claims("long-context-tier", "pool-policy", text)


def test_a_proposal_recommended_is_still_made() -> None:
    text = "Raising max_model_len globally is what I would recommend."
    assert "raise-cap-for-everyone" in _claims("long-context-tier", "pool-policy", text)


def test_doubled_flops_hidden_behind_the_reads_is_no_slower_step() -> None:
    text = ("Doubling the batch does double the FLOPs, but ~2 × 69B × 8 ≈ 1.1 TFLOP per step is "
            "under a millisecond of matrix-core time, still hidden behind the reads.")
    assert "step-gets-slower" not in _claims("llama2-70b-mi300x", "5a", text)


def test_three_h100s_against_the_two_thousand_slots_is_the_right_plan() -> None:
    text = "Run 94 per GPU → 3 H100s at peak, against ~22 if we bought 2,000 slots."
    assert "online-users-as-slots" not in _claims("littles-law-capacity", "plan", text)


def test_hidden_over_heads_set_against_the_config_s_256() -> None:
    text = "head_dim: 3584/16 = 224, but Gemma-2 uses 256."
    assert "head-dim-is-hidden-over-heads" not in _claims("sliding-window-kv", "why-different",
                                                          text)
