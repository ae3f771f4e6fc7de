"""Expert pass 88 (172 text answers, written before grading, graded unread on 1746470, where
stop 75 began): 3 of 86 right or hedged answers red-flagged, each for a belief it gave to
someone else to reject it ("A junior might say …", "I used to think …, until …"); 25 of 43
partly right answers missed and 5 of 43 wrong ones; one wrong answer's plain flag named a claim
it did not make ("a prefill chunk rides along for free" read as the document's user paying
nothing); 25 of 656 credits false; two sentences wrong (the Mamba state's 8.7 MB said of each
layer, a chunk budget "about 512–2,048" the drill does not support; fixed in the claim texts).
Fixed here: the three flags, the plain flag, three partly right answers (flash-decoding split
"over the query heads", a preemption rate read as an oversized pool, a per-user name said to
share "everything after the name") and three of the five wrong answers (left: "two cards hold
4× the long sessions", excused by "two cards", and "TP=32 … and the KV per GPU keeps
shrinking", whose "KV per GPU" as the subject flagged "TP=4 to TP=8 the KV per GPU keeps
halving" too and was taken back by the stop's review)."""

from __future__ import annotations

import pytest
from feedback_probes import claimed

from tests.expert_claims import answer_keys, flags_of_answer

CORPUS = "expert_pass88_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "H"))
def test_a_belief_given_to_a_junior_or_to_ones_past_self_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


@pytest.mark.parametrize(("key", "flag"), [
    ("llama31-405b-h200-tp/why-less/W:A067", "weights-copied-per-node"),
    ("multi-turn-growth/why-overstated/W:A115", "fragmentation-explains-the-gap"),
    ("observed-concurrency-lower/action/W:A131", "buy-before-measuring"),
    ("decode-roofline-vs-measured/long-why/P:A014", "split-kv-over-query-heads"),
    ("long-context-tier/operations/P:A102", "preemptions-mean-oversized"),
    ("prefix-caching/when-not/P:A154", "blocks-hashed-on-own-contents"),
])
def test_a_wrong_claim_the_pass_found_unflagged_is_named(key: str, flag: str) -> None:
    assert flag in flags_of_answer(CORPUS, key)


def test_a_chunk_riding_along_for_free_is_not_read_as_the_documents_user_paying_nothing(
        ) -> None:
    flags = flags_of_answer(CORPUS, "chunked-prefill-tpot/trade-off/W:A003")
    assert "chunking-free-for-the-document" not in flags
    assert "bigger-chunks-always-better" in flags  # its own claim: the whole 8,192 in a step


def test_a_junior_might_say_then_but_still_claims_what_follows_the_but() -> None:
    text = ("A junior might say the weights are the problem, but really only the ~37B active "
            "parameters need HBM, so subtract 37 GB.")
    assert "only-active-need-residence" in claimed("deepseek-v3-mla-h200",
                                                   "experts-and-levers", text)


def test_ones_own_would_say_is_still_a_claim() -> None:
    text = "I would say only the ~37B active parameters need HBM, so subtract 37 GB."
    assert "only-active-need-residence" in claimed("deepseek-v3-mla-h200",
                                                   "experts-and-levers", text)


def test_a_figure_that_would_over_count_is_dismissed() -> None:
    text = ("All 673 GB stay resident; subtracting only 37 GB would wildly over-count the "
            "budget.")
    assert "only-active-experts-resident" not in claimed("deepseek-v3-mla-h200",
                                                         "experts-and-levers", text)


def test_subtracting_only_the_active_weights_said_plainly_is_still_named() -> None:
    text = "Subtract only 37 GB: the other experts can be offloaded, so the budget is ~946 GB."
    assert "only-active-experts-resident" in claimed("deepseek-v3-mla-h200",
                                                     "experts-and-levers", text)


def test_the_mamba_states_size_is_said_of_all_28_layers_not_of_each() -> None:
    from trainer.drills.loader import find_drill

    step = find_drill("hybrid-state-kv")[0].step("how-concurrency-scales")
    says = " ".join(claim.says for claim in step.wrong_claims if claim.id.startswith("state-"))
    assert "311 KB a layer, 8.7 MB over the 28" in " ".join(says.split())


def test_the_stall_flag_gives_the_chunk_no_budget_the_drill_does_not_support() -> None:
    from trainer.drills.loader import find_drill

    step = find_drill("prefill-vs-decode")[0].step("stalls-and-levers")
    says = next(claim.says for claim in step.wrong_claims if claim.id == "bigger-chunk-fixes-stall")
    assert "2,048" not in says and "14–16 ms" in says


def test_split_kv_said_along_the_sequence_is_no_claim_of_query_heads() -> None:
    text = ("Flash-decoding splits each sequence's KV along its length, not over the query "
            "heads, and reduces the partial softmax results.")
    assert "split-kv-over-query-heads" not in claimed("decode-roofline-vs-measured", "long-why",
                                                       text)


def test_preemptions_read_as_a_pool_too_small_are_no_claim_of_oversizing() -> None:
    text = ("A preemption rate above 1% means the pool is too small; an oversized pool shows "
            "no preemptions and low KV usage.")
    assert "preemptions-mean-oversized" not in claimed("long-context-tier", "operations", text)
