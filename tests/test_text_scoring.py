"""Text answers scored for reasoning, not keywords: the level corpus through the real grading
path, and one behaviour per unit test (negation, sentence-bound figures, generic phrases,
lists, stems)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest
import yaml

from trainer.drills.loader import find_drill, load_rubric
from trainer.drills.model import Concept
from trainer.drills.reference import AnswerKey
from trainer.marking.grading import grade
from trainer.marking.prose import _phrase_tokens, concept_credit, contains
from trainer.marking.scoring import depth
from trainer.reading.exact import Fraction

CORPUS = yaml.safe_load((Path(__file__).parent / "corpus" / "text_answers.yaml")
                        .read_text(encoding="utf-8"))
STEPS = [(drill, step) for drill, steps in CORPUS.items() for step in steps]
LEVELS = ("junior", "mid", "senior", "buzzwords")


@cache
def sheet_score(drill_id: str, step_id: str, level: str) -> Fraction:
    """The rubric's concept dimensions, summed, for a sheet holding only this answer — what
    `kvdrill grade --json` reports for it."""
    drill, _ = find_drill(drill_id)
    graded = grade(drill, AnswerKey(drill), {step_id: CORPUS[drill_id][step_id][level]}, None)
    return sum((d.score for d in graded.score.dimensions if d.id != "arithmetic"), Fraction(0))


def concept(rubric_id: str, concept_id: str) -> Concept:
    found = load_rubric(rubric_id).concept(concept_id)
    assert found is not None
    return found


def test_the_corpus_covers_every_text_step_of_every_drill_at_four_levels() -> None:
    drills = Path(__file__).parent.parent / "drills"
    for path in sorted(drills.glob("*.yaml")):
        drill, _ = find_drill(path.stem)
        for step in drill.steps:
            if step.kind == "text":
                assert set(CORPUS[drill.id][step.id]) == set(LEVELS), (drill.id, step.id)


@pytest.mark.parametrize(("drill_id", "step_id"), STEPS)
def test_a_junior_answer_scores_below_a_mid_answer(drill_id: str, step_id: str) -> None:
    assert sheet_score(drill_id, step_id, "junior") < sheet_score(drill_id, step_id, "mid")


def test_a_senior_answer_never_scores_below_a_mid_answer() -> None:
    below = [(d, s) for d, s in STEPS if sheet_score(d, s, "senior") < sheet_score(d, s, "mid")]
    print("senior below mid:", below)
    assert len(below) <= 1, below


def test_a_senior_answer_scores_above_a_mid_answer_on_every_step() -> None:
    # Where the mid answer already names every concept, depth (reasoned clauses and the
    # figures in them) still ranks the senior answer higher.
    ties = [(d, s) for d, s in STEPS if not sheet_score(d, s, "mid") < sheet_score(d, s, "senior")]
    print("mid not below senior:", ties)
    assert not ties


def test_a_buzzword_list_scores_below_the_mid_answer_on_nine_steps_in_ten() -> None:
    failing = [(d, s) for d, s in STEPS
               if not sheet_score(d, s, "buzzwords") < sheet_score(d, s, "mid")]
    print("buzzwords not below mid:", failing)
    assert 1 - len(failing) / len(STEPS) >= 0.9, failing


def test_a_negated_lever_earns_nothing() -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    assert concept_credit(fp8, "No need for FP8 KV here, it would halve the bytes.")[0] == 0
    assert concept_credit(fp8, "We don't use fp8 kv, which halves the cache.")[0] == 0


def test_without_negates_the_phrase_that_follows() -> None:
    prefix = concept("kv-capacity", "prefix-caching")
    assert concept_credit(prefix, "Without prefix caching the system prompt is stored per "
                                  "session.")[0] == 0


def test_a_negation_in_an_earlier_clause_does_not_reach_a_later_mention() -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    text = "We will not raise max_model_len, but FP8 KV halves the bytes per token."
    assert concept_credit(fp8, text)[0] == 1


def test_a_negated_mention_is_named_in_the_evidence() -> None:
    pool = concept("kv-capacity", "long-context-pool")
    credit, note = concept_credit(pool, "Don't use a separate pool for this.")
    assert credit == 0 and "negated" in note


def test_a_figure_in_another_sentence_does_not_quantify() -> None:
    prefix = concept("kv-capacity", "prefix-caching")
    text = "Prefix caching helps with the prompts we serve. KV cache usage % is the alert."
    credit, note = concept_credit(prefix, text)
    assert credit == Fraction(1, 2) and "not quantified" in note


def test_a_figure_in_the_same_sentence_quantifies() -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    assert concept_credit(fp8, "Turn on FP8 KV, which halves the bytes per token.")[0] == 1


def test_identical_alone_does_not_earn_the_fp8_same_step_concept() -> None:
    same = concept("kv-capacity", "fp8-double-batch-same-step")
    assert concept_credit(same, "The two prompts are identical, so prefix caching helps.")[0] == 0


def test_identical_step_time_earns_the_fp8_same_step_concept_but_one_word_does_not() -> None:
    # One generic word never carries a concept: "identical step time" says it, while "same"
    # in "at the same latency target" (even beside an about term) does not.
    same = concept("kv-capacity", "fp8-double-batch-same-step")
    assert concept_credit(same, "It has an identical step time, since it reads 181 GB "
                                "either way.")[0] == 1
    assert concept_credit(same, "We can serve twice the users at the same latency "
                                "target.")[0] == 0
    assert concept_credit(same, "Identical, since it reads 181 GB either way.")[0] == 0


def test_price_as_a_figure_of_speech_does_not_earn_kv_pricing() -> None:
    pricing = concept("kv-capacity", "kv-pricing")
    assert concept_credit(pricing, "Offload cold KV to host memory, at the price of "
                                   "latency.")[0] == 0


def test_a_bare_list_of_terms_is_named_listed_not_explained() -> None:
    pool = concept("kv-capacity", "long-context-pool")
    credit, note = concept_credit(pool, "FP8 KV, prefix caching, max_model_len, separate pool, "
                                        "KV-seconds, 85% p95, preemption")
    assert "listed, not explained" in note
    assert credit <= Fraction(1, 2)


def test_a_listed_lever_earns_half_of_an_unquantified_mention_whatever_figure_it_carries(
) -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    listed = concept_credit(fp8, "fp8 kv 2x, prefix caching, separate pool, kv-seconds")[0]
    unquantified = concept_credit(fp8, "We would turn on FP8 KV for the cache then.")[0]
    explained = concept_credit(fp8, "FP8 KV halves the bytes per token, so 2x the sessions.")[0]
    assert (listed, unquantified, explained) == (Fraction(1, 4), Fraction(1, 2), 1)


def test_a_list_of_figures_changed_by_arrows_is_listed_when_nothing_reasons_in_words(
) -> None:
    # a buzzword list that carries the figures (corpus BE's, stop 72): "→" alone says no why
    tp = concept("capacity-policy", "per-gpu-vs-whole")
    _, note = concept_credit(tp, "8 KV heads, head replication past TP8, 31.5 KiB/token per "
                                 "GPU unchanged, 252 → 504 KiB/token per job, budget 496 → "
                                 "1,479 GB, sessions 58 → 87, k_proj/v_proj duplicated")
    assert "listed, not explained" in note


def test_figures_changed_by_arrows_beside_reasoning_in_words_are_not_listed() -> None:
    tp = concept("capacity-policy", "per-gpu-vs-whole")
    _, note = concept_credit(tp, "8 KV heads, head replication past TP8, 31.5 KiB/token per "
                                 "GPU unchanged, 252 → 504 KiB/token per job, budget 496 → "
                                 "1,479 GB, sessions 58 → 87. The budget triples because the "
                                 "weights are paid once.")
    assert "listed" not in note


def test_a_formula_with_its_terms_defined_line_by_line_is_not_listed() -> None:
    formula = concept("kv-capacity", "kv-formula-terms")
    _, note = concept_credit(formula, "KV = 2 x L x n_kv x d_head x b x N\n2 = k and v\n"
                                      "L = 80 layers\nn_kv = 8\nd_head = 128\nb = 2 bytes\n"
                                      "per token 2x80x8x128x2 = 320KiB")
    assert "listed" not in note


def test_a_sentence_that_states_one_figure_is_not_listed() -> None:
    # corpus BJ's senior opened "Unchanged at ~34.1 ms." (stop 72)
    same = concept("kv-capacity", "fp8-double-batch-same-step")
    _, note = concept_credit(same, "Unchanged at ~34.1 ms. Bytes per step = W + B · kv_seq.")
    assert "listed" not in note


def test_a_list_of_bullets_without_reasoning_is_listed() -> None:
    pool = concept("kv-capacity", "long-context-pool")
    credit, note = concept_credit(pool, "- fp8 kv\n- prefix caching\n- separate pool\n")
    assert "listed, not explained" in note and credit == Fraction(1, 2)


def test_a_bullet_that_explains_is_not_listed() -> None:
    pool = concept("kv-capacity", "long-context-pool")
    credit, _ = concept_credit(pool, "- a separate pool for long context, so one 128k user "
                                     "cannot evict 32 chat users\n- fp8 kv\n")
    assert credit == 1


def test_a_reasoned_clause_before_terse_terms_is_not_listed() -> None:
    # A terse senior line: one clause that states the cap, then short terms after it.
    cap = concept("kv-capacity", "per-tier-context-cap")
    credit, note = concept_credit(cap, "Limits: chat max_model_len ≈ p99 of live context (not "
                                       "131,072); own pool, quota-admitted; platform owns caps.")
    assert credit == 1 and "listed" not in note


def test_stems_match_inflections() -> None:
    assert contains("FP8 KV halved the bytes", "halve")
    assert contains("the KV is halving", "halve")
    assert contains("requests were preempted", "preempt")
    assert contains("we quantised the KV", "quantize the kv")


def test_phrases_match_across_hyphens_and_underscores() -> None:
    assert contains("set max-model-len to 32k", "max_model_len")
    assert not contains("a prefix-cacheline", "prefix caching")


def test_a_huge_answer_is_read_in_bounded_time() -> None:
    import time

    fp8 = concept("kv-capacity", "fp8-kv")
    text = ("FP8 KV halves the bytes, so 190 sessions fit; " * 400)[:8000]
    started = time.perf_counter()
    concept_credit(fp8, text)
    assert time.perf_counter() - started < 30  # bounded, not fast: a runaway takes minutes


def test_depth_ranks_an_explained_quantified_answer_above_a_terse_one_with_the_same_terms() -> None:
    terse = "FP8 KV halves the cache."
    deep = ("FP8 KV halves the cache: 128 KiB per token becomes 64 KiB, so the 52 GB budget "
            "holds about 793k tokens instead of 397k, and about 190 sessions at 4k instead of 96.")
    assert depth(terse) < depth(deep)


def test_a_list_of_terms_has_no_depth() -> None:
    assert depth("FP8 KV, prefix caching, max_model_len, separate pool, 85% p95") == 0


def test_depth_orders_two_answers_without_changing_their_level() -> None:
    drill, _ = find_drill("llama31-8b-h100")
    terse = "FP8 KV halves the cache."
    deep = ("FP8 KV halves the cache: 128 KiB per token becomes 64 KiB, so the 52 GB budget "
            "holds about 793k tokens instead of 397k, and about 190 sessions at 4k instead of 96.")
    scores = [grade(drill, AnswerKey(drill), {"policy": text}, None).score
              for text in (terse, deep)]
    assert scores[0].dimension("levers").score < scores[1].dimension("levers").score
    assert scores[0].level == scores[1].level


def test_no_rubric_phrase_of_several_words_shrinks_to_one_word() -> None:
    # "- weights" once lexed to the bare word "weights", credited wherever weights came up.
    shrunk = []
    for path in sorted((Path(__file__).parent.parent / "rubrics").glob("*.yaml")):
        rubric = load_rubric(path.stem)
        for dimension in rubric.dimensions:
            for c in dimension.concepts:
                for phrase in (*c.phrases, *c.generic, *c.figures):
                    if len(phrase.split()) > 1 and len(_phrase_tokens(phrase)) < 2:
                        shrunk.append((path.stem, c.id, phrase))
    assert shrunk == []


def test_a_negation_reaches_across_or() -> None:
    prefix = concept("kv-capacity", "prefix-caching")
    assert concept_credit(prefix, "No need for FP8 KV or prefix caching here.")[0] == 0


def test_a_figure_matches_the_same_number_typed_to_other_precision() -> None:
    tail = concept("serving-engine", "tail-waste-bounded")
    text = "Waste is only the last block's unfilled tail, 0.794% of the KV, so 393 requests fit."
    assert concept_credit(tail, text)[0] == 1


@pytest.mark.parametrize(("concept_id", "explained"), [
    ("long-context-pool", "Route long requests to a separate pool."),
    ("prefix-caching", "Prefix caching shares the system prompt."),
])
def test_a_lever_said_as_what_to_do_is_explained_not_listed(concept_id: str,
                                                             explained: str) -> None:
    lever = concept("kv-capacity", concept_id)
    listed = "Separate pool, prefix caching, FP8 KV, chunked prefill."
    assert concept_credit(lever, explained)[0] > concept_credit(lever, listed)[0] > 0
