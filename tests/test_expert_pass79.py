"""Expert pass 79 (172 text answers, written before grading, graded unread on stop 72's
commit 8cfc85e) and corpus BI (take-home paragraphs, measured unread on 3ff4ce9): 1 of 86
right or hedged answers and 5 of 129 right BI answers claimed wrongly. Fixed here: a
rejection before the colon that gives its reason ("sounds harmless — it isn't: it's a promise
of 16 GiB"); a proposal said to fall short or do harm just after it ("… doesn't cover their
cost", "… would directly cut chat capacity"); a cause "less likely" than another; head_dim
worked from the query heads; all experts resident because any token can reach any; and a
hybrid's edge said to grow at short context named as that, not as a growing state."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, claims_named, claims_of_answer

CORPUS = "expert_pass79_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


def test_a_rejection_before_the_colon_that_gives_its_reason_claims_nothing() -> None:
    assert _said("long-context-tier/pool-policy/H:A096") == []


def test_a_proposal_said_to_do_harm_is_not_proposed() -> None:
    assert "raise-cap-for-everyone" not in _said("long-context-tier/pool-policy/P:A094")


@pytest.mark.parametrize(("key", "claim"), [
    ("long-context-tier/pool-policy/P:A094", "vllm-reserves-max-model-len"),
    ("hybrid-state-kv/how-concurrency-scales/P:A030", "short-context-advantage-grows"),
])
def test_the_claim_made_is_the_one_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_an_edge_that_grows_is_no_state_that_grows() -> None:
    assert "state-grows" not in _said("hybrid-state-kv/how-concurrency-scales/P:A030")


def test_right_and_hedged_answers_on_those_steps_claim_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 4 and all(_said(key) == [] for key in keys)


# Corpus BI's right answers (tests/corpus/blind_claims_bi.yaml) that were claimed wrongly
@pytest.mark.parametrize(("drill", "step", "text", "claim"), [
    ("long-context-tier", "pricing",
     "Long sessions hold a lot more memory for much longer, so charging per token like chat "
     "doesn't cover their cost. I'd charge for how much memory they use over time.",
     "priced-like-chat"),
    ("observed-concurrency-lower", "hypotheses",
     "The most likely reason is that sessions are longer than the 4,096 tokens we planned. "
     "Fragmentation and reserving max length are less likely with vLLM.",
     "vllm-reserves-max-model-len"),
    ("llama2-70b-mi300x", "1b",
     "- d_head = 128, the width of one head (hidden 8,192 ÷ 64 query heads, which happens to "
     "hold for Llama-2).",
     "kv-heads-are-query-heads"),
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "Even though a token only uses a small part of the model, all the experts have to be "
     "loaded because any token can be routed to any expert.",
     "every-token-uses-all-experts"),
])
def test_a_right_answer_of_corpus_bi_claims_nothing(drill: str, step: str, text: str,
                                                     claim: str) -> None:
    assert claim not in claims_named(drill, step, text)


# Corpus BJ's right answers that were claimed wrongly
@pytest.mark.parametrize(("drill", "step", "text", "claim"), [
    ("deepseek-v3-mla-h200", "experts-and-levers",
     "Paging experts from host over PCIe per step is hopeless on latency, so all 671B sit in "
     "HBM.", "offload-cold-experts"),
    ("llama2-70b-mi300x", "5c",
     "Two regimes to remember: W-dominated (batch freely) and KV-dominated (each user costs "
     "linear latency).", "free-once-kv-dominates"),
    ("long-context-tier", "pool-policy",
     "A global max_model_len bump turns that into a risk on every chat replica.",
     "raise-cap-for-everyone"),
])
def test_a_right_answer_of_corpus_bj_claims_nothing(drill: str, step: str, text: str,
                                                     claim: str) -> None:
    assert claim not in claims_named(drill, step, text)


def test_a_cause_ranked_less_likely_by_the_claim_itself_is_still_claimed() -> None:
    said = claims_named("observed-concurrency-lower", "hypotheses",
                        "Context length is less likely since the gateway logs are the actual "
                        "prompts.")
    assert "prompt-context-ruled-out" in said
