"""Expert pass 33 (146 outputs recomputed: 3 WRONG, 3 MISLEADING): sentences whose truth
depends on the target's numbers are chosen by them. Each test of a fix fails on what was
printed before; its guards pass on both."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


def test_a_40k_model_evicts_ten_chat_users_not_dozens(run: Run) -> None:
    # 40,960 ÷ 4,096 = 10 chat sessions' worth of KV
    text = flat(run("solution", "llama31-8b-h100", "--model", "qwen3-30b-a3b",
                    "--gpu", "a100-80gb").output)
    assert "evicts 10 chat users" in text and "dozens" not in text


def test_a_long_user_the_card_cannot_hold_is_not_said_to_evict_more_than_it_holds(
        run: Run) -> None:
    # Mistral-Nemo-12B on an A100 40GB holds 11 chat sessions; a 128k session is 32 of them
    text = flat(run("solution", "llama31-8b-h100", "--model", "mistral-nemo-12b",
                    "--gpu", "a100-40gb").output)
    assert "needs the KV of 32 chat users, more than this card holds" in text
    assert "evicts 32" not in text


def test_the_default_128k_model_evicts_thirty_two(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100").output)
    assert "evicts 32 chat users" in text


def test_a_long_request_beside_heavy_weights_costs_its_share_not_32x(run: Run) -> None:
    # Mixtral on a Gaudi 3: a full batch's KV is 16% of the step; beside the long request one
    # chat fits, and two tokens touch 1 − (6/8)² of the experts, 42.7 GB (expert pass 37): the
    # long request's share is (42.7/2 + 17.2) ÷ (42.7/2 + 0.54) ≈ 1.8× a chat request's
    text = flat(run("solution", "long-context-tier", "--model", "mixtral-8x7b",
                    "--gpu", "gaudi3").output)
    assert "where the KV reads dominate the step" not in text
    assert "84% of the bytes a step reads here" in text
    assert "(in a batch of 2, whose tokens touch 42.7 GB of the weights) is about 1.8× a chat " \
        "request's, not 32×" in text


def test_seventy_b_on_an_mi325x_costs_about_eight_times(run: Run) -> None:
    # 63 chat sessions; beside the long one 32 requests: (141.1/32 + 42.95) ÷ (141.1/32 + 1.34)
    text = flat(run("solution", "long-context-tier", "--model", "llama-3.1-70b",
                    "--gpu", "mi325x").output)
    assert "about 8.2× a chat request's, not 32×" in text


def test_the_default_long_tier_says_its_share_of_a_kv_dominated_step(run: Run) -> None:
    # 96 chat sessions; 65 requests beside the long one: (15/65 + 17.18) ÷ (15/65 + 0.537) ≈ 22
    text = flat(run("solution", "long-context-tier").output)
    assert "where the KV reads are 76% of a step, that its share of the step grows to about " \
        "22× a chat request's; the memory it holds, 32× a chat request's" in text


def test_a_step_half_kv_is_not_said_to_cost_32x(run: Run) -> None:
    text = flat(run("solution", "long-context-tier", "--model", "qwen3-30b-a3b",
                    "--gpu", "h200").output)
    assert "grows to about 15× a chat request's" in text
    assert "costs about 32×" not in text


def test_fp8_kv_that_alone_carries_the_80_comes_before_fp8_weights(run: Run) -> None:
    # Qwen3-32B on an H200: FP8 KV alone 57.4 GB ÷ 537 MB = 106 ≥ 80; FP8 weights alone 83
    text = flat(run("solution", "llama31-8b-h100", "--model", "qwen3-32b", "--gpu", "h200").output)
    assert "FP8 KV (below) alone reaches 106, enough for the 80 on one card" in text
    assert "smaller weights come first" not in text


def test_heavy_weights_that_fp8_kv_cannot_carry_still_put_fp8_weights_first(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100", "--model", "llama-3.1-70b",
                    "--gpu", "mi300x").output)
    assert "smaller weights come first" in text and "FP8 KV alone reaches 41" in text


def test_the_70b_follow_up_on_an_a100_says_fp8_runs_weight_only(run: Run) -> None:
    text = flat(run("solution", "llama31-8b-h100", "--gpu", "a100-40gb").output)
    assert "has no FP8 arithmetic: vLLM runs FP8 weights there weight-only" in text


def test_the_70b_follow_up_on_an_h100_has_no_such_note(run: Run) -> None:
    assert "no FP8 arithmetic" not in flat(run("solution", "llama31-8b-h100").output)


def test_an_h200s_reported_total_is_cudas_not_nvidia_smis(run: Run) -> None:
    # 150,109,880,320 B = 143,156 MiB is CUDA's total; nvidia-smi shows 143,771 MiB
    text = flat(run("solution", "llama2-70b-mi300x", "--model", "qwen3-32b",
                    "--gpu", "h200").output)
    assert "143,156 MiB = 150 GB (CUDA's total, which vLLM uses; nvidia-smi shows a little " \
        "more)" in text
    assert "as nvidia-smi prints it" not in text


def test_an_h100s_reported_total_is_nvidia_smis_a_little_above_cudas(run: Run) -> None:
    text = flat(run("solution", "llama2-70b-mi300x", "--model", "llama-3.1-8b",
                    "--gpu", "h100").output)
    assert "81,559 MiB = 85.5 GB (as nvidia-smi prints it; CUDA's total, which vLLM uses, is " \
        "up to about 1% lower)" in text


def test_fp8_mla_on_an_amd_card_is_hedged_as_the_deepseek_drill_hedges_it(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--model", "deepseek-v2-lite",
                    "--gpu", "mi300x").output)
    assert "if the engine's MLA path on this card takes an FP8 cache" in text
    assert "FP8 KV halves the bytes per token" not in text


def test_fp8_mla_on_a_hopper_card_is_said_plainly(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--model", "deepseek-v2-lite",
                    "--gpu", "h100").output)
    assert "FP8 KV halves the bytes per token and about doubles the sessions" in text


def test_a_32k_row_on_an_8k_model_says_what_vllm_needs(run: Run) -> None:
    text = flat(run("solution", "decode-roofline-vs-measured", "--model", "llama-3-8b").output)
    assert "Meta-Llama-3-8B has 8,192 positions (max_position_embeddings): vLLM refuses a " \
        "max_model_len of 32,768 unless" in text


def test_gemma_2_at_32k_says_what_vllm_needs(run: Run) -> None:
    text = flat(run("solution", "sliding-window-kv").output)
    assert "Gemma-2-9B has 8,192 positions" in text


def test_the_drills_own_8b_at_32k_has_no_such_note(run: Run) -> None:
    assert "max_position_embeddings" not in flat(
        run("solution", "decode-roofline-vs-measured").output)
