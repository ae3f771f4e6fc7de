"""Expert pass 94 (172 text answers, written before grading, graded unread on stop 77's d3d4c2b,
after pass 93's and corpus BZ's and CA's fixes): 2 of 86 right or hedged answers red-flagged
("Intuition says four users should split the card four ways", "Stalls are often blamed on KV
eviction"), 29 of 43 partly right answers missed (most a wrong figure said in passing), 7 of 43
wrong answers with no claim caught, 33 of 559 credits false, 4 sentences wrong. Its right and
hedged answers are kept as a guard."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, claims_of_answer, expert_answer, flags_of_answer
from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made

CORPUS = "expert_pass94_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "R", "H"))
def test_a_right_or_hedged_answer_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


def test_flops_per_token_at_every_batch_is_no_claim_about_the_bytes_read() -> None:
    # "FLOPs per token stay at the 12.9B level at every batch" is right: compute, not bytes
    assert claims_of_answer(CORPUS, "mixtral-moe-decode/what-moe-saves/P:A106") == []


def test_the_query_head_flag_names_no_figure_the_answer_did_not_give() -> None:
    # the answer worked out 1.31 MB per token; the flag's sentence once said "not 2.5 MiB"
    drill = find_drill("llama2-70b-mi300x")[0]
    made = claims_made(drill.step("1b"), expert_answer(CORPUS, "llama2-70b-mi300x/1b/W:A039"))
    sentences = {m.claim.id: m.sentence for m in made}
    assert "kv-heads-are-query-heads" in sentences
    assert "2.5 MiB" not in sentences["kv-heads-are-query-heads"]


@pytest.mark.parametrize(("key", "claim_id"), [
    ("multi-turn-growth/why-overstated/W:A115", "vllm-reserves-max-model-len"),
    ("long-context-tier/operations/W:A103", "compute-utilisation-as-signal"),
    ("prefill-vs-decode/stalls-and-levers/W:A147", "stall-blamed-on-memory"),
])
def test_a_wrong_answer_s_central_claim_is_named(key: str, claim_id: str) -> None:
    assert claim_id in claims_of_answer(CORPUS, key)


@pytest.mark.parametrize(("drill_id", "step_id", "text", "claim_id"), [
    # a belief given to others and then endorsed is the answer's own
    ("prefill-vs-decode", "stalls-and-levers",
     "The stall is usually blamed on KV eviction, and that's right: the cache is full.",
     "stall-blamed-on-memory"),
    ("llama2-70b-mi300x", "3c-explain",
     "Intuition says four users split the card four ways, and it's right: 9.6 tokens/s each.",
     "per-user-rate-split-evenly"),
])
def test_a_belief_given_to_others_then_endorsed_is_still_named(
        drill_id: str, step_id: str, text: str, claim_id: str) -> None:
    from tests.expert_claims import claims_named
    assert claim_id in claims_named(drill_id, step_id, text)
