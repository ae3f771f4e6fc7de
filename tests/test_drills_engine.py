"""The serving-engine drills (prefix-caching, paged-blocks-vllm, decode-roofline-vs-measured)
and the diagnosis drill (observed-concurrency-lower): their headline figures through the real
solver, their hand-written answer sheets through the real CLI, and their rubrics."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.capacity.solver import value_of
from trainer.drills.loader import load_drill_file, load_rubric
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution
from trainer.drills.variants import draw
from trainer.files.paths import data_dir
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "sheets"
DRILL_IDS = ("prefix-caching", "paged-blocks-vllm", "decode-roofline-vs-measured",
             "observed-concurrency-lower")
GB = 10**9


def key_of(drill_id: str, givens: dict[str, Any] | None = None) -> AnswerKey:
    return AnswerKey(load_drill_file(data_dir("drills") / f"{drill_id}.yaml"), givens)


def value(drill_id: str, step_id: str) -> Fraction:
    return key_of(drill_id).reference(step_id).value


def grade(run: Run, drill_id: str, sheet: dict[str, str] | Path,
          tmp_path: Path) -> tuple[int, dict[str, Any]]:
    path = sheet if isinstance(sheet, Path) else tmp_path / "sheet.yaml"
    if not isinstance(sheet, Path):
        path.write_text(yaml.safe_dump(sheet, allow_unicode=True), encoding="utf-8")
    result = run("grade", drill_id, "--answers", str(path), "--json", ok=False)
    return result.exit_code, json.loads(result.output)


# ---- prefix-caching ---------------------------------------------------------------------------


def test_prefix_sessions_without_sharing_are_the_seeds_96() -> None:
    assert value("prefix-caching", "sessions-no-sharing") == 96


def test_prefix_shared_once_fits_188_sessions() -> None:
    assert value("prefix-caching", "sessions-with-prefix") == 188


def test_prefix_sharing_nearly_doubles_the_sessions() -> None:
    assert value("prefix-caching", "sharing-gain") == Fraction(188, 96)


def test_prefix_256_token_blocks_share_only_seven_whole_blocks() -> None:
    assert value("prefix-caching", "shared-tokens-256") == 7 * 256


def test_prefix_256_token_blocks_cost_17_sessions() -> None:
    assert value("prefix-caching", "sessions-with-prefix-256") == 171


def test_prefix_caching_buys_nothing_at_32k_on_an_h100() -> None:
    key = key_of("prefix-caching")
    long = key.deployment("sessions-long-context")
    assert key.reference("sessions-long-context").value == value_of(long, "max_concurrency") == 12


def test_prefix_fp8_and_sharing_multiply() -> None:
    assert value("prefix-caching", "followup-fp8-prefix") == 377


# ---- paged-blocks-vllm ------------------------------------------------------------------------


def test_paged_a_1000_token_request_holds_63_blocks() -> None:
    assert value("paged-blocks-vllm", "blocks-per-request") == 63


def test_paged_tail_waste_is_8_slots_of_1008() -> None:
    assert value("paged-blocks-vllm", "tail-waste") == Fraction(8, 1008)


def test_paged_a_block_is_2_mib() -> None:
    assert value("paged-blocks-vllm", "block-bytes") == 2 * 2**20


# vLLM multiplies its utilisation by the memory the driver reports: 81,559 MiB on an H100
# (nvidia-smi), so 85.52 GB × 0.9 − 16 − 4 = 56.97 GB of KV.
REAL_H100_KV = 81_559 * 2**20 * Fraction(9, 10) - 20 * 10**9


def test_paged_budget_holds_27164_blocks_of_the_reported_h100() -> None:
    assert value("paged-blocks-vllm", "num-blocks") == REAL_H100_KV // (2 * 2**20) == 27_164


def test_paged_startup_line_is_blocks_over_512() -> None:
    assert value("paged-blocks-vllm", "engine-max-concurrency") == Fraction(27_164, 512)


def test_paged_solution_prints_vllms_startup_line() -> None:
    text = render_solution(key_of("paged-blocks-vllm"))
    assert "Maximum concurrency for 8,192 tokens per request: 53.05x" in text


def test_paged_sessions_at_real_length_are_eight_times_the_logged_x() -> None:
    sessions = value("paged-blocks-vllm", "paged-sessions")
    x = value("paged-blocks-vllm", "engine-max-concurrency")
    assert sessions == 431 and 8 < sessions / x < 8.2


def test_paged_colocated_copy_starts_just_above_one_on_the_reported_memory() -> None:
    assert value("paged-blocks-vllm", "colocated-x") == Fraction(8_814, 8_192)


def test_paged_colocated_longest_max_model_len_is_141028() -> None:
    colocated_kv = 81_559 * 2**20 * Fraction(45, 100) - 20 * 10**9
    assert value("paged-blocks-vllm", "colocated-max-len") == colocated_kv // 131_072


def test_paged_colocated_case_is_the_same_borderline_start_in_every_variant() -> None:
    drill = load_drill_file(data_dir("drills") / "paged-blocks-vllm.yaml")
    for seed in range(1, 9):
        x = AnswerKey(drill, draw(drill, seed)).reference("colocated-x").value
        assert 1 <= x < Fraction(11, 10)


# ---- decode-roofline-vs-measured --------------------------------------------------------------


def test_roofline_batch1_reads_15_55_gb() -> None:
    assert value("decode-roofline-vs-measured", "b1-bytes") == Fraction(15_546_712_064)


def test_roofline_batch1_floor_is_3_24_ms() -> None:
    assert float(value("decode-roofline-vs-measured", "b1-roofline")) == pytest.approx(
        3.2389e-3, rel=1e-4)


def test_roofline_batch1_achieves_43_percent() -> None:
    assert float(value("decode-roofline-vs-measured", "b1-fraction")) == pytest.approx(
        0.4262, abs=1e-4)


def test_roofline_batch96_reads_66_55_gb_like_the_data() -> None:
    assert float(value("decode-roofline-vs-measured", "b96-bytes")) / GB == pytest.approx(
        66.55, abs=0.005)


def test_roofline_batch96_achieves_73_percent() -> None:
    assert float(value("decode-roofline-vs-measured", "b96-fraction")) == pytest.approx(
        0.7336, abs=1e-4)


def test_roofline_8x32k_reads_what_64x4k_reads() -> None:
    key = key_of("decode-roofline-vs-measured")
    same = key.deployment("long-bytes").changed(batch=64, context=4096)
    assert key.reference("long-bytes").value == value_of(same, "bytes_read_per_step")


def test_roofline_8x32k_achieves_less_than_64x4k() -> None:
    fraction = value("decode-roofline-vs-measured", "long-fraction")
    assert float(fraction) == pytest.approx(0.559, abs=1e-3)
    assert fraction < value("decode-roofline-vs-measured", "b96-fraction")


def test_roofline_measured_comparisons_do_not_vary() -> None:
    drill = load_drill_file(data_dir("drills") / "decode-roofline-vs-measured.yaml")
    pinned = ("b1-bytes", "b1-roofline", "b1-fraction", "b96-bytes", "b96-roofline",
              "b96-fraction", "long-bytes", "long-fraction")
    base = AnswerKey(drill)
    for seed in range(1, 6):
        key = AnswerKey(drill, draw(drill, seed))
        assert [key.reference(s).value for s in pinned] == [base.reference(s).value
                                                          for s in pinned]


# ---- observed-concurrency-lower ---------------------------------------------------------------


def test_observed_estimate_is_96_sessions() -> None:
    assert value("observed-concurrency-lower", "estimate") == 96


def test_observed_gap_implies_a_live_context_near_4096_over_0_6() -> None:
    implied = value("observed-concurrency-lower", "implied-context")
    assert abs(float(implied) - 4096 / 0.6) / (4096 / 0.6) < 0.001


def test_observed_real_context_gives_58_sessions_40_percent_fewer() -> None:
    real = value("observed-concurrency-lower", "real-sessions")
    assert real == 58 and 1 - real / 96 == pytest.approx(0.40, abs=0.01)


def test_observed_prompt_only_path_gives_back_the_estimate() -> None:
    wrong = dict(key_of("observed-concurrency-lower").reference("real-sessions").wrong)
    assert wrong["prompt-only-context"] == 96


def test_observed_reservation_hypothesis_gives_12() -> None:
    assert value("observed-concurrency-lower", "reservation-sessions") == 12


def test_observed_fragmentation_is_under_a_tenth_of_a_percent() -> None:
    assert value("observed-concurrency-lower", "fragmentation") < Fraction(1, 1000)


def test_observed_10_gb_reserve_costs_about_11_percent() -> None:
    assert value("observed-concurrency-lower", "reserve-sessions") == 85


def test_observed_prompt_only_answer_is_named_by_grade(run: Run, tmp_path: Path) -> None:
    _, out = grade(run, "observed-concurrency-lower", {"real-sessions": "96"}, tmp_path)
    step = next(s for s in out["steps"] if s["id"] == "real-sessions")
    assert (step["verdict"], step["misconception"]) == ("wrong", "prompt-only-context")


def test_observed_prompt_only_answer_raises_its_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade(run, "observed-concurrency-lower", {"real-sessions": "96"}, tmp_path)
    assert "prompt-only-estimate" in {flag["id"] for flag in out["rubric"]["red_flags"]}


def test_diagnosis_rubric_weighs_operational_dimensions_above_arithmetic() -> None:
    rubric = load_rubric("diagnosis")
    points = {d.id: d.max for d in rubric.dimensions}
    assert all(points[d] > points["arithmetic"] for d in ("hypotheses", "evidence", "action"))


# ---- all four: sheets, rubrics ----------------------------------------------------------------


@pytest.mark.parametrize("drill_id", DRILL_IDS)
def test_correct_sheet_sounds_staff(run: Run, drill_id: str, tmp_path: Path) -> None:
    _, out = grade(run, drill_id, SHEETS / f"{drill_id}-correct.yaml", tmp_path)
    assert out["rubric"]["level"] == "staff"


