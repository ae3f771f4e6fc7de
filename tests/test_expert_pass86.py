"""Expert pass 86 (172 text answers, written before grading, graded unread on stop 74's commit
b1c840c): 5 of 86 hedged answers red-flagged, each for the belief it named to reject ("One
could argue that …. That fails", "DP attention sounds like the natural fix — … it fails",
"Don't be led … into setting max_model_len = 131,072 for everyone", a quoted proposal judged
half by half), 26 of 43 partly right answers missed and 7 of 43 wrong ones, 33 of 740 credits
false, one sentence wrong (a hybrid's concurrency "depends on context far less than a
transformer's": past ~532 tokens it falls as 1 ÷ context like one). Fixed here: four of the
five flags, the partly right answer's "would inflate", two of the wrong answers missed, and
the sentence. ("The 64 decode streams barely notice" was named too, then taken back: right
answers say it of a chunk sized to the target.)"""

from __future__ import annotations

from tests.expert_claims import answer_keys, claims_of_answer, flags_of_answer
from trainer.drills.loader import find_drill, load_rubric

CORPUS = "expert_pass86_answers.yaml"


def _flags_of(key: str) -> list[str]:
    return flags_of_answer(CORPUS, key)


def test_a_belief_one_could_argue_and_the_next_sentence_rejects_is_no_claim() -> None:
    assert _flags_of("deepseek-v3-mla-h200/experts-and-levers/H:A024") == []
    assert _flags_of("long-context-tier/pricing/H:A100") == []


def test_a_fix_that_sounds_natural_and_then_fails_is_no_claim() -> None:
    assert _flags_of("llama31-405b-h200-tp/fix/H:A072") == []


def test_advice_not_to_be_led_into_a_cap_for_everyone_is_no_claim() -> None:
    assert _flags_of("llama31-8b-h100/policy/H:A084") == []


def test_what_counting_only_the_active_share_would_inflate_is_no_claim() -> None:
    assert "only-active-experts-resident" not in claims_of_answer(
        CORPUS, "deepseek-v3-mla-h200/experts-and-levers/P:A022")


def test_a_gpu_that_time_slices_its_users_is_named() -> None:
    assert "gpu-time-slices-users" in claims_of_answer(
        CORPUS, "llama2-70b-mi300x/3c-explain/W:A051")


def test_fragmentation_blamed_for_the_overstated_estimate_is_named() -> None:
    assert "fragmentation-explains-overstatement" in claims_of_answer(
        CORPUS, "multi-turn-growth/why-overstated/W:A115")


def test_the_hybrids_concurrency_is_said_to_fall_like_a_transformers_at_long_context() -> None:
    drill = find_drill("hybrid-state-kv")[0]
    concept = load_rubric(drill.rubric).concept("hybrid-context-dependence")
    assert concept is not None and "far less" not in concept.label
    assert "1 ÷ context" in concept.label


def test_right_and_hedged_answers_on_those_steps_raise_nothing_but_the_quoted_proposal() -> None:
    # (left: '"Just raise max_model_len — paging means it costs nothing until used." The
    # first half is right …; the second isn't' still reads the quoted proposal as said)
    keys = [key for key in answer_keys(CORPUS, "R", "H") if not key.endswith(":A096")]
    assert len(keys) >= 10 and all(_flags_of(key) == [] for key in keys)
