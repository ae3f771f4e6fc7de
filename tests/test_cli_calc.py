"""`kvdrill calc` through the real CLI: the seeds' commands as written, JSON, errors."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

CalcJson = Callable[..., dict[str, Any]]
Run = Callable[..., Result]

SEED_A = ("--preset", "llama2-70b", "--seq", "32768", "--batch", "4", "--gpu", "mi300x")
SEED_B = ("--preset", "llama2-70b", "--seq", "32768", "--batch", "8", "--kv-dtype", "fp8",
          "--gpu", "mi300x")
SEED_C = ("--preset", "llama2-70b", "--seq", "32768", "--kv-heads", "64", "--gpu", "mi300x")
SEED_8B = ("--model", "llama-3.1-8b", "--gpu", "h100", "--context", "4096",
           "--utilization", "0.9", "--reserve-gb", "4")


def test_seed_calculator_command_overstates_with_54_gb_and_5_sequences(calc_json: CalcJson) -> None:
    out = calc_json(*SEED_A)
    assert out["kv_bytes_per_token"] == 327_680
    assert out["kv_budget_bytes"] == 54 * 10**9
    assert out["max_concurrency"] == 5


def test_seed_command_with_reserve_gives_44_gb_and_4_sequences(calc_json: CalcJson) -> None:
    out = calc_json(*SEED_A, "--reserve-gb", "10")
    assert out["kv_budget_bytes"] == 44 * 10**9
    assert out["max_concurrency"] == 4


def test_seed_command_with_reserve_steps_in_34_1_ms_at_117_tokens_per_second(
    calc_json: CalcJson,
) -> None:
    out = calc_json(*SEED_A, "--reserve-gb", "10")
    assert round(out["decode_step_seconds"] * 1000, 1) == 34.1
    assert round(out["tokens_per_second"]) == 117
    assert round(out["tokens_per_second_per_sequence"], 1) == 29.3


def test_seed_fp8_command_runs_at_batch_8_with_half_the_bytes(calc_json: CalcJson) -> None:
    out = calc_json(*SEED_B)
    assert out["kv_bytes_per_token"] == 163_840
    assert out["batch"] == 8


def test_seed_mha_command_fits_no_sequence(calc_json: CalcJson) -> None:
    out = calc_json(*SEED_C)
    assert out["kv_bytes_per_token"] == 2_621_440
    assert out["max_concurrency"] == 0
    assert any("not one sequence fits" in w for w in out["warnings"])


def test_first_seed_case_gives_131072_bytes_52_gb_396k_tokens_96_sessions(
    calc_json: CalcJson,
) -> None:
    out = calc_json(*SEED_8B)
    assert out["kv_bytes_per_token"] == 131_072
    assert round(out["kv_budget_bytes"] / 10**9) == 52
    assert out["max_tokens"] // 1000 == 396
    assert out["max_concurrency"] == 96


def test_json_has_every_documented_key(calc_json: CalcJson) -> None:
    keys = {"kv_bytes_per_token", "kv_bytes_per_sequence", "weights_bytes", "kv_budget_bytes",
            "max_tokens", "max_concurrency", "batch", "bytes_read_per_step",
            "decode_step_seconds", "tokens_per_second", "tokens_per_second_per_sequence",
            "assumptions", "warnings"}
    assert keys <= set(calc_json(*SEED_A))


def test_json_assumptions_say_where_each_value_came_from(calc_json: CalcJson) -> None:
    assumptions = calc_json(*SEED_A)["assumptions"]
    assert assumptions["layers"] == {"value": 80, "source": "preset", "detail": "llama-2-70b"}
    assert assumptions["context"]["source"] == "option"
    assert assumptions["reserve_gb"] == {"value": 0, "source": "default", "detail": ""}


def test_defaults_warn_about_full_hbm_and_no_reserve(calc_json: CalcJson) -> None:
    warnings = " ".join(calc_json(*SEED_A)["warnings"])
    assert "utilization 1.0" in warnings
    assert "no reserve" in warnings


def test_explicit_options_override_the_preset(calc_json: CalcJson) -> None:
    out = calc_json("--model", "llama-3.1-8b", "--gpu", "h100", "--kv-heads", "32")
    assert out["kv_bytes_per_token"] == 524_288


def test_a_custom_shape_needs_no_preset(calc_json: CalcJson) -> None:
    out = calc_json("--layers", "32", "--kv-heads", "8", "--head-dim", "128", "--params", "8B",
                    "--hbm-gb", "80", "--bandwidth-tbs", "3.35")
    assert out["kv_bytes_per_token"] == 131_072
    assert out["weights_bytes"] == 16 * 10**9


def test_mla_preset_gives_70272_bytes_per_token_per_gpu(calc_json: CalcJson) -> None:
    out = calc_json("--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8")
    assert out["kv_bytes_per_token_per_gpu"] == 70_272


def test_text_output_shows_the_working_and_the_hbm_picture(run: Run) -> None:
    out = run("calc", *SEED_A, "--reserve-gb", "10").output
    assert "2 (K and V) × 80 layers × 8 KV heads × 128 head_dim × 2 B (fp16)" in out
    assert "= 34.1 ms" in out
    assert "HBM [" in out and "weights 138 GB" in out and "reserve 10 GB" in out


def test_symbolic_flag_prints_the_sympy_formulas(run: Run) -> None:
    out = run("calc", *SEED_A, "--symbolic").output
    assert "kv_bytes_per_token = " in out and "kv_factor" in out


def test_list_presets_names_every_model_and_gpu(run: Run) -> None:
    out = run("calc", "--list-presets").output
    for name in ("llama-3.1-8b", "deepseek-v3", "phi-3-mini", "h100", "gaudi3", "mi325x"):
        assert name in out


def test_list_presets_gives_an_mla_model_its_latent_not_kv_heads(run: Run) -> None:
    line = next(x for x in run("calc", "--list-presets").output.splitlines()
                if x.split()[:1] == ["deepseek-v3"])
    assert "MLA latent 512 + 64" in line and "KV heads" not in line


def test_dp_attention_on_a_preset_without_the_figure_copies_its_projections(
        calc_json: CalcJson) -> None:
    out = calc_json("--model", "llama-3.1-8b", "--gpu", "h100", "--dp-attention", "--gpus", "2")
    # 32 layers × 4,096 × 128 × 2 × (32 + 8): the Q, K, V and O projections
    assert out["assumptions"]["attention_params"]["value"] == 32 * 4096 * 128 * 2 * 40


@pytest.mark.parametrize(
    ("args", "code", "line"),
    [
        (("--model", "llama-3.1-7b", "--gpu", "h100"), 2,
         "Error: unknown model preset 'llama-3.1-7b': did you mean llama-3.1-70b, llama-3.1-8b"),
        (("--model", "llama-3.1-8b", "--gpu", "h1000"), 2, "Error: unknown GPU preset 'h1000'"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--layers", "0"), 2,
         "Error: --layers must be at least 1, got 0"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--hbm-gb", "-80"), 2,
         "Error: --hbm-gb must be greater than 0, got -80"),
        (("--model", "llama-3.1-70b", "--gpu", "h100", "--gpus", "3"), 2,
         "Error: 8 KV heads cannot be shared evenly by 3 GPUs: give --gpus 1 or 2 or 4 or 8"),
        (("--model", "llama-3.1-405b", "--gpu", "h100"), 2,
         "Error: the weights (811.7 GB) do not fit in the usable memory (80.0 GB on 1 GPU)"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--reserve-gb", "1000"), 2,
         "Error: the reserve (1,000.0 GB per GPU) leaves no usable memory"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--batch", "0"), 2,
         "Error: --batch must be at least 1, got 0"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "nan"), 2,
         "Error: Invalid value for '--utilization': 'nan' is not a number"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "1.5"), 2,
         "Error: --utilization 1.5 is outside (0, 1]"),
        (("--gpu", "h100"), 2, "Error: layers is unknown: give --layers or --model"),
        (("--model", "llama-3.1-8b", "--gpu", "h100", "--kv-dtype", "fp4"), 2,
         "Error: Invalid value for '--kv-dtype'"),
    ],
)
def test_bad_input_is_one_error_line_with_an_exit_code(
    run: Run, args: tuple[str, ...], code: int, line: str
) -> None:
    result = run("calc", *args, ok=False)
    assert result.exit_code == code
    assert result.stderr.startswith(line)
    assert result.stderr.count("\n") == 1
    assert "Traceback" not in result.output + result.stderr


def test_kv_heads_a_config_leaves_out_are_said_to_be_assumed(calc_json: CalcJson,
                                                             tmp_path: Path) -> None:
    # no num_key_value_heads: MHA, as vLLM defaults; not "from the config" (expert pass 28)
    (tmp_path / "config.json").write_text(json.dumps({
        "architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
        "num_attention_heads": 32, "num_hidden_layers": 32, "intermediate_size": 14336,
        "vocab_size": 128256, "max_position_embeddings": 8192, "torch_dtype": "bfloat16"}))
    kv_heads = calc_json("--model", str(tmp_path), "--gpu", "h100")["assumptions"]["kv_heads"]
    assert kv_heads["value"] == 32 and kv_heads["source"] == "default"


def test_mxfp4_on_a_model_without_its_bf16_tables_warns(calc_json: CalcJson) -> None:
    warned = " ".join(calc_json("--model", "llama-3.1-8b", "--gpu", "h100", "--weights-dtype",
                                "mxfp4")["warnings"])
    assert "embedding and LM head" in warned


def test_an_mxfp4_release_with_its_tables_does_not_warn(calc_json: CalcJson) -> None:
    warned = " ".join(calc_json("--model", "gpt-oss-20b", "--gpu", "h100")["warnings"])
    assert "mxfp4 weights" not in warned
