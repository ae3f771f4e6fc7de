"""What the second round of issue 39's speed work keeps gives what the plain computation gives:
wrong values that skip the paths a value does not read, candidates kept by what they read, the
drill's own figures made unique once per key, deployments shared by equal givens, a preset
found by an index of its names, and a diagnosis that works out what chance admits only for an
answer some reading gives. No timing is asserted here (benchmarks/interviewer.py times)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import pytest

from trainer.capacity import presets, solver, wrong_paths
from trainer.capacity.presets import find_model
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills import loader
from trainer.drills.reference import AnswerKey
from trainer.errors import UnknownName
from trainer.marking import diagnosis, grading, world
from trainer.reading.exact import Fraction
from trainer.views import keys


def _keys(drill_id: str, count: int, seed: int) -> list[AnswerKey]:
    drill, _ = loader.find_drill(drill_id)
    return [AnswerKey(drill, givens) for _, givens in keys.pick_variants(drill, count, seed)]


def _plain_wrong_values(deployment: Any, name: str, ids: tuple[str, ...]
                        ) -> list[tuple[str, Fraction]]:
    """wrong_values as it was: every path's deployment made and evaluated afresh."""
    truth = solver.Solution(deployment)[name]
    found: list[tuple[str, Fraction]] = []
    for path_id in ids:
        path = WRONG_PATHS[path_id]
        if path_id == "per-gpu-vs-total":
            if deployment.gpus > 1:
                found.append((path_id, truth / deployment.gpus))
                found.append((path_id, truth * deployment.gpus))
                if truth.denominator == 1 and truth % deployment.gpus:
                    found.append((path_id, Fraction(math.floor(truth / deployment.gpus))))
            continue
        for change in (path.change, path.also):
            changed = None if change is None else change(deployment)
            if changed is None:
                continue
            try:
                value = solver.Solution(changed)[name]
            except ZeroDivisionError:
                continue
            if value != truth and (path_id, value) not in found:
                found.append((path_id, value))
    return found


@pytest.mark.parametrize("drill_id", ["llama2-70b-mi300x", "mixtral-moe-decode",
                                      "deepseek-v3-mla-h200", "speculative-decoding"])
def test_wrong_values_are_every_path_evaluated_afresh(drill_id: str) -> None:
    for key in _keys(drill_id, 2, 5):
        for step in key.drill.steps:
            if step.kind != "numeric" or step.answer not in solver.FORMULAS:
                continue
            deployment = key.deployment(step.id)
            ids = tuple(WRONG_PATHS)
            kept = wrong_paths.wrong_values(deployment, step.answer, ids)
            plain = _plain_wrong_values(deployment, step.answer, ids)
            assert [(p, type(v), v) for p, v in kept] == \
                [(p, type(v), v) for p, v in plain], step.id


@pytest.mark.parametrize("drill_id", ["llama2-70b-mi300x", "hybrid-state-kv"])
def test_kept_candidates_are_the_candidates_worked_out(drill_id: str) -> None:
    for key in _keys(drill_id, 2, 8):
        for step in key.drill.steps:
            if step.kind != "numeric" or step.answer is None or step.ratio_of is not None:
                continue
            problem = diagnosis._problem_of(key, step.id, None)
            for spec, x0 in diagnosis._settable(problem):
                true = x0 / spec.scale
                for strong in (True, False):
                    assert diagnosis._candidates(problem, spec, true, strong) == \
                        diagnosis._candidates_of(problem, spec, true, strong), \
                        (step.id, spec.name, strong)


def _plain_own_figures(key: AnswerKey, d: Any) -> tuple[Any, ...]:
    """_own_figures as it was: every figure listed, then made unique by a dict."""
    found: list[Any] = []
    shape = {name: getattr(d, name) for name in diagnosis._SHAPE_LABELS
             if getattr(d, name) is not None}
    if d.hidden is not None:
        shape["hidden ÷ heads"] = Fraction(d.hidden, d.heads)
    for target, sources in diagnosis._SHAPE_MIXUPS.items():
        for name in sources:
            if name in shape:
                tier = diagnosis.CLASSIC if (target, name) in diagnosis._CLASSIC_MIXUPS \
                    else diagnosis.WORLD
                found.append((target, Fraction(shape[name]),
                              diagnosis._SHAPE_LABELS.get(name, name), tier, False))
    others = [key.base] + [key.deployment(s.id) for s in key.drill.steps
                           if s.kind == "numeric" and s.answer is not None and s.with_]
    for spec in diagnosis._INPUTS:
        if spec.slot != spec.name or spec.name == "kv_bytes_per_element":
            continue
        mine = getattr(d, spec.name)
        for other in others:
            value = getattr(other, spec.name)
            if value is not None and value != mine:
                label = "the givens' value" if other is key.base else "another question's value"
                why = f"{spec.label}: {label}"
                if other is key.base and spec.family == "shape" and key.givens.get("model"):
                    # a shape the givens take from their model is that model's
                    why = world.model_label(find_model(str(key.givens["model"]))) + "'s"
                found.append((spec.name, Fraction(value), why, diagnosis.OWN, False))
    found += ((name, value, why, diagnosis.OWN, True)
              for name, value, why in diagnosis._variant_figures(key))
    return tuple(dict.fromkeys(found))


@pytest.mark.parametrize("drill_id", ["llama2-70b-mi300x", "paged-blocks-vllm"])
def test_own_figures_are_the_plain_list_made_unique(drill_id: str) -> None:
    for key in _keys(drill_id, 2, 4):
        for step in key.drill.steps:
            if step.kind == "numeric":
                d = key.deployment(step.id)
                assert diagnosis._own_figures(key, d) == _plain_own_figures(key, d), step.id


def test_equal_givens_share_their_deployments_and_give_the_same_key() -> None:
    drill, _ = loader.find_drill("llama2-70b-mi300x")
    first, second = AnswerKey(drill), AnswerKey(drill)
    assert first.base is second.base
    numeric = [s for s in drill.steps if s.kind == "numeric"]
    for step in numeric:
        assert first.deployment(step.id) is second.deployment(step.id)
        assert first.reference(step.id).value == second.reference(step.id).value
    # a step's own setting is never the givens' object, even where it sets what they set
    assert all(first.deployment(s.id) is not first.base for s in numeric if s.with_)


def test_display_givens_are_a_copy_of_what_is_worked_out() -> None:
    key = _keys("llama2-70b-mi300x", 1, 3)[0]
    shown = key.display_givens()
    assert shown == key._display_givens()
    shown["model_name"] = "changed"
    assert key.display_givens()["model_name"] != "changed"


def test_a_preset_is_found_by_every_name_as_searching_finds_it() -> None:
    def searched(name: str, table: dict[str, Any]) -> Any:
        wanted = presets.name_key(name)
        for preset in table.values():
            if wanted in {presets.name_key(preset.id),
                          *(presets.name_key(alias) for alias in preset.aliases)}:
                return preset
        return None

    for table, find in ((presets.models(), presets.find_model), (presets.gpus(),
                                                                 presets.find_gpu)):
        for preset in table.values():
            for name in (preset.id, *preset.aliases, preset.id.upper(),
                         preset.id.replace("-", " ")):
                assert find(name) is searched(name, table), name
    with pytest.raises(UnknownName, match="did you mean"):
        presets.find_gpu("h10O")


def test_a_diagnosis_with_no_reading_never_asks_what_chance_admits(
        monkeypatch: pytest.MonkeyPatch) -> None:
    key = _keys("llama2-70b-mi300x", 1, 6)[0]
    step = next(s for s in key.drill.steps if s.answer == "max_concurrency")
    reference = key.reference(step.id).value

    def refuse(*args: object) -> frozenset[Any]:
        raise AssertionError("chance was asked with no reading to admit")

    # × 1.2345, typed to four figures: no slip of one input gives it
    answer = Fraction(round(float(reference) * 1.2345))
    with monkeypatch.context() as patched:
        patched.setattr(diagnosis, "_admitted", refuse)
        assert diagnosis.diagnose(key, step.id, answer, Fraction(1)) is None


def test_a_sheet_is_read_once_and_each_reader_gets_its_own_copy(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("drill: llama31-8b-h100\nvariant: null\nlayers: '32'\n", encoding="utf-8")
    calls: list[Path] = []
    yaml_text = grading.yaml_text

    def counted(path: Path, *args: Any) -> Any:
        calls.append(path)
        return yaml_text(path, *args)

    monkeypatch.setattr(grading, "yaml_text", counted)
    first = grading._sheet_data(sheet)
    first["layers"] = "changed"
    assert grading._sheet_data(sheet)["layers"] == "32"
    assert len(calls) == 1
    # a changed file (its size, whatever its modification time) is read again
    sheet.write_text("drill: llama31-8b-h100\nvariant: null\nlayers: '128'\n", encoding="utf-8")
    assert grading._sheet_data(sheet)["layers"] == "128"
