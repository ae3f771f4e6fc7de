"""The seeds' figures, computed by the real solver from the real presets."""

from __future__ import annotations

import pytest

from tests.conftest import seed_8b_h100, seed_70b_mi300x
from trainer.capacity.deployment import GB, GIB
from trainer.capacity.presets import build_deployment
from trainer.capacity.solver import solve
from trainer.reading.exact import Fraction

KIB = 1024


def test_llama31_8b_kv_bytes_per_token_is_131072() -> None:
    assert solve(seed_8b_h100())["kv_bytes_per_token"] == 131_072 == 128 * KIB


def test_llama31_8b_kv_budget_on_h100_is_52_gb() -> None:
    assert solve(seed_8b_h100())["kv_budget_bytes"] == 52 * GB


def test_llama31_8b_live_tokens_are_about_397k() -> None:
    assert solve(seed_8b_h100())["max_tokens"] == pytest.approx(397_000, rel=0.002)


def test_llama31_8b_sessions_are_about_97_and_96_whole() -> None:
    s = solve(seed_8b_h100())
    assert round(s["kv_budget_bytes"] / s["kv_bytes_per_sequence"]) == 97
    assert s["max_concurrency"] == 96


def test_llama31_8b_fp8_kv_gives_about_190_sessions() -> None:
    s = solve(seed_8b_h100(kv_dtype="fp8"))
    assert s["kv_bytes_per_token"] == 64 * KIB
    assert s["max_concurrency"] == pytest.approx(190, rel=0.05)


def test_llama31_8b_at_32k_context_holds_12_sessions() -> None:
    assert solve(seed_8b_h100(context=32768))["max_concurrency"] == 12


def test_llama31_8b_at_128k_costs_16_gib_and_holds_3_sessions() -> None:
    s = solve(seed_8b_h100(context=131072))
    assert s["kv_bytes_per_sequence"] == 16 * GIB
    assert s["max_concurrency"] == 3


def test_llama31_70b_followup_on_two_h100_holds_about_100_sessions() -> None:
    deployment, _ = build_deployment(
        "llama-3.1-70b",
        "h100",
        {"gpus": 2, "weights_dtype": "fp8", "kv_dtype": "fp8", "utilization": Fraction(9, 10),
         "reserve_gb": Fraction(4), "context": 4096},
    )
    s = solve(deployment)
    assert s["kv_bytes_per_token"] == 160 * KIB
    assert s["kv_bytes_per_token_per_gpu"] == 80 * KIB
    assert s["max_concurrency"] == pytest.approx(100, rel=0.05)


def test_70b_mi300x_budget_is_44_gb() -> None:
    assert solve(seed_70b_mi300x())["kv_budget_bytes"] == 44 * GB


def test_70b_mi300x_gqa_bytes_per_token_is_327680() -> None:
    assert solve(seed_70b_mi300x())["kv_bytes_per_token"] == 327_680


def test_70b_mi300x_gqa_holds_4_sequences() -> None:
    assert solve(seed_70b_mi300x())["max_concurrency"] == 4


def test_70b_mi300x_mha_bytes_per_token_is_2621440_and_holds_none() -> None:
    s = solve(seed_70b_mi300x(kv_heads=64))
    assert s["kv_bytes_per_token"] == 2_621_440
    assert s["max_concurrency"] == 0


def test_70b_mi300x_decode_step_at_4_is_34_1_ms() -> None:
    s = solve(seed_70b_mi300x(batch=4))
    assert round(s["decode_step_seconds"] * 1000, 1) == Fraction("34.1")


def test_70b_mi300x_throughput_at_4_is_117_and_29_3_tokens_per_second() -> None:
    s = solve(seed_70b_mi300x(batch=4))
    assert round(s["tokens_per_second"]) == 117
    assert round(s["tokens_per_second_per_sequence"], 1) == Fraction("29.3")


def test_70b_mi300x_batch1_ceiling_is_38_4_tokens_per_second() -> None:
    s = solve(seed_70b_mi300x())
    assert round(s["batch1_ceiling_tokens_per_second"], 1) == Fraction("38.4")


@pytest.mark.parametrize(
    ("option", "changes", "sequences"),
    [
        ("4a fp8 KV", {"kv_dtype": "fp8"}, 8),
        ("4b int8 weights", {"weights_dtype": "int8"}, 10),
        ("4c MQA", {"kv_heads": 1}, 32),
        ("4d half context", {"context": 16384}, 8),
        ("4e two GPUs", {"gpus": 2}, 21),
    ],
)
def test_70b_mi300x_doubling_options(option: str, changes: dict[str, object],
                                     sequences: int) -> None:
    assert solve(seed_70b_mi300x(**changes))["max_concurrency"] == sequences


def test_70b_mi300x_fp8_kv_at_double_batch_reads_the_same_bytes_per_step() -> None:
    fp16_at_4 = solve(seed_70b_mi300x(batch=4))
    fp8_at_8 = solve(seed_70b_mi300x(kv_dtype="fp8", batch=8))
    assert fp8_at_8["bytes_read_per_step"] == fp16_at_4["bytes_read_per_step"]
    assert fp8_at_8["tokens_per_second"] == 2 * fp16_at_4["tokens_per_second"]
