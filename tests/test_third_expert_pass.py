"""Issue 23: the third expert pass. Each point states its figure and its source and is checked
through the real solver (the drill's answer key) or the CLI's sheets and worked solutions, so a
stale copy in any of them fails here. Figures are worked by hand in the comments."""

from __future__ import annotations

import json
import math
from collections.abc import Callable

import pytest
from click.testing import Result

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.reading.exact import Fraction

Run = Callable[..., Result]
GB = 10**9
TB = 10**12
GIB = 2**30


def key(drill_id: str, variant: int | None = None) -> AnswerKey:
    drill, _ = find_drill(drill_id)
    return answer_key(drill, variant)


def solution(run: Run, drill_id: str, *variant: str) -> str:
    return " ".join(run("solution", drill_id, *variant).output.split())  # line breaks as spaces


# ---- 1. swap-or-recompute: Mistral-7B's 4,096-token sliding window --------------------------
# Mistral-7B-v0.1 config.json: sliding_window 4096 on all 32 layers. Variant 434213: Mistral at
# 16,384 tokens, PCIe 50 GB/s, prefill at the measured 550 TFLOP/s (shared/data/README.md).

MISTRAL_16K = 434213


def test_the_mistral_variant_is_the_one_the_expert_recomputed() -> None:
    givens = key("swap-or-recompute", MISTRAL_16K).givens
    assert (givens["model"], givens["context"], givens["link_gbs"]) == \
        ("mistral-7b-v0.1", 16384, 50)


def test_a_windowed_sequence_holds_only_its_window() -> None:
    # 2 × 32 × 8 × 128 × 2 B × 4,096 tokens held = 0.5 GiB, not 2 GiB for all 16,384
    assert key("swap-or-recompute", MISTRAL_16K).reference("kv-per-sequence").value == GIB // 2


def test_windowed_recompute_takes_472_ms_not_544() -> None:
    # 2 × P_layers × T: P_layers = 7,241,732,096 − 2 × 32,000 × 4,096 = 6,979,588,096
    # attention: 4 × 32 × 32 × 128 × (4,096²/2 + 12,288 × 4,096) = 3.079e13
    # LM head once: 2 × 32,000 × 4,096; all ÷ 550e12
    p_layers = 7_241_732_096 - 2 * 32_000 * 4_096
    attention = 4 * 32 * 32 * 128 * (Fraction(4096**2, 2) + 12_288 * 4_096)
    flops = 2 * p_layers * 16_384 + attention + 2 * 32_000 * 4_096
    recompute = key("swap-or-recompute", MISTRAL_16K).reference("recompute-time").value
    assert recompute == flops / (550 * TB)
    assert float(recompute) == pytest.approx(0.472, abs=0.0005)


def test_windowed_recompute_is_22_times_the_swap() -> None:
    # 471.8 ms ÷ (2 × 0.5 GiB ÷ 50 GB/s = 21.47 ms) = 21.97
    ratio = key("swap-or-recompute", MISTRAL_16K).reference("recompute-vs-swap").value
    assert float(ratio) == pytest.approx(22.0, abs=0.05)


def test_the_mistral_sheet_states_its_window(run: Run) -> None:
    shown = " ".join(run("show", "swap-or-recompute", "--variant", str(MISTRAL_16K))
                     .output.split())
    assert "sliding window of the last 4,096 tokens on all 32 layers" in shown
    assert "W = 4,096" in shown  # the attention FLOPs the recompute step counts


def test_every_windowed_variant_of_every_drill_states_its_window(run: Run) -> None:
    seen = 0
    for drill_id in ("swap-or-recompute", "sliding-window-kv"):
        drill, _ = find_drill(drill_id)
        for variant in range(12):
            if answer_key(drill, variant).base.window is None:
                continue
            seen += 1
            shown = " ".join(run("show", drill_id, "--variant", str(variant)).output.split())
            assert "sliding window" in shown, (drill_id, variant)
    assert seen >= 6


def test_the_window_ignored_is_named(run: Run, tmp_path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({"variant": MISTRAL_16K, "kv-per-sequence": "2 GiB"}),
                     encoding="utf-8")
    result = run("grade", "swap-or-recompute", "--answers", str(sheet), "--json", ok=False)
    (step,) = [s for s in json.loads(result.output)["steps"] if s["id"] == "kv-per-sequence"]
    # 2 GiB is also what query heads for KV heads give (32 ÷ 8 = 16,384 ÷ 4,096): both are said,
    # the window first, as the drill lists it
    assert step["misconception"] == "window-ignored"
    assert "query-heads" in step["misconceptions"]


def test_a_model_without_a_window_keeps_full_causal_attention() -> None:
    # Llama-3.1-8B at 8,192: (2 × 6.98e9 × 8,192 + 2 × 32 × 32 × 128 × 8,192² + LM head) ÷ 550e12
    p_layers = 8_030_261_248 - 2 * 128_256 * 4_096
    flops = 2 * p_layers * 8192 + 2 * 32 * 32 * 128 * 8192**2 + 2 * 128_256 * 4_096
    assert key("swap-or-recompute").reference("recompute-time").value == \
        Fraction(flops, 550 * TB)


# ---- 2 and 4. chunked-prefill-tpot: the last chunk, at the 512-token rate -------------------
# shared/data/README.md: a 512-token pass ran at 456 TFLOP/s; 2k-16k-token passes at ~550.


def _last_chunk_step_ms(chunk: int) -> float:
    # Default givens: 64 streams × 4,096 tokens of KV read at 3.4 TB/s, then FLOPs at 456: the
    # decode tokens' 2 × (6.98e9 + 0.525e9) each, the chunk's 2 × 6.98e9 each and its attention
    # over the 8,192-token document, 4 × 32 × 32 × 128 × C × (8,192 − C/2).
    p_layers = 8_030_261_248 - 2 * 128_256 * 4_096
    head = 128_256 * 4_096
    kv_read = 64 * 4096 * 131_072 / (3.4 * TB)
    flops = (64 * 2 * (p_layers + head) + 2 * p_layers * chunk
             + 4 * 32 * 32 * 128 * chunk * (8192 - chunk / 2))
    return (kv_read + flops / (456 * TB)) * 1000


def test_the_chunk_keeps_the_last_step_within_the_target() -> None:
    chunk = int(key("chunked-prefill-tpot").reference("max-chunk").value)
    assert _last_chunk_step_ms(chunk) <= 25 < _last_chunk_step_ms(chunk + 1)


def test_the_first_chunk_sizing_overruns_to_29_ms() -> None:
    # 417 tokens, the chunk sized without its attention, makes the last step 28.8 ms
    assert _last_chunk_step_ms(417) == pytest.approx(28.8, abs=0.1)


def test_a_mixed_step_uses_the_rate_of_a_512_token_pass(run: Run) -> None:
    drill, _ = find_drill("chunked-prefill-tpot")
    assert drill.givens["tflops"] == 456
    shown = " ".join(run("show", "chunked-prefill-tpot").output.split())
    assert "456 TFLOP/s, the rate measured for a 512-token pass" in shown


def test_the_unchunked_prefill_uses_the_rate_of_a_long_pass() -> None:
    deployment = key("chunked-prefill-tpot").deployment("unchunked-stall")
    assert deployment.tflops == 550


# ---- 5. the looser target is always looser ---------------------------------------------------


def test_the_looser_target_is_looser_in_every_variant() -> None:
    drill, _ = find_drill("chunked-prefill-tpot")
    for variant in range(60):
        k = answer_key(drill, variant)
        assert k.givens["tpot_ms"] < 40, variant
        assert k.reference("looser-target").value > k.reference("max-chunk").value, variant


# ---- 6. DeepSeek-V3's weights as released: 672.9 GB -------------------------------------------
# README_WEIGHTS.md: FP8 weights; the embedding and LM head stay BF16.


def test_deepseek_weights_are_672_9_gb(run: Run) -> None:
    weights = key("deepseek-v3-mla-h200").value("weights_bytes",
                                                 key("deepseek-v3-mla-h200").base)
    assert weights == 671_026_419_200 + 2 * 129_280 * 7_168  # one more byte per table param
    assert "FP8 weights of 672.9 GB (the embedding and LM head kept in BF16)" in \
        solution(run, "deepseek-v3-mla-h200")


# ---- 7 and 8. hybrid-state-kv: a ratio of floors, and vLLM V1's page padding -----------------


def test_the_hybrid_advantage_is_9_sessions_from_7_87_times_the_bytes(run: Run) -> None:
    # transformer 2 × 32 × 8 × 128 × 2 B × 32,768 = 4 GiB; hybrid 512 MiB + 8,716,288 B state
    assert pytest.approx(7.87, abs=0.005) == 4 * GIB / (GIB // 2 + 8_716_288)
    text = solution(run, "hybrid-state-kv")
    assert "**9** times as many sessions" in text
    assert "in bytes a transformer sequence is 7.87 times the hybrid's" in text


def test_the_hybrid_solution_names_vllms_page_padding(run: Run) -> None:
    # 80-token blocks: ⌈1,024 ÷ 80⌉ × 80 × 16 KiB + 28 pages × 327,680 B = 26,214,400 B;
    # 19.76e9 ÷ 26,214,400 = 753.8 → 753 (the solver's unpadded 775)
    assert math.floor(19_760_000_000 / (13 * 80 * 16_384 + 28 * 327_680)) == 753
    assert key("hybrid-state-kv").reference("sessions-short").value == 775
    text = solution(run, "hybrid-state-kv")
    assert "80-token blocks, 327,680-byte pages" in text and "753 sessions, not 775" in text


# ---- 9. a step reads the weights less the embedding table where the bandwidth was measured so --
# shared/data/README.md: read_weight_bytes 15.01 GB (16.06 GB less the 1.05 GB embedding table).


def test_a_measured_decode_step_reads_15_01_gb_of_weights() -> None:
    # (16,060,522,496 − 128,256 × 4,096 × 2 + 64 × 4,096 × 131,072) B ÷ 3.4e12 = 14.52 ms,
    # against the 14.58 ms measured at batch 64, 4k
    read = 16_060_522_496 - 128_256 * 4_096 * 2 + 64 * 4096 * 131_072
    for drill_id in ("chunked-prefill-tpot", "disaggregated-prefill"):
        assert key(drill_id).reference("decode-step").value == Fraction(read) / (
            Fraction("3.4") * TB)


def test_the_seed_roofline_still_reads_every_weight() -> None:
    # Seed 002 prices a step as all the weights plus the KV: 34.1 ms stays 34.1 ms.
    drill, _ = find_drill("llama2-70b-mi300x")
    assert round(float(AnswerKey(drill).reference("3a-step-time").value) * 1000, 1) == 34.1


# ---- 10. disaggregated-prefill: the measured row nearest each variant's decode step ---------
# shared/data/README.md, decode steps on an H200 (batch, context, implied bandwidth).

MEASURED_ROWS = {(32, 4096, Fraction("2.99")), (64, 4096, Fraction("3.4")),
                 (128, 2048, Fraction("3.25")), (16, 16384, Fraction("3.41"))}


def test_every_disaggregated_variant_uses_a_measured_row() -> None:
    drill, _ = find_drill("disaggregated-prefill")
    drawn = set()
    for variant in range(80):
        givens = answer_key(drill, variant).givens
        row = (givens["batch"], givens["context"], Fraction(str(givens["bandwidth_tbs"])))
        assert row in MEASURED_ROWS, variant
        drawn.add(row)
    assert drawn == MEASURED_ROWS


# ---- 11. swap-or-recompute's policy: where each cost lands ------------------------------------


def test_the_policy_says_recompute_spends_gpu_compute(run: Run) -> None:
    drill, _ = find_drill("swap-or-recompute")
    model_answer = " ".join(drill.step("policy").model_answer.split())
    assert "~240 ms of GPU compute that the running batch needs" in model_answer
    assert "copy engines" in model_answer
    assert "copies run on the GPU's copy engines beside the running batch" in \
        solution(run, "swap-or-recompute")


# ---- 12. littles-law-capacity: the memory vLLM multiplies -------------------------------------


def test_littles_law_sizes_memory_on_the_reported_total(run: Run) -> None:
    # (81,559 MiB × 0.9 − 4 GB − 16.06 GB) ÷ 536.9 MB = 105.998 → 105, not 96 on 80 GB
    assert key("littles-law-capacity").reference("memory-sessions").value == 105
    shown = " ".join(run("show", "littles-law-capacity").output.split())
    assert "81,559 MiB = 85.52 GB (not the marketed 80 GB)" in shown


# ---- The fourth pass: prose that follows each variant's numbers ---------------------------


def test_a_bigger_decode_batch_moves_gpus_to_the_prefill_pool(run: Run) -> None:
    # decode GPU time per request = output tokens × step ÷ batch, and the step's weight read is
    # shared: at 512 tokens, batch 32 gives 172 ms (ratio 0.65), batch 64 gives 116 ms (0.96)
    text = solution(run, "disaggregated-prefill")
    assert "a bigger decode batch shares each weight read among more streams" in text
    assert "moves GPUs back to the prefill pool" in text
    assert "bigger decode batches move GPUs to the decode pool" not in text


def test_the_pool_split_sentence_follows_the_variant(run: Run) -> None:
    # 16 streams at 16k with 256-token replies need ~2.4 prefill GPUs per decode GPU
    drill, _ = find_drill("disaggregated-prefill")
    for variant in range(40):
        k = answer_key(drill, variant)
        ratio = float(k.reference("pool-ratio").value)
        text = solution(run, "disaggregated-prefill", "--variant", str(variant))
        assert ("A 1:1 split is about right" in text) == (0.8 < ratio < 1.25), variant
        link = k.givens["link_gbs"] * 8
        assert f"Reading {link:,} Gb/s as {link:,} GB/s" in text, variant
        if ratio > 2:
            return
    pytest.fail("no variant with a prefill-heavy mix among the first 40")
