"""The capacity-policy drills (long-context-tier, llama31-70b-tp2-h100, llama31-405b-h200-tp,
multi-turn-growth): their headline figures through the real solver and presets, their keys,
and hand-written sheets graded through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.capacity.deployment import GB, GIB
from trainer.capacity.presets import build_deployment
from trainer.capacity.solver import solve, value_of
from trainer.drills.loader import data_dir, load_drill_file
from trainer.drills.reference import AnswerKey
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
KIB = 1024
MIB = 2**20
SHEETS = Path(__file__).parent / "sheets"
DRILLS = ("long-context-tier", "llama31-70b-tp2-h100", "llama31-405b-h200-tp", "multi-turn-growth")


def key(drill_id: str) -> AnswerKey:
    return AnswerKey(load_drill_file(data_dir("drills") / f"{drill_id}.yaml"))


def grade(
    run: Run, drill_id: str, sheet: dict[str, Any] | Path, tmp_path: Path
) -> tuple[int, dict[str, Any]]:
    path = sheet if isinstance(sheet, Path) else tmp_path / "sheet.yaml"
    if not isinstance(sheet, Path):
        path.write_text(yaml.safe_dump(sheet, allow_unicode=True), encoding="utf-8")
    result = run("grade", drill_id, "--answers", str(path), "--json", ok=False)
    return result.exit_code, json.loads(result.output)


def step_of(out: dict[str, Any], step_id: str) -> dict[str, Any]:
    return next(s for s in out["steps"] if s["id"] == step_id)


def llama8b_h100(**changes: Any) -> Any:
    values: dict[str, Any] = {
        "utilization": Fraction(9, 10),
        "reserve_gb": Fraction(4),
        "weights_gb": Fraction(16),
        "context": 131072,
    }
    values.update(changes)
    return build_deployment("llama-3.1-8b", "h100", values)[0]


def llama70b_tp2(**changes: Any) -> Any:
    values: dict[str, Any] = {
        "gpus": 2,
        "utilization": Fraction(9, 10),
        "reserve_gb": Fraction(4),
        "context": 4096,
        "weights_dtype": "fp8",
        "kv_dtype": "fp8",
    }
    values.update(changes)
    return build_deployment("llama-3.1-70b", "h100", values)[0]


def llama405b_h200(**changes: Any) -> Any:
    values: dict[str, Any] = {
        "gpus": 8,
        "utilization": Fraction(9, 10),
        "reserve_gb": Fraction(4),
        "context": 32768,
        "checkpoint": "fp8",  # Meta's release: 487.2 GB, attention and more kept in BF16
        "kv_dtype": "fp8",
    }
    values.update(changes)
    return build_deployment("llama-3.1-405b", "h200", values)[0]


# ---- every drill ------------------------------------------------------------------------------


# ---- long-context-tier ------------------------------------------------------------------------


def test_a_128k_session_of_llama31_8b_holds_16_gib() -> None:
    assert solve(llama8b_h100())["kv_bytes_per_sequence"] == 16 * GIB


def test_an_h100_holds_3_long_sessions_in_bf16_and_6_in_fp8() -> None:
    bf16 = solve(llama8b_h100())["max_concurrency"]
    fp8 = solve(llama8b_h100(kv_dtype="fp8"))["max_concurrency"]
    assert bf16 == 3
    assert fp8 == 6


def test_one_128k_session_displaces_32_chat_sessions() -> None:
    assert key("long-context-tier").reference("displaced").value == 32


def test_in_the_fp8_pool_a_long_session_is_16_bf16_chat_sessions() -> None:
    assert key("long-context-tier").reference("displaced-fp8").value == 16


def test_raising_the_cap_for_everyone_raises_its_red_flag(run: Run, tmp_path: Path) -> None:
    _, out = grade(
        run,
        "long-context-tier",
        {"pool-policy": "Easy: raise max_model_len for everyone."},
        tmp_path,
    )
    assert "raise-cap-for-everyone" in {f["id"] for f in out["rubric"]["red_flags"]}


# ---- llama31-70b-tp2-h100 ---------------------------------------------------------------------


def test_tp2_puts_4_of_the_8_kv_heads_on_each_gpu() -> None:
    assert solve(llama70b_tp2())["kv_heads_per_gpu"] == 4


def test_tp2_fp8_kv_is_80_kib_per_gpu_and_160_kib_in_total() -> None:
    s = solve(llama70b_tp2())
    assert s["kv_bytes_per_token_per_gpu"] == 80 * KIB
    assert s["kv_bytes_per_token"] == 160 * KIB


def test_each_gpu_holds_about_35_gb_of_fp8_weights() -> None:
    assert key("llama31-70b-tp2-h100").reference("weights-per-gpu").value == pytest.approx(
        35.28 * GB, rel=0.001
    )


def test_the_pair_holds_97_sessions_at_4k_about_the_seeds_100() -> None:
    sessions = solve(llama70b_tp2())["max_concurrency"]
    assert sessions == 97 and sessions == pytest.approx(100, rel=0.05)


def test_a_per_gpu_budget_for_the_pair_is_named_per_gpu_vs_total(run: Run, tmp_path: Path) -> None:
    _, out = grade(run, "llama31-70b-tp2-h100", {"kv-budget": "32.7 GB"}, tmp_path)
    assert step_of(out, "kv-budget")["misconception"] == "per-gpu-vs-total"


# ---- llama31-405b-h200-tp ---------------------------------------------------------------------


def test_tp8_holds_one_kv_head_per_gpu_and_252_kib_per_token() -> None:
    s = solve(llama405b_h200())
    assert s["kv_heads_per_gpu"] == 1
    assert s["kv_bytes_per_token"] == 252 * KIB


def test_tp16_still_holds_one_head_per_gpu_so_the_jobs_kv_per_token_doubles() -> None:
    tp8, tp16 = solve(llama405b_h200()), solve(llama405b_h200(gpus=16))
    assert tp16["kv_heads_per_gpu"] == 1
    assert tp16["kv_bytes_per_token"] == 2 * tp8["kv_bytes_per_token"] == 504 * KIB


def test_tp16_grows_the_budget_3x_but_the_sessions_only_1_5x() -> None:
    k = key("llama31-405b-h200-tp")
    assert k.reference("sessions-tp8").value == 58
    assert k.reference("sessions-tp16").value == 87
    assert float(k.reference("budget-ratio").value) == pytest.approx(2.98, abs=0.01)
    assert float(k.reference("sessions-ratio").value) == pytest.approx(1.5, abs=0.01)


def test_the_pp2_step_is_the_tp16_budget_over_the_unreplicated_kv() -> None:
    k = key("llama31-405b-h200-tp")
    tp16 = llama405b_h200(gpus=16)
    direct = value_of(tp16, "kv_budget_bytes") // (
        value_of(llama405b_h200(), "kv_bytes_per_token") * 32768
    )
    assert k.reference("sessions-pp2").value == direct == 174


# ---- multi-turn-growth ------------------------------------------------------------------------


def test_the_live_context_is_history_prompt_and_reply_so_far() -> None:
    assert key("multi-turn-growth").reference("live-context").value == 1024 + 6 * 768 + 256 + 256


def test_a_live_chat_holds_768_mib_and_64_fit_on_an_h100() -> None:
    k = key("multi-turn-growth")
    assert k.reference("session-bytes").value == 768 * MIB
    assert k.reference("sessions").value == 64


def test_the_prompt_only_estimate_overstates_capacity_about_4_8x() -> None:
    k = key("multi-turn-growth")
    assert k.reference("prompt-only-sessions").value == 309
    assert float(k.reference("overstatement").value) == pytest.approx(4.8, rel=0.01)


def test_summaries_and_prefix_caching_buy_154_and_77_chats() -> None:
    k = key("multi-turn-growth")
    assert k.reference("summarised-sessions").value == 154
    assert k.reference("prefix-sessions").value == 77


def test_a_prompt_only_session_count_is_named_and_flagged(run: Run, tmp_path: Path) -> None:
    _, out = grade(run, "multi-turn-growth", {"sessions": "~309"}, tmp_path)
    assert step_of(out, "sessions")["misconception"] == "prompt-only-context"
    assert "prompt-only" in {f["id"] for f in out["rubric"]["red_flags"]}
