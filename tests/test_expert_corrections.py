"""Issue 13: what an expert interviewer objected to. Each correction states its figure and its
source, and is checked through the real solver (the drill's answer key) and through the worked
solution the CLI renders, so a stale copy in either place fails here."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from trainer.capacity.presets import build_deployment, find_gpu, find_model
from trainer.drills.loader import find_drill, load_drill_file
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.reading.exact import Fraction
from trainer.views.sheets import givens_lines

Run = Callable[..., Result]
GB = 10**9
MIB = 2**20


def ref(drill_id: str, step_id: str) -> Fraction:
    drill, _ = find_drill(drill_id)
    return AnswerKey(drill).reference(step_id).value


def solution(run: Run, drill_id: str) -> str:
    return " ".join(run("solution", drill_id).output.split())  # line breaks as spaces


# ---- 1. GPU memory as the driver reports it -----------------------------------------------------
# Sources (in trainer/presets/gpus.yaml): nvidia-smi "81559MiB" on an H100 80GB HBM3 (NVIDIA/nccl
# #1264), "143771MiB" on an H200, rocm-smi "VRAM Total Memory (B): 206141652992" on an MI300X
# (ROCm/legacy-rocm-build #4750).


# The H200's is CUDA's own total, which vLLM multiplies (the reference: 150,109,880,320 B =
# 143,155.9375 MiB; nvidia-smi shows 143,771 MiB)
@pytest.mark.parametrize(("gpu", "marketed", "reported_mib"), [
    ("h100", 80, 81_559), ("h200", 141, Fraction("143155.9375")), ("mi300x", 192, 196_592)])
def test_gpu_presets_carry_the_marketed_and_the_larger_reported_figure(
        gpu: str, marketed: int, reported_mib: int | Fraction) -> None:
    card = find_gpu(gpu)
    assert (card.hbm_gb, card.reported_mib) == (marketed, reported_mib)
    assert card.reported_gb is not None and card.reported_gb > marketed
    assert card.reported_source and "MiB" in card.reported_source + " MiB"


def test_reported_mi300x_total_is_rocm_smis_byte_count() -> None:
    assert find_gpu("mi300x").reported_mib * MIB == 206_141_652_992


def test_calc_says_it_used_the_marketed_figure_and_names_the_other(run: Run) -> None:
    out = run("calc", "--model", "llama-3.1-8b", "--gpu", "h100").output
    assert "as marketed (GB = 10^9 B); the driver reports 81,559 MiB: --memory reported" in out


def test_calc_memory_reported_sizes_the_8b_on_a_real_h100_at_57_gb_and_106_sessions(
        calc_json: Callable[..., dict[str, Any]]) -> None:
    out = calc_json("--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "0.9",
                    "--reserve-gb", "4", "--weights-gb", "16", "--memory", "reported")
    assert out["kv_budget_bytes"] == pytest.approx(81_559 * MIB * 0.9 - 20 * GB)
    assert out["max_concurrency"] == 106
    assert "as the driver reports it: 81,559 MiB" in out["assumptions"]["hbm_gb"]["detail"]


def test_calc_refuses_a_reported_figure_no_source_gives(run: Run) -> None:
    result = run("calc", "--model", "llama-2-70b", "--gpu", "mi325x", "--memory", "reported",
                 ok=False)
    assert result.exit_code == 2
    assert "Error: GPU preset mi325x has no driver-reported memory figure with a source" in (
        result.output)


def test_8b_seed_answer_stays_52_gb_and_the_real_card_step_gives_57_gb_and_106() -> None:
    assert ref("llama31-8b-h100", "kv-budget") == 52 * GB
    assert ref("llama31-8b-h100", "kv-budget-real-card") == 81_559 * MIB * Fraction(9, 10) \
        - 20 * GB
    assert ref("llama31-8b-h100", "sessions-real-card") == 106


def test_8b_solution_explains_the_real_card(run: Run) -> None:
    text = solution(run, "llama31-8b-h100")
    assert "the driver reports 81,559 MiB = 85.5 GB" in text
    assert "KV budget: 73 GB − 16 GB weights = **57 GB**" in text
    assert "**106 sequences**" in text


def test_mi300x_seed_keeps_44_gb_and_4_sequences_and_the_real_card_fits_5() -> None:
    assert ref("llama2-70b-mi300x", "1a") == 44 * GB
    assert ref("llama2-70b-mi300x", "2b-max-sequences") == 4
    assert ref("llama2-70b-mi300x", "2b-max-sequences-real-card") == 5  # 58.1 GB ÷ 10.7 GB


def test_mi300x_solution_gives_58_gb_and_5_sequences_on_the_real_card(run: Run) -> None:
    text = solution(run, "llama2-70b-mi300x")
    assert "the driver reports more: 196,592 MiB = 206 GB" in text
    assert "58.1 GB for KV" in text and "**5 sequences**" in text


# ---- 2. paged-blocks-vllm reproduces what vLLM prints ---------------------------------------


def test_paged_blocks_counts_blocks_from_the_reported_h100() -> None:
    budget = 81_559 * MIB * Fraction(9, 10) - 20 * GB
    blocks = math.floor(budget / (131_072 * 16))
    assert ref("paged-blocks-vllm", "num-blocks") == blocks == 27_164
    assert ref("paged-blocks-vllm", "engine-max-concurrency") == Fraction(blocks, 8192 // 16)


def test_paged_blocks_colocated_copy_starts_on_a_real_h100() -> None:
    x = ref("paged-blocks-vllm", "colocated-x")
    assert x >= 1 and float(x) == pytest.approx(1.076, abs=0.001)


def test_paged_blocks_solution_uses_the_v1_log_wording_and_says_it_starts(run: Run) -> None:
    text = solution(run, "paged-blocks-vllm")
    assert '"GPU KV cache size: 434,624 tokens"' in text
    assert '"Maximum concurrency for 8,192 tokens per request: 53.05x"' in text
    assert "X = **1.08**. That is at least 1, so vLLM **starts**" in text
    assert "# GPU blocks" not in text


# ---- 3. Data-parallel attention pays for a copy of the attention weights --------------------
# DeepSeek-V3 MLA projections: 187,107,328 params per layer × 61 = 11.41B (config.json shapes);
# Llama-3.1-405B q/k/v/o: 126 × 570,425,344 = 71.87B (sku_list shapes).


def test_attention_parameter_counts_follow_the_configs() -> None:
    assert find_model("deepseek-v3").attention_params == 61 * (
        7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256
        + 128 * 128 * 7168)
    assert find_model("llama-3.1-405b").attention_params == 126 * (
        2 * 16384 * 16384 + 2 * 16384 * 1024)


def test_deepseek_dp_attention_gives_217_gb_and_88_sessions_not_128() -> None:
    # SGLang copies the attention (11.41B in FP8) and the embedding table (129,280 × 7,168 in
    # BF16, 1.85 GB) onto every GPU (issue 23, shared/reference/serving-engines.md).
    copies = 7 * (find_model("deepseek-v3").attention_params + 129_280 * 7168 * 2)
    assert ref("deepseek-v3-mla-h200", "kv-budget-dp-attention") == \
        ref("deepseek-v3-mla-h200", "kv-budget") - copies
    assert float(ref("deepseek-v3-mla-h200", "kv-budget-dp-attention")) / GB == \
        pytest.approx(217.5, abs=0.1)
    assert ref("deepseek-v3-mla-h200", "sessions-dp-attention") == 88


def test_deepseek_solution_prices_the_copy(run: Run) -> None:
    text = solution(run, "deepseek-v3-mla-h200")
    assert "= **217 GB**" in text and "5.5×, not the 8× (128)" in text


def test_405b_dp_attention_holds_95_gb_of_weights_per_gpu_and_48_sessions() -> None:
    # (405.85 + 15 × (71.87 attention + 128,256 × 16,384 = 2.10 embedding)) GB ÷ 16 = 94.7 GB
    assert float(ref("llama31-405b-h200-tp", "weights-per-gpu-dp-attention")) / GB == \
        pytest.approx(94.7, abs=0.1)
    assert ref("llama31-405b-h200-tp", "sessions-dp-attention") == 48
    assert ref("llama31-405b-h200-tp", "sessions-dp-attention") < \
        ref("llama31-405b-h200-tp", "sessions-tp8")


def test_405b_solution_does_not_offer_dp_attention_as_free(run: Run) -> None:
    text = solution(run, "llama31-405b-h200-tp")
    assert "**Not DP attention.**" in text and "**94.7 GB**" in text
    assert "No head is duplicated, at the cost of balancing" not in text


# ---- 4. FP8 checkpoints as released ---------------------------------------------------------
# shared/reference/models-and-gpus.md "Checkpoints as released"; sizes derived in models.yaml.


def test_405b_fp8_checkpoint_is_487_gb_with_58_87_174_sessions() -> None:
    deployment, _ = build_deployment("llama-3.1-405b", "h200", {"checkpoint": "fp8"})
    assert deployment.weights_gb == Fraction("487.2")
    assert [ref("llama31-405b-h200-tp", s) for s in
            ("sessions-tp8", "sessions-tp16", "sessions-pp2")] == [58, 87, 174]


def test_70b_fp8_checkpoint_is_72_66_gb_and_fits_94_sessions_on_two_h100s() -> None:
    assert find_model("llama-3.1-70b").checkpoints == {"fp8": {
        "weights_gb": 72.66, "source": find_model("llama-3.1-70b").checkpoints["fp8"]["source"]}}
    assert ref("llama31-70b-tp2-h100", "sessions") == 97  # the seed's 1 B per parameter
    assert ref("llama31-70b-tp2-h100", "sessions-released-checkpoint") == 94


def test_405b_solution_sizes_weights_from_the_checkpoint(run: Run) -> None:
    text = solution(run, "llama31-405b-h200-tp")
    assert "The released FP8 checkpoint of Llama-3.1-405B, 487.2 GB" in " ".join(text.split())


def test_calc_checkpoint_unknown_is_refused_by_name(run: Run) -> None:
    result = run("calc", "--model", "qwen2.5-72b", "--gpu", "h200", "--checkpoint", "fp8",
                 ok=False)
    assert result.exit_code == 2
    assert "kvdrill's preset for qwen2.5-72b records no 'fp8' checkpoint" in result.output


# ---- 5. Wording that taught the wrong model -----------------------------------------------


def test_multi_turn_open_conversations_follow_littles_law() -> None:
    in_flight = ref("multi-turn-growth", "sessions")
    assert ref("multi-turn-growth", "open-conversations") == in_flight * (45 + 15) / 15 == 256


def test_multi_turn_solution_separates_in_flight_from_open_conversations(run: Run) -> None:
    text = solution(run, "multi-turn-growth")
    assert "64 × (45 + 15) ÷ 15 ≈ **256** open conversations" in text


def test_long_context_pricing_names_what_per_token_pricing_misses(run: Run) -> None:
    text = solution(run, "long-context-tier")
    assert "it already bills the longer prompt" in text
    assert "vLLM frees a request's KV when the request ends" in text


def test_tp2_solution_says_only_available_kv_memory_is_per_gpu(run: Run) -> None:
    text = solution(run, "llama31-70b-tp2-h100")
    assert '"Available KV cache memory: … GiB" is one GPU\'s' in text
    assert '"GPU KV cache size: N tokens" is the whole job\'s' in text


def test_prefill_counts_8192_flops_per_2_byte_weight_and_chunked_prefill_by_default(
        run: Run) -> None:
    drill, _ = find_drill("prefill-vs-decode")
    answer = drill.step("why-two-regimes").model_answer or ""
    assert "8,192 FLOPs per 2-byte weight (4,096 per byte)" in " ".join(answer.split())
    assert "on by default in vLLM's current V1 engine" in solution(run, "prefill-vs-decode")


def test_8b_solution_names_the_410k_slip(run: Run) -> None:
    text = solution(run, "llama31-8b-h100")
    assert "66 GB ÷ 163,840 B is about 402.8k tokens" in text
    assert 66 * GB // (160 * 1024) == 402_832


def test_deepseek_mha_baseline_uses_192_wide_keys_71_times() -> None:
    assert ref("deepseek-v3-mla-h200", "mha-bytes-per-token") == 61 * 128 * (192 + 128) * 2
    assert float(ref("deepseek-v3-mla-h200", "mha-vs-latent")) == pytest.approx(71.1, abs=0.05)


def test_b200_preset_is_the_hgx_figure_180_gb_at_7_7_tbs() -> None:
    b200 = find_gpu("b200")
    assert (b200.hbm_gb, b200.bandwidth_tbs) == (180, Fraction("7.7"))


def test_sliding_window_solution_counts_window_minus_one_plus_new_up_to_257_blocks(
        run: Run) -> None:
    text = solution(run, "sliding-window-kv")
    assert "window − 1 previous tokens plus the tokens of the current step" in text
    assert "up to 257 blocks of 16" in text


# ---- 6. Interviewer material that agrees with itself ---------------------------------------


def test_a_variant_title_names_the_variants_own_model_and_gpu(run: Run) -> None:
    payload = json.loads(run("variants", "llama2-70b-mi300x", "--count", "6", "--seed", "3",
                             "--json").output)
    for variant in payload["variants"]:
        shown = json.loads(run("show", "llama2-70b-mi300x", "--variant",
                               str(variant["variant"]), "--json").output)
        model = find_model(variant["params"]["model"]).name
        gpu = find_gpu(variant["params"]["gpu"]).name
        assert shown["title"] == f"The KV-cache budget drill — {model} on one {gpu}"


def test_sheets_label_questions_by_step_id_only(run: Run, tmp_path: Any) -> None:
    run("variants", "llama2-70b-mi300x", "--count", "1", "--seed", "1", "--out", str(tmp_path))
    sheet = next(tmp_path.glob("*-sheet.md")).read_text(encoding="utf-8")
    assert "- **1a** — " in sheet and "\n1. " not in sheet
    drill, _ = find_drill("llama2-70b-mi300x")
    texts = [drill.situation] + [s.prompt for s in drill.steps] + [
        s.model_answer or "" for s in drill.steps] + [h for s in drill.steps for h in s.hints]
    assert not any(label in text for text in texts
                   for label in ("1(a)", "2(a)", "3(a)", "4(a)", "question 2", "question 3"))


@pytest.mark.parametrize(("drill_id", "names"), [
    ("paged-blocks-vllm", ("block_size", "memory")),
    ("decode-roofline-vs-measured", ("batch",)),
    ("multi-turn-growth", ("prompt_tokens", "think_seconds", "reply_seconds")),
])
def test_variants_json_lists_every_given_the_answers_depend_on(
        run: Run, drill_id: str, names: tuple[str, ...]) -> None:
    payload = json.loads(run("variants", drill_id, "--count", "2", "--seed", "5",
                             "--json").output)
    for variant in payload["variants"]:
        assert set(names) <= set(variant["params"])


# An independent computation from `variants --json` params alone (no solver): the formulas as
# an interviewer would write them by hand.


def _exact(value: Any) -> Fraction:
    return Fraction(str(value))


def _hand_key(drill_id: str, p: dict[str, Any]) -> dict[str, Fraction]:
    bytes_per = {"bf16": 2, "fp16": 2, "fp8": 1}
    per_token = 2 * p["layers"] * p["kv_heads"] * p["head_dim"] * bytes_per[p["kv_dtype"]]
    weights = _exact(p["weights_gb"]) * GB
    reserve = _exact(p["reserve_gb"]) * GB
    util = _exact(p["utilization"])
    marketed = _exact(p["hbm_gb"]) * GB
    real = Fraction(p["hbm_reported_mib"] * MIB)
    context = p["context"]
    if drill_id == "llama31-8b-h100":
        budget = marketed * util - reserve - weights
        real_budget = real * util - reserve - weights
        return {"bytes-per-token": Fraction(per_token), "kv-budget": budget,
                "sessions": Fraction(math.floor(budget / (per_token * context))),
                "kv-budget-real-card": real_budget,
                "sessions-real-card": Fraction(math.floor(real_budget / (per_token * context)))}
    if drill_id == "paged-blocks-vllm":
        block = p["block_size"]
        budget = _exact(p["hbm_gb"]) * GB * util - reserve - weights  # the reported total
        blocks = math.floor(budget / (per_token * block))
        held = math.ceil(context / block) * block
        return {"num-blocks": Fraction(blocks),
                "blocks-per-request": Fraction(math.ceil(context / block)),
                "engine-max-concurrency": Fraction(blocks, math.ceil(8192 / block)),
                "paged-sessions": Fraction(math.floor(budget / (per_token * held)))}
    budget = marketed - reserve - weights  # seed 002: no utilisation cap
    real_budget = real - reserve - weights
    return {"1a": budget,
            "2b-max-sequences": Fraction(math.floor(budget / (per_token * context))),
            "2b-max-sequences-real-card": Fraction(
                math.floor(real_budget / (per_token * context)))}


@pytest.mark.parametrize("drill_id", ["llama31-8b-h100", "paged-blocks-vllm",
                                      "llama2-70b-mi300x"])
def test_variant_params_alone_rederive_the_answers(run: Run, drill_id: str) -> None:
    payload = json.loads(run("variants", drill_id, "--count", "4", "--seed", "11",
                             "--json").output)
    for variant in payload["variants"]:
        expected = _hand_key(drill_id, variant["params"])
        for step_id, value in expected.items():
            answer = variant["answers"][step_id]
            scale = {"GB": GB, "KiB": 1024, "": 1, "sequences": 1}[answer["unit"]]
            assert answer["value"] == pytest.approx(float(value / scale), rel=1e-9), (
                variant["variant"], step_id)


def test_a_drill_sized_on_reported_memory_says_so_on_its_gpu_line(tmp_path: Path) -> None:
    # 81,559 MiB × 2^20 = 85,520,809,984 B = 85.52 GB (nvidia-smi on an H100 SXM 80GB).
    text = find_drill("llama31-8b-h100")[1].read_text(encoding="utf-8")
    path = tmp_path / "llama31-8b-h100.yaml"
    path.write_text(text.replace("givens:\n", "givens:\n  memory: reported\n", 1),
                    encoding="utf-8")
    line = givens_lines(answer_key(load_drill_file(path), None))[2]
    assert "— 85.52 GB as the driver reports it (80 GB marketed)," in line
