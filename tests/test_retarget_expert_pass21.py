"""The twenty-first expert pass (/tmp/w4/pass21.md): an MoE's decode step reads one row of its
embedding table wherever it is priced (calc, speculation, the long-context tier), as the MoE
drill already did; GPT-OSS served in another dtype re-prices its MXFP4 experts alone, its BF16
attention and tables as they are; on Intel Gaudi, whose vLLM pages in 128-token blocks by
default, a drill's 16-token blocks are said to be a launch flag. Each test of a fix fails on
what was printed before; its guards (a dense step, a GPU's sheet) pass on both."""

from __future__ import annotations

import json
from collections.abc import Callable

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


def _calc(run: Run, *args: str) -> dict[str, object]:
    result = run("calc", *args, "--json")
    data: dict[str, object] = json.loads(result.output)
    return data


def test_an_moe_step_reads_one_row_of_its_embedding_table(run: Run) -> None:
    # Qwen3-30B-A3B: 3.353B active × 2 B = 6.71 GB, less the 151,936 × 2,048 × 2 B table
    data = _calc(run, "--model", "qwen3-30b-a3b", "--gpu", "h200", "--batch", "1")
    assert round(int(str(data["weights_read_per_step"])) / 1e9, 2) == 6.08


def test_a_dense_step_still_reads_every_weight_as_the_seeds_roofline_does(run: Run) -> None:
    data = _calc(run, "--model", "llama-3.1-8b", "--gpu", "h100", "--batch", "1")
    assert data["weights_read_per_step"] == data["weights_bytes"]


def test_speculation_on_an_moe_target_prices_the_step_without_the_table(run: Run) -> None:
    text = flat(run("solution", "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu",
                    "b200").output)
    assert "target step: (weights + KV) ÷ bandwidth = **0.842 ms**" in text
    assert "speed-up: tokens per round × target step ÷ round = **0.855**" in text


def test_the_long_tier_on_an_moe_compares_steps_without_the_table(run: Run) -> None:
    text = flat(run("solution", "long-context-tier", "--model", "qwen3-30b-a3b", "--gpu",
                    "b200").output)
    assert "takes 2.92× a chat request's" in text


def test_gpt_oss_in_bf16_is_its_parameters_at_two_bytes(run: Run) -> None:
    # 20.91B parameters × 2 B; the BF16 attention and tables are not widened again
    data = _calc(run, "--model", "gpt-oss-20b", "--gpu", "h100", "--weights-dtype", "bf16")
    assert round(int(str(data["weights_bytes"])) / 1e9, 1) == 41.8


def test_gpt_oss_in_fp8_re_prices_the_experts_alone(run: Run) -> None:
    data = _calc(run, "--model", "gpt-oss-20b", "--gpu", "h100", "--weights-dtype", "fp8")
    assert round(int(str(data["weights_bytes"])) / 1e9, 1) == 22.7


def test_gpt_oss_in_fp8_says_what_stays_bf16(run: Run) -> None:
    text = flat(run("calc", "--model", "gpt-oss-20b", "--gpu", "h100", "--weights-dtype",
                    "fp8").output)
    assert "experts in fp8; attention, router and tables stay bf16" in text


def test_a_gaudi_sheet_says_its_16_token_blocks_are_a_launch_flag(run: Run) -> None:
    text = flat(run("show", "prefix-caching", "--model", "qwen3-8b", "--gpu", "gaudi3").output)
    assert "(set with --block-size 16: vLLM's default on Intel Gaudi 3 is 128)" in text


def test_a_gaudi_solution_does_not_call_16_tokens_the_engines_default(run: Run) -> None:
    text = flat(run("solution", "prefix-caching", "--model", "qwen3-8b", "--gpu",
                    "gaudi3").output)
    assert "vLLM's default of 16 tokens" not in text
    assert "vLLM's default on Gaudi is 128" in text


def test_a_gpu_sheet_names_no_block_size_flag(run: Run) -> None:
    assert "--block-size" not in flat(run("show", "prefix-caching").output)


def test_a_small_model_is_not_asked_why_a_batch_costs_each_user_so_little(run: Run) -> None:
    # Llama-3.2-1B on an A100 at 32k: 62 sequences' KV is 27× the 2.47 GB of weights
    text = flat(run("show", "llama2-70b-mi300x", "--model", "llama-3.2-1b", "--gpu",
                    "a100-80gb").output)
    assert "costs each of them so little" not in text
    assert "what serving many users at once shares among them and what it does not" in text


def test_the_seeds_question_stays_where_the_weights_are_most_of_a_step(run: Run) -> None:
    text = flat(run("show", "llama2-70b-mi300x").output)
    assert "why serving many users at once costs each of them so little" in text


def test_a_shared_prompt_that_is_a_sixth_of_the_budget_is_not_called_free(run: Run) -> None:
    # L4: the 262 MB prompt copy is 16% of a 1.6 GB budget, a whole session
    text = flat(run("solution", "prefix-caching", "--gpu", "l4").output)
    assert "costs almost nothing against the budget" not in text
    assert "takes 16% of the budget here" in text
