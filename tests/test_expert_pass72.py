"""Expert pass 72 (172 text answers on all 43 text steps, written before grading, graded on the
tree after pass 71's fixes): 2 of 86 right or hedged answers red-flagged, 4 of 62 flags wrong,
23 of 43 partly right and 3 of 43 wrong answers missed, 10 of 401 credit statements false (pass
71: 34 of 518), one sentence dated. Fixed here: a proposal called premature is rejected, not
made; a framing that "ignores the KV" is criticised, not claimed; "40% more sessions" buys no
cards; "check the tail" sizes no pool; two calm wrong multiples; and three misreadings of
vLLM's defaults the pass (and pass 71) found unflagged: chunked prefill off in V1,
max_model_len lowered by itself, preemption swapping to CPU."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, expert_answer
from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.model import Concept
from trainer.marking.prose import concept_credit

CORPUS = "expert_pass72_answers.yaml"


def _said(key: str) -> list[str]:
    drill, step, _ = key.split("/")
    return claims_named(drill, step, expert_answer(CORPUS, key))


@pytest.mark.parametrize("key", [
    "llama2-70b-mi300x/5c/R:A061", "llama2-70b-mi300x/5c/H:A064",  # F1
    "observed-concurrency-lower/action/R:A129",
    "observed-concurrency-lower/action/H:A132",  # F2
    "observed-concurrency-lower/evidence/R:A125", "observed-concurrency-lower/evidence/H:A128",
    "paged-blocks-vllm/refusal/R:A137", "paged-blocks-vllm/refusal/H:A140",
    "prefill-vs-decode/stalls-and-levers/R:A145", "prefill-vs-decode/stalls-and-levers/H:A148",
])
def test_right_and_hedged_answers_claim_nothing(key: str) -> None:
    assert _said(key) == []


def test_fp8_giving_40_percent_more_sessions_buys_no_cards() -> None:  # F3
    assert "buy-before-measuring" not in _said("observed-concurrency-lower/action/P:A130")


@pytest.mark.parametrize("text", [
    "Ordering the extra GPUs today would be premature; read the KV gauge first.",
    "Buying 1.7x the cards now would be unwise before the start-up log is read.",
])
def test_a_purchase_called_premature_is_rejected(text: str) -> None:
    assert "buy-before-measuring" not in claims_named("observed-concurrency-lower", "action",
                                                      text)


def test_buying_now_is_still_a_claim() -> None:
    said = claims_named("observed-concurrency-lower", "action",
                        "We're 40% short, so buy 1.7x the GPUs now and sort the rest later.")
    assert "buy-before-measuring" in said


@pytest.mark.parametrize(("key", "claim"), [
    ("observed-concurrency-lower/evidence/P:A126", "preemptions-swap-to-cpu"),
    ("prefill-vs-decode/stalls-and-levers/P:A146", "chunked-prefill-off-in-v1"),
])
def test_a_misread_engine_default_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


@pytest.mark.parametrize("text", [
    "If one request doesn't fit, vLLM automatically lowers max_model_len and logs a warning.",
    "vLLM auto-lowers max_model_len to whatever fits, so it always comes up.",
])
def test_max_model_len_lowered_by_itself_is_named(text: str) -> None:
    assert "vllm-never-refuses" in claims_named("paged-blocks-vllm", "refusal", text)


def test_max_model_len_not_lowered_by_itself_is_not() -> None:
    text = "It refuses with a ValueError; it does not lower max_model_len automatically."
    assert claims_named("paged-blocks-vllm", "refusal", text) == []


def test_preemption_recomputed_in_v1_is_no_swap_claim() -> None:
    text = ("num_preemptions_total: requests evicted when KV ran out; V1 recomputes them, "
            "older V0 swapped them out to CPU.")
    assert "preemptions-swap-to-cpu" not in claims_named("observed-concurrency-lower",
                                                         "evidence", text)


def test_the_host_memory_flag_says_what_v1_does_with_a_preempted_sequence() -> None:  # S1
    step = find_drill("llama2-70b-mi300x")[0].step("2d")
    says = next(c.says for c in step.wrong_claims if c.id == "paged-cache-spills-to-host")
    assert "recomputed" in says and "swap space only parks" not in says


@pytest.mark.parametrize(("key", "claim"), [
    ("llama31-8b-h100/followup-128k-policy/P:A086", "long-session-few-times-chat"),  # M13
    ("long-context-tier/pool-policy/P:A094", "fp8-kv-more-than-doubles"),  # M14
])
def test_a_calm_wrong_multiple_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


@pytest.mark.parametrize("key", [
    "llama31-8b-h100/followup-128k-policy/R:A085", "llama31-8b-h100/followup-128k-policy/H:A088",
    "long-context-tier/pool-policy/R:A093", "long-context-tier/pool-policy/H:A096",
])
def test_the_right_multiples_beside_them_claim_nothing(key: str) -> None:
    assert _said(key) == []


def _tail_concept() -> Concept:
    rubric = load_rubric(find_drill("littles-law-capacity")[0].rubric)
    return next(c for d in rubric.dimensions for c in d.concepts
                if c.id == "tail-context-capacity")


def test_checking_the_tail_says_nothing_of_how_the_pool_is_sized() -> None:  # C3
    text = expert_answer(CORPUS, "littles-law-capacity/plan/H:A036")
    assert concept_credit(_tail_concept(), text)[0] == 0


def test_the_tail_with_its_figure_still_earns() -> None:
    text = "Size on the mean; the 32k tail sets max_model_len and admission, capped or routed."
    assert concept_credit(_tail_concept(), text)[0] > 0
