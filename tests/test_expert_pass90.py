"""Expert pass 90 (172 text answers, written before grading, graded unread on stop 75's
f61924b): 3 of 86 right or hedged answers red-flagged ("Strike the idea that …" twice, and "…
1.5x, plus all-reduces between nodes that slow every step" read as sessions limited by
latency); 29 of 43 partly right answers missed and 5 of 43 wrong ones; 28 of 740 credits
false; one sentence wrong in --json ("about one FLOP per byte whatever the context": about 4
for Llama-3.1-8B's GQA). Fixed here: the three flags, the sentence, and two of the five wrong
answers ("Per-token pricing already handles it", "Tell product to buy: … we need … 1.67x the
cards")."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, flags_of_answer

CORPUS = "expert_pass90_answers.yaml"


@pytest.mark.parametrize("key", answer_keys(CORPUS, "H"))
def test_a_misconception_struck_out_raises_no_red_flag(key: str) -> None:
    assert flags_of_answer(CORPUS, key) == []


@pytest.mark.parametrize(("key", "flag"), [
    ("long-context-tier/pricing/W:A099", "per-token-is-enough"),
    ("observed-concurrency-lower/action/W:A131", "buy-before-measuring"),
])
def test_a_wrong_answer_the_pass_found_unflagged_is_named(key: str, flag: str) -> None:
    assert flag in flags_of_answer(CORPUS, key)


def test_decode_attention_is_said_to_do_a_few_flops_per_byte_not_one() -> None:
    from trainer.drills.loader import find_drill

    step = find_drill("prefill-vs-decode")[0].step("why-two-regimes")
    says = next(claim.says for claim in step.wrong_claims
                if claim.id == "intensity-grows-with-context")
    assert "one FLOP per byte" not in says and "about 4" in says
