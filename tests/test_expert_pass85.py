"""Expert pass 85 (172 text answers, written before grading, graded unread on stop 74's
starting commit 2bda7bb): 0 of 86 right or hedged answers red-flagged, 2 flags naming a claim
not made ("Framed concurrency as a FLOPs question" on "GQA cuts the attention FLOPs by the
same 8x"; GPU memory named for "GPU utilisation drops"), 20 of 43 partly right answers missed
and 2 of 43 wrong ones, 13 of 421 credits false, no sentence wrong. Fixed here: both wrong
answers missed, both flags of the wrong claim, a partly right answer's eager mode, and a cap
credited from what the answer called tempting and then turned down."""

from __future__ import annotations

from tests.expert_claims import answer_keys, claims_of_answer, expert_answer, flags_of_answer
from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.prose import concept_credit

CORPUS = "expert_pass85_answers.yaml"


def _flags_of(key: str) -> list[str]:
    return flags_of_answer(CORPUS, key)


def test_eager_mode_run_to_trim_launch_overhead_is_named() -> None:
    assert "eager-cuts-launch-overhead" in claims_of_answer(
        CORPUS, "decode-roofline-vs-measured/batch1-why/P:A010")


def test_gqa_said_to_cut_the_attention_flops_is_named_as_that_not_as_flops_framing() -> None:
    assert _flags_of("llama2-70b-mi300x/2c-why/P:A042") == ["gqa-cuts-attention-flops"]


def test_a_cap_raised_for_everyone_as_fine_under_paging_is_named() -> None:
    assert "raise-it-paging-covers-it" in claims_of_answer(
        CORPUS, "long-context-tier/pool-policy/W:A095")


def test_offloading_idle_experts_is_named_though_the_answer_says_all_8() -> None:
    assert "offload-inactive-experts" in claims_of_answer(
        CORPUS, "mixtral-moe-decode/serving-levers/W:A111")


def test_gpu_utilisation_is_not_named_as_gpu_memory() -> None:
    claims = claims_of_answer(CORPUS, "multi-turn-growth/policy/W:A119")
    assert "alert-on-gpu-memory" not in claims and "compute-utilisation-says-stale" in claims


def test_a_cap_named_inside_what_is_called_tempting_and_turned_down_earns_no_lever() -> None:
    drill = find_drill("llama31-8b-h100")[0]
    concept = load_rubric(drill.rubric).concept("per-tier-context-cap")
    assert concept is not None
    text = expert_answer(CORPUS, "llama31-8b-h100/followup-observed-lower/H:A092")
    assert concept_credit(concept, text)[0] == 0


def test_right_and_hedged_answers_on_those_steps_raise_nothing() -> None:
    keys = answer_keys(CORPUS, "R", "H")
    assert len(keys) == 12 and all(_flags_of(key) == [] for key in keys)
