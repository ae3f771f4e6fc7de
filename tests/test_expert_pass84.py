"""Expert pass 84 (172 text answers, written before grading in the mixed forms candidates type
under time pressure, graded unread on stop 73's commit add3aa0): 1 of 86 right or hedged
answers red-flagged (the rubric's "Called decode compute-bound" on 'People often say
"attention is quadratic, so long context is compute-bound" - but …'), 3 flags naming a claim
not made, 25 of 43 partly right answers missed and 6 of 43 wrong ones, 16 of 427 credits
false, no sentence wrong (one borderline: "0.9 is the default", 0.92 in recent vLLM). Fixed
here: a rubric red flag is not raised by a phrase others are said to hold and the sentence
turns against; a per-user rate said to halve is named as that; a block size said not to
change the saving; the default said as both."""

from __future__ import annotations

from tests.expert_claims import answer_keys, claims_of_answer, flags_of_answer
from trainer.drills.loader import find_drill

CORPUS = "expert_pass84_answers.yaml"


def _flags_of(key: str) -> list[str]:
    return flags_of_answer(CORPUS, key)


def test_a_phrase_others_are_said_to_hold_and_the_sentence_answers_raises_no_red_flag() -> None:
    assert _flags_of("decode-roofline-vs-measured/long-why/H:A016") == []


def test_the_phrase_said_plainly_still_raises_it() -> None:
    assert _flags_of("decode-roofline-vs-measured/long-why/W:A015") != []


def test_a_per_user_rate_said_to_halve_is_named_as_that() -> None:
    assert _flags_of("llama2-70b-mi300x/5a/P:A058") == ["per-user-rate-halves"]


def test_a_block_size_said_not_to_change_the_saving_is_named() -> None:
    assert "block-size-never-matters-for-sharing" in claims_of_answer(
        CORPUS, "prefix-caching/block-size-why/W:A151")


def test_right_and_hedged_answers_on_those_steps_raise_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 6 and all(_flags_of(key) == [] for key in keys)


def test_the_utilisation_default_is_said_for_old_and_recent_vllm() -> None:
    step = find_drill("observed-concurrency-lower")[0].step("action")
    says = next(c.says for c in step.wrong_claims if c.id == "utilization-to-the-whole-card")
    assert "0.9, 0.92 in recent vLLM" in says
