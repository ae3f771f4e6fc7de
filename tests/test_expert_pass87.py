"""Expert pass 87 (172 text answers, written before grading, graded unread on stop 74's commit
06e892b): 9 of 86 right or hedged answers red-flagged, each for a belief it gave to others to
reject it ("A colleague told me …", "If you believed '…' you'd expect …", "The colleague's
claim — '…' — is half right", "A common explanation is '…'. Neither holds", "The easy slip is
…", "Some teams … conclude …"), or said denied ("What it doesn't: memory at any batch"), or
set against a condition ("count the whole transfer unless a layer-wise connector overlaps it");
26 of 43 partly right answers missed and 5 of 43 wrong ones, 36 of 697 credits false, two
sentences wrong (fixed in the drills' claim texts). Fixed here: 8 of the 9 flags."""

from __future__ import annotations

import pytest
from feedback_probes import claimed

from tests.expert_claims import answer_keys, flags_of_answer

CORPUS = "expert_pass87_answers.yaml"


def _flags_of(key: str) -> list[str]:
    return flags_of_answer(CORPUS, key)
LEFT = ":A048"  # 'The reassuring reading — "…" — doesn't survive contact': the quote its own span


@pytest.mark.parametrize("key", [key for key in answer_keys(CORPUS, "R", "H")
                                 if not key.endswith(LEFT)])
def test_a_belief_given_to_others_or_denied_raises_no_red_flag(key: str) -> None:
    assert _flags_of(key) == []


def test_the_lm_head_said_skipped_in_ones_own_words_is_still_named() -> None:
    text = "The missing 1.05 GB is the LM head, because it only runs on the last token."
    assert "lm-head-skipped" in claimed("decode-roofline-vs-measured", "embedding-why", text)


def test_head_dim_worked_as_hidden_over_heads_in_ones_own_words_is_still_named() -> None:
    text = "head_dim is hidden ÷ heads = 3,584 ÷ 16 = 224, so each token costs less."
    assert "head-dim-is-hidden-over-heads" in claimed("sliding-window-kv", "why-different", text)


def test_a_shortfall_blamed_on_compute_is_named() -> None:
    text = ("A 40% shortfall means the card has become compute-bound: the tensor cores "
            "saturate at that batch, so buy the second card.")
    assert "shortfall-is-compute" in claimed("llama31-8b-h100", "followup-observed-lower", text)


def test_compute_ruled_out_is_no_such_claim() -> None:
    text = ("It is not compute-bound at 96 sequences: decode is memory-bound, so look at the "
            "context measured on prompts only.")
    assert "shortfall-is-compute" not in claimed("llama31-8b-h100", "followup-observed-lower",
                                                 text)
