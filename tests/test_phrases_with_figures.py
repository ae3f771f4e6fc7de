"""A precise answer is not punished for its precision (issue 34): a figure set inside a
concept's phrase, "entire" or "full" for "whole", and the plain ways seniors say an idea the
rubric lists. Measured over all 53 blind corpora (stop 64): ordered 2,026 → 2,037 of 2,279,
nothing else lost but one tie in the terse corpus Y."""

from __future__ import annotations

from trainer.drills.loader import find_drill, load_rubric
from trainer.marking.claims import claims_made
from trainer.marking.prose import concept_credit, contains


def _concept(drill_id: str, concept_id: str):  # type: ignore[no-untyped-def]
    drill = find_drill(drill_id)[0]
    concept = load_rubric(drill.rubric).concept(concept_id)
    assert concept is not None
    return concept


def test_a_figure_inside_a_concept_phrase_still_says_it() -> None:
    # "read the whole model", with the model's size where a plain answer has none
    text = ("For a PM: every step the chip has to read the whole 138 GB model, and that is "
            "the expensive part.")
    credit, note = concept_credit(_concept("llama2-70b-mi300x", "memory-bound-decode"), text)
    assert credit > 0 and "138 GB" in note


def test_words_inside_a_phrase_still_break_it() -> None:
    assert not contains("read the whole of the model", "read the whole model")


def test_a_figure_inside_does_not_excuse_a_wrong_claim() -> None:
    # "like a 12.9b dense model" is not the "like a dense" (47B) that excuses the claim
    drill = find_drill("mixtral-moe-decode")[0]
    text = ("the pitch is mostly right for speed. memory yes, all 93.4gb of experts are "
            "resident. but decode reads only the active weights: each token touches 2 of 8 "
            "experts, so even at batch 64 the step reads ~25.8gb of weights + 64 × 537mb kv ≈ "
            "60gb -> ~9ms a step. so at every batch it runs like a 12.9b dense model.")
    made = {c.claim.id for c in claims_made(drill.step("what-moe-saves"), text)}
    assert "batch-reads-the-active-share" in made


def test_entire_and_full_say_whole() -> None:
    assert contains("streaming the entire model through the chip", "stream the whole model")
    assert contains("one full read of the model", "whole read of the model")


def test_the_same_cost_whether_one_user_or_four_is_the_shared_weight_read() -> None:
    text = ("Every token costs the chip one read of the model, and that read is the same "
            "whether it serves one user or four, so the users split it.")
    credit, _ = concept_credit(_concept("llama2-70b-mi300x", "weights-amortized"), text)
    assert credit > 0


def test_no_purchase_order_before_the_gauges_is_measuring_before_buying() -> None:
    text = ("Before any PO: confirm with the start-up log and the KV usage gauge that we are "
            "KV-bound, then re-plan on the live context.")
    credit, _ = concept_credit(
        _concept("observed-concurrency-lower", "measure-before-buying"), text)
    assert credit > 0
