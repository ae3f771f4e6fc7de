"""The serving-system drills (disaggregated prefill, speculative decoding, chunked prefill, swap
or recompute, Little's law, hybrid models): their default answers through the real solver,
each computed here by hand, their named wrong paths through the real CLI, and their variants'
keys graded through `grade --variant`."""

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
DRILLS = ("disaggregated-prefill", "speculative-decoding", "chunked-prefill-tpot",
          "swap-or-recompute", "littles-law-capacity", "hybrid-state-kv")
GB, TB = 10**9, 10**12
KV_8B = 2 * 32 * 8 * 128 * 2  # Llama-3.1-8B, bf16: 131,072 B per token
WEIGHTS_8B = 8_030_261_248 * 2  # 16.06 GB
# The prefill FLOP count behind the measured 550 TFLOP/s (shared/data/README.md): a prompt token
# multiplies the layers' 6.98B parameters; the embedding is a lookup, the LM head runs once.
HEAD_8B = 128_256 * 4096  # 525,336,576
LAYERS_8B = 8_030_261_248 - 2 * HEAD_8B  # 6,979,588,096


def solution(run: Run, drill_id: str) -> str:
    return " ".join(run("solution", drill_id).output.split())  # line breaks as spaces


def ref(drill_id: str, step_id: str) -> Fraction:
    drill, _ = find_drill(drill_id)
    return AnswerKey(drill).reference(step_id).value


def graded_step(run: Run, drill_id: str, step_id: str, answer: str, tmp_path: Path) -> dict:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(json.dumps({step_id: answer}), encoding="utf-8")
    result = run("grade", drill_id, "--answers", str(sheet), "--json", ok=False)
    (step,) = [s for s in json.loads(result.output)["steps"] if s["id"] == step_id]
    return step


# ---- Through the real CLI --------------------------------------------------------------------


@pytest.mark.parametrize("drill_id", DRILLS)
def test_drill_lints_clean_with_no_warnings(run: Run, drill_id: str) -> None:
    result = run("lint", str(data_dir("drills") / f"{drill_id}.yaml"), "--json")
    (report,) = json.loads(result.output)
    assert (report["errors"], report["warnings"]) == ([], [])


@pytest.mark.parametrize("drill_id", DRILLS)
def test_a_variant_key_graded_through_grade_variant_is_all_correct(
        run: Run, drill_id: str, tmp_path: Path) -> None:
    run("variants", drill_id, "--count", "1", "--seed", "7", "--out", str(tmp_path))
    (sheet,) = tmp_path.glob(f"{drill_id}-*-answers.yaml")
    variant = sheet.name.removeprefix(f"{drill_id}-").removesuffix("-answers.yaml")
    result = run("grade", drill_id, "--variant", variant, "--answers", str(sheet), "--json",
                 ok=False)
    assert result.exit_code == 0, result.output


def test_the_six_tags_are_listed(run: Run) -> None:
    drills = json.loads(run("list", "--json").output)
    tags = {tag for drill in drills for tag in drill["tags"]}
    assert {"disaggregation", "speculative-decoding", "chunked-prefill", "offload",
            "littles-law", "hybrid"} <= tags


def test_400_gbit_read_as_400_gbyte_is_named(run: Run, tmp_path: Path) -> None:
    # 512 MiB at 400 GB/s: 1.34 ms instead of 10.7 ms.
    step = graded_step(run, "disaggregated-prefill", "transfer-ib", "1.34 ms", tmp_path)
    assert (step["verdict"], step["misconception"]) == ("wrong", "link-bits-as-bytes")


def test_a_one_way_swap_is_named(run: Run, tmp_path: Path) -> None:
    step = graded_step(run, "swap-or-recompute", "swap-time", "21.5 ms", tmp_path)
    assert step["misconception"] == "one-way-swap"


def test_k_plus_one_tokens_per_round_is_named_all_drafts_accepted(run: Run,
                                                                   tmp_path: Path) -> None:
    step = graded_step(run, "speculative-decoding", "expected-tokens", "5 tokens", tmp_path)
    assert step["misconception"] == "all-drafts-accepted"


def test_open_conversations_as_in_flight_is_named(run: Run, tmp_path: Path) -> None:
    # 30 × (7.94 + 60) s ≈ 2,038 counted as in flight.
    step = graded_step(run, "littles-law-capacity", "in-flight", "2038", tmp_path)
    assert step["misconception"] == "think-time-in-flight"


def test_a_chunk_given_the_whole_tpot_is_named(run: Run, tmp_path: Path) -> None:
    # 25 ms × 456 TFLOP/s = 11.4 TFLOP ÷ (2 × 6.98e9 + 4 × 32 × 32 × 128 × 8192 = 18.25e9 FLOP
    # per token of the last chunk) ≈ 625; with its (T − C/2) ≈ 630 tokens.
    step = graded_step(run, "chunked-prefill-tpot", "max-chunk", "630 tokens", tmp_path)
    assert step["misconception"] == "mixed-step-without-decode"


def test_the_old_additive_mixed_step_is_named(run: Run, tmp_path: Path) -> None:
    # A whole decode step (10.106 + 4.415 ms) plus the chunk: 10.48 ms × 456e12 = 4.78 TFLOP
    # ÷ 18.25e9 per last-chunk token ≈ 262 tokens, the weights read twice.
    step = graded_step(run, "chunked-prefill-tpot", "max-chunk", "262 tokens", tmp_path)
    assert (step["verdict"], step["misconception"]) == ("wrong", "mixed-step-additive")


def test_all_parameters_per_prompt_token_is_named(run: Run, tmp_path: Path) -> None:
    # 2 × 8.03e9 per token: (14.894 ms × 456e12 − 64 × 2 × 8.03e9) = 5.76 TFLOP ÷ (2 × 8.03e9
    # + 4.29e9 of attention) ≈ 283; with its (T − C/2) ≈ 284 tokens.
    step = graded_step(run, "chunked-prefill-tpot", "max-chunk", "284 tokens", tmp_path)
    assert (step["verdict"], step["misconception"]) == ("wrong", "all-params-per-prompt-token")


def test_kv_in_every_jamba_layer_is_named(run: Run, tmp_path: Path) -> None:
    step = graded_step(run, "hybrid-state-kv", "kv-per-token", "128 KiB", tmp_path)
    assert step["misconception"] == "hybrid-kv-all-layers"


# ---- Disaggregated prefill: Llama-3.1-8B, H200 rates measured, 400 Gb/s IB -----------------------


def test_a_4k_prompt_hands_over_512_mib() -> None:
    assert ref("disaggregated-prefill", "kv-per-request") == 4096 * KV_8B == 512 * 2**20


def test_512_mib_over_400_gbit_takes_10_7_ms() -> None:
    # 536,870,912 B ÷ 50e9 B/s = 10.737 ms
    assert ref("disaggregated-prefill", "transfer-ib") == Fraction(536_870_912, 50 * GB)


def test_the_same_kv_over_nvlink_takes_1_2_ms() -> None:
    assert float(ref("disaggregated-prefill", "transfer-nvlink")) == pytest.approx(1.193e-3,
                                                                                   rel=1e-3)


def test_a_4k_prefill_takes_112_ms_as_the_measurement_counts_flops() -> None:
    # (2 × 6.98e9 × 4096 + 2 × 0.525e9 + 2 × 32 × 32 × 128 × 4096²) ÷ 550e12
    # = (57.17 + 0.001 + 4.40) TFLOP ÷ 550 TFLOP/s = 111.96 ms; measured 111.3 ms
    # (shared/data/README.md), where 2 × 8.03e9 per token gave 127.6 ms, 13% off.
    expected = Fraction(2 * LAYERS_8B * 4096 + 2 * HEAD_8B + 2 * 32 * 32 * 128 * 4096**2,
                        550 * TB)
    assert ref("disaggregated-prefill", "prefill-time") == expected
    assert float(expected) == pytest.approx(111.3e-3, rel=0.01)


def test_disaggregated_solution_counts_layer_params_and_the_whole_transfer(run: Run) -> None:
    text = solution(run, "disaggregated-prefill")
    assert "= **112 ms**" in text and "2 × all 8.03B per token would give 128 ms" in text
    assert "(NixlConnector) has the decode side pull the blocks after the prefill finishes" in text


def test_one_prefill_gpu_feeds_about_one_decode_gpu() -> None:
    # prefill 111.96 ms (above);
    # decode step: (15.01e9 read, the embedding table left out as the measured 3.4 TB/s left it
    # out, + 64 × 536.9e6) ÷ 3.4e12 = 14.52 ms; × 512 ÷ 64 = 116.2 ms
    prefill = Fraction(2 * LAYERS_8B * 4096 + 2 * HEAD_8B + 2 * 32 * 32 * 128 * 4096**2,
                       550 * TB)
    read = WEIGHTS_8B - HEAD_8B * 2  # 128,256 × 4,096 × 2 B of embedding table not read
    decode = 512 * (read + 64 * 4096 * KV_8B) / (Fraction("3.4") * TB) / 64
    assert ref("disaggregated-prefill", "pool-ratio") == prefill / decode
    assert float(ref("disaggregated-prefill", "pool-ratio")) == pytest.approx(0.964, abs=0.001)


# ---- Speculative decoding: Llama-3.1-70B on an MI300X, Llama-3.2-1B drafting ------------------


def test_alpha_0_8_and_k_4_yield_3_36_tokens_per_round() -> None:
    # 1 + 0.8 + 0.64 + 0.512 + 0.4096 = 3.3616
    assert ref("speculative-decoding", "expected-tokens") == Fraction("3.3616")


def test_the_draft_speeds_a_batch_1_user_about_3_1_times() -> None:
    # target step (141.1e9 + 4096 × 327,680) ÷ 5.3e12 = 26.88 ms; draft step
    # (2.4716e9 + 4096 × 32,768) ÷ 5.3e12 = 0.492 ms; 3.3616 × 26.88 ÷ (4 × 0.492 + 26.88)
    target = (70_553_706_496 * 2 + 4096 * 327_680) / (Fraction("5.3") * TB)
    draft = (1_235_814_400 * 2 + 4096 * 32_768) / (Fraction("5.3") * TB)
    expected = Fraction("3.3616") * target / (4 * draft + target)
    assert ref("speculative-decoding", "speedup") == expected
    assert float(expected) == pytest.approx(3.13, abs=0.01)


def test_the_draft_costs_the_card_sessions() -> None:
    # (192 × 0.9 − 6) GB − 141.1 GB − 2.47 GB = 23.2 GB over (320 + 32) KiB × 4096 = 1.48 GB
    assert ref("speculative-decoding", "sessions-with-draft") == 15


def test_verification_stops_being_free_near_batch_49() -> None:
    # 1,307 TFLOP/s ÷ 5.3 TB/s = 246.6 (2-byte weights) ÷ (k + 1 = 5)
    assert float(ref("speculative-decoding", "compute-bound-batch")) == pytest.approx(
        1307 / 5.3 / 5, rel=1e-9)


def test_speculation_turns_into_a_loss_only_near_batch_166() -> None:
    # ridge 1,307 ÷ 5.3 = 246.6 × E 3.3616 ÷ (k + 1 = 5) = 165.8 (no KV reads, no draft time)
    assert ref("speculative-decoding", "spec-breakeven") == \
        Fraction(1307 * 10, 53) * Fraction("3.3616") / 5
    assert float(ref("speculative-decoding", "spec-breakeven")) == pytest.approx(165.8, abs=0.1)


def test_speculative_solution_separates_not_free_from_a_loss(run: Run) -> None:
    text = solution(run, "speculative-decoding")
    assert "at about **49.3 sequences**. Above that, verification is no longer free" in text
    assert "B = ridge × E ÷ (k + 1) = **166 sequences**" in text
    assert "speculation slows the server down" not in text


# ---- Chunked prefill: 64 streams at 4k, 25 ms TPOT ---------------------------------------------


# A mixed step (Sarathi-Serve): decode and chunk tokens share the matmuls, so
# step = KV read + max(weight read, FLOPs ÷ 456 TFLOP/s), 456 being the rate measured for a
# 512-token pass (shared/data/README.md), the size of a mixed step; the costliest step is the
# last chunk's, whose C tokens attend to the T − C before them: 4 × L × H × d × C × (T − C/2).


def test_the_matmuls_get_what_the_decode_kv_read_leaves() -> None:
    # KV read: 64 × 4096 × 131,072 B = 34.36 GB ÷ 3.4e12 = 10.106 ms; 25 − 10.106 = 14.894 ms
    # (the 4.41 ms weight read is not subtracted: the matmuls overlap it)
    kv_read = Fraction(64 * 4096 * KV_8B) / (Fraction("3.4") * TB)
    assert ref("chunked-prefill-tpot", "chunk-budget") == Fraction(25, 1000) - kv_read


def test_the_chunk_holds_through_the_last_chunk_at_320_tokens() -> None:
    # room = 14.894e-3 × 456e12 − 64 × 2 × (6.98e9 + 0.525e9) = 6.792e12 − 0.961e12 = 5.831e12
    # per last-chunk token: 2 × 6.98e9 + 4 × 32 × 32 × 128 × 8192 = 13.96e9 + 4.29e9 = 18.25e9
    # → 319.4, and with (T − C/2) in place of T, 320 tokens (issue 23: 518 overran to 28.9 ms)
    assert ref("chunked-prefill-tpot", "max-chunk") == 320


def test_a_chunk_sized_for_the_first_chunk_is_named(run: Run, tmp_path: Path) -> None:
    # 5.831e12 ÷ 13.96e9 = 417.7 → 417: no attention, as if every chunk were the first
    step = graded_step(run, "chunked-prefill-tpot", "max-chunk", "417", tmp_path)
    assert (step["verdict"], step["misconception"]) == ("wrong", "chunk-attention-ignored")


def test_an_8k_document_takes_26_chunked_steps_650_ms() -> None:
    # ⌈8192 ÷ 320⌉ = 26 steps × 25 ms, an upper bound
    assert ref("chunked-prefill-tpot", "chunk-steps") == 26
    assert ref("chunked-prefill-tpot", "chunked-ttft") == Fraction(650, 1000)


def test_an_unchunked_8k_prompt_stalls_every_stream_252_ms() -> None:
    # 10.106 ms KV read + (2 × 6.98e9 × 8256 + 2 × 0.525e9 × 65 + 2 × 32 × 32 × 128 × 8192²)
    # ÷ 550e12 = 10.106 + (115.25 + 0.07 + 17.59) TFLOP ÷ 550 = 10.106 + 241.65 = 251.76 ms
    assert float(ref("chunked-prefill-tpot", "unchunked-stall")) == pytest.approx(251.76e-3,
                                                                                  rel=1e-4)


def test_a_40_ms_target_fits_701_tokens() -> None:
    # (29.894e-3 × 456e12 − 0.961e12) = 12.67e12 ÷ 18.25e9 = 694, with (T − C/2): 701
    assert ref("chunked-prefill-tpot", "looser-target") == 701


def test_chunked_solution_prices_the_mixed_step_with_max(run: Run) -> None:
    text = solution(run, "chunked-prefill-tpot")
    assert "step ≈ KV read + max(weight read, FLOPs ÷ 456 TFLOP/s)" in text
    assert "gives **320 tokens**" in text and "C would be 417 tokens" in text
    assert "reads the weights twice: it gives 262 tokens" in text


# ---- Swap or recompute: Llama-3.1-8B at 8k, PCIe Gen5 ------------------------------------------


def test_a_swap_out_and_back_of_1_gib_takes_43_ms() -> None:
    # 2 × 1,073,741,824 B ÷ 50e9 B/s = 42.95 ms
    assert ref("swap-or-recompute", "swap-time") == Fraction(2 * 2**30, 50 * GB)


def test_recomputing_8k_tokens_takes_240_ms() -> None:
    # (2 × 6.98e9 × 8192 + 2 × 0.525e9 + 2 × 32 × 32 × 128 × 8192²) ÷ 550e12
    # = (114.35 + 0.001 + 17.59) TFLOP ÷ 550 = 239.9 ms (2 × 8.03e9 per token: 271 ms)
    expected = Fraction(2 * LAYERS_8B * 8192 + 2 * HEAD_8B + 2 * 32 * 32 * 128 * 8192**2,
                        550 * TB)
    assert ref("swap-or-recompute", "recompute-time") == expected


def test_recompute_beats_a_gqa_swap_only_below_10_gb_per_s() -> None:
    # 2 × 131,072 B × 550e12 ÷ (2 × 6.98e9) = 10.33e9 B/s
    assert ref("swap-or-recompute", "breakeven-link") == Fraction(2 * KV_8B * 550 * TB,
                                                                  2 * LAYERS_8B)


def test_llama2_7b_on_gen4_recomputes_up_to_38_6k_tokens() -> None:
    # P_layers = 6,738,415,616 − 2 × 32,000 × 4,096 = 6,476,271,616;
    # (550e12 × 2 × 524,288 ÷ 25e9 − 2 × 6.476e9) ÷ (2 × 32 × 32 × 128) ≈ 38,590
    assert float(ref("swap-or-recompute", "mha-crossover")) == pytest.approx(38_590, rel=1e-3)


def test_a_250_gb_host_tier_parks_232_sessions() -> None:
    # 250e9 ÷ 1,073,741,824 = 232.8
    assert ref("swap-or-recompute", "cpu-tier-sessions") == 232


# ---- Little's law: Llama-3.1-8B on H100s, 20 ms TPOT, 30 requests/s ----------------------------


def test_the_tpot_target_caps_the_batch_below_memory() -> None:
    # memory, on the 81,559 MiB the driver reports (what vLLM multiplies):
    # (85.52 × 0.9 − 4 − 16.06) GB ÷ 536.9 MB = 105.998 → 105;
    # latency: (0.02 × 3.35e12 − 16.06e9) ÷ 536.9e6 = 94.9 → 94
    assert (ref("littles-law-capacity", "memory-sessions"),
            ref("littles-law-capacity", "latency-batch")) == (105, 94)


def test_thirty_requests_per_second_keep_238_in_flight_on_3_gpus() -> None:
    # W = 400 × (16.06e9 + 94 × 536.9e6) ÷ 3.35e12 = 7.943 s; L = 30 × W = 238.3
    assert float(ref("littles-law-capacity", "in-flight")) == pytest.approx(238.3, abs=0.1)
    assert ref("littles-law-capacity", "replicas") == 3


def test_the_p99_context_cuts_qps_eightfold() -> None:
    # 32k: memory 12, latency floor(50.94e9 ÷ 4.295e9) = 11; W = 400 × 18.90 ms = 7.56 s
    assert float(ref("littles-law-capacity", "p99-qps")) == pytest.approx(11 / 7.561, rel=1e-3)


# ---- Hybrid: Jamba-1.5-Mini on one H200 --------------------------------------------------------


def test_jamba_caches_kv_in_4_layers_16_kib_per_token() -> None:
    assert ref("hybrid-state-kv", "kv-per-token") == 2 * 4 * 8 * 128 * 2 == 16_384


def test_jamba_state_is_28_layers_of_155_648_values() -> None:
    # (8,192 × 16 + 8,192 × 3) × 2 B × 28 = 8,716,288 B
    assert ref("hybrid-state-kv", "state-per-sequence") == 28 * (8192 * 16 + 8192 * 3) * 2


def test_jamba_fits_9_times_the_sequences_of_an_all_attention_model_at_32k() -> None:
    # budget (126.9 − 4 − 103.14) GB = 19.76 GB; ÷ (512 MiB + 8.72 MB) = 36.2 → 36;
    # all attention: ÷ 4 GiB = 4.6 → 4
    assert (ref("hybrid-state-kv", "sessions"),
            ref("hybrid-state-kv", "sessions-all-attention")) == (36, 4)
