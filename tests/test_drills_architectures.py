"""The architecture drills (MLA, MoE decode, sliding windows, prefill against decode): their
headline figures through the real solver, their hand-written correct sheets through the real
CLI, and their text steps against the architectures rubric."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.files.paths import data_dir
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "sheets"
DRILLS = ("deepseek-v3-mla-h200", "mixtral-moe-decode", "sliding-window-kv", "prefill-vs-decode")
GB = 10**9


def ref(drill_id: str, step_id: str) -> Fraction:
    drill, _ = find_drill(drill_id)
    return AnswerKey(drill).reference(step_id).value


def grade(run: Run, drill_id: str, sheet: dict[str, str] | Path, tmp_path: Path) -> Result:
    path = sheet if isinstance(sheet, Path) else tmp_path / "sheet.yaml"
    if not isinstance(sheet, Path):
        path.write_text(json.dumps(sheet), encoding="utf-8")  # JSON is YAML
    return run("grade", drill_id, "--answers", str(path), "--json", ok=False)


# ---- Through the real CLI --------------------------------------------------------------------


@pytest.mark.parametrize("drill_id", DRILLS)
def test_drill_lints_clean_with_no_warnings_through_the_cli(run: Run, drill_id: str) -> None:
    result = run("lint", str(data_dir("drills") / f"{drill_id}.yaml"), "--json")
    (report,) = json.loads(result.output)
    assert (report["errors"], report["warnings"]) == ([], [])


def test_the_mla_latent_doubled_as_k_and_v_is_named_mla_kv_pair_before_fp32(
        run: Run, tmp_path: Path) -> None:
    result = grade(run, "deepseek-v3-mla-h200", {"bytes-per-token-per-gpu": "140,544 B"},
                   tmp_path)
    (step,) = [s for s in json.loads(result.output)["steps"]
               if s["id"] == "bytes-per-token-per-gpu"]
    assert (step["verdict"], step["misconception"]) == ("wrong", "mla-kv-pair")


def test_mla_node_total_given_per_gpu_is_named_per_gpu_vs_total(run: Run,
                                                                tmp_path: Path) -> None:
    result = grade(run, "deepseek-v3-mla-h200", {"bytes-per-token-node": "70,272 B"}, tmp_path)
    (step,) = [s for s in json.loads(result.output)["steps"] if s["id"] == "bytes-per-token-node"]
    assert step["misconception"] == "per-gpu-vs-total"


def test_moe_budget_without_weights_raises_the_weights_red_flag(run: Run,
                                                                tmp_path: Path) -> None:
    result = grade(run, "mixtral-moe-decode", {"kv-budget": "136 GB"}, tmp_path)
    flags = {f["id"] for f in json.loads(result.output)["rubric"]["red_flags"]}
    assert "weights-not-subtracted" in flags


def test_gemma_kv_width_from_hidden_is_named(run: Run, tmp_path: Path) -> None:
    result = grade(run, "sliding-window-kv", {"gemma-per-token": "588 KiB"}, tmp_path)
    (step,) = [s for s in json.loads(result.output)["steps"] if s["id"] == "gemma-per-token"]
    assert step["misconception"] == "hidden-for-kv-width"


def test_calling_decode_compute_bound_raises_its_red_flag(run: Run, tmp_path: Path) -> None:
    result = grade(run, "prefill-vs-decode",
                   {"why-two-regimes": "Decode is compute-bound, it does lots of matmuls."},
                   tmp_path)
    flags = {f["id"] for f in json.loads(result.output)["rubric"]["red_flags"]}
    # the step's wrong claim, with its correction: one flag for the one sentence
    assert flags == {"decode-compute-bound"}


# ---- DeepSeek-V3: MLA on 8 × H200 ----------------------------------------------------------------


def test_mla_costs_61_x_576_x_2_bytes_per_token_per_gpu() -> None:
    assert ref("deepseek-v3-mla-h200", "bytes-per-token-per-gpu") == 61 * 576 * 2 == 70_272


def test_mla_latent_is_held_whole_on_all_8_gpus() -> None:
    assert ref("deepseek-v3-mla-h200", "bytes-per-token-node") == 8 * 70_272


def test_an_mha_cache_with_192_wide_keys_would_be_about_71_times_one_latent() -> None:
    # DeepSeek-V3's own MHA shapes: a 192-wide key (128 + 64 RoPE) and a 128-wide value.
    assert ref("deepseek-v3-mla-h200", "mha-bytes-per-token") == 61 * 128 * (192 + 128) * 2
    assert float(ref("deepseek-v3-mla-h200", "mha-vs-latent")) == pytest.approx(71.1, abs=0.05)


def test_gqa8_split_8_ways_holds_less_per_gpu_than_mla() -> None:
    assert ref("deepseek-v3-mla-h200", "gqa8-per-gpu") == 2 * 61 * 1 * 128 * 2 == 31_232


def test_deepseek_budget_subtracts_all_672_9_gb_of_weights() -> None:
    # 671,026,419,200 parameters at 1 B (FP8), the embedding and LM head (2 × 129,280 × 7,168)
    # at 2 B as released: 672,879,777,280 B (issue 23; DeepSeek-V3 README_WEIGHTS.md)
    expected = 8 * (141 * Fraction(9, 10) - 4) * GB - 671_026_419_200 - 2 * 129_280 * 7168
    assert ref("deepseek-v3-mla-h200", "kv-budget") == expected


def test_deepseek_node_holds_16_sessions_at_32k_and_1_with_mha() -> None:
    assert (int(ref("deepseek-v3-mla-h200", "sessions")),
            int(ref("deepseek-v3-mla-h200", "sessions-if-mha"))) == (16, 1)


# ---- Mixtral-8x7B on 2 × H100 ------------------------------------------------------------------


def test_mixtral_keeps_all_93_4_gb_resident() -> None:
    assert ref("mixtral-moe-decode", "resident-weights") == 46_702_792_704 * 2


def test_mixtral_batch_1_step_reads_only_the_active_25_8_gb() -> None:
    assert ref("mixtral-moe-decode", "read-batch1") == 12_879_925_248 * 2


def test_mixtral_batch_64_step_reads_nearly_all_93_4_gb() -> None:
    assert float(ref("mixtral-moe-decode", "read-batch64")) == pytest.approx(93.4e9, rel=1e-3)


def test_mixtral_batch_1_ceiling_is_about_260_tokens_per_second() -> None:
    assert float(ref("mixtral-moe-decode", "ceiling-batch1")) == pytest.approx(260, rel=0.01)


def test_mixtral_batch_64_step_is_about_19_ms_and_3_4k_tokens_per_second() -> None:
    step = float(ref("mixtral-moe-decode", "step-batch64"))
    rate = float(ref("mixtral-moe-decode", "tps-batch64"))
    assert [step, rate] == pytest.approx([0.0191, 3356], rel=0.01)


# ---- Sliding windows --------------------------------------------------------------------------


def test_mistral_window_caps_a_32k_session_at_4096_tokens() -> None:
    assert ref("sliding-window-kv", "mistral-per-sequence") == 131_072 * 4096


def test_mistral_without_its_window_holds_8x_more() -> None:
    assert ref("sliding-window-kv", "mistral-per-sequence-full") == 131_072 * 32_768


def test_mistral_sessions_are_99_with_the_window_and_12_without() -> None:
    assert (int(ref("sliding-window-kv", "mistral-sessions")),
            int(ref("sliding-window-kv", "mistral-sessions-full"))) == (99, 12)


def test_gemma2_uses_head_dim_256_not_hidden_over_heads() -> None:
    assert ref("sliding-window-kv", "gemma-head-dim") == 256 != 3584 // 16


def test_gemma2_session_windows_only_half_its_layers() -> None:
    per_layer_token = 2 * 8 * 256 * 2
    expected = per_layer_token * (21 * 32_768 + 21 * 4096)
    assert ref("sliding-window-kv", "gemma-per-sequence") == expected


def test_gemma2_sessions_are_7_with_windows_and_4_without() -> None:
    assert (int(ref("sliding-window-kv", "gemma-sessions")),
            int(ref("sliding-window-kv", "gemma-sessions-full"))) == (7, 4)


# ---- Prefill against decode ---------------------------------------------------------------------


def test_a_4k_prefill_is_about_62_tflop_counted_as_the_measurement_did() -> None:
    # 2 × 6,979,588,096 (the layers: 8.03e9 − 2 × 128,256 × 4,096) × 4096 + 2 × 525,336,576
    # (the LM head, once) + 2 × 32 × 32 × 128 × 4096² = 57.18 + 0.001 + 4.40 = 61.58 TFLOP
    # (shared/data/README.md: linear 57.2 + attention 4.40 TFLOP, 111.3 ms at 553 TFLOP/s)
    head = 128_256 * 4096
    expected = 2 * (8_030_261_248 - 2 * head) * 4096 + 2 * head + 2 * 32 * 32 * 128 * 4096**2
    assert ref("prefill-vs-decode", "prefill-flops") == expected


def test_prefill_vs_decode_solution_matches_the_measured_4k_prefill(run: Run) -> None:
    text = " ".join(run("solution", "prefill-vs-decode").output.split())
    assert "at the measured 550 TFLOP/s: **112 ms**" in text
    assert "The measured 4k prefill took 111.3 ms, within 1% of this figure" in text
    assert "gives 128 ms, 14% over" in text  # 127.6 ÷ 112.0 (expert pass 14: not 13%)


def test_prefill_at_550_tflops_takes_1_8x_the_peak_time() -> None:
    ratio = ref("prefill-vs-decode", "prefill-measured") / ref("prefill-vs-decode", "prefill-peak")
    assert ratio == Fraction(989, 550)


def test_batch_1_decode_step_is_about_3_5_ms_on_the_roofline() -> None:
    assert float(ref("prefill-vs-decode", "decode-step-roofline")) == pytest.approx(3.46e-3,
                                                                                  rel=0.01)


def test_one_4k_prefill_costs_about_15_measured_decode_steps() -> None:
    assert float(ref("prefill-vs-decode", "prefill-in-decode-steps")) == pytest.approx(15,
                                                                                     rel=0.1)


def test_decode_turns_compute_bound_at_989_over_4_8() -> None:
    assert ref("prefill-vs-decode", "crossover-batch") == Fraction(989, 1) / Fraction(48, 10)
