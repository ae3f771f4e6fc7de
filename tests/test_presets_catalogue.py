"""The model catalogue: at least 22 presets, each parameter count within 1% of the published one,
and every preset with a published config.json stored in tests/corpus/configs/ read through the
same reader `--model CONFIG` uses and agreeing with the preset field by field."""

from __future__ import annotations

import json
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import pytest
from click.testing import Result

from trainer.capacity import presets
from trainer.capacity.model_config import read_config

CONFIGS = Path(__file__).parent / "corpus" / "configs"
Run = Callable[..., Result]

# preset id → the folder of its published config.json
STORED = {
    "llama-3.1-8b": "Llama-3.1-8B",
    "llama-3.1-70b": "Llama-3.1-70B-Instruct",
    "llama-3.2-1b": "Llama-3.2-1B-Instruct",
    "llama-3.3-70b": "Llama-3.3-70B-Instruct",
    "qwen2.5-7b": "Qwen2.5-7B",
    "qwen3-8b": "Qwen3-8B",
    "qwen3-32b": "Qwen3-32B",
    "qwen3-30b-a3b": "Qwen3-30B-A3B",
    "qwen3-235b-a22b": "Qwen3-235B-A22B",
    "gpt-oss-20b": "gpt-oss-20b",
    "gpt-oss-120b": "gpt-oss-120b",
    "gemma-3-27b": "gemma-3-27b-it",
    "mistral-small-24b": "Mistral-Small-24B-Instruct-2501",
    "deepseek-v3": "DeepSeek-V3",
    "jamba-1.5-mini": "AI21-Jamba-1.5-Mini",
}
NEW = ("llama-3.3-70b", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b",
       "gpt-oss-20b", "gpt-oss-120b", "gemma-3-27b", "mistral-small-24b")
# Fields a config.json fixes, compared wherever the preset states them.
SHAPE = ("layers", "hidden", "heads", "kv_heads", "head_dim", "tied_embeddings", "attention",
         "mla_latent", "mla_rope", "window", "windowed_layers", "experts", "experts_per_token",
         "attention_layers", "state_elements", "weights_dtype", "tables_dtype")
DERIVED = ("params", "active_params", "attention_params", "vocab", "max_context", "weights_gb")
# Where an older preset keeps a published figure instead of the one its config derives, and why.
KEPT = {
    ("deepseek-v3", "active_params"): "DeepSeek's stated 37B (the config gives 37.55B)",
    ("deepseek-v3", "max_context"): "128K as DeepSeek states it (163,840 positions in the file)",
    ("jamba-1.5-mini", "params"): "51.57B as published (the config gives 51,570,323,328)",
    ("jamba-1.5-mini", "active_params"): "12B as published (the config gives 12.11B)",
    ("qwen2.5-7b", "max_context"): "32K native per the card (131,072 positions in the file)",
    ("jamba-1.5-mini", "experts"): "its MoE is left out of the decode step (the preset's note)",
    ("jamba-1.5-mini", "experts_per_token"): "the same",
}


def test_the_catalogue_has_at_least_22_models_with_the_current_ones() -> None:
    models = presets.models()
    assert len(models) >= 22
    assert set(NEW) <= set(models)


@pytest.mark.parametrize("preset_id", sorted(presets.models()))
def test_each_parameter_count_is_within_1_percent_of_the_published_one(preset_id: str) -> None:
    model = presets.models()[preset_id]
    assert model.published_params is not None, f"{preset_id}: add published_params"
    assert abs(model.params / model.published_params - 1) <= Fraction(1, 100)


@pytest.mark.parametrize("preset_id", NEW)
def test_each_new_preset_cites_its_config_and_its_published_count(preset_id: str) -> None:
    source = presets.models()[preset_id].source
    assert "config.json (https://huggingface.co/" in source
    assert "published:" in source


@pytest.mark.parametrize(("preset_id", "folder"), sorted(STORED.items()))
def test_the_stored_config_read_through_the_reader_agrees_with_the_preset(
        preset_id: str, folder: str) -> None:
    model = presets.models()[preset_id]
    read = read_config(CONFIGS / folder / "config.json").fields
    for name in SHAPE:
        if (preset_id, name) in KEPT:
            continue
        expected = getattr(model, name)
        assert read[name] == expected, f"{preset_id}: {name} {read[name]!r} ≠ {expected!r}"
    for name in DERIVED:
        stated = getattr(model, name)
        if stated is None or (preset_id, name) in KEPT:
            continue
        assert Fraction(read[name]) == Fraction(stated), f"{preset_id}: {name}"


@pytest.mark.parametrize("preset_id", NEW)
def test_a_new_preset_states_every_field_its_config_gives(preset_id: str) -> None:
    model = presets.models()[preset_id]
    read = read_config(CONFIGS / STORED[preset_id] / "config.json").fields
    for name in ("params", "attention_params", "vocab", "max_context"):
        assert getattr(model, name) == read[name], f"{preset_id}: {name}"
    if read["experts"] is not None:
        assert model.active_params == read["active_params"]


def test_the_catalogue_through_the_cli_names_the_current_models(run: Run) -> None:
    models = json.loads(run("calc", "--list-presets", "--json").output)["models"]
    assert len(models) >= 22
    assert {"qwen3-32b", "gpt-oss-120b", "gemma-3-27b", "llama-3.3-70b"} <= set(models)


def test_a_preset_and_its_config_give_the_same_kv_per_sequence(
        calc_json: Callable[..., dict]) -> None:
    by_name = calc_json("--model", "gpt-oss-20b", "--gpu", "h100", "--seq", "4096")
    by_file = calc_json("--model", str(CONFIGS / "gpt-oss-20b"), "--gpu", "h100", "--seq", "4096")
    for name in ("kv_bytes_per_token", "kv_bytes_per_sequence", "weights_bytes",
                 "max_concurrency"):
        assert by_name[name] == by_file[name]
