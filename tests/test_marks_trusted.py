"""Marks an interviewer can trust (issue 22): products typed with spaces, more of the forms
people type, one rounding rule said on a near miss, the step's own mistakes named first, no
credit for an answer given after its reference was shown, and sheets that know their variant."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from trainer.app.session import Session, StepPrompt, new_attempt
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey, Reference
from trainer.drills.variants import answer_key
from trainer.marking.checker import _mistakes, check_numeric
from trainer.reading.exact import Fraction
from trainer.reading.reader import read_answer
from trainer.store.database import Store

Run = Callable[..., Result]


def _graded(run: Run, tmp_path: Path, drill: str, answers: dict[str, str],
            *extra: str) -> dict[str, dict[str, object]]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps(answers), encoding="utf-8")
    result = run("grade", drill, "--answers", str(sheet), "--json", *extra, ok=False)
    return {step["id"]: step for step in json.loads(result.stdout)["steps"]}


# ---- 1. a product with spaces is a product ---------------------------------------------------

@pytest.mark.parametrize("typed", ["64 × 128", "64 x 128", "64 X 128", "64*128", "64 * 128",
                                   "64 · 128", "(64 × 128)", "64 × 128 × 1", "= 64 x 128"])
def test_a_product_on_a_plain_number_step_is_its_value(run: Run, tmp_path: Path,
                                                      typed: str) -> None:
    step = _graded(run, tmp_path, "llama2-70b-mi300x", {"2a-dkv": typed})["2a-dkv"]
    assert step["verdict"] == "correct", step["feedback"]


@pytest.mark.parametrize(("typed", "value"), [("8 x 128", 1024), ("32 × 4", 128),
                                              ("2 x (64 x 128)", 16384)])
def test_a_product_reads_as_the_product(typed: str, value: int) -> None:
    assert read_answer(typed).readings[0].quantity.value == value


@pytest.mark.parametrize("typed", ["8x", "8x more", "8:1", "1:8", "x8", "8 to 1", "2 times"])
def test_a_ratio_is_still_a_ratio(typed: str) -> None:
    answer = read_answer(typed)
    assert "as a ratio" in answer.readings[0].note


# ---- 2. more forms people type ---------------------------------------------------------------

@pytest.mark.parametrize(("typed", "unit", "shown"), [
    ("~0.95 prefill GPUs per decode GPU", "", "~0.95"),
    ("3 decode GPUs per prefill GPU", "", "3"),
    ("16 steps × 25 ms", "ms", "400 ms"),
    ("12 rps", "requests/s", "12 rps"),
    ("5k tps", "tokens/s", "5,000 tokens/s"),
    ("62T", "TFLOP/s", "62 TFLOP/s"),
    ("3.35T", "TB/s", "3.35 TB/s"),
    ("10 G", "GB", "10 GB"),
])
def test_a_form_people_type_reads(typed: str, unit: str, shown: str) -> None:
    assert read_answer(typed, unit).readings[0].shown.startswith(shown)


def test_a_unit_between_a_number_and_a_count_is_not_a_description() -> None:
    assert read_answer("8 GB heads").readings[0].quantity.value != 8


@pytest.mark.parametrize("typed", ["< 1%", "<1%", "under 1%", "below 1%", "less than 1%",
                                   "well under 1%"])
def test_an_upper_bound_above_the_reference_is_right(run: Run, tmp_path: Path,
                                                     typed: str) -> None:
    step = _graded(run, tmp_path, "paged-blocks-vllm", {"tail-waste": typed})["tail-waste"]
    assert step["verdict"] == "correct", step["feedback"]  # 0.794%


def test_an_upper_bound_below_the_reference_is_wrong(run: Run, tmp_path: Path) -> None:
    step = _graded(run, tmp_path, "paged-blocks-vllm", {"tail-waste": "under 0.5%"})
    assert step["tail-waste"]["verdict"] == "wrong"


def test_an_upper_bound_that_says_nothing_is_wrong(run: Run, tmp_path: Path) -> None:
    step = _graded(run, tmp_path, "paged-blocks-vllm", {"tail-waste": "under 50%"})
    assert step["tail-waste"]["verdict"] == "wrong"
    assert "give the figure" in str(step["tail-waste"]["feedback"])


# ---- 3. one rounding rule ---------------------------------------------------------------------

VARIANT = 625646  # 3b-aggregate 207.6, 3b-per-sequence 29.66, 3c-batch1-ceiling 37.56 tok/s


@pytest.mark.parametrize(("step", "typed"), [("3b-aggregate", "210 tok/s"),
                                             ("3b-per-sequence", "30 tok/s"),
                                             ("3c-batch1-ceiling", "38 tok/s"),
                                             ("3b-per-sequence", "29.7 tok/s")])
def test_the_reference_rounded_to_the_figures_typed_is_right(step: str, typed: str) -> None:
    drill, _ = find_drill("llama2-70b-mi300x")
    key = answer_key(drill, VARIANT)
    assert check_numeric(drill.step(step), typed, key.reference(step)).verdict == "correct"


def test_one_figure_must_be_within_the_tolerance() -> None:
    drill, _ = find_drill("llama2-70b-mi300x")
    key = answer_key(drill, VARIANT)
    step = "3c-batch1-ceiling"  # 37.56: "4e1" is one figure, 6% off
    assert check_numeric(drill.step(step), "4e1", key.reference(step)).verdict == "wrong"


def test_a_refused_near_miss_states_the_rule() -> None:
    drill, _ = find_drill("llama2-70b-mi300x")
    key = answer_key(drill, VARIANT)
    mark = check_numeric(drill.step("3b-per-sequence"), "28.8 tok/s",
                         key.reference("3b-per-sequence"))
    assert mark.verdict == "wrong"
    assert "outside ±1%" in mark.feedback and "rounded to two or more figures" in mark.feedback
    assert "30 tokens/s or 29.7 tokens/s" in mark.feedback


# ---- 4. the step's own mistakes first ---------------------------------------------------------

def test_of_two_mistakes_giving_one_value_the_listed_one_is_named_first() -> None:
    wrong = (("forgot-kv-factor-2", Fraction(1000)), ("bits-for-bytes", Fraction(1001)))
    reference = Reference("s", Fraction(2000), "", (), False, lambda: wrong)
    nearest_is_unlisted = _mistakes(Fraction(1001), reference, Fraction(1, 100))
    assert next(p.id for p in nearest_is_unlisted) == "forgot-kv-factor-2"


# ---- 5. no credit after the reference was shown -----------------------------------------------

def _practise(lines: list[str], *, exam: bool = False) -> tuple[Store, int, list[str]]:
    drill, path = find_drill("llama31-8b-h100")
    key = AnswerKey(drill)
    store = Store()
    attempt = new_attempt(store, key, path, None, exam=exam, strict=False)
    said: list[str] = []
    feed: Iterator[str] = iter(lines)

    def ask(prompt: StepPrompt) -> str | None:
        return next(feed, None)

    Session(key, store, attempt, ask=ask, say=said.append, clock=lambda: 0.0, exam=exam,
            reask_unreadable=True).run()
    return store, attempt, said


def test_skip_then_back_earns_nothing_and_says_so(run: Run) -> None:
    _, attempt, said = _practise(["32", ":skip", ":back", "8", ":quit"])
    assert any(line.startswith("Skipped; expected 8") for line in said)
    assert any(line.startswith("⊘") and "after the answer was shown" in line for line in said)
    exported = json.loads(run("export", str(attempt)).stdout)
    step = next(s for s in exported["steps"] if s["id"] == "shape-kv-heads")
    assert step["verdict"] == "revealed" and step["revealed"] is True
    review = run("review", str(attempt)).stdout
    assert "⊘" in review


def test_in_an_exam_a_skip_shows_nothing_so_back_still_counts() -> None:
    store, attempt, _ = _practise(["32", ":skip", ":back", "8", ":quit"], exam=True)
    assert store.revealed_steps(attempt) == frozenset({"shape-kv-heads"})
    rows = {r.step_id: r.verdict for r in store.answers(attempt)}
    assert rows["shape-kv-heads"] == "correct"


# ---- 8. sheets know their variant -------------------------------------------------------------

def _variant_files(run: Run, tmp_path: Path) -> tuple[int, Path, Path]:
    out = tmp_path / "variants"
    run("variants", "llama2-70b-mi300x", "--count", "1", "--seed", "3", "--out", str(out))
    answers = next(out.glob("*-answers.yaml"))
    variant = int(answers.name.split("-")[-2])
    return variant, answers, next(out.glob("*-blank.yaml"))


def test_a_variant_sheet_is_graded_by_its_variant_without_variant(run: Run,
                                                                  tmp_path: Path) -> None:
    _, answers, _ = _variant_files(run, tmp_path)
    assert run("grade", "llama2-70b-mi300x", "--answers", str(answers), ok=False).exit_code == 0


def test_a_disagreeing_variant_is_refused(run: Run, tmp_path: Path) -> None:
    variant, answers, _ = _variant_files(run, tmp_path)
    result = run("grade", "llama2-70b-mi300x", "--answers", str(answers), "--variant",
                 str(variant + 1), ok=False)
    assert result.exit_code == 2 and f"the sheet is for variant {variant}" in result.stderr


def test_the_blank_sheet_names_every_step_and_its_variant(run: Run, tmp_path: Path) -> None:
    variant, _, blank = _variant_files(run, tmp_path)
    text = blank.read_text(encoding="utf-8")
    assert f"variant: {variant}" in text and "\n2a-dkv:\n" in text
    assert max(len(line) for line in text.splitlines()) <= 100
    result = run("grade", "llama2-70b-mi300x", "--answers", str(blank), ok=False)
    assert result.exit_code == 1  # read, every step unanswered


def test_a_misspelt_step_id_gets_a_suggestion(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("2a-dkvv: 8192\n", encoding="utf-8")
    result = run("grade", "llama2-70b-mi300x", "--answers", str(sheet), ok=False)
    assert result.exit_code == 2 and "did you mean 2a-dkv" in result.stderr


def test_a_hybrid_state_over_every_layers_kv_is_named_as_the_steps_own_mistake() -> None:
    drill, _ = find_drill("hybrid-state-kv")
    key = answer_key(drill, None)
    mark = check_numeric(drill.step("state-equivalent"), "66",
                         key.reference("state-equivalent"))  # 532 tokens, over 8× the layers
    assert mark.verdict == "wrong" and mark.misconception == "hybrid-kv-all-layers"
