"""Issue 37, sixth round, the config reader and calc: use_sliding_window read as transformers
and vLLM read it (0 and null are off, a string is refused), a quantization_config's skipped
modules priced at 16 bits (or refused by name), an MoE or MLA width the file leaves out refused
rather than taken from another field, kv_lora_rank on a model type without MLA not read, and
calc options that would change nothing refused."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from config_edit import DROP, config_with, notes
from one_line import one_line_error

Run = Callable[..., Result]
CalcJson = Callable[..., dict[str, Any]]
CONFIGS = Path(__file__).parent / "corpus" / "configs"
QWEN3_8B_PARAMS = 8_190_735_360
QWEN3_8B_KV_PER_TOKEN = 147_456  # 2 × 36 layers × 8 KV heads × 128 × 2 B
_DROP = DROP  # a field taken out of the file


# ---- G1: use_sliding_window --------------------------------------------------------------

@pytest.mark.parametrize("switch", [0, None, False])
def test_use_sliding_window_0_null_or_false_leaves_every_layer_whole(
        calc_json: CalcJson, tmp_path: Path, switch: Any) -> None:
    path = config_with(tmp_path, "Qwen3-8B", use_sliding_window=switch, sliding_window=4096,
                       max_window_layers=0)
    out = calc_json("--model", path, "--seq", "32k")
    assert out["kv_bytes_per_sequence"] == QWEN3_8B_KV_PER_TOKEN * 32_768
    assert "switched off by use_sliding_window" in notes(out)


def test_use_sliding_window_1_is_on_as_transformers_reads_it(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-8B", use_sliding_window=1, sliding_window=4096,
                       max_window_layers=0)
    out = calc_json("--model", path, "--seq", "32k")
    assert out["kv_bytes_per_sequence"] == QWEN3_8B_KV_PER_TOKEN * 4096
    assert "use_sliding_window 1 read as true" in notes(out)


@pytest.mark.parametrize("switch", ["false", "true", [], 2])
def test_use_sliding_window_that_is_not_a_switch_is_refused_by_name(
        run: Run, tmp_path: Path, switch: Any) -> None:
    path = config_with(tmp_path, "Qwen3-8B", use_sliding_window=switch, sliding_window=4096)
    one_line_error(run("calc", "--model", path, "--seq", "32k", ok=False), 2,
                   "use_sliding_window is", "not true or false: fix the file")


def test_a_qwen_config_without_use_sliding_window_takes_its_default_off(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-8B", use_sliding_window=_DROP, sliding_window=4096,
                       max_window_layers=0)
    out = calc_json("--model", path, "--seq", "32k")
    assert out["kv_bytes_per_sequence"] == QWEN3_8B_KV_PER_TOKEN * 32_768
    assert "default in transformers' qwen3 config is false" in notes(out)


# ---- G2: modules a quantization_config leaves unquantized --------------------------------

def test_fp8_ignored_layers_are_sized_at_16_bits(calc_json: CalcJson, tmp_path: Path) -> None:
    plain = calc_json("--model", config_with(
        tmp_path, "Qwen3-8B", quantization_config={"quant_method": "fp8"}))
    skipped = calc_json("--model", config_with(
        tmp_path, "Qwen3-8B",
        quantization_config={"quant_method": "fp8", "ignored_layers": ["mlp", "self_attn"]}))
    assert plain["weights_bytes"] < 9.5e9
    # all but the norms at bf16: the whole 8.19B model, less a byte per norm weight
    assert 16.37e9 < skipped["weights_bytes"] < QWEN3_8B_PARAMS * 2
    assert "which ignored_layers names" in notes(skipped)


def test_fp8_modules_to_not_convert_per_layer_routers_stay_bf16(
        calc_json: CalcJson, tmp_path: Path) -> None:
    gates = [f"model.layers.{i}.mlp.gate" for i in range(48)]
    plain = calc_json("--model", config_with(
        tmp_path, "Qwen3-30B-A3B", quantization_config={"quant_method": "fp8"}))
    kept = calc_json("--model", config_with(
        tmp_path, "Qwen3-30B-A3B",
        quantization_config={"quant_method": "fp8", "modules_to_not_convert":
                             ["lm_head", *gates]}))
    router = 48 * 2048 * 128  # hidden × experts, each layer
    assert kept["weights_bytes"] - plain["weights_bytes"] == pytest.approx(router, abs=2)
    assert "the router of 48 layers" in notes(kept)


def test_a_skipped_module_kvdrill_cannot_price_is_refused_by_name(
        run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-8B", quantization_config={
        "quant_method": "fp8", "ignored_layers": ["model.layers.0.mlp.shared_expert_gate"]})
    one_line_error(run("calc", "--model", path, ok=False), 2,
                   "'model.layers.0.mlp.shared_expert_gate'", "give --weights-gb")


# ---- G3: widths the file leaves out, MLA fields on a model type without MLA -------------

def test_qwen3_moe_without_moe_intermediate_size_is_refused(run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-30B-A3B", moe_intermediate_size=_DROP)
    one_line_error(run("calc", "--model", path, ok=False), 2,
                   "no moe_intermediate_size", "experts' width")


def test_mla_without_qk_rope_head_dim_is_refused(run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "DeepSeek-V3", qk_rope_head_dim=_DROP)
    one_line_error(run("calc", "--model", path, ok=False), 2, "no qk_rope_head_dim")


def test_kv_lora_rank_on_qwen3_is_not_read_as_mla(calc_json: CalcJson, tmp_path: Path) -> None:
    out = calc_json("--model", config_with(tmp_path, "Qwen3-8B", kv_lora_rank=512))
    assert out["kv_bytes_per_token"] == QWEN3_8B_KV_PER_TOKEN
    assert "kv_lora_rank 512 is not read" in notes(out)


# ---- G10: calc options that change nothing ------------------------------------------------

def test_window_on_a_model_with_no_windowed_layers_is_refused(run: Run) -> None:
    one_line_error(run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--seq", "32k",
                       "--window", "4k", ok=False), 2,
                   "--window applies to no layer", "--windowed-layers")


def test_active_params_on_a_dense_model_is_refused(run: Run) -> None:
    one_line_error(run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--active-params",
                       "9B", ok=False), 2, "--active-params is for MoE models", "--experts")


def test_awq_modules_to_not_convert_stay_bf16(calc_json: CalcJson, tmp_path: Path) -> None:
    awq = {"quant_method": "awq", "bits": 4, "group_size": 128}
    plain = calc_json("--model", config_with(tmp_path, "Qwen3-8B", quantization_config=awq))
    kept = calc_json("--model", config_with(
        tmp_path, "Qwen3-8B", quantization_config={**awq, "modules_to_not_convert":
                                                    ["self_attn"]}))
    attention = 1_509_958_656  # 36 layers of q, k, v, o and the q/k norms
    # 2 B instead of 4 bits plus a scale and zero point per 128: 0.51953125 B
    assert kept["weights_bytes"] - plain["weights_bytes"] == pytest.approx(
        attention * (2 - 0.51953125), rel=1e-9)
    assert "which modules_to_not_convert names" in notes(kept)


def test_an_unknown_quant_method_is_named_as_written(run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-8B", quantization_config={"quant_method": "gptq_marlin"})
    one_line_error(run("calc", "--model", path, ok=False), 2, "'gptq_marlin'")


def test_qwen3_moe_with_no_experts_is_dense_and_says_so(
        calc_json: CalcJson, tmp_path: Path) -> None:
    out = calc_json("--model", config_with(tmp_path, "Qwen3-30B-A3B", num_experts=0))
    assert out["assumptions"]["params"]["value"] < 4e9
    assert "num_experts 0: no experts" in notes(out)
