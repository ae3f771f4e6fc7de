"""`--model` takes a preset, a config.json or a folder that holds one: `kvdrill calc` through
the real CLI on published configs (tests/corpus/configs/)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

CONFIGS = Path(__file__).parent / "corpus" / "configs"
CalcJson = Callable[..., dict[str, Any]]
Run = Callable[..., Result]


def folder(name: str) -> str:
    return str(CONFIGS / name)


def test_a_dense_model_folder_gives_its_kv_bytes_per_token(calc_json: CalcJson) -> None:
    # Llama-3.1-8B: 2 × 32 × 8 × 128 × 2 B = 131,072 B
    out = calc_json("--model", folder("Llama-3.1-8B"), "--gpu", "h100")
    assert out["kv_bytes_per_token"] == 131_072


def test_a_config_json_path_works_as_the_folder_does(calc_json: CalcJson) -> None:
    out = calc_json("--model", str(CONFIGS / "Llama-3.1-8B" / "config.json"), "--gpu", "h100")
    assert out["kv_bytes_per_token"] == 131_072
    assert out["config"]["path"].endswith("config.json")


def test_an_explicit_head_dim_sizes_the_cache(calc_json: CalcJson) -> None:
    # Qwen3-32B: head_dim 128 (not 5,120 ÷ 64 = 80): 2 × 64 × 8 × 128 × 2 B = 262,144 B
    out = calc_json("--model", folder("Qwen3-32B"), "--gpu", "h200")
    assert out["kv_bytes_per_token"] == 262_144
    assert out["assumptions"]["head_dim"] == {"value": 128, "source": "config",
                                              "detail": folder("Qwen3-32B") + "/config.json"}


def test_a_moe_model_folder_gives_its_kv_bytes_and_counts(calc_json: CalcJson) -> None:
    # Qwen3-30B-A3B: 2 × 48 × 4 × 128 × 2 B = 98,304 B; 30.53B params, 3.35B active
    out = calc_json("--model", folder("Qwen3-30B-A3B"), "--gpu", "h100")
    assert out["kv_bytes_per_token"] == 98_304
    assert out["assumptions"]["params"]["value"] == 30_532_122_624
    assert out["assumptions"]["experts"]["value"] == 128


def test_gpt_oss_per_sequence_kv_counts_the_window_not_all_full(calc_json: CalcJson) -> None:
    # 4,096 tokens: 12 full layers × 4,096 + 12 sliding layers × 128 tokens, at 2 × 8 × 64 × 2 B
    # = 2,048 B per layer and token → 2,048 × (49,152 + 1,536) = 103,809,024 B, not the
    # 49,152 B × 4,096 = 201,326,592 B of every layer full
    out = calc_json("--model", folder("gpt-oss-20b"), "--gpu", "h100", "--seq", "4096")
    assert out["kv_bytes_per_token"] == 49_152
    assert out["kv_bytes_per_sequence"] == 103_809_024


def test_mla_model_folder(calc_json: CalcJson) -> None:
    # DeepSeek-V3: 61 × (512 + 64) × 2 B = 70,272 B on 8 H200s, FP8 weights with BF16 tables
    out = calc_json("--model", folder("DeepSeek-V3"), "--gpu", "h200", "--gpus", "8")
    assert out["kv_bytes_per_token"] == 8 * 70_272  # the latent is whole on every GPU
    assert out["weights_bytes"] == 671_026_419_200 + 1_853_358_080


def test_calc_text_shows_the_shape_and_how_the_traps_were_read(run: Run) -> None:
    text = run("calc", "--model", folder("Qwen2.5-7B"), "--gpu", "h100").output
    assert "28 layers, 28 query heads, 4 KV heads × head_dim 128" in text
    assert "switched off by use_sliding_window false" in text


def test_a_config_without_num_hidden_layers_is_one_clear_error(run: Run, tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    del config["num_hidden_layers"]
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = run("calc", "--model", str(tmp_path), "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    assert result.stderr.strip() == (
        f"Error: {tmp_path}/config.json: no num_hidden_layers: kvdrill cannot size a model "
        "without it (is this a model's config.json?)")
    assert "Traceback" not in result.output + result.stderr


def test_a_folder_without_config_json_says_so(run: Run, tmp_path: Path) -> None:
    result = run("calc", "--model", str(tmp_path), "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    assert "a folder with no config.json in it" in result.stderr


def test_a_path_that_names_nothing_says_so(run: Run, tmp_path: Path) -> None:
    result = run("calc", "--model", str(tmp_path / "nope" / "config.json"), "--gpu", "h100",
                 ok=False)
    assert result.exit_code == 2
    assert "config.json: no such file or folder" in result.stderr


def test_a_hugging_face_id_of_a_preset_is_still_the_preset(calc_json: CalcJson) -> None:
    out = calc_json("--model", "meta-llama/Llama-3.1-8B", "--gpu", "h100")
    assert out["model"] == "llama-3.1-8b"


def test_a_misspelt_preset_still_gets_did_you_mean(run: Run) -> None:
    result = run("calc", "--model", "qwen3-23b", "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    assert "did you mean" in result.stderr


def test_an_unsizable_quantization_asks_for_the_weights_and_takes_them(
        run: Run, calc_json: CalcJson, tmp_path: Path) -> None:
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "bitsandbytes"}
    (tmp_path / "config.json").write_text(json.dumps(config))
    result = run("calc", "--model", str(tmp_path), "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    assert "'bitsandbytes' is not one kvdrill can size" in result.stderr
    assert "--weights-gb" in result.stderr
    out = calc_json("--model", str(tmp_path), "--gpu", "h100", "--weights-gb", "5")
    assert out["weights_bytes"] == 5 * 10**9


def test_a_copied_model_folder_anywhere_works(calc_json: CalcJson, tmp_path: Path) -> None:
    target = tmp_path / "my models" / "gemma"
    shutil.copytree(CONFIGS / "gemma-3-27b-it", target)
    out = calc_json("--model", str(target), "--gpu", "h200", "--seq", "8192")
    # 10 global layers × 8,192 + 52 local × 1,024 tokens, 2 × 16 × 128 × 2 B = 8,192 B each
    assert out["kv_bytes_per_sequence"] == 8_192 * (10 * 8_192 + 52 * 1_024)


@pytest.mark.parametrize("name", ["Qwen3-8B", "gpt-oss-120b", "AI21-Jamba-1.5-Mini"])
def test_every_published_config_sizes_through_calc(calc_json: CalcJson, name: str) -> None:
    out = calc_json("--model", folder(name), "--gpu", "h200", "--gpus", "8")
    assert out["max_concurrency"] > 0
