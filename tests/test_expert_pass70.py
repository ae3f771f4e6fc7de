"""Expert pass 70 (172 text answers on all 43 text steps, written before grading, graded on the
tree after pass 69's fixes): no right or hedged answer red-flagged, 3 flags naming a claim not
made, 17 of 43 partly right and 4 of 43 wrong answers missed, 26 of 414 credit statements false.
Of the false credit, the FP8-KV idea ("half the bytes per token, about twice the sessions") was
credited to answers that gave FP8 another factor (1.5×, 4×) in pass 69 and pass 70 alike: a
concept that states a factor (`factor:` in the rubric) earns nothing where the mention is said
with another factor near it. Checked on the expert's answers and in other words, through the
real matcher."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, expert_answer
from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.model import Concept
from trainer.marking.prose import concept_credit


def _fp8_kv(drill_id: str) -> Concept:
    rubric = load_rubric(find_drill(drill_id)[0].rubric)
    return next(c for d in rubric.dimensions for c in d.concepts if c.id == "fp8-kv")


def _credit(drill_id: str, text: str) -> float:
    return float(concept_credit(_fp8_kv(drill_id), text)[0])


@pytest.mark.parametrize("key", [
    "deepseek-v3-mla-h200/experts-and-levers/P:A022",  # C3: "about 4× … quadruples"
    "llama31-8b-h100/policy/P:A082",                   # C15: "around 1.5x more sessions"
])
def test_fp8_kv_said_with_another_factor_earns_nothing(key: str) -> None:
    assert _credit(key.split("/")[0], expert_answer("expert_pass70_answers.yaml", key)) == 0


@pytest.mark.parametrize("key", [
    "deepseek-v3-mla-h200/experts-and-levers/R:A021",
    "deepseek-v3-mla-h200/experts-and-levers/H:A024",
    "llama31-8b-h100/policy/R:A081",
    "llama31-8b-h100/policy/H:A084",
])
def test_fp8_kv_said_rightly_beside_them_keeps_its_credit(key: str) -> None:
    assert _credit(key.split("/")[0], expert_answer("expert_pass70_answers.yaml", key)) == 1


@pytest.mark.parametrize("text", [
    "Switch the KV cache to fp8, which triples the sessions on the card.",
    "fp8 kv cuts bytes per token to a quarter, so 4x the users.",
    "With an fp8 kv cache we'd get maybe 1.3x, the scales eat the rest.",
])
def test_another_factor_in_other_words_earns_nothing(text: str) -> None:
    assert _credit("llama31-8b-h100", text) == 0


@pytest.mark.parametrize("text", [
    # the idea's factor, roughly
    "fp8 kv halves bytes per token: ~1.9x the sessions once the reserve is counted.",
    # a factor of something else further on, or far from the idea's
    "Put long sessions in an fp8 kv pool, 6 per card, priced at 16× a chat session.",
    "GQA already saves 8x, and fp8 kv doubles the sessions again.",
    # no factor at all
    "Turn on the fp8 kv cache: 193 sessions instead of 96.",
])
def test_fp8_kv_said_without_another_factor_keeps_its_credit(text: str) -> None:
    assert _credit("llama31-8b-h100", text) > 0


def test_a_product_in_the_working_is_no_factor() -> None:
    # "2 × 32 × 8 × 128 × 1" multiplies: no "2×" or "32×" said of FP8 KV
    assert _credit("llama31-8b-h100",
                   "fp8 kv: 2 × 32 × 8 × 128 × 1 = 64 KiB per token, so 193 sessions.") == 1


# F2: a wrong answer proposing DP attention for the dense 405B is told what it claims (the
# attention copies are not negligible), not that TP=16 fails, which it did not propose
def test_dp_attention_for_a_dense_model_is_answered_as_such() -> None:
    named = claims_named("llama31-405b-h200-tp", "fix",
                         expert_answer("expert_pass70_answers.yaml",
                                       "llama31-405b-h200-tp/fix/W:A071"))
    assert "attention-copies-negligible" in named
    assert "tp16-doubles-capacity" not in named


@pytest.mark.parametrize("key", ["llama31-405b-h200-tp/fix/R:A069",
                                 "llama31-405b-h200-tp/fix/H:A072"])
def test_right_answers_on_the_405b_fix_stay_unflagged(key: str) -> None:
    assert claims_named("llama31-405b-h200-tp", "fix",
                        expert_answer("expert_pass70_answers.yaml", key)) == []


def test_a_step_said_compute_bound_is_answered_for_the_weight_read_too() -> None:
    # F1: "the weight part … is compute-bound" was answered only about attention arithmetic
    step = find_drill("llama2-70b-mi300x")[0].step("5a")
    says = next(c.says for c in step.wrong_claims if c.id == "compute-grows")
    assert "weight read" in says and "memory-bound" in says
    assert "compute-grows" in claims_named("llama2-70b-mi300x", "5a", expert_answer(
        "expert_pass70_answers.yaml", "llama2-70b-mi300x/5a/P:A058"))
