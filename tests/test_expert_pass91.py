"""Expert pass 91 (172 text answers, written before grading, graded unread on stop 76's start,
2be072f): 4 of 86 right or hedged answers red-flagged ("A junior might hand the chunk the whole
25 ms, but …", "It's not that long-context decode turns compute-bound", "Dropping the 'unused'
experts is not a lever", "'Just buy 40% more GPUs' would pay for a measuring error"); 19 of 43
partly right answers missed and 3 of 43 wrong ones; 22 of 573 credits false; no sentence
wrong. Fixed here: three of the four flags, the three wrong answers, seven of the partly right
ones, and a flag that named a claim the answer did not make (A030's "constant Mamba state")."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, flags_of_answer

CORPUS = "expert_pass91_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "H"))
def test_a_misconception_set_aside_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


@pytest.mark.parametrize(("key", "flag"), [
    ("disaggregated-prefill/when-it-pays/W:A027", "kv-transfer-sub-millisecond"),
    ("mixtral-moe-decode/serving-levers/W:A111", "prune-to-active-experts"),
    ("sliding-window-kv/why-different/W:A159", "windows-shrink-both-alike"),
    ("decode-roofline-vs-measured/embedding-why/P:A006", "embedding-cached-or-prefill-only"),
    ("deepseek-v3-mla-h200/experts-and-levers/P:A022", "dp-attention-full-8x"),
    ("llama2-70b-mi300x/5c/P:A062", "kv-seq-independent-of-context"),
    ("multi-turn-growth/why-overstated/P:A114", "reply-not-cached-until-done"),
    ("observed-concurrency-lower/evidence/P:A126", "logged-concurrency-is-the-sessions"),
    ("speculative-decoding/when-it-pays/P:A166", "draft-needs-no-shared-tokenizer"),
])
def test_a_wrong_claim_the_pass_found_unflagged_is_named(key: str, flag: str) -> None:
    assert flag in flags_of_answer(CORPUS, key)


def test_a_constant_mamba_state_is_not_said_to_grow() -> None:
    key = "hybrid-state-kv/how-concurrency-scales/P:A030"
    flags = flags_of_answer(CORPUS, key)
    assert "state-grows" not in flags and flags  # its 32x at 128k is still flagged
