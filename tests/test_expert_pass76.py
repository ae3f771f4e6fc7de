"""Expert pass 76 (172 text answers on all 43 text steps, written before grading, graded on the
tree after pass 75's fixes): 2 of 86 right or hedged answers red-flagged, both hedged ("It's
not that the LM head is skipped — …", "You'd expect fp8 to speed it up, but no — … the same
138 GB of weights"), 17 of 43 partly right and 2 of 43 wrong answers missed (the fewest yet),
15 of 519 credit statements false, one concept line wrong ("the chunk's compute hides behind
that read", where the drill's FLOPs decide). Fixed here: a "not" before a phrase negative only
in its verb ("is skipped", "avoids") still denies it; "the same 138 GB of weights" keeps the
weights; the chunked-prefill line says the step costs the larger of the read and the FLOPs;
and five claims the partly right answers made, three of them written by earlier writers too
(the budget that "roughly doubles" on a second node, a 128k session worth "about 8" chat
sessions, vLLM keeping a conversation's KV while the user types)."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, claims_of_answer
from trainer.drills.loader import find_drill, load_rubric

CORPUS = "expert_pass76_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


@pytest.mark.parametrize("key", [
    "decode-roofline-vs-measured/embedding-why/H:A008",  # F1
    "decode-roofline-vs-measured/embedding-why/R:A005",
    "llama2-70b-mi300x/5a/H:A060",  # F2
    "llama2-70b-mi300x/5a/R:A057",
    "llama31-405b-h200-tp/why-less/R:A065", "llama31-405b-h200-tp/why-less/H:A068",
    "llama31-8b-h100/followup-128k-policy/R:A085",
    "llama31-8b-h100/followup-128k-policy/H:A088",
    "llama31-8b-h100/policy/R:A081", "llama31-8b-h100/policy/H:A084",
    "multi-turn-growth/why-overstated/R:A113", "multi-turn-growth/why-overstated/H:A116",
    "paged-blocks-vllm/why-paging/R:A133", "paged-blocks-vllm/why-paging/H:A136",
])
def test_right_and_hedged_answers_claim_nothing(key: str) -> None:
    assert _said(key) == []


@pytest.mark.parametrize(("key", "claim"), [
    ("llama31-405b-h200-tp/why-less/P:A066", "budget-only-doubles"),
    ("llama31-8b-h100/followup-128k-policy/P:A086", "long-session-few-times-chat"),
    ("llama31-8b-h100/policy/P:A082", "prefix-caching-off-in-v1"),
    ("multi-turn-growth/why-overstated/P:A114", "turns-kept-between-requests"),
    ("paged-blocks-vllm/why-paging/P:A134", "default-block-size-32"),
])
def test_the_missed_claim_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_the_head_skipped_said_plainly_is_still_claimed() -> None:
    said = claims_named("decode-roofline-vs-measured", "embedding-why",
                        "The LM head is skipped on decode, so the 1.05 GB gap is the head.")
    assert "lm-head-served-from-cache" in said


def test_the_weights_halving_beside_half_the_kv_is_still_claimed() -> None:
    said = claims_named("llama2-70b-mi300x", "5a",
                        "Same ~34 ms: half the KV bytes each, and the weight read halves too "
                        "since fp8 applies to them as well.")
    assert "fp8-kv-halves-the-weights-too" in said


def test_a_budget_that_triples_is_right() -> None:
    said = claims_named("llama31-405b-h200-tp", "why-less",
                        "TP=16: 1,966 − 487 = 1,479 GB, 2.98× the budget, more than 2× because "
                        "the weights are paid once; each token costs double, so 1.5× sessions.")
    assert "budget-only-doubles" not in said


def test_the_chunked_prefill_line_lets_the_flops_decide() -> None:  # S1
    drill = find_drill("chunked-prefill-tpot")[0]
    labels = [c.label for d in load_rubric(drill.rubric).dimensions for c in d.concepts
              if c.label.startswith("Decode and chunk tokens share")]
    assert labels and all("hides behind" not in label and "larger of that read and the FLOPs"
                          in label for label in labels)
