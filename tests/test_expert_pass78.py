"""Expert pass 78 (172 text answers on all 43 text steps, written before grading, graded on
stop 71's last tree): 1 of 86 right or hedged answers red-flagged, 1 flag naming a claim not
made, 21 of 43 partly right and 7 of 43 wrong answers missed, 17 of 413 credits false, no
sentence wrong. Fixed here: a claim answered where it is set up ("a factor 2 on the latent --
don't, it's one vector"); a trailing clause of its own is no condition of the claim before it
("so swap wins; recompute only on slow links or MHA"); "than with 16-token blocks" no longer
excuses bigger blocks said to share more; and claims two answers made that no earlier writer
had (vLLM keeping the history between turns, most recently used blocks evicted first)."""

from __future__ import annotations

import pytest

from tests.expert_claims import answer_keys, claims_named, claims_of_answer

CORPUS = "expert_pass78_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


def test_a_misconception_named_to_be_refused_with_a_bare_don_t_is_not_claimed() -> None:
    assert _said("deepseek-v3-mla-h200/why-mla/H:A020") == []


def test_a_clause_of_its_own_after_the_claim_is_no_condition_of_it() -> None:
    assert "mha-favours-swapping" not in _said("swap-or-recompute/policy/P:A170")


@pytest.mark.parametrize(("key", "claim"), [
    ("multi-turn-growth/why-overstated/P:A114", "turns-kept-between-requests"),
    ("prefix-caching/block-size-why/W:A151", "bigger-blocks-share-more"),
    ("prefix-caching/when-not/P:A154", "most-recent-evicted-first"),
])
def test_the_missed_claim_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_right_and_hedged_answers_on_those_steps_claim_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 10 and all(_said(key) == [] for key in keys)


def test_an_arrow_before_advice_opens_a_statement_of_its_own() -> None:
    said = claims_named("prefix-caching", "when-not",
                        "~0 when: per-user content first (match runs block by block from "
                        "token 0) -> put static text first; prefix < 1 block")
    assert "per-user-part-first" not in said


def test_putting_the_per_user_part_first_is_still_claimed() -> None:
    said = claims_named("prefix-caching", "when-not",
                        "Put the per-user content first and the system prompt after it.")
    assert "per-user-part-first" in said
