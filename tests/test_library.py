"""Every shipped drill, the same checks: it lints, its solution renders with numbers, a
variant's own key grades as all correct, and each wrong path it names is matched somewhere."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from trainer.app.cli import cli
from trainer.capacity.presets import find_model
from trainer.drills.loader import load_drill_file, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution
from trainer.drills.variants import answer_key, make_target
from trainer.errors import KvdrillError
from trainer.files.paths import drill_paths
from trainer.marking.checker import mark_sheet
from trainer.marking.lint import MOE_CHECKED, lint_paths
from trainer.marking.scoring import concept_credit
from trainer.reading.expression import unit_factor
from trainer.views.keys import key_as_sheet, pick_variants

DRILLS = drill_paths()
REQUIRED_TAGS = {"mla", "sliding-window", "moe", "tensor-parallel", "prefix-caching", "fp8-kv",
                 "paged-blocks", "throughput", "long-context", "diagnosis"}


def ids(path: Path) -> str:
    return path.stem


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_drill_lints_clean(path: Path) -> None:
    (report,) = lint_paths([path])
    assert report.errors == []


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_solution_renders_with_numbers(path: Path) -> None:
    text = render_solution(AnswerKey(load_drill_file(path)))
    assert sum(ch.isdigit() for ch in text) > 20


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_a_variants_own_key_grades_all_correct(path: Path) -> None:
    drill = load_drill_file(path)
    ((variant, givens),) = pick_variants(drill, 1, seed=0)
    key = AnswerKey(drill, givens)
    sheet = {k: str(v) for k, v in yaml.safe_load(key_as_sheet(key)).items()}
    marks = mark_sheet(key, sheet)
    wrong = [m.step_id for m in marks.values() if m.is_numeric and m.verdict != "correct"]
    assert wrong == [], f"variant {variant}"


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_every_named_wrong_path_is_matched_on_some_step(path: Path) -> None:
    # At the drill's givens, or at one of its variants for a mistake only some variants can
    # make (a sliding window ignored needs a windowed model).
    drill = load_drill_file(path)
    named = {m for step in drill.steps for m in step.misconceptions}
    matched: set[str] = set()
    keys = [AnswerKey(drill)]
    if drill.vary:
        keys += [answer_key(drill, seed) for seed in range(1, 25)]
    # ... or on the drill re-targeted at an MoE, for a mistake only an MoE target can make
    # (its verification priced as one decode step), as lint looks for it
    with contextlib.suppress(KvdrillError):  # (a drill that refuses the MoE)
        keys.append(answer_key(drill, None, make_target(find_model(MOE_CHECKED), None)))
    for key in keys:
        if not named - matched:
            break
        for step in drill.steps:
            if step.kind != "numeric":
                continue
            reference = key.reference(step.id)
            scale = unit_factor(reference.unit).value if reference.unit else 1
            for path_id, value in reference.wrong:
                if path_id in matched:
                    continue
                typed = f"{float(value / scale):.6g} {reference.unit}".strip()
                mark = mark_sheet(key, {step.id: typed})[step.id]
                same = {p for p, v in reference.wrong if v == value}
                if mark.misconception in same and path_id in same:
                    matched |= same
    assert named - matched == set()


def test_the_library_has_at_least_12_drills() -> None:
    assert len(DRILLS) >= 12


def test_the_library_covers_every_required_tag() -> None:
    tags = {tag for path in DRILLS for tag in load_drill_file(path).tags}
    assert REQUIRED_TAGS - tags == set()


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_drill_has_text_steps_and_a_variant_space(path: Path) -> None:
    drill = load_drill_file(path)
    assert any(step.kind == "text" and step.concepts for step in drill.steps)
    assert drill.vary


SHEETS = Path(__file__).parent / "sheets"


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_the_hand_written_correct_sheet_grades_all_correct(path: Path) -> None:
    sheet = SHEETS / f"{path.stem}-correct.yaml"
    result = CliRunner().invoke(cli, ["grade", path.stem, "--answers", str(sheet), "--json"])
    assert result.exit_code == 0, result.output


@pytest.mark.parametrize("path", DRILLS, ids=ids)
def test_every_concept_a_text_step_lists_is_earned_by_its_model_answer(path: Path) -> None:
    drill = load_drill_file(path)
    rubric = load_rubric(drill.rubric)
    short = []
    for step in drill.steps:
        for concept_id in step.concepts:
            concept = rubric.concept(concept_id)
            assert concept is not None, (step.id, concept_id)
            if concept_credit(concept, step.model_answer or "")[0] < 1:
                short.append((step.id, concept_id))
    assert short == []
