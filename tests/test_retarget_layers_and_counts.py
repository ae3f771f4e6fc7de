"""Issue 35, what a re-targeted drill says about the target's layers, heads and experts: a model
that keeps KV on only some of its layers is refused by every drill that asks for "the layers";
figures that were the default model's (four times, 8 of 256 experts, FP8 doubling a count of
zero) are worked from the target."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs"


@pytest.fixture(autouse=True)
def no_pager(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(os.environ, "KVDRILL_PAGER", "never")


@pytest.mark.parametrize(("model", "said"), [
    ("jamba-1.5-mini", "keeps KV on 4 of its 32 layers (28 are recurrent layers"),
    ("llama-3.3-nemotron-super-49b", "keeps KV on 49 of its 80 layers (31 are layers with no "
                                     "attention)"),
])
def test_a_model_with_kv_on_some_layers_is_refused_by_a_drill_that_asks_for_every_layer(
        run: Run, model: str, said: str) -> None:
    result = run("show", "llama31-8b-h100", "--model", model, "--gpu", "h200", ok=False)
    assert result.exit_code == 2
    assert said in " ".join(result.output.split())


def test_the_hybrid_drill_still_takes_a_hybrid(run: Run) -> None:
    assert "Jamba-1.5-Mini" in run("show", "hybrid-state-kv", "--model", "jamba-1.5-mini").output


def test_the_hybrid_drill_refuses_a_pruned_model_with_no_state(run: Run) -> None:
    # the drill is Jamba's own: a pruned model (or another hybrid) is not its lesson
    result = run("show", "hybrid-state-kv", "--model", "llama-3.3-nemotron-super-49b",
                 "--gpu", "h200", ok=False)
    assert result.exit_code == 2
    assert "is Jamba-1.5-Mini's own" in result.output
    assert "kvdrill calc --model llama-3.3-nemotron-super-49b" in result.output


def test_counting_query_heads_is_said_as_the_targets_own_factor(run: Run) -> None:
    # Qwen2.5-7B: 28 query heads share 4 KV heads, so the slip makes a session 7× larger
    text = " ".join(run("solution", "long-context-tier", "--model", "qwen2.5-7b").output.split())
    assert "makes a session 7× larger" in text
    assert "four times" not in text


def test_a_model_whose_every_head_has_its_own_kv_has_no_query_head_slip(
        run: Run, tmp_path: Path) -> None:
    # Llama-3.2-1B's config with one KV head per query head (plain multi-head attention)
    config = json.loads((CONFIGS / "Llama-3.2-1B-Instruct" / "config.json").read_text())
    config["num_key_value_heads"] = config["num_attention_heads"]
    (tmp_path / "mha").mkdir()
    (tmp_path / "mha" / "config.json").write_text(json.dumps(config))
    text = run("solution", "long-context-tier", "--model", str(tmp_path / "mha")).output
    assert "131,072" in text
    assert "query heads instead" not in text


def test_fp8_for_the_long_tier_states_the_count_it_gives_not_a_doubling(run: Run) -> None:
    # Qwen3-30B-A3B on an H100: not one 128k session fits with bf16 KV, one with FP8
    text = " ".join(run("solution", "llama31-8b-h100", "--model", "qwen3-30b-a3b").output.split())
    assert "1 such session per card instead of 0" in text
    assert "roughly doubles what fits" not in text


def test_a_drill_whose_prose_is_its_own_models_refuses_another(run: Run) -> None:
    # deepseek-v3-mla-h200 works DeepSeek-V3's 61 layers, 128 heads and 256 experts in prose
    result = run("show", "deepseek-v3-mla-h200", "--model", "kimi-k2", "--gpu", "b200", ok=False)
    assert result.exit_code == 2
    assert "is DeepSeek-V3's own" in result.stderr
    assert "re-target it with --gpu only" in " ".join(result.stderr.split())


def test_a_measured_drill_takes_a_model_of_its_very_shape(run: Run) -> None:
    # Llama-3-8B is Llama-3.1-8B's decoder, layer for layer and weight for weight (the same
    # 15.01 GB a measured step reads): expert pass 14 found its refusal false
    result = run("show", "decode-roofline-vs-measured", "--model", "llama-3-8b")
    assert "Meta-Llama-3-8B" in result.output


def test_a_measured_drill_refuses_a_model_of_another_shape_by_its_own_reason(run: Run) -> None:
    result = run("show", "decode-roofline-vs-measured", "--model", "qwen3-8b", ok=False)
    assert result.exit_code == 2
    assert "is Llama-3.1-8B's own" in result.stderr and "--gpu only" not in result.stderr


def test_a_measured_drill_takes_the_models_its_own_variants_draw(run: Run) -> None:
    # swap-or-recompute's variants draw Qwen2.5-7B at the measured prefill rate: so may a
    # re-target
    assert "Qwen2.5-7B" in run("solution", "swap-or-recompute", "--model", "qwen2.5-7b").output


def test_a_measured_drill_refuses_another_shape(run: Run) -> None:
    result = run("show", "decode-roofline-vs-measured", "--model", "qwen3-8b", ok=False)
    assert result.exit_code == 2
    assert "is Llama-3.1-8B's own" in result.stderr and "--gpu only" not in result.stderr


def test_a_dense_lesson_refuses_a_mixture_of_experts(run: Run) -> None:
    result = run("show", "llama2-70b-mi300x", "--model", "mixtral-8x7b", "--gpu", "h200",
                 ok=False)
    assert result.exit_code == 2
    assert "Mixtral-8x7B is a mixture of experts" in " ".join(result.stderr.split())


def test_a_model_is_refused_at_a_context_past_its_own_positions(run: Run) -> None:
    # Phi-3-mini-4k's config stops at 4,096 positions; the long-context tier holds 131,072
    result = run("show", "long-context-tier", "--model", "phi-3-mini", ok=False)
    assert result.exit_code == 2
    assert "more than 4 × Phi-3-mini-4k's 4,096 positions" in " ".join(result.output.split())


def test_a_ratio_of_small_counts_is_not_called_the_ratio_of_contexts(run: Run) -> None:
    # Mistral-7B-v0.3 on an L4: 18 prompt-only chats against 3 real ones is 6×, not
    # "essentially" the 4.8 of the contexts (Qwen3-32B on an H100, the case first found, holds
    # no uncapped chat and is refused since expert pass 19)
    text = " ".join(run("solution", "multi-turn-growth", "--model", "mistral-7b-v0.3", "--gpu",
                        "l4").output.split())
    assert "18 ÷ 3 = **6×**, against 6,144 ÷ 1,280 = 4.8 for the contexts alone" in text
    assert "essentially" not in text


def test_a_follow_up_that_fits_no_session_says_so_in_words(run: Run) -> None:
    text = " ".join(run("solution", "prefix-caching", "--model", "qwen3-32b").output.split())
    assert "holds not one such session, with the prefix shared or without it" in text



def test_a_card_with_no_sourced_driver_figure_is_refused_by_a_drill_that_asks_it(
        run: Run) -> None:
    result = run("show", "llama31-8b-h100", "--gpu", "mi250x", ok=False)
    assert result.exit_code == 2
    assert "no sourced figure for AMD Instinct MI250X's: choose a card it has one for" in \
        " ".join(result.stderr.split())
    assert "--hbm-gb" not in result.stderr


def test_the_moe_situation_states_the_targets_experts(run: Run) -> None:
    text = " ".join(run("show", "mixtral-moe-decode", "--model", "qwen3-30b-a3b").output.split())
    assert "the MLP is 128 experts, and a router sends each token to 8 of them" in text
    assert "13B" not in text


def test_an_mxfp4_models_weight_read_is_its_bytes_not_its_parameters(run: Run) -> None:
    # GPT-OSS-120B: 65.25 GB resident, 5.06 GB read at batch 1 (the BF16 attention and LM
    # head, 4 of 128 MXFP4 experts, one row of the embedding table) against a dense twin's
    # 64.09 GB (all but its 1.16 GB embedding table, since expert pass 45): 12.7×; the FLOPs
    # leave the input embedding (a lookup, 201,088 × 2,880) out: (116.83 − 0.58) ÷ (5.70 −
    # 0.58) = 22.7×
    text = " ".join(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu",
                        "h200").output.split())
    assert "reads about 12.7× fewer bytes of weights and runs 22.7× fewer FLOPs" in text
    assert "they are already mxfp4" in text


def test_a_hypothesis_that_overshoots_the_gap_is_not_called_small(run: Run) -> None:
    # Qwen3-30B-A3B on an A100: 10 GB of activations leaves 2 sequences, 88% below; a
    # smaller overrun is the whole 40% (an overshoot at 10 GB does not rule memory out)
    text = " ".join(run("solution", "observed-concurrency-lower", "--model", "qwen3-30b-a3b",
                        "--gpu", "a100-80gb").output.split())
    assert "88% below | **yes**, alone, on this card: about" in text
    assert "real but small" not in text


def test_the_weight_read_is_called_dominant_only_when_it_is(run: Run) -> None:
    # Gemma-2-27B on a B200: at the full batch the KV read outweighs the 54 GB of weights
    text = " ".join(run("solution", "llama2-70b-mi300x", "--model", "gemma-2-27b", "--gpu",
                        "b200").output.split())
    assert "only 33% of what a step reads" in text
    assert "weight read dominates" not in text and "almost entirely weights" not in text


def test_a_refusal_never_names_an_option_the_command_lacks(run: Run) -> None:
    # the TP=2 drill sizes FP8 weights from a release or from the vocabulary; Mixtral-8x7B's
    # preset has neither
    result = run("show", "llama31-70b-tp2-h100", "--model", "mixtral-8x7b", ok=False)
    assert result.exit_code == 2
    assert "--weights-gb" not in result.stderr and "kvdrill calc" in result.stderr
