"""Every published layout read right, or refused by name: `kvdrill calc --model CONFIG` on 24
published config.json files of layouts that differ layer by layer (tests/corpus/configs_layouts:
Mamba2 and linear-attention hybrids, short convolutions, cross-attention, chunked attention,
DeciLM blocks, windows, MLA, MoE, multimodal wrappers). The expected figures in expected.yaml
were worked by hand from each config and the engines' source, never from kvdrill's output."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result

from trainer.capacity.model_config import ConfigError, model_from_config

LAYOUTS = Path(__file__).parent / "corpus" / "configs_layouts"
EXPECTED: dict[str, dict[str, Any]] = yaml.safe_load(
    (LAYOUTS / "expected.yaml").read_text(encoding="utf-8"))
Run = Callable[..., Result]


def calc(run: Run, name: str, *args: str) -> dict[str, Any]:
    result = run("calc", "--model", str(LAYOUTS / name), "--seq", "32768", "--json", *args)
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def config(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((LAYOUTS / name / "config.json").read_text())
    return data


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_32k_sequence_holds_what_the_layout_says(run: Run, name: str) -> None:
    # state included: Mamba2, gated delta-net and short-convolution layers keep a fixed state
    assert calc(run, name)["kv_bytes_per_sequence"] == EXPECTED[name]["seq_32768_bytes"]


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items()
                                        if e.get("state_bytes_per_sequence")))
def test_the_recurrent_state_is_sized_in_the_dtype_the_engine_keeps(run: Run, name: str) -> None:
    out = calc(run, name)
    assert out["recurrent_state_bytes_per_sequence"] == \
        EXPECTED[name]["state_bytes_per_sequence"]


@pytest.mark.parametrize("name", sorted(n for n, e in EXPECTED.items() if not e.get("windowed")))
def test_kv_per_token_counts_only_the_layers_that_keep_one(run: Run, name: str) -> None:
    assert calc(run, name)["kv_bytes_per_token"] == EXPECTED[name]["kv_bytes_per_token_bf16"]


def test_nemotron_h_counts_six_attention_layers_not_fifty_two(run: Run) -> None:
    # Nemotron-3-Nano-30B-A3B: 6 '*' in hybrid_override_pattern × 2 × 2 KV heads × 128 × 2 B
    assert calc(run, "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")["kv_bytes_per_token"] == 6_144


def test_nemotron_h_weights_count_mamba_mlp_and_moe_blocks(run: Run) -> None:
    # published: 31.6B total, ~3.6B active (embeddings included)
    params = calc(run, "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")["assumptions"]["params"]["value"]
    assert 31.0e9 < params < 32.2e9


def test_qwen3_next_counts_every_fourth_layer_as_attention(run: Run) -> None:
    # full_attention_interval 4: 12 of 48 layers × 2 × 2 × 256 × 2 B = 24,576 B
    assert calc(run, "Qwen3-Next-80B-A3B-Instruct")["kv_bytes_per_token"] == 24_576


def test_cross_attention_layers_hold_no_kv_per_text_token(run: Run) -> None:
    # Llama-3.2-90B-Vision: 80 of 100 layers self-attend: 80 × 2 × 8 × 128 × 2 B
    assert calc(run, "Llama-3.2-90B-Vision-Instruct")["kv_bytes_per_token"] == 327_680


def test_llama4_chunked_layers_hold_one_chunk(run: Run) -> None:
    # 12 NoPE layers × 32,768 + 36 chunked layers × 8,192, at 4,096 B a layer-token
    assert calc(run, "Llama-4-Scout-17B-16E-Instruct")["kv_bytes_per_sequence"] == \
        4_096 * (12 * 32_768 + 36 * 8_192)


def test_llama4_scouts_published_position_limit_is_read(run: Run) -> None:
    out = calc(run, "Llama-4-Scout-17B-16E-Instruct", "--seq", "10m")
    assert not any("past the model's" in warning for warning in out["warnings"])


def test_decilm_blocks_give_the_kv_heads_num_key_value_heads_leaves_out(run: Run) -> None:
    # Llama-3.3-Nemotron-Super-49B: 49 attention blocks × 2 × (64 ÷ 8) × 128 × 2 B
    assert calc(run, "Llama-3_3-Nemotron-Super-49B-v1")["kv_bytes_per_token"] == 200_704


def test_decilm_blocks_give_each_mlp_its_own_width(run: Run) -> None:
    # published: 49.9B parameters
    params = calc(run, "Llama-3_3-Nemotron-Super-49B-v1")["assumptions"]["params"]["value"]
    assert abs(params - 49.9e9) < 0.1e9


def test_a_sparse_gemma3_text_config_takes_transformers_defaults(run: Run) -> None:
    # Gemma-3-4B states neither heads nor KV heads: 8 and 4 by default, head_dim 256
    out = calc(run, "gemma-3-4b-it")
    assert out["assumptions"]["kv_heads"]["value"] == 4
    assert out["assumptions"]["params"]["value"] == 4_300_079_472


def test_qwen25_vl_counts_its_vision_tower(run: Run) -> None:
    # published: 8.29B with the 0.68B vision tower
    params = calc(run, "Qwen2.5-VL-7B-Instruct")["assumptions"]["params"]["value"]
    assert abs(params - 8.292e9) < 0.01e9


def test_lfm2_mlp_width_is_adjusted_as_transformers_does(run: Run) -> None:
    # LFM2-1.2B: 1,170,340,608 parameters published; the stated 12,288 MLP is 8,192 wide
    params = calc(run, "LFM2.5-VL-1.6B")["assumptions"]["params"]["value"]
    assert abs(params - 1_170_340_608) < 0.01 * 1_170_340_608


def test_infinity_in_a_field_kvdrill_does_not_read_is_no_refusal(run: Run) -> None:
    # Nemotron-H-56B's file writes time_step_limit [0.0, Infinity]
    assert calc(run, "Nemotron-H-56B-Base-8K")["kv_bytes_per_token"] == 40_960


# --- layouts kvdrill does not read are refused by name, never read as all-attention ---------


def refused(data: dict[str, Any]) -> str:
    with pytest.raises(ConfigError) as caught:
        model_from_config(data)
    return str(caught.value)


def test_an_unknown_layer_kind_is_refused_naming_it() -> None:
    data = config("Qwen3.5-27B")
    data["text_config"]["layer_types"][0] = "retention"
    assert "'retention' is not a layer" in refused(data)


def test_a_layout_field_kvdrill_does_not_read_is_refused_naming_it() -> None:
    data = config("Mixtral-8x7B-v0.1")
    data["attn_type_list"] = [0, 1] * 16
    assert refused(data).startswith("config.json: attn_type_list says how its layers differ")


def test_mamba_fields_with_no_layout_are_refused() -> None:
    data = config("Mixtral-8x7B-v0.1")
    data["mamba_d_state"] = 16
    assert "mamba_d_state names a recurrent layer" in refused(data)


def test_a_zamba_style_hybrid_block_is_refused() -> None:
    data = config("Qwen3.5-27B")
    data["text_config"]["layer_types"][0] = "hybrid"
    assert "'hybrid'" in refused(data)


def test_nan_in_a_field_that_is_read_is_refused(tmp_path: Path) -> None:
    from trainer.capacity.model_config import read_config

    text = (LAYOUTS / "phi-4" / "config.json").read_text()
    path = tmp_path / "config.json"
    path.write_text(text.replace('"num_hidden_layers": 40', '"num_hidden_layers": NaN'))
    with pytest.raises(ConfigError, match="num_hidden_layers is NaN, not a number JSON allows"):
        read_config(path)


def test_a_window_on_a_hybrid_is_refused() -> None:
    data = config("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    data["sliding_window"] = 4096
    assert "sliding_window 4,096 in a hybrid model" in refused(data)


# --- hand-built after published fields: layouts with no verified public copy here ----------


FALCON_H1_05B = {
    # Falcon-H1-0.5B's published fields (tiiuae/Falcon-H1-0.5B-Instruct): every layer runs
    # attention and a Mamba2 mixer side by side
    "model_type": "falcon_h1", "num_hidden_layers": 36, "hidden_size": 1024,
    "num_attention_heads": 8, "num_key_value_heads": 2, "head_dim": 64,
    "intermediate_size": 2048, "vocab_size": 32784, "mamba_d_ssm": 1536, "mamba_n_heads": 24,
    "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128, "mamba_d_conv": 4,
    "mamba_expand": 2, "torch_dtype": "bfloat16", "tie_word_embeddings": False,
}


def test_falcon_h1_keeps_kv_and_a_mamba2_state_on_every_layer() -> None:
    fields = model_from_config(copy.deepcopy(FALCON_H1_05B)).fields
    # 3 × (1,536 + 2 × 128) + 24 × 64 × 128 = 201,984 values a layer, on all 36
    assert (fields["attention_layers"], fields["recurrent_layers"],
            fields["state_elements"]) == (36, 36, 201_984)


def test_falcon_h1_state_is_about_fourteen_and_a_half_megabytes(run: Run, tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text(json.dumps(FALCON_H1_05B))
    out = json.loads(run("calc", "--model", str(tmp_path), "--json").output)
    assert out["recurrent_state_bytes_per_sequence"] == 36 * 201_984 * 2  # 14,542,848 B


GRANITE_4_H = {
    # Granite-4.0-H's layout (ibm-granite/granite-4.0-h-tiny): layer_types of mamba and
    # attention, Mamba2 mixers, routed experts beside a shared MLP
    "model_type": "granitemoehybrid", "num_hidden_layers": 8, "hidden_size": 1536,
    "num_attention_heads": 12, "num_key_value_heads": 4, "vocab_size": 100352,
    "layer_types": ["mamba"] * 3 + ["attention"] + ["mamba"] * 3 + ["attention"],
    "mamba_n_heads": 48, "mamba_d_head": 64, "mamba_n_groups": 1, "mamba_d_state": 128,
    "mamba_d_conv": 4, "mamba_expand": 2, "num_local_experts": 64, "num_experts_per_tok": 6,
    "intermediate_size": 512, "shared_intermediate_size": 1024, "torch_dtype": "bfloat16",
}


def test_granite_h_layer_types_name_two_attention_layers_of_eight() -> None:
    fields = model_from_config(copy.deepcopy(GRANITE_4_H)).fields
    assert (fields["attention_layers"], fields["recurrent_layers"]) == (2, None)
    # 3 × (3,072 + 2 × 128) + 48 × 64 × 128
    assert fields["state_elements"] == 3 * 3_328 + 393_216
