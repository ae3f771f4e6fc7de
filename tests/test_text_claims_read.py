"""Issue 34: precise answers are not punished for precision. The reader spells out the shorthand
seniors type, lets an arrow end a negation, takes the drill's own exact figures as
quantifying, and a figure stated elsewhere in the answer; a long run of terms with one verb
among them stays a list; figures stated in a text answer reach the arithmetic dimension."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import yaml
from click.testing import Result

from trainer.drills.loader import load_rubric
from trainer.drills.model import Concept
from trainer.marking.prose import concept_credit, contains
from trainer.reading.exact import Fraction

Run = Callable[..., Result]


def concept(rubric: str, concept_id: str) -> Concept:
    found = load_rubric(rubric).concept(concept_id)
    assert found is not None
    return found


def test_shorthand_is_read_as_the_words_it_stands_for() -> None:
    assert contains("re-baseline at the measured p95 live ctx, ~58 per card", "live context")
    assert contains("EP over 4+ GPUs spreads the experts", "expert parallelism")
    assert contains("turn on APC for the shared system prompt", "automatic prefix caching")


def test_without_in_shorthand_negates_a_lever() -> None:
    prefix = concept("kv-capacity", "prefix-caching")
    assert concept_credit(prefix, "we serve w/o prefix caching, every prompt is unique")[0] == 0


def test_x2_is_a_factor_of_two() -> None:
    assert contains("fp8 kv gives x2 the sessions", "2×")


def test_an_arrow_ends_the_negation_before_it() -> None:
    replicated = concept("architectures", "mla-replicated-under-tp")
    text = "TP shards heads and the latent has none -> replicated on every rank, 8 copies."
    assert concept_credit(replicated, text)[0] > 0


def test_the_drills_exact_figure_quantifies_a_mention_in_its_item() -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    text = "an fp8 kv cache takes the card to 194 sessions at 4k."
    assert concept_credit(fp8, text)[0] == Fraction(1, 2)  # 194 is not a listed figure
    assert concept_credit(fp8, text, (194.0,))[0] == 1  # the drill's own figure


def test_a_figure_of_the_concept_elsewhere_in_the_answer_earns_three_quarters() -> None:
    fp8 = concept("kv-capacity", "fp8-kv")
    text = ("The cache at 4k is 512 MiB a session and the budget holds 190 of them when "
            "halved. The lever I would pull first is an fp8 kv cache.")
    assert concept_credit(fp8, text)[0] == Fraction(3, 4)


def test_a_long_run_of_terms_with_one_verb_among_them_is_a_list() -> None:
    bound = concept("kv-capacity", "memory-bound-decode")
    text = ("memory-bound decode, weight read amortised over the batch, 138 GB, 29.3 tok/s "
            "per sequence, 38.4 tok/s batch-1 ceiling, 117 tok/s aggregate, batching")
    credit, note = concept_credit(bound, text)
    assert credit < 1 and "listed" in note


def test_a_figure_stated_in_a_text_answer_reaches_the_arithmetic(run: Run,
                                                               tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({"policy": "Each token costs 128 KiB, so the 52 GB budget "
                                               "holds ~97 sessions at 4k."}),
                     encoding="utf-8")
    out = json.loads(run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json",
                         ok=False).output)
    arithmetic = out["rubric"]["dimensions"]["arithmetic"]
    evidence = " ".join(arithmetic["evidence"])
    assert "stated in a text answer" in evidence and "bytes-per-token in policy" in evidence
    assert arithmetic["score"] > 0


def test_a_figure_that_is_two_steps_values_is_credited_once_as_either() -> None:
    # 8 sequences is both 4a's (FP8 KV) and 4d's (the context halved): the text says which
    # only in words the reader does not weigh (expert pass 79, C18)
    from trainer.drills.loader import find_drill, load_rubric
    from trainer.drills.reference import AnswerKey
    from trainer.marking.checker import mark_sheet
    from trainer.marking.scoring import score_attempt

    drill = find_drill("llama2-70b-mi300x")[0]
    marks = mark_sheet(AnswerKey(drill), {"5a": "Unchanged: 8 seqs x 5.37 GB = 43 GB of KV."})
    evidence = score_attempt(drill, load_rubric(drill.rubric), marks).dimension(
        "arithmetic").evidence
    assert any("4a or 4d in 5a" in line for line in evidence)


def test_a_figure_that_states_no_key_is_not_credited(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({"policy": "Each token costs 512 KiB, so about 24 "
                                               "sessions fit."}), encoding="utf-8")
    out = json.loads(run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json",
                         ok=False).output)
    assert out["rubric"]["dimensions"]["arithmetic"]["score"] == 0


def test_a_dismissal_reaches_no_further_than_its_own_clause() -> None:
    # "doesn't change; the …": the next item's "the" does not make "not" a dismissal.
    from trainer.marking.prose import affirms
    assert affirms("chat requests hold 4k tokens and their capacity doesn't change; the long "
                   "users take more blocks", "their capacity")
    assert not affirms("their capacity is not the problem", "their capacity")


def test_a_terse_figure_with_what_happens_to_it_is_a_claim_not_a_term() -> None:
    displaces = concept("capacity-policy", "long-session-displaces")
    credit, _ = concept_credit(displaces, "no global raise, 16 GiB per 128k user, 32 chat "
                                          "sessions displaced, 3 per card.")
    assert credit == 1


def test_a_formula_seniors_write_carries_the_concept() -> None:
    window = concept("architectures", "window-caps")
    assert concept_credit(window, "every Mistral layer holds min(T, 4096) tokens, so 537 MB "
                                  "at 32k instead of 4.29 GB")[0] == 1


def test_a_block_size_is_not_read_as_the_slots_its_last_block_wastes() -> None:
    # the rubric lists 255 (the slots a 256-token block can leave empty); 256 is the block
    _, note = concept_credit(
        concept("serving-engine", "block-size-tradeoff"),
        "With 256 token blocks each session's own part is rounded up to a whole block, and big "
        "blocks buy fewer block table entries.")
    assert "'255'" not in note
