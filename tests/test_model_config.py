"""The config.json reader (trainer/capacity/model_config.py) on real published configs
(tests/corpus/configs/, each with its source in the README there) and on the traps a careless
reader falls into. Every expected figure is worked by hand in the comments."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainer.capacity.model_config import ConfigError, model_from_config, read_config

CONFIGS = Path(__file__).parent / "corpus" / "configs"


def read(name: str) -> dict:
    return read_config(CONFIGS / name / "config.json").fields


def kv_bytes_per_token(fields: dict, element_bytes: int = 2) -> int:
    """Whole-model KV per token with every layer full: 2 × layers × KV heads × head_dim × bytes,
    or layers × (latent + rope) × bytes for MLA (no K/V pair)."""
    if fields["attention"] == "mla":
        return fields["layers"] * (fields["mla_latent"] + fields["mla_rope"]) * element_bytes
    layers = fields["attention_layers"] or fields["layers"]
    return 2 * layers * fields["kv_heads"] * fields["head_dim"] * element_bytes


# ---- dense -----------------------------------------------------------------------------------


def test_llama_31_8b_dense_shape_and_bytes_per_token():
    # 2 × 32 layers × 8 KV heads × 128 × 2 B = 131,072 B (128 KiB)
    fields = read("Llama-3.1-8B")
    assert (fields["layers"], fields["kv_heads"], fields["head_dim"]) == (32, 8, 128)
    assert kv_bytes_per_token(fields) == 131_072


def test_llama_31_8b_parameter_count_is_the_published_one():
    # embedding 128,256 × 4,096 = 525,336,576, LM head the same (untied);
    # a layer: q 4,096² + k, v 2 × 4,096 × 1,024 + o 4,096² = 41,943,040,
    # MLP 3 × 4,096 × 14,336 = 176,160,768, norms 2 × 4,096 → 218,112,000;
    # 32 layers = 6,979,584,000; + 1,050,673,152 + final norm 4,096 = 8,030,261,248
    assert read("Llama-3.1-8B")["params"] == 8_030_261_248


def test_llama_32_1b_tied_embeddings_counted_once():
    # 16 × 60,821,504 per layer + one 128,256 × 2,048 table (262,668,288) + 2,048 = 1,235,814,400
    fields = read("Llama-3.2-1B-Instruct")
    assert fields["tied_embeddings"] is True
    assert fields["params"] == 1_235_814_400


# ---- head_dim stated in the config -------------------------------------------------------------


def test_qwen3_32b_head_dim_is_the_configs_not_hidden_over_heads():
    # 5,120 ÷ 64 = 80, but head_dim is 128: 2 × 64 × 8 × 128 × 2 B = 262,144 B (256 KiB),
    # not the 163,840 B that 80 would give
    model = read_config(CONFIGS / "Qwen3-32B" / "config.json")
    assert model.fields["head_dim"] == 128
    assert kv_bytes_per_token(model.fields) == 262_144
    assert any("5,120 ÷ 64 = 80" in note for note in model.notes)


def test_qwen3_32b_parameter_count():
    # embedding and LM head 2 × 151,936 × 5,120 = 1,555,824,640; a layer: q 5,120 × 8,192 and
    # o 8,192 × 5,120 (2 × 41,943,040), k and v 2 × 5,120 × 1,024 (10,485,760), q/k norms
    # 2 × 128, MLP 3 × 5,120 × 25,600 = 393,216,000, norms 10,240 → 487,598,336;
    # 64 layers = 31,206,293,504; + 5,120 final norm = 32,762,123,264 (Qwen: 32.8B)
    assert read("Qwen3-32B")["params"] == 32_762_123_264


def test_mistral_small_24b_head_dim_128_not_160():
    # 5,120 ÷ 32 = 160, head_dim 128: 2 × 40 × 8 × 128 × 2 B = 163,840 B
    fields = read("Mistral-Small-24B-Instruct-2501")
    assert fields["head_dim"] == 128
    assert kv_bytes_per_token(fields) == 163_840


def test_qwen3_8b_bytes_per_token():
    # 2 × 36 × 8 × 128 × 2 B = 147,456 B (144 KiB)
    assert kv_bytes_per_token(read("Qwen3-8B")) == 147_456


# ---- sliding windows -----------------------------------------------------------------------


def test_qwen25_sliding_window_switched_off_by_use_sliding_window_false():
    # sliding_window 131072 is in the file, but use_sliding_window is false: no layer slides
    model = read_config(CONFIGS / "Qwen2.5-7B" / "config.json")
    assert model.fields["window"] is None
    assert model.fields["windowed_layers"] == 0
    assert any("use_sliding_window false" in note for note in model.notes)


def test_gpt_oss_20b_layer_types_alternate_window_128_on_half_the_layers():
    # layer_types: sliding, full, ... over 24 layers → 12 layers keep 128 tokens, 12 keep all.
    # KV per token if every layer were full: 2 × 24 × 8 × 64 × 2 B = 49,152 B
    fields = read("gpt-oss-20b")
    assert (fields["window"], fields["windowed_layers"], fields["layers"]) == (128, 12, 24)
    assert kv_bytes_per_token(fields) == 49_152


def test_gpt_oss_without_layer_types_slides_every_other_layer():
    # vLLM gpt_oss.py: sliding_window on layer_idx % 2 == 0 → 12 of 24
    config = json.loads((CONFIGS / "gpt-oss-20b" / "config.json").read_text())
    del config["layer_types"]
    fields = model_from_config(config).fields
    assert (fields["window"], fields["windowed_layers"]) == (128, 12)


def test_gemma3_27b_five_local_layers_to_one_global():
    # sliding_window_pattern defaults to 6 (transformers Gemma3TextConfig): layer i is global when
    # (i + 1) % 6 == 0 → 10 of 62 global, 52 local with a 1,024-token window.
    # All-full KV per token: 2 × 62 × 16 × 128 × 2 B = 507,904 B
    fields = read("gemma-3-27b-it")
    assert (fields["window"], fields["windowed_layers"]) == (1024, 52)
    assert kv_bytes_per_token(fields) == 507_904


def test_max_window_layers_slides_only_the_layers_after_it():
    # Qwen2 with use_sliding_window true: layers from max_window_layers on slide (28 - 20 = 8)
    config = json.loads((CONFIGS / "Qwen2.5-7B" / "config.json").read_text())
    config.update(use_sliding_window=True, sliding_window=4096, max_window_layers=20)
    fields = model_from_config(config).fields
    assert (fields["window"], fields["windowed_layers"]) == (4096, 8)


def test_max_window_layers_equal_to_the_layer_count_slides_nothing():
    # QwQ-32B's case: use_sliding_window true, max_window_layers = num_hidden_layers → none
    config = json.loads((CONFIGS / "Qwen2.5-7B" / "config.json").read_text())
    config.update(use_sliding_window=True, sliding_window=4096)
    fields = model_from_config(config).fields
    assert fields["windowed_layers"] == 0 and fields["window"] is None


# ---- text_config and transformers' defaults -------------------------------------------------


def test_gemma3_text_config_with_the_defaults_its_file_leaves_out():
    # the text model is under text_config; vocab_size and tie_word_embeddings are absent and take
    # Gemma3TextConfig's defaults (262,208, tied), as vLLM loads it
    fields = read("gemma-3-27b-it")
    assert (fields["layers"], fields["heads"], fields["kv_heads"], fields["head_dim"]) == \
        (62, 32, 16, 128)
    assert fields["vocab"] == 262_208
    assert fields["tied_embeddings"] is True


def test_gemma3_27b_parameters_include_the_vision_tower():
    # text: embedding 262,208 × 5,376 = 1,409,630,208 (tied); a layer: q, o 2 × 5,376 × 4,096,
    # k, v 2 × 5,376 × 2,048 (66,060,288 in all), q/k norms 256, MLP 3 × 5,376 × 21,504 =
    # 346,816,512, four norms 21,504 → 412,898,560; × 62 = 25,599,710,720; + 5,376 final norm
    # → 27,009,346,304. SigLIP: 27 layers × 15,239,504 + patch 678,528 + positions 4,718,592
    # + post-norm 2,304 + projector 6,193,152 + 1,152 = 423,060,336. Sum 27,432,406,640.
    assert read("gemma-3-27b-it")["params"] == 27_432_406_640


# ---- MLA ------------------------------------------------------------------------------------


def test_deepseek_v3_mla_latent_and_rope_no_kv_pair():
    # 61 layers × (512 + 64) × 2 B = 70,272 B; no factor 2 for K and V
    fields = read("DeepSeek-V3")
    assert (fields["attention"], fields["mla_latent"], fields["mla_rope"]) == ("mla", 512, 64)
    assert kv_bytes_per_token(fields) == 70_272


def test_deepseek_v3_parameter_count_and_fp8_weights():
    # 61 × MLA 187,107,328 (+ 2 norms of 7,168) = 11,414,421,504; 3 dense MLPs of
    # 3 × 7,168 × 18,432 = 1,189,085,184; 58 MoE layers × (257 experts × 3 × 7,168 × 2,048
    # + router 256 × 7,168 + 256 bias) = 656,569,547,264; embedding and LM head
    # 2 × 129,280 × 7,168 = 1,853,358,080; final norm 7,168 → 671,026,419,200
    fields = read("DeepSeek-V3")
    assert fields["params"] == 671_026_419_200
    assert (fields["weights_dtype"], fields["tables_dtype"]) == ("fp8", "bf16")
    assert (fields["experts"], fields["experts_per_token"]) == (256, 8)


# ---- MoE ------------------------------------------------------------------------------------


def test_qwen3_30b_a3b_moe_shape_bytes_and_counts():
    # 2 × 48 × 4 × 128 × 2 B = 98,304 B. A layer: attention 18,874,624 + norms 4,096 + router
    # 2,048 × 128 + 128 experts × 3 × 2,048 × 768 (603,979,776) = 623,120,640; × 48 =
    # 29,909,790,720; + 622,329,856 tables + 2,048 = 30,532,122,624 (Qwen: 30.5B).
    # Active: 120 unused experts × 4,718,592 × 48 layers fewer → 3,353,032,704 (Qwen: 3.3B)
    fields = read("Qwen3-30B-A3B")
    assert kv_bytes_per_token(fields) == 98_304
    assert (fields["experts"], fields["experts_per_token"]) == (128, 8)
    assert fields["params"] == 30_532_122_624
    assert fields["active_params"] == 3_353_032_704


def test_gpt_oss_counts_and_mxfp4_weights():
    # A layer of gpt-oss-20b: attention with biases and sinks 26,550,144, norms 5,760, router
    # 92,192, 32 experts × (2,880 × 5,760 + 5,760 + 2,880 × 2,880 + 2,880) = 796,538,880 →
    # 823,186,976; × 24 = 19,756,487,424; + 2 × 201,088 × 2,880 + 2,880 = 20,914,757,184
    # (OpenAI: 20.91B). Bytes: 19,110,297,600 expert weights × 17/32 B (MXFP4: 4 bits and an
    # 8-bit scale per 32) = 10,152,345,600 + 1,804,459,584 other params × 2 B = 13.761 GB
    fields = read("gpt-oss-20b")
    assert fields["params"] == 20_914_757_184
    assert fields["weights_dtype"] == "mxfp4"
    assert fields["weights_gb"] * 10**9 == 13_761_264_768


def test_gpt_oss_120b_count():
    # 36 layers × 3,213,080,192 + 1,158,269,760 = 116,829,156,672 (OpenAI: 116.83B)
    assert read("gpt-oss-120b")["params"] == 116_829_156_672


def test_moe_field_names_all_read():
    base = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
            "vocab_size": 100, "intermediate_size": 128}
    for experts, top_k in (("num_local_experts", "num_experts_per_tok"),
                           ("num_experts", "num_experts_per_tok"),
                           ("n_routed_experts", "num_experts_per_tok"),
                           ("moe_num_experts", "experts_per_token")):
        fields = model_from_config({**base, experts: 8, top_k: 2}).fields
        assert (fields["experts"], fields["experts_per_token"]) == (8, 2)


# ---- hybrid ---------------------------------------------------------------------------------


def test_jamba_attention_in_4_of_32_layers_and_a_mamba_state():
    # attn_layer_period 8, offset 4 → layers 4, 12, 20, 28: 2 × 4 × 8 × 128 × 2 B = 16,384 B;
    # state per Mamba layer 8,192 × 16 + 8,192 × 3 = 155,648 values (d_inner = 2 × 4,096)
    fields = read("AI21-Jamba-1.5-Mini")
    assert fields["attention_layers"] == 4
    assert fields["state_elements"] == 155_648
    assert kv_bytes_per_token(fields) == 16_384
    assert fields["params"] == 51_570_323_328  # 51.57B, as published


# ---- quantization_config ------------------------------------------------------------------


def test_awq_int4_weights():
    # Qwen3-8B with AWQ 4 bits, group 128: 6,946,071,552 layer weights - 294,912 norms =
    # 6,945,776,640 linear weights at 0.5 + 2/128 + 0.5/128 B = 0.51953125 B → 3,608,548,262.4 B,
    # plus 1,244,659,712 table and 299,008 norm params at 2 B = 2,489,917,440 B → 6.0985 GB
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "awq", "bits": 4, "group_size": 128,
                                     "zero_point": True, "version": "gemm"}
    fields = model_from_config(config).fields
    assert fields["weights_dtype"] == "int4"
    assert round(float(fields["weights_gb"]), 4) == 6.0985


def test_unknown_quantization_is_named_for_the_weights_only():
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "bitsandbytes"}
    fields = model_from_config(config, "q/config.json").fields
    assert "'bitsandbytes' is not one kvdrill can size" in fields["weights_unknown"]
    assert fields["head_dim"] == 128  # the shape is still read


# ---- refusals ------------------------------------------------------------------------------


def test_missing_num_hidden_layers_is_refused_by_name(tmp_path):
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    del config["num_hidden_layers"]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    with pytest.raises(ConfigError, match=r"config\.json: no num_hidden_layers"):
        read_config(path)


@pytest.mark.parametrize(("text", "says"), [
    ("[1, 2]", "one JSON object"),
    ('{"num_hidden_layers": 32,', "not valid JSON"),
    ('{"num_hidden_layers": NaN}', "not a number JSON allows"),
    ('{"a": 1, "a": 2}', "'a' is given twice"),
    ("[" * 100_000 + "]" * 100_000, "not valid JSON|nested too deeply"),
])
def test_malformed_json_is_one_clear_error(tmp_path, text, says):
    path = tmp_path / "config.json"
    path.write_text(text)
    with pytest.raises(ConfigError, match=says):
        read_config(path)


@pytest.mark.parametrize(("change", "says"), [
    ({"num_hidden_layers": "32"}, "num_hidden_layers is '32', not a whole number"),
    ({"num_hidden_layers": 1.5}, "not a whole number"),
    ({"num_hidden_layers": True}, "not a whole number"),
    ({"num_hidden_layers": 0}, "outside what a model can have"),
    ({"num_key_value_heads": 64}, "exceeds num_attention_heads"),
    ({"layer_types": ["spiking_attention"] * 36}, "'spiking_attention' is not a layer"),
    ({"layer_types": ["linear_attention"] * 36}, "names no attention layer"),
    ({"text_config": 3}, "text_config is 3, not an object"),
])
def test_impossible_fields_are_refused_by_name(change, says):
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config.update(change)
    with pytest.raises(ConfigError, match=says):
        model_from_config(config, "config.json")


def test_an_oversized_file_is_refused_before_it_is_parsed(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(" " * (2 * 1024 * 1024) + "{}")
    with pytest.raises(ConfigError, match="too large"):
        read_config(path)


def test_ten_million_layers_are_refused_before_anything_is_built() -> None:
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config["num_hidden_layers"] = 10_000_000
    with pytest.raises(ConfigError, match="num_hidden_layers 10,000,000 is outside"):
        model_from_config(config)


def test_awq_bits_written_as_a_float_are_read_as_a_whole_number() -> None:
    # "bits": 4.0 once reached Fraction(4.0, 8) and crashed
    config = json.loads((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    config["quantization_config"] = {"quant_method": "awq", "bits": 4.0, "group_size": 128.0}
    assert model_from_config(config).fields["weights_dtype"] == "int4"


def test_a_newline_in_a_folder_name_never_reaches_the_models_name(tmp_path) -> None:
    folder = tmp_path / "evil\nmodel"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "Qwen3-8B" / "config.json").read_text())
    assert read_config(folder / "config.json").name == "evil model"
