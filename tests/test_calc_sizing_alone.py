"""`kvdrill calc --model M` sizes what the model alone decides (KV per token and per sequence,
the recurrent state, the weights) with no card, and still when the weights overflow the card
given; the JSON says the KV of one copy beside the node total; a context past the model's limit
is warned of. Through the real CLI."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result

CONFIGS = Path(__file__).parent / "corpus" / "configs"
Run = Callable[..., Result]


def test_a_model_alone_gives_its_kv_bytes_per_token(run: Run) -> None:
    # Llama-3.1-8B: 2 × 32 layers × 8 KV heads × 128 × 2 B = 131,072 B, no card needed
    out = json.loads(run("calc", "--model", "llama-3.1-8b", "--json").output)
    assert out["kv_bytes_per_token"] == 131_072
    assert out["gpu"] is None


def test_a_model_alone_gives_no_capacity(run: Run) -> None:
    out = json.loads(run("calc", "--model", "llama-3.1-8b", "--json").output)
    assert "max_concurrency" not in out and "kv_budget_bytes" not in out
    assert any("no card given" in warning for warning in out["warnings"])


def test_a_model_alone_sizes_a_hybrid_sequence_with_its_state(run: Run) -> None:
    # Jamba-1.5-Mini: 4 attention layers × 8 × 128 × 2 × 2 B = 16,384 B a token; 28 Mamba
    # layers × (8,192 × 16 + 8,192 × 3) values × 2 B = 8,716,288 B a sequence:
    # 16,384 × 32,768 + 8,716,288 = 545,587,200 B
    out = json.loads(run("calc", "--model", str(CONFIGS / "AI21-Jamba-1.5-Mini"), "--seq",
                         "32768", "--json").output)
    assert out["recurrent_state_bytes_per_sequence"] == 8_716_288
    assert out["kv_bytes_per_sequence"] == 545_587_200


def test_weights_that_overflow_the_card_still_give_the_models_figures(run: Run) -> None:
    # Jamba-1.5-Mini's 103 GB of bf16 weights do not fit an 80 GB H100: refused (exit 2), with
    # the KV per token the model decides printed first
    result = run("calc", "--model", str(CONFIGS / "AI21-Jamba-1.5-Mini"), "--gpu", "h100",
                 "--json", ok=False)
    assert result.exit_code == 2
    out = json.loads(result.stdout)
    assert out["kv_bytes_per_token"] == 16_384
    assert out["fits"] is False


def test_the_refusal_of_weights_that_overflow_is_one_line(run: Run) -> None:
    result = run("calc", "--model", str(CONFIGS / "AI21-Jamba-1.5-Mini"), "--gpu", "h100",
                 ok=False)
    assert result.exit_code == 2
    assert result.stderr.strip().count("\n") == 0
    assert "do not fit" in result.stderr


def test_mla_on_eight_gpus_gives_one_copy_beside_the_node_total(run: Run) -> None:
    # DeepSeek-V3: 61 layers × (512 + 64) × 2 B = 70,272 B per copy, held whole on each of 8
    out = json.loads(run("calc", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8",
                         "--json").output)
    assert out["kv_bytes_per_token_one_copy"] == 70_272
    assert out["kv_bytes_per_token"] == 8 * 70_272


def test_a_context_past_the_models_limit_is_warned_of(run: Run) -> None:
    # Llama-3.1-8B allows 131,072 tokens
    out = json.loads(run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--seq", "200k",
                         "--json").output)
    assert any("past the model's 131,072" in warning for warning in out["warnings"])


def test_a_context_within_the_limit_is_not_warned_of(run: Run) -> None:
    out = json.loads(run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--seq", "128k",
                         "--json").output)
    assert not any("past the model's" in warning for warning in out["warnings"])


def test_the_text_form_with_no_card_says_what_is_missing(run: Run) -> None:
    result = run("calc", "--model", "llama-3.1-8b")
    assert "131,072 B" in result.output
    assert "No card given" in result.output


def json_of(result: Result) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(result.output)
    return payload
