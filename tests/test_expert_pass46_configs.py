"""Expert pass 46, the config reader's findings (tests/test_expert_pass46.py holds the others):
GLM-4 is read under ChatGLM's names (M1); Falcon is refused for its ungated MLP, and sized once
its weights are given (M2); an attention-free Mamba is refused as what it is (M3); a refusal
suggests calc's options only where they can describe the layout (M5); an MLX-quantized
checkpoint is refused unless its weights are given (M6); weights given by size carry no dtype
they were not stated in (N5). Each runs the real CLI and fails on what was printed before."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from one_line import one_line_error
from retarget_text import flat

Run = Callable[..., Result]
CalcJson = Callable[..., dict[str, Any]]
CONFIGS = Path(__file__).parent / "corpus" / "configs_pass46"
GLM4 = str(CONFIGS / "glm4-9b-chat")
FALCON = str(CONFIGS / "falcon-7b-instruct")
MLX_GEMMA = str(CONFIGS / "gemma3-12b-pt-4bit-mlx")


def write_config(tmp_path: Path, **fields: Any) -> str:
    config = tmp_path / "config.json"
    config.write_text(json.dumps(fields), encoding="utf-8")
    return str(config)


LLAMA_LIKE: dict[str, Any] = {
    "model_type": "llama", "num_hidden_layers": 32, "hidden_size": 4096,
    "num_attention_heads": 32, "num_key_value_heads": 8, "intermediate_size": 14336,
    "vocab_size": 128256, "torch_dtype": "bfloat16"}


# --- M1: ChatGLM's names ---------------------------------------------------------------------


def test_glm4_is_sized_from_chatglms_names(calc_json: CalcJson) -> None:
    # multi_query_group_num 2 KV heads × kv_channels 128: 2 × 40 layers × 2 × 128 × 2 B
    out = calc_json("--model", GLM4)
    assert out["kv_bytes_per_token"] == 40_960
    assert out["assumptions"]["vocab"]["value"] == 151_552  # padded_vocab_size


def test_glm4_is_counted_at_its_published_size(calc_json: CalcJson) -> None:
    # embedding and untied output layer: 2 × 151,552 × 4,096 = 1,241,513,984
    # a layer: QKV 4,096 × (4,096 + 2 × 2 × 128) = 18,874,368 + its bias (add_qkv_bias) 4,608;
    #   dense 4,096 × 4,096 = 16,777,216; gated MLP 3 × 4,096 × 13,696 (ffn_hidden_size)
    #   = 168,296,448; two RMSNorms 8,192: 203,960,832, × 40 layers = 8,158,433,280
    # final norm 4,096: 9,399,951,360 in all (about 9.40B)
    out = calc_json("--model", GLM4)
    assert out["assumptions"]["params"]["value"] == 9_399_951_360


def test_chatglms_kv_channels_is_its_head_width(calc_json: CalcJson, tmp_path: Path) -> None:
    # kv_channels 256 where hidden ÷ heads is 128: 2 × 40 × 2 × 256 × 2 B = 81,920 B
    data = json.loads(Path(GLM4, "config.json").read_text(encoding="utf-8"))
    data["kv_channels"] = 256
    out = calc_json("--model", write_config(tmp_path, **data))
    assert out["kv_bytes_per_token"] == 81_920


# --- M2: Falcon ------------------------------------------------------------------------------


def test_falcon_is_refused_for_its_ungated_mlp_naming_the_way_forward(run: Run) -> None:
    result = run("calc", "--model", FALCON, ok=False)
    one_line_error(result, 2, "falcon's MLP is not gated (4 × hidden_size = 18,176, GELU)",
                   "kvdrill counts Llama-style decoders only",
                   "give --weights-gb (the checkpoint's size) or --params")
    assert "no intermediate_size" not in result.stderr


def test_falcon_with_its_weights_given_is_sized_for_kv(calc_json: CalcJson) -> None:
    # multi_query: one KV head: 2 × 32 layers × 1 × 64 (4,544 ÷ 71) × 2 B = 8,192 B
    out = calc_json("--model", FALCON, "--weights-gb", "14.4", "--gpu", "h100")
    assert out["kv_bytes_per_token"] == 8_192
    assert out["weights_bytes"] == 14_400_000_000


def test_falcon_with_its_params_given_is_sized_at_them(calc_json: CalcJson) -> None:
    out = calc_json("--model", FALCON, "--params", "7.22B")
    assert out["kv_bytes_per_token"] == 8_192
    assert out["weights_bytes"] == 14_440_000_000  # 7.22B × 2 B (bf16)


def test_falcons_parameters_are_said_to_be_an_estimate(run: Run) -> None:
    said = flat(run("calc", "--model", FALCON, "--weights-gb", "14.4").output)
    assert "not kvdrill's count of falcon: give --params" in said
    assert "(an estimate, not a count)" in said


def test_falcons_new_decoder_keeps_its_kv_heads_whatever_multi_query_says(
        calc_json: CalcJson, tmp_path: Path) -> None:
    # Falcon-40B's shape: vLLM reads num_kv_heads when new_decoder_architecture is set:
    # 2 × 60 layers × 8 × 64 (8,192 ÷ 128) × 2 B = 122,880 B, not one head's 15,360 B
    config = write_config(tmp_path, model_type="falcon", new_decoder_architecture=True,
                          multi_query=True, num_kv_heads=8, num_attention_heads=128,
                          num_hidden_layers=60, hidden_size=8192, vocab_size=65024,
                          torch_dtype="bfloat16")
    out = calc_json("--model", config, "--weights-gb", "83.7")
    assert out["kv_bytes_per_token"] == 122_880


# --- M3: attention-free models ---------------------------------------------------------------


def test_a_mamba2_model_is_refused_as_attention_free(run: Run) -> None:
    result = run("calc", "--model", str(CONFIGS / "mamba-codestral-7b-8bit-mlx"), ok=False)
    one_line_error(result, 2, "model_type 'mamba2' is an attention-free state-space model",
                   "keeps no KV cache, only a fixed state per sequence")
    assert "is this a model's config.json" not in result.stderr


def test_a_mamba_model_is_refused_as_attention_free(run: Run, tmp_path: Path) -> None:
    config = write_config(tmp_path, model_type="mamba", num_hidden_layers=64, hidden_size=2560,
                          state_size=16, conv_kernel=4, expand=2, vocab_size=50280)
    one_line_error(run("calc", "--model", config, ok=False), 2,
                   "model_type 'mamba' is an attention-free state-space model")


# --- M5: calc's options suggested only where they can describe the layout --------------------


def test_the_indexer_refusal_names_the_preset_whose_latent_works(calc_json: CalcJson,
                                                                 run: Run) -> None:
    result = run("calc", "--model", str(CONFIGS / "deepseek-v3.2"), ok=False)
    one_line_error(result, 2, "size the latent with --model deepseek-v3",
                   "add the indexer's keys by hand")
    assert "give the shape with calc's options" not in result.stderr
    # the way named: one latent of 61 × (512 + 64) × 2 B per GPU, not a K/V pair of it
    out = calc_json("--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8")
    assert out["kv_bytes_per_token_one_copy"] == 70_272


def test_a_layout_with_recurrent_layers_is_not_sent_to_calcs_options(run: Run,
                                                                     tmp_path: Path) -> None:
    config = write_config(tmp_path, **LLAMA_LIKE, block_types=["recurrent", "attention"])
    result = run("calc", "--model", config, ok=False)
    one_line_error(result, 2, "block_types says how its layers differ",
                   "calc's options cannot give the state its other layers keep")
    assert "give the shape" not in result.stderr


def test_a_layout_of_windows_is_sent_to_calcs_window_options(run: Run, tmp_path: Path) -> None:
    config = write_config(tmp_path, **LLAMA_LIKE, swa_layers=[0, 1, 2])
    one_line_error(run("calc", "--model", config, ok=False), 2,
                   "give the shape with calc's options --window and --windowed-layers")


def test_a_recurrent_model_type_is_not_sent_to_calcs_options(run: Run, tmp_path: Path) -> None:
    config = write_config(tmp_path, **{**LLAMA_LIKE, "model_type": "recurrent_gemma"})
    result = run("calc", "--model", config, ok=False)
    one_line_error(result, 2, "mixes attention with recurrent layers",
                   "calc's options cannot give a recurrent layer's state")
    assert "give the shape" not in result.stderr


def test_shared_kv_layers_are_sent_to_calc_with_the_layers_that_cache(run: Run) -> None:
    # Gemma-3n: the last 15 of 35 layers reuse K and V; the first 20 cache, 16 of them sliding
    gemma3n = Path(__file__).parent / "corpus" / "configs_pass22" / "gemma3n-b"
    one_line_error(run("calc", "--model", str(gemma3n), ok=False), 2,
                   "--layers 20 --window 512 --windowed-layers 16")


# --- M6: MLX checkpoints ---------------------------------------------------------------------


def test_an_mlx_checkpoints_weights_are_taken_only_as_given(calc_json: CalcJson,
                                                            run: Run) -> None:
    # not its bf16 original's 12,187,325,040 × 2 B = 24.4 GB: refused, naming the bits, and
    # sized at the size the refusal asks for
    one_line_error(run("calc", "--model", MLX_GEMMA, ok=False), 2,
                   "quantization (bits 4, group_size 64) marks a 4-bit MLX checkpoint",
                   "vLLM does not load", "give --weights-gb")
    out = calc_json("--model", MLX_GEMMA, "--weights-gb", "7", "--gpu", "h100",
                    "--context", "32k")
    assert out["weights_bytes"] == 7_000_000_000


# --- N5: a size given with no dtype ----------------------------------------------------------


def test_weights_given_by_size_are_not_labelled_with_a_dtype(run: Run) -> None:
    said = flat(run("calc", "--model", str(CONFIGS / "granite31-2b-bnb4-companio"),
                    "--weights-gb", "1.6").output)
    assert "· weights 1.6 GB as stated" in said
    assert "weights 1.6 GB as stated = 1.6 GB" in said
    assert "as stated (bf16)" not in said and "· weights bf16" not in said
