"""Expert pass 73 (172 text answers on all 43 text steps, written before grading, graded on the
tree at the start of stop 71): 1 of 86 right or hedged answers red-flagged, 2 of 59 flags
naming a claim not made, 21 of 43 partly right and 6 of 43 wrong answers missed, 32 of 510
credit statements false (pass 72: 10 of 401). Fixed here: an embedding read in full is its own
claim (it was the LM head's); a GPU-utilisation rule said with "if it's near 100%"; a share of
experts worked out wrong at batch 64; bigger chunks said to lower TPOT; "even with hits, TTFT
doesn't change"; fragmentation budgeted as a 20-30% margin or blamed for "~4x at small block
sizes"; the logged X read as the average concurrency; gpu_memory_utilization a fraction of
the free memory; the preemption counter read as a queue; max_model_len cut to the average;
speculation said to slow a memory-bound target; generated tokens held apart from N; and the
cache-dtype credit, which promised "its bytes per element" where only the dtype was named."""

from __future__ import annotations

import pytest

from tests.expert_claims import claims_named, claims_of_answer
from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.prose import concept_credit

CORPUS = "expert_pass73_answers.yaml"


def _said(key: str) -> list[str]:
    return claims_of_answer(CORPUS, key)


@pytest.mark.parametrize("key", [
    "chunked-prefill-tpot/trade-off/R:A001", "chunked-prefill-tpot/trade-off/H:A004",
    "decode-roofline-vs-measured/embedding-why/R:A005",
    "decode-roofline-vs-measured/embedding-why/H:A008",
    "littles-law-capacity/plan/R:A033", "littles-law-capacity/plan/H:A036",
    "llama2-70b-mi300x/1b/R:A037", "llama2-70b-mi300x/1b/H:A040",
    "llama31-405b-h200-tp/why-less/R:A065", "llama31-405b-h200-tp/why-less/H:A068",
    "llama31-8b-h100/policy/R:A081", "llama31-8b-h100/policy/H:A084",
    "long-context-tier/operations/R:A101", "long-context-tier/operations/H:A104",
    "mixtral-moe-decode/what-moe-saves/R:A105", "mixtral-moe-decode/what-moe-saves/H:A108",
    "multi-turn-growth/why-overstated/R:A113", "multi-turn-growth/why-overstated/H:A116",
    "observed-concurrency-lower/action/R:A129", "observed-concurrency-lower/action/H:A132",
    "observed-concurrency-lower/evidence/R:A125", "observed-concurrency-lower/evidence/H:A128",
    "paged-blocks-vllm/refusal/R:A137", "paged-blocks-vllm/refusal/H:A140",
    "paged-blocks-vllm/why-paging/R:A133", "paged-blocks-vllm/why-paging/H:A136",
    "prefill-vs-decode/stalls-and-levers/R:A145", "prefill-vs-decode/stalls-and-levers/H:A148",
    "prefix-caching/when-not/R:A153", "prefix-caching/when-not/H:A156",
    "speculative-decoding/when-it-pays/R:A165",
])
def test_right_and_hedged_answers_claim_nothing(key: str) -> None:
    assert _said(key) == []


@pytest.mark.parametrize(("key", "claim"), [
    ("decode-roofline-vs-measured/embedding-why/P:A006", "whole-embedding-read"),
    ("long-context-tier/operations/P:A102", "gpu-utilisation-watched-for-size"),
    ("long-context-tier/operations/W:A103", "gpu-utilisation-watched-for-size"),
    ("mixtral-moe-decode/what-moe-saves/P:A106", "share-of-experts-at-batch-64"),
    ("prefill-vs-decode/stalls-and-levers/P:A146", "bigger-chunks-lower-tpot"),
    ("chunked-prefill-tpot/trade-off/W:A003", "tpot-unaffected-by-prefill"),
    ("prefix-caching/when-not/P:A154", "hit-saves-only-memory"),
    ("llama31-8b-h100/policy/P:A082", "paging-waste-needs-margin"),
    ("multi-turn-growth/why-overstated/W:A115", "fragmentation-explains-the-gap"),
    ("paged-blocks-vllm/why-paging/P:A134", "logged-x-is-the-real-concurrency"),
    ("paged-blocks-vllm/refusal/P:A138", "utilization-of-free-memory"),
    ("observed-concurrency-lower/evidence/P:A126", "preemption-counter-counts-the-queue"),
    ("observed-concurrency-lower/action/P:A130", "cap-at-the-average-context"),
    ("speculative-decoding/when-it-pays/W:A167", "speculation-slows-memory-bound-decode"),
    ("llama2-70b-mi300x/1b/P:A038", "generated-tokens-held-apart"),
])
def test_the_missed_claim_is_named(key: str, claim: str) -> None:
    assert claim in _said(key)


def test_the_embedding_read_in_full_is_not_blamed_on_the_lm_head() -> None:  # F2
    said = _said("decode-roofline-vs-measured/embedding-why/P:A006")
    assert "lm-head-served-from-cache" not in said


@pytest.mark.parametrize("text", [
    "At batch 2 about 44% of the experts get touched, and at batch 64 nearly all of them.",
    "At batch 8 ~90% of experts are already touched, so batch 64 reads all 93.4 GB.",
])
def test_a_share_of_experts_at_a_small_batch_is_right(text: str) -> None:
    assert "share-of-experts-at-batch-64" not in claims_named("mixtral-moe-decode",
                                                              "what-moe-saves", text)


@pytest.mark.parametrize("text", [
    "gpu_memory_utilization is a fraction of the total memory, not of the free memory.",
    "It's a fraction of total HBM, not of what's free at launch, so 0.45 each starts.",
])
def test_utilization_of_the_total_is_right(text: str) -> None:
    assert "utilization-of-free-memory" not in claims_named("paged-blocks-vllm", "refusal", text)


def test_a_wish_turned_down_by_but_claims_nothing() -> None:  # blind corpus BF
    text = ("At TP16, 8 heads over 16 GPUs — you'd like half a head each, but a head can't be "
            "split, so vLLM gives every rank one head, replicated.")
    assert claims_named("llama31-405b-h200-tp", "why-less", text) == []


def test_the_halving_said_plainly_is_still_claimed() -> None:
    text = "At TP16 each GPU holds half a head, so the KV per GPU halves."
    assert "tp16-halves-kv-per-gpu" in claims_named("llama31-405b-h200-tp", "why-less", text)


def test_a_conceded_condition_leads_its_claim() -> None:
    said = claims_named("prefix-caching", "when-not",
                        "Even on a hit, TTFT does not change: the prefill still runs.")
    assert "hit-saves-only-memory" in said


def test_the_dtype_credit_promises_only_the_dtype() -> None:  # C10, C11, C18-C21
    drill = find_drill("llama2-70b-mi300x")[0]
    concept = next(c for d in load_rubric(drill.rubric).dimensions for c in d.concepts
                   if c.id == "dtype-stated")
    credit, _ = concept_credit(concept, "unchanged ~34 ms: 8 fp8 sequences read what 4 in "
                                        "fp16 did")
    assert credit > 0 and "bytes per element" not in concept.label.split(",")[0]


def test_the_two_regimes_swapped_are_claimed() -> None:  # C28
    text = ("Prefill is memory-bound because it writes the whole KV cache, and decode is "
            "compute-bound because of the softmax over the vocab.")
    assert "regimes-swapped" in claims_named("prefill-vs-decode", "why-two-regimes", text)


def test_the_regimes_the_right_way_round_claim_nothing() -> None:
    text = ("Prefill is compute-bound, not memory-bound: thousands of tokens share each weight "
            "read. Decode is memory-bound until the batch nears the ops:byte ratio.")
    assert "regimes-swapped" not in claims_named("prefill-vs-decode", "why-two-regimes", text)


def _stated(drill_id: str, text: str) -> list[tuple[str, ...]]:
    from trainer.drills.reference import AnswerKey
    from trainer.marking.text_figures import figures_in

    return [f.right_for for f in figures_in(AnswerKey(find_drill(drill_id)[0]), text)]


def test_a_given_restated_states_no_step() -> None:  # C4, C5
    assert _stated("littles-law-capacity",
                   "one GPU runs ~94: the 20 ms TPOT binds before memory's 105") == []


def test_the_step_worked_out_is_still_stated() -> None:
    assert _stated("littles-law-capacity", "the step at 94 takes 19.9 ms") == [
        ("operating-step",)]
