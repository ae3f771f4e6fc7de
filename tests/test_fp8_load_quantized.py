"""Drill llama31-70b-tp2-h100 re-targeted at a model whose preset records no released FP8
checkpoint: step sessions-released-checkpoint sizes the weights as vLLM's load-time FP8
(--quantization fp8) leaves them, linear layers (and MoE experts) at one byte and the embedding
and LM head in the release's 16 bits (Fp8Config.get_quant_method: LinearBase and FusedMoE get
an FP8 method, VocabParallelEmbedding and ParallelLMHead none), and says so instead of naming a
release. Each test fails on the code that refused every such model."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from retarget_text import flat

from trainer.capacity.solver import value_of
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key

Run = Callable[..., Result]
DRILL = "llama31-70b-tp2-h100"
STEP = "sessions-released-checkpoint"

# Qwen3-32B (Qwen/Qwen3-32B config.json: vocab_size 151,936, hidden_size 5,120, untied;
# 32,762,123,264 parameters), FP8 at load:
#   embedding + LM head  2 × 151,936 × 5,120 = 1,555,824,640 params, 1 B more each in BF16
#   weights              32,762,123,264 + 1,555,824,640 = 34,317,947,904 B = 34.32 GB
#   KV budget            2 × (80 × 0.9 − 4) GB − 34.318 GB = 101.682 GB
#   one session's KV     2 × 64 layers × 8 KV heads × 128 × 1 B (fp8) × 4,096 = 536,870,912 B
#   sessions             floor(101,682,052,096 ÷ 536,870,912) = floor(189.4) = 189
QWEN3_32B_WEIGHTS = 32_762_123_264 + 2 * 151_936 * 5_120
QWEN3_32B_SESSIONS = 189
# Qwen3-0.6B ties its embedding and LM head: one table, 151,936 × 1,024 = 155,582,464 params
#   weights   596,049,920 + 155,582,464 = 751,632,384 B = 0.7516 GB
#   sessions  floor((136e9 − 751,632,384) ÷ (2 × 28 × 8 × 128 × 4,096)) = floor(575.4) = 575
QWEN3_06B_WEIGHTS = 596_049_920 + 151_936 * 1_024
QWEN3_06B_SESSIONS = 575


def _key(model: str) -> AnswerKey:
    return answer_key(find_drill(DRILL)[0], None, {"model": {"preset": model}, "gpu": None})


@pytest.mark.parametrize(("model", "weights", "sessions"), [
    ("qwen3-32b", QWEN3_32B_WEIGHTS, QWEN3_32B_SESSIONS),
    ("qwen3-0.6b", QWEN3_06B_WEIGHTS, QWEN3_06B_SESSIONS),
])
def test_the_weights_quantized_at_load_are_sized_from_the_config(
        model: str, weights: int, sessions: int) -> None:
    key = _key(model)
    assert value_of(key.deployment(STEP), "weights_bytes") == weights
    assert key.reference(STEP).value == sessions


def test_a_qwen3_target_renders_and_says_vllm_quantizes_at_load(run: Run) -> None:
    shown = flat(run("show", DRILL, "--model", "qwen3-32b").output)
    assert "quantized to FP8 at load by vLLM (--quantization fp8)" in shown
    assert ("it converts the linear layers to FP8 and keeps the embedding and the LM head in "
            "BF16. With the weights it leaves of Qwen3-32B (34.32 GB), how many") in shown
    # nothing released is named where the presets record no release (but the step's id)
    assert "released" not in shown.replace(STEP, "")
    solution = flat(run("solution", DRILL, "--model", "qwen3-32b").output)
    assert "2 × 151,936 × 5,120 parameters at 2 B), 34.32 GB in all" in solution
    assert f"**{QWEN3_32B_SESSIONS} sequences**" in solution
    assert "released" not in solution.replace(STEP, "")


def test_a_tied_table_is_said_as_one_table(run: Run) -> None:
    shown = flat(run("show", DRILL, "--model", "qwen3-0.6b").output)
    assert "keeps the embedding table, which is also the LM head, in BF16" in shown
    assert "(0.7516 GB)" in shown


def test_an_moe_says_its_experts_are_converted_and_its_router_kept(run: Run) -> None:
    # Qwen3-30B-A3B: FusedMoE experts get Fp8MoEMethod; its gate is built with no quant config
    solution = flat(run("solution", DRILL, "--model", "qwen3-30b-a3b").output)
    assert "converts its linear layers and its experts to FP8" in solution
    assert "the norms, any biases and the router stay 16-bit too" in solution


def test_an_fp16_release_keeps_its_tables_in_fp16(run: Run) -> None:
    shown = flat(run("show", DRILL, "--model", "llama-2-70b").output)
    assert "keeps the embedding and the LM head in FP16" in shown
    assert "from Llama-2-70B's FP16 release" in shown


def test_the_query_head_slip_says_its_own_ratio(run: Run) -> None:
    # Qwen3-8B: 32 query heads over 8 KV heads, four times (the drill's own 70B: eight)
    solution = flat(run("solution", DRILL, "--model", "qwen3-8b").output)
    assert "four times too much" in solution and "eight times" not in solution


@pytest.mark.parametrize(("model", "said"), [
    ("qwen3-235b-a22b", "its weights do not fit on 2 × NVIDIA H100 SXM 80GB"),
    ("mixtral-8x22b", "leave no memory for the KV cache"),
    ("gemma-3-27b", "needs every layer to keep the whole context"),
])
def test_a_model_that_cannot_carry_the_lesson_is_refused_in_one_line(
        run: Run, model: str, said: str) -> None:
    result = run("solution", DRILL, "--model", model, ok=False)
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0]
    assert "records no 'fp8' checkpoint" not in lines[0]
