"""Expert pass 75 (172 text answers on all 43 text steps, written before grading, graded on the
tree after pass 74's fixes): 1 of 86 right or hedged answers red-flagged ("just raising
max_model_len isn't free even with paging" read as the proposal), 1 flag naming a claim not
made (DP attention's "full 8×" on an answer where TP gives it), 21 of 43 partly right and 3 of
43 wrong answers missed, 18 of 431 credit statements false, one garbled credit line ("8× the
node's bytes"). Fixed here: the proposal judged "isn't free" is rejected; "TP gives the full 8×"
is the latent sharded, not DP attention; and eight claims the partly right and wrong answers
made (generated tokens "don't go in the cache", written by three writers in a row; DP attention
on by default; a chat cap at the average; raising the cap for everyone with preemption to sort
it out; prefix caching that doubles the chats beside FP8 KV; a 32-token default block; one
forward pass per drafted token)."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, claims_of_answer
from trainer.drills.loader import find_drill, load_rubric

CORPUS = "expert_pass75_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


@pytest.mark.parametrize("key", [
    "long-context-tier/pool-policy/H:A096",  # F1
    "long-context-tier/pool-policy/R:A093",
    "deepseek-v3-mla-h200/experts-and-levers/R:A021",
    "deepseek-v3-mla-h200/experts-and-levers/H:A024",
    "deepseek-v3-mla-h200/why-mla/R:A017", "deepseek-v3-mla-h200/why-mla/H:A020",
    "llama2-70b-mi300x/1b/R:A037", "llama2-70b-mi300x/1b/H:A040",
    "multi-turn-growth/policy/R:A117", "multi-turn-growth/policy/H:A120",
    "prefix-caching/block-size-why/R:A149", "prefix-caching/block-size-why/H:A152",
    "speculative-decoding/when-it-pays/R:A165", "speculative-decoding/when-it-pays/H:A168",
])
def test_right_and_hedged_answers_claim_nothing(key: str) -> None:
    assert _said(key) == []


@pytest.mark.parametrize(("key", "claim"), [
    ("llama2-70b-mi300x/1b/P:A038", "generated-tokens-held-apart"),
    ("deepseek-v3-mla-h200/experts-and-levers/P:A022", "dp-attention-on-by-default"),
    ("long-context-tier/pool-policy/P:A094", "chat-cap-at-the-average"),
    ("long-context-tier/pool-policy/W:A095", "raise-cap-for-everyone"),
    ("multi-turn-growth/policy/P:A118", "prefix-caching-doubles-chats"),
    ("prefix-caching/block-size-why/P:A150", "default-block-size-32"),
    ("speculative-decoding/when-it-pays/W:A167", "verify-costs-a-step-per-token"),
])
def test_the_missed_claim_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_tp_giving_the_full_8x_is_no_dp_attention_claim() -> None:  # F2
    assert "dp-attention-full-8x" not in _said("deepseek-v3-mla-h200/why-mla/W:A019")


def test_verification_in_one_forward_pass_is_still_right() -> None:
    text = ("Verifying the 5 drafted tokens is one forward pass of the target, about one 27 ms "
            "step at batch 1, so α = 0.8 gives ~3x.")
    assert "verify-costs-a-step-per-token" not in claims_named("speculative-decoding",
                                                               "when-it-pays", text)


def test_fp8_beside_prefix_caching_that_doubles_is_still_its_own() -> None:
    text = "Prefix caching the system prompt takes us from 64 to 77, and FP8 KV doubles that."
    assert "prefix-caching-doubles-chats" not in claims_named("multi-turn-growth", "policy",
                                                              text)


def test_the_latent_credit_line_says_what_the_node_holds() -> None:  # S1
    drill = find_drill("deepseek-v3-mla-h200")[0]
    labels = [c.label for d in load_rubric(drill.rubric).dimensions for c in d.concepts
              if "no heads to split" in c.label]
    assert labels and all("node holds 8 copies" in label for label in labels)
