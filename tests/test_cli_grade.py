"""`kvdrill grade`, `list`, `show` and `solution` through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "sheets"
SEED_DRILLS = ("llama31-8b-h100", "llama2-70b-mi300x")


def grade_json(run: Run, drill: str, sheet: dict[str, Any] | Path, tmp_path: Path,
               *extra: str) -> tuple[int, dict[str, Any]]:
    path = sheet if isinstance(sheet, Path) else tmp_path / "sheet.yaml"
    if not isinstance(sheet, Path):
        path.write_text(yaml.safe_dump(sheet, allow_unicode=True), encoding="utf-8")
    result = run("grade", drill, "--answers", str(path), "--json", *extra, ok=False)
    return result.exit_code, json.loads(result.output)


def test_grade_json_has_the_documented_shape(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama2-70b-mi300x", {"1a": "54 GB"}, tmp_path)
    assert set(out) == {"drill", "variant", "steps", "rubric"}
    step = out["steps"][0]
    assert set(step) == {"id", "kind", "answer", "verdict", "expected", "parsed",
                         "misconception", "misconceptions", "carried_forward", "diagnosis",
                         "feedback"}
    assert step["expected"] == {"value": 44, "unit": "GB"}
    assert step["parsed"] == {"value": 54, "unit": "GB", "dimension": "B", "in_step_unit": 54}
    assert step["misconception"] == "forgot-reserve"
    assert step["misconceptions"] == ["forgot-reserve"]


def test_grade_json_reports_a_value_in_the_unit_it_was_read_in(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100", {"shape-kv-heads": "8 GB"}, tmp_path)
    step = next(s for s in out["steps"] if s["id"] == "shape-kv-heads")
    assert (step["verdict"], step["parsed"]) == (
        "wrong", {"value": 8, "unit": "GB", "dimension": "B", "in_step_unit": None})


def test_grade_json_reports_a_range_by_its_ends(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100", {"sessions": "90-100"}, tmp_path)
    step = next(s for s in out["steps"] if s["id"] == "sessions")
    assert step["parsed"] == {"low": 90, "high": 100, "unit": "sequences",
                              "dimension": "sequences", "in_step_unit": 95}
    assert set(out["rubric"]["dimensions"]["arithmetic"]) == {"score", "max", "evidence"}


def test_a_wrong_answer_exits_1(run: Run, tmp_path: Path) -> None:
    code, _ = grade_json(run, "llama2-70b-mi300x", {"1a": "54 GB"}, tmp_path)
    assert code == 1


def test_text_steps_are_answered_or_unanswered(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama2-70b-mi300x", {"1b": "2 × L × kv × d × b"}, tmp_path)
    verdicts = {s["id"]: s["verdict"] for s in out["steps"]}
    assert verdicts["1b"] == "answered" and verdicts["2c-why"] == "unanswered"


def flags(out: dict[str, Any]) -> set[str]:
    return {flag["id"] for flag in out["rubric"]["red_flags"]}


def test_query_heads_sheet_raises_the_query_heads_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100",
                        {"shape-kv-heads": "32", "bytes-per-token": "512 KiB"}, tmp_path)
    assert "query-heads" in flags(out)


def test_weights_not_subtracted_raises_its_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100", {"kv-budget": "68 GB"}, tmp_path)
    assert "weights-or-full-hbm" in flags(out)


def test_all_of_hbm_usable_tied_with_a_slip_raises_no_red_flag(run: Run, tmp_path: Path) -> None:
    # 80 − 16 − 4 = 60 GB, and 72 − 8 − 4 = 60 GB with the weights at fp8's byte: a tie. The
    # step's own mistake is named alone; the slip only keeps it from being certain.
    _, out = grade_json(run, "llama31-8b-h100", {"kv-budget": "60 GB"}, tmp_path)
    step = next(s for s in out["steps"] if s["id"] == "kv-budget")
    assert step["misconceptions"] == ["full-hbm"] and step["diagnosis"] is None
    assert "weights-or-full-hbm" not in flags(out)


def test_a_flops_framing_raises_the_flops_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100",
                        {"policy": "It depends on the TFLOPS of the H100, compute decides."},
                        tmp_path)
    # the step's own wrong claim, with its correction (the rubric's flag of the same idea is
    # not raised beside it by the same sentence)
    assert flags(out) == {"flops-decide-capacity"}


def test_a_clean_sheet_raises_no_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade_json(run, "llama31-8b-h100", SHEETS / "llama31-8b-h100-correct.yaml",
                        tmp_path)
    assert flags(out) == set()


def test_an_unknown_step_in_the_sheet_is_a_usage_error(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sheet.yaml"
    path.write_text("9z: 44 GB\n", encoding="utf-8")
    result = run("grade", "llama2-70b-mi300x", "--answers", str(path), ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: {path}: no step '9z' in drill llama2-70b-mi300x")


def test_an_unknown_drill_is_a_usage_error_with_suggestions(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "sheet.yaml"
    path.write_text("{}\n", encoding="utf-8")
    result = run("grade", "llama2-70b", "--answers", str(path), ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: unknown drill 'llama2-70b': did you mean")


def test_grade_variant_uses_the_variants_own_numbers(run: Run, tmp_path: Path) -> None:
    _, base = grade_json(run, "llama2-70b-mi300x", {}, tmp_path)
    expected = {}
    for seed in range(1, 6):
        _, out = grade_json(run, "llama2-70b-mi300x", {}, tmp_path, "--variant", str(seed))
        assert out["variant"] == seed
        expected[seed] = out["steps"][0]["expected"]["value"]
    assert set(expected.values()) != {base["steps"][0]["expected"]["value"]}


def test_list_json_has_id_title_minutes_tags(run: Run) -> None:
    drills = json.loads(run("list", "--json").output)
    assert {d["id"] for d in drills} >= set(SEED_DRILLS)
    assert all(set(d) == {"id", "title", "minutes", "tags"} for d in drills)


@pytest.mark.parametrize("drill", SEED_DRILLS)
def test_show_never_reveals_an_answer(run: Run, drill: str, tmp_path: Path) -> None:
    shown = run("show", drill).output + run("show", drill, "--json").output
    _, graded = grade_json(run, drill, {}, tmp_path)
    for step in graded["steps"]:
        if step["expected"] and step["expected"]["unit"] in ("GB", "ms", "tokens/s"):
            value = step["expected"]["value"]
            assert f"= {value}" not in shown and f"{value:.3g} {step['expected']['unit']}" \
                not in shown.replace(",", ""), step["id"]


def test_show_json_lists_every_step_in_order(run: Run) -> None:
    out = json.loads(run("show", "llama2-70b-mi300x", "--json").output)
    assert [s["id"] for s in out["steps"]] == [
        "1a", "1b", "2a-dkv", "2a-bytes-per-token", "2a-bytes-per-sequence", "2a-max-sequences",
        "2b-dkv", "2b-bytes-per-token", "2b-bytes-per-sequence", "2b-max-sequences",
            "2b-max-sequences-real-card", "2c-ratio",
        "2c-why", "2d", "3a-bytes-per-step", "3a-step-time", "3b-aggregate", "3b-per-sequence",
        "3c-batch1-ceiling", "3c-explain", "4a", "4b", "4c", "4d", "4e", "4f",
        "5-bytes-per-step", "5a", "5b-aggregate", "5b-per-sequence", "5c"]


def test_8b_drill_has_the_seed_steps_in_order(run: Run) -> None:
    out = json.loads(run("show", "llama31-8b-h100", "--json").output)
    assert [s["id"] for s in out["steps"]] == [
        "shape-layers", "shape-kv-heads", "shape-head-dim", "shape-dtype-bytes",
        "bytes-per-token", "kv-budget", "live-tokens", "sessions", "sessions-fp8",
        "sessions-32k", "kv-budget-real-card", "sessions-real-card", "policy",
        "followup-128k-sessions", "followup-128k-policy",
        "followup-70b-tp-sessions", "followup-observed-lower"]


@pytest.mark.parametrize("drill", SEED_DRILLS)
def test_solution_renders_the_solver_numbers(run: Run, drill: str) -> None:
    text = run("solution", drill).output
    assert ("131,072" in text) if drill == "llama31-8b-h100" else ("44 GB" in text)


def test_70b_solution_teaches_the_calculator_discrepancy(run: Run) -> None:
    text = run("solution", "llama2-70b-mi300x").output
    assert "kvdrill calc --preset llama2-70b --seq 32768 --batch 4 --gpu mi300x" in text
    assert "54 GB" in text and "--reserve-gb 10" in text
