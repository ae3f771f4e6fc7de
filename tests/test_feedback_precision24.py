"""A claim set up to be knocked down is not the candidate's (expert pass 52, W1 to W3): a
rebuttal that follows the claim ('"TP=16 doubles capacity" - no.', ". No.", "Wrong:",
"that can't happen"), a claim put in someone's mouth ("Someone might say …"), and a claim the
sentence sets itself against ("Contrary to …"). The claim said plainly is still flagged."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.marking.claims import claims_made


def _claims(drill_id: str, step_id: str, text: str) -> set[str]:
    step = find_drill(drill_id)[0].step(step_id)
    return {made.claim.id for made in claims_made(step, text)}


WHY_LESS = ("Llama-3.1-405B has 8 KV heads, so at TP=16 each rank holds one whole head and every "
            "head lives on two GPUs; per GPU the KV per token stays 31.5 KiB.")


@pytest.mark.parametrize("setup", [
    '"TP=16 doubles capacity" - no.',
    '"TP=16 doubles capacity" — no.',
    "TP=16 doubles capacity. No.",
    "TP=16 doubles capacity. No: it is 1.5x.",
    "TP=16 doubles capacity - wrong.",
    "TP=16 doubles capacity - nope,",
])
def test_a_claim_answered_by_a_bare_rejection_is_not_made(setup: str) -> None:
    claims = _claims("llama31-405b-h200-tp", "why-less", f"{setup} {WHY_LESS}")
    assert "tp16-doubles-sessions" not in claims


def test_the_same_claim_without_its_rejection_is_made() -> None:
    claims = _claims("llama31-405b-h200-tp", "why-less", f"TP=16 doubles capacity. {WHY_LESS}")
    assert "tp16-doubles-sessions" in claims


def test_a_claim_answered_that_it_cannot_happen_is_not_made() -> None:
    text = '"Each GPU holds half a KV head at TP=16" - that can\'t happen; a head isn\'t split.'
    assert not _claims("llama31-405b-h200-tp", "why-less", text) & {
        "tp16-halves-kv-per-gpu", "half-a-kv-head"}


def test_a_claim_followed_by_more_of_its_own_reasoning_is_made() -> None:
    # "No doubt" affirms: the rejection must stand alone
    text = ("Batch-1 decode is compute-bound because attention does a lot of math. No doubt "
            "about it.")
    assert "batch1-decode-compute-bound" in _claims("prefill-vs-decode", "why-two-regimes", text)


def test_a_claim_someone_might_say_then_called_wrong_is_not_made() -> None:
    text = ("Someone might say batch-1 decode is compute-bound because attention does a lot of "
            "math. Wrong: it does ~16 GFLOP against 16.6 GB of reads, 1 FLOP per byte.")
    assert not _claims("prefill-vs-decode", "why-two-regimes", text) & {
        "batch1-decode-compute-bound", "decode-compute-bound"}


def test_a_claim_the_sentence_is_contrary_to_is_not_made() -> None:
    text = ("Contrary to what the chat price sheet suggests, a long request's tokens aren't 32x "
            "slower. What is 32x is the KV it pins: 16 GiB. So price in KV-seconds.")
    assert "priced-like-chat" not in _claims("long-context-tier", "pricing", text)


def test_a_claim_made_after_a_contrary_clause_is_made() -> None:
    text = "Contrary to intuition, charge the long tier the chat price per token."
    assert "priced-like-chat" in _claims("long-context-tier", "pricing", text)


def test_a_cross_mark_judges_the_item_after_it_not_the_claim_before() -> None:
    # (corpus AP: "❌ FP8 KV" rejects FP8 KV; the proposal before it is still made)
    text = ("- ✅ Buy the extra cards now, and set `max_model_len=131072` everywhere so no user "
            "is ever refused.\n- ❌ FP8 KV — quality risk not worth it.")
    assert "raise-cap-for-everyone" in _claims("llama31-8b-h100", "policy", text)


def _credit(rubric_id: str, concept_id: str, text: str) -> object:
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    return concept_credit(load_rubric(rubric_id).concept(concept_id), text)[0]


def test_an_moes_active_parameters_are_no_activation_headroom() -> None:
    # (pass 52, W5: "only ~12.9B parameters are active" earned "headroom for activations")
    text = ("Only ~12.9B parameters are active per token, so the weights cost about 26 GB and "
            "the card keeps ~97 GB for KV.")
    assert _credit("kv-capacity", "activation-headroom", text) == 0


def test_activations_still_earn_the_headroom() -> None:
    text = "Keep a few GB of headroom for activations and CUDA graphs, so the budget is 52 GB."
    assert _credit("kv-capacity", "activation-headroom", text) > 0


def test_capping_at_the_p99_of_real_contexts_is_no_measuring_before_buying() -> None:
    # (pass 52, W5: "the p99 of real contexts" earned "check the metrics before buying")
    text = ("Policy: cap max_model_len per tier at the p99 of real contexts (say 8k for chat), "
            "not the model's 128k; one 128k session pins 16 GiB, the KV of 32 chat sessions.")
    assert _credit("kv-capacity", "measure-before-buying", text) == 0


def test_a_figure_with_its_unit_is_quoted_as_the_answer_wrote_it() -> None:
    # (pass 52, W8: "~98%" was quoted as the rubric's "100%", which the answer never says)
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    concept = next(c for dimension in load_rubric("architectures").dimensions
                   for c in dimension.concepts if "batch touches nearly all" in c.label)
    text = ("With 8 of 128 per token the union grows slowly, but by batch 64 a step touches "
            "~98% of the experts, so at serving batches the bandwidth saving is gone.")
    credit, note = concept_credit(concept, text)
    assert credit > 0 and "98%" in note and "100%" not in note


def test_a_small_count_of_the_drills_own_is_not_called_a_figure_of_another() -> None:
    # (pass 52, W7: "8 sequences" is step 4a's answer, not a figure "not the drill's")
    from trainer.drills.loader import load_rubric
    from trainer.drills.reference import AnswerKey
    from trainer.marking.checker import mark_sheet
    from trainer.marking.scoring import score_attempt
    drill = find_drill("llama2-70b-mi300x")[0]
    marks = mark_sheet(AnswerKey(drill), {
        "4f": "I recommend FP8 KV: 8 sequences for a config flag, twice the 4 of fp16."})
    evidence = [line for dimension in score_attempt(drill, load_rubric(drill.rubric),
                                                    marks).dimensions
                for line in dimension.evidence if "fp8" in line.lower()]
    assert evidence and not any("the rubric does not list" in line for line in evidence)


def test_a_figure_in_thousands_is_quoted_once_with_its_k() -> None:
    # (practised in tmux: "past 4k tokens" was quoted as '4kk')
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    drill = find_drill("sliding-window-kv")[0]
    rubric = load_rubric(drill.rubric)
    notes = [concept_credit(rubric.concept(concept_id), "attention past 4k tokens is only "
                            "indirect (stacked layers), so recall of a fact 20k tokens back "
                            "gets worse.")[1]
             for concept_id in drill.step("what-windows-cost").concepts]
    assert any("'4k'" in note for note in notes) and not any("4kk" in note for note in notes)


def test_a_lone_word_beside_a_figure_of_something_else_is_not_quantified() -> None:
    # (pass 53, W8: "duplicating the latent (16 -> 88 sessions)" credited MLA's compression)
    from trainer.drills.loader import load_rubric
    from trainer.drills.reference import AnswerKey
    from trainer.marking.checker import mark_sheet
    from trainer.marking.prose import concept_credit
    from trainer.marking.scoring import drill_figures
    drill = find_drill("deepseek-v3-mla-h200")[0]
    figures = drill_figures(drill, mark_sheet(AnswerKey(drill), {}))
    text = ("DP attention first, which stops every GPU duplicating the latent (16 -> 88 "
            "sessions), then FP8 KV.")
    concept = load_rubric(drill.rubric).concept("mla-latent-compression")
    credit, note = concept_credit(concept, text, figures)
    assert credit < 1 and "'16'" not in note


def test_room_for_a_number_of_sequences_is_no_activation_headroom() -> None:
    # (pass 53, W10: "int8 weights free room for 10 sequences" earned the headroom idea)
    text = "Int8 weights: 138 -> 69 GB frees room for 10 sequences, at a calibration cost."
    assert _credit("kv-capacity", "activation-headroom", text) == 0


@pytest.mark.parametrize(("typed", "value"), [
    ("about 97, call it 96", 96), ("190ish, let's say 185", 185),
    ("12.9 GB, rounded down to 12 GB", 12)])
def test_the_value_an_answer_settles_on_is_the_one_read(typed: str, value: int) -> None:
    # (pass 53, N2: "about 97, call it 96" was read as 97, "call it 96" ignored)
    from trainer.reading.reader import read_answer
    reading = read_answer(typed, "GB" if "GB" in typed else "")
    assert float(reading.readings[0].quantity.value) == value * (10**9 if "GB" in typed else 1)


def test_the_two_of_k_and_v_in_a_working_shows_no_gpu_count(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (pass 53, W17: "126 x 8 x 128 x 2 x 1 = 252 KiB" was told "Your working shows the slip:
    # gpus = 2"; the 2 is K and V)
    import json
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("bytes-per-token-tp16: 126 x 8 x 128 x 2 x 1 = 252 KiB\n", encoding="utf-8")
    result = run("grade", "llama31-405b-h200-tp", "--answers", str(sheet), "--json", ok=False)
    step = next(s for s in json.loads(result.output)["steps"]
                if s["id"] == "bytes-per-token-tp16")
    assert "gpus = 2" not in json.dumps(step)


def test_mostly_is_a_hedge_not_a_superlative() -> None:
    # (found writing claims for pass 53: "the gain mostly disappears" read as "gains the most")
    assert "long-context-gains-more" not in _claims(
        "prefix-caching", "when-not", "At 32k the gain mostly disappears: 12 sessions either way.")
    assert "long-context-gains-more" in _claims(
        "prefix-caching", "when-not", "At 32k prefix caching saves the most sessions.")


def test_this_is_fragmentation_names_the_cause() -> None:
    # (corpus AV's wrong answer had been held only by "second most" read as "mostly")
    text = ("This is fragmentation, and paging doesn't make it go away: under churn the "
            "allocator loses 30-40% of the cache.")
    assert "fragmentation-explains-the-gap" in _claims("observed-concurrency-lower",
                                                       "hypotheses", text)


def test_a_formula_typed_with_an_x_between_its_terms_is_read_as_the_formula() -> None:
    # (pass 53, W13: bullet notes' "L = lambda x W = 30/s x 7.9 s ~ 238" went unrecognised)
    drill = find_drill("littles-law-capacity")[0]
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    text = "- online != in flight\n- L = lambda x W = 30/s x 7.9 s ~ 238 in flight\n"
    credit, _ = concept_credit(load_rubric(drill.rubric).concept("littles-law"), text)
    assert credit > 0


def test_a_fraction_of_a_percent_quantifies_the_fragmentation() -> None:
    # (pass 53, W14: "with 16-token blocks it's a fraction of a percent" was "not quantified")
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    text = ("Fragmentation would be the naive reading; with 16-token blocks it's a fraction "
            "of a percent.")
    credit, note = concept_credit(load_rubric("diagnosis").concept("block-fragmentation"), text)
    assert credit == 1 and "not quantified" not in note


def test_an_idea_named_only_in_what_people_assume_earns_nothing() -> None:
    # (pass 53, W7: "People often assume vLLM reserves max_model_len …, but it doesn't"
    # earned "fix the start-up failure with max_model_len")
    drill = find_drill("paged-blocks-vllm")[0]
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    rubric = load_rubric(drill.rubric)
    text = ("People often assume vLLM reserves max_model_len for each request, but it doesn't: "
            "blocks are handed out as the sequence grows.")
    notes = [concept_credit(rubric.concept(concept_id), text)[1]
             for step in drill.steps for concept_id in step.concepts]
    assert not any("max_model_len" in note for note in notes)


def test_an_idea_said_after_the_but_still_earns() -> None:
    from trainer.drills.loader import load_rubric
    from trainer.marking.prose import concept_credit
    text = ("People often assume the cache is reserved up front, but vLLM hands out 16-token "
            "blocks as a sequence grows, so a 1,000-token request wastes under one block.")
    drill = find_drill("paged-blocks-vllm")[0]
    rubric = load_rubric(drill.rubric)
    assert any(concept_credit(rubric.concept(concept_id), text)[0] > 0
               for concept_id in drill.step("why-paging").concepts)
