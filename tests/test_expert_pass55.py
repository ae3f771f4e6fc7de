"""Expert pass 55 re-targeted every drill at preset models, other cards and configs of its own
(about 1,160 renders scanned, 41 read sentence by sentence, 470 refusals checked): no wrong
figure in any render, one wrong refusal and three misleading texts, each tested here through
the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result

FALCON_H1 = {  # a parallel hybrid: attention and a Mamba2 mixer side by side in every layer
    "architectures": ["FalconH1ForCausalLM"], "model_type": "falcon_h1", "hidden_size": 3072,
    "num_hidden_layers": 32, "num_attention_heads": 12, "num_key_value_heads": 2,
    "head_dim": 128, "mamba_d_ssm": 3072, "mamba_n_heads": 24, "mamba_d_head": 128,
    "mamba_d_state": 256, "mamba_n_groups": 1, "mamba_d_conv": 4, "mamba_expand": 2,
    "intermediate_size": 12288, "vocab_size": 65537, "max_position_embeddings": 16384,
    "torch_dtype": "bfloat16"}

STARCODER = {"architectures": ["GPTBigCodeForCausalLM"], "model_type": "gpt_bigcode",
             "n_embd": 6144, "n_head": 48, "n_layer": 40, "n_positions": 8192,
             "multi_query": True, "vocab_size": 49152, "torch_dtype": "float32"}


def _config(tmp_path: Path, data: dict[str, object]) -> str:
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(data), encoding="utf-8")
    return str(folder)


def test_a_parallel_hybrid_is_refused_for_its_state_not_for_its_attention(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W1: "keeps KV on 32 of its 32 layers" was the reason given, and a model with attention
    # on every layer was told to choose one with attention on every layer)
    result = run("solution", "llama31-8b-h100", "--model", _config(tmp_path, FALCON_H1),
                 "--gpu", "h200", ok=False)
    assert result.exit_code == 2
    said = " ".join(result.output.split())  # (the refusal wraps where tmp_path's length says)
    assert "32 of its 32" not in said and "797,184" in said
    assert "attention only" in said


def test_calc_says_a_parallel_hybrids_state_sits_beside_its_attention(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (W1: calc said "the other -32 keep no cache")
    result = run("calc", "--model", _config(tmp_path, FALCON_H1), "--gpu", "h200")
    # (read as one line: the output wraps, and where depends on the length of tmp_path)
    said = " ".join(result.output.split())
    # (not a bare "-32": the config's path, pytest's numbered tmp dir, may hold one)
    assert "other -32" not in said and "-32 keep" not in said
    assert "beside the attention" in said


def test_a_config_with_gpt2s_names_is_refused_by_them_with_its_shape(
        run: Callable[..., Result], tmp_path: Path) -> None:
    # (M1: "no num_hidden_layers … (is this a model's config.json?)" for StarCoder's config)
    result = run("calc", "--model", _config(tmp_path, STARCODER), "--gpu", "h100", ok=False)
    assert result.exit_code == 2
    said = " ".join(result.output.split())
    assert "n_layer" in said and "--layers 40 --heads 48 --kv-heads 1 --head-dim 128" in said
    assert "is this a model" not in said


def test_a_retargeted_decode_step_says_it_counts_the_embedding_table(
        run: Callable[..., Result]) -> None:
    # (M2: on Qwen2.5-7B the step "reads every weight", 1.09 GB of embedding table a real
    # step reads one row of: about 7.0 ms, not 7.54, and 14.7 steps to a prefill)
    text = " ".join(run("solution", "prefill-vs-decode", "--model", "qwen2.5-7b",
                        "--gpu", "h200").output.split())
    assert "1.09 GB embedding table as read" in text and "7.01 ms" in text and "14.7" in text


def test_a_ratio_that_fails_for_want_of_room_says_the_cause_is_still_there(
        run: Callable[..., Result]) -> None:
    # (M3: "on 8 × H100 it does not hold (35 … against 6, 5.83×)" invited "TP=16 is fine")
    result = run("solution", "llama31-405b-h200-tp", "--gpu", "h100", ok=False)
    said = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "TP8 × PP2 would hold 71 sequences against 35 at TP=16" in said
