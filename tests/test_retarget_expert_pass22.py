"""The twenty-second expert pass (/tmp/w4/pass22.md): a config whose cache kvdrill does not size
(Kimi-Linear's linear attention, DeepSeek-V3.2's indexer keys, Gemma-3n's shared KV) is refused
by the field's name, not sized as a plain layout; DP attention copies GPT-OSS's BF16 attention
at two bytes; Jamba's experts are not said to be absent; vLLM's block count and 'Maximum
concurrency' are not shown for a model paged in KV-cache groups. Each test of a fix fails on
what was printed before; its guards pass on both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs_pass22"


@pytest.mark.parametrize(("config", "field"), [
    ("kimi-linear", "linear_attn_config"), ("dsv32", "index_head_dim"),
    ("gemma3n-b", "num_kv_shared_layers")])
def test_a_cache_kvdrill_does_not_size_is_refused_by_its_field(
        run: Run, config: str, field: str) -> None:
    result = run("calc", "--model", str(CONFIGS / config), "--gpu", "h200", ok=False)
    assert result.exit_code != 0
    assert field in flat(result.output)


def test_dp_attention_copies_gpt_oss_attention_in_bf16(run: Run) -> None:
    # 7 extra copies × (955,805,184 × 2 B + 1.16 GB of embedding table) = 21.5 GB
    text = flat(run("calc", "--model", "gpt-oss-120b", "--gpu", "h100", "--gpus", "8",
                    "--dp-attention", "--context", "32k").output)
    assert "955,805,184 attention params × 2 B + 1.16 GB embedding table) = 21.5 GB" in text


def test_jambas_experts_are_not_said_to_be_absent(run: Run) -> None:
    result = run("show", "mixtral-moe-decode", "--model", "jamba-1.5-mini", ok=False)
    text = flat(result.output)
    assert "which Jamba-1.5-Mini does not have" not in text
    # (its preset now names its 16 experts: the refusal is the recurrent layers', pass 24)
    assert "28 are recurrent layers that keep a fixed state" in text


def test_a_dense_model_without_experts_is_still_said_to_lack_them(run: Run) -> None:
    text = flat(run("show", "mixtral-moe-decode", "--model", "llama-3.1-8b", ok=False).output)
    assert "which Llama-3.1-8B does not have" in text


def _calc_json(run: Run, model: str) -> dict[str, object]:
    data: dict[str, object] = json.loads(run("calc", "--model", model, "--gpu", "h200",
                                             "--block-size", "16", "--json").output)
    return data


def test_a_windowed_models_engine_concurrency_is_not_shown(run: Run) -> None:
    assert "engine_max_concurrency" not in _calc_json(run, "gemma-3-27b")


def test_a_full_attention_models_engine_concurrency_is_still_shown(run: Run) -> None:
    assert "engine_max_concurrency" in _calc_json(run, "llama-3.1-8b")
