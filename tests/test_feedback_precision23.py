"""What a right answer is not said to claim (stop 64, corpora BB and BC, written blind and
measured unread): a proposal a memo advises against, and excuses in a senior's own words;
and what a credit does not say it was quantified by."""

from __future__ import annotations

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.marking.claims import asserts, claims_made
from trainer.marking.prose import concept_credit
from trainer.marking.scoring import drill_figures, score_attempt


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


# Credit statements that named a figure of something else (expert pass 50, F6 and F11)

def _credit(drill_id: str, concept_id: str, text: str) -> str:
    drill = find_drill(drill_id)[0]
    concept = load_rubric(drill.rubric).concept(concept_id)
    assert concept is not None
    figures = drill_figures(drill, mark_sheet(AnswerKey(drill), {}))
    return concept_credit(concept, text, figures)[1]


def test_a_figure_of_the_sentence_before_a_so_does_not_quantify_a_lever() -> None:
    text = ("Every long session that does arrive pins 16 GiB, 32 chat sessions. So a separate "
            "long pool with FP8 KV, admitted by tier and quota.")
    note = _credit("long-context-tier", "fp8-kv", text)
    assert "32" not in note and "the rubric does not list" not in note


def test_a_working_that_names_another_lever_does_not_quantify_the_next() -> None:
    text = "First lever: DP attention (16 → 88 sessions), then FP8 KV."
    note = _credit("deepseek-v3-mla-h200", "fp8-kv", text)
    assert "88" not in note


def test_a_figure_set_beside_a_lever_still_quantifies_it() -> None:
    text = "Keep every expert resident, 673 GB: the router may pick any of them."
    note = _credit("deepseek-v3-mla-h200", "all-experts-resident", text)
    assert "673" in note


def test_a_memo_that_advises_against_raising_the_cap_raises_no_red_flag() -> None:
    # the rubric's own red flag (not a step's wrong claim) read the proposal the memo rejects
    text = "Summary: Raising max_model_len globally is not recommended."
    assert not asserts(text, "raise max_model_len globally")


def test_a_memo_that_proposes_raising_the_cap_still_asserts_it() -> None:
    assert asserts("Recommendation: raise max_model_len globally to 131,072.",
                   "raise max_model_len globally")


def _red_flags(drill_id: str, step_id: str, text: str) -> list[str]:
    drill = find_drill(drill_id)[0]
    marks = mark_sheet(AnswerKey(drill), {step_id: text})
    return [flag for flag, _ in score_attempt(drill, load_rubric(drill.rubric), marks).red_flags]


def test_an_answer_that_argues_against_raising_the_cap_has_no_red_flag() -> None:
    # the rubric's phrase "raise max_model_len globally" flagged 42 right answers over the
    # corpora; the step's own claim of that name reads them with its excuses
    text = ("Raising max_model_len globally lets a 128k session take 16 GiB, 32 chat sessions' "
            "worth, on any chat card. Instead keep chat's cap at its p99 and give long context "
            "its own replicas.")
    assert _red_flags("long-context-tier", "pool-policy", text) == []


def test_an_answer_that_raises_the_cap_for_everyone_keeps_its_red_flag() -> None:
    text = ("Just raise max_model_len to 131,072 for everyone: paging allocates blocks as "
            "tokens arrive, so chat users lose nothing.")
    assert "raise-cap-for-everyone" in _red_flags("long-context-tier", "pool-policy", text)
