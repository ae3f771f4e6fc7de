"""Issue 37, seventh round, the config reader and calc: a stray moe_intermediate_size on a
Mixtral-style model type not read, a DeepSeek file without q_lora_rank or v_head_dim given
transformers' default (an explicit null stays uncompressed Q), and every expert active refused
on the command line and sized from a config.json."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from config_edit import DROP, config_with, notes
from one_line import one_line_error

Run = Callable[..., Result]
CalcJson = Callable[..., dict[str, Any]]
CONFIGS = Path(__file__).parent / "corpus" / "configs"
MIXTRAL_8X22B_BYTES = 2 * 140_620_634_112  # BF16
DEEPSEEK_V3_BYTES = 672_879_777_280  # as the file has it, q_lora_rank 1536 (FP8 experts)
_DROP = DROP  # a field taken out of the file


# ---- H5: moe_intermediate_size on a Mixtral-style model type -----------------------------

def test_stray_moe_intermediate_size_on_mixtral_is_not_read(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Mixtral-8x22B-v0.1", moe_intermediate_size=100)
    out = calc_json("--model", path)
    assert out["weights_bytes"] == MIXTRAL_8X22B_BYTES
    assert "moe_intermediate_size 100 is not read: mixtral's experts are intermediate_size " \
        "wide" in notes(out)


# ---- H6: q_lora_rank and v_head_dim left out of a DeepSeek file --------------------------

def test_deepseek_v3_without_q_lora_rank_or_v_head_dim_takes_transformers_defaults(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "DeepSeek-V3", q_lora_rank=_DROP, v_head_dim=_DROP)
    out = calc_json("--model", path)
    assert out["weights_bytes"] == DEEPSEEK_V3_BYTES
    default = "not in the file, the default of its model type in transformers"
    assert f"q_lora_rank 1,536: {default}" in notes(out)
    assert f"v_head_dim 128: {default}" in notes(out)


def test_deepseek_v3_with_q_lora_rank_null_is_uncompressed_q(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "DeepSeek-V3", q_lora_rank=None)
    out = calc_json("--model", path)
    # hidden × heads × (nope + rope) in place of hidden × 1536 + 1536 + 1536 × heads × 192
    per_layer = 7168 * 128 * 192 - (7168 * 1536 + 1536 + 1536 * 128 * 192)
    assert out["weights_bytes"] == DEEPSEEK_V3_BYTES + 61 * per_layer  # 1 B a parameter
    assert "q_lora_rank" not in notes(out)


# ---- H12: every expert active ------------------------------------------------------------

def test_experts_equal_to_experts_per_token_is_refused_naming_both(run: Run) -> None:
    result = run("calc", "--model", "mixtral-8x7b", "--gpu", "h100", "--experts", "8",
                 "--experts-per-token", "8", ok=False)
    one_line_error(result, 2, "--experts 8 --experts-per-token 8: every expert would be active")


def test_experts_alone_equal_to_the_models_per_token_is_refused(run: Run) -> None:
    result = run("calc", "--model", "qwen3-30b-a3b", "--experts", "8", ok=False)
    one_line_error(result, 2, "--experts 8: every expert would be active (8 of 8 per token)")


def test_config_routing_every_token_to_every_expert_is_sized_as_all_active(
        calc_json: CalcJson, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Mixtral-8x22B-v0.1", num_experts_per_tok=8)
    out = calc_json("--model", path, "--gpu", "h200", "--gpus", "8")
    # every expert read every step: a step reads every weight, and batch 1 is bound by all
    assert out["weights_read_per_step"] == out["weights_bytes"] == MIXTRAL_8X22B_BYTES
    ceiling = 8 * 4.8e12 / MIXTRAL_8X22B_BYTES
    assert abs(out["batch1_ceiling_tokens_per_second"] - ceiling) < 1e-6 * ceiling
