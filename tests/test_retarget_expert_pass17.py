"""The seventeenth expert pass (/tmp/w4/expert17.md): the card's memory named as it is (GDDR6
on an L4, not HBM), the card's graphs named in the paged-blocks prompt, KV heads that do not
divide the query heads refused, a model with one KV head refused where an option cuts to one,
and one KV head under TP said to be copied, not split. Each test fails on what was printed
before, but the one that keeps HBM where it is."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from config_edit import config_with
from retarget_text import flat, refusal_text
from retarget_text import solution_text as _solution

from trainer.store import schedule

Run = Callable[..., Result]


def test_a_gddr_card_is_not_said_to_hold_hbm(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen2.5-3b", "--gpu", "l4")
    assert "24 GB of GDDR6 at" in text and "HBM" not in text.split("## 2.")[0]


def test_an_hbm_card_still_says_hbm(run: Run) -> None:
    assert "192 GB of HBM at" in _solution(run, "llama2-70b-mi300x")


def test_the_paged_blocks_prompt_names_the_cards_graphs(run: Run) -> None:
    text = flat(run("show", "paged-blocks-vllm", "--gpu", "mi300x").output)
    assert "activations, HIP graphs and memory outside PyTorch" in text


def test_a_new_card_does_not_wait_on_the_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    # fsrs sleeps a millisecond after each card it numbers by the clock: 20 ms of every `next`
    def no_sleep(seconds: float) -> None:
        raise AssertionError(f"slept {seconds} s")

    monkeypatch.setattr("time.sleep", no_sleep)
    assert schedule.CardState.start().reviews == 0


def test_kv_heads_that_do_not_divide_the_query_heads_are_refused(run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Llama-3.1-8B", num_key_value_heads=6)
    result = run("calc", "--model", path, ok=False)
    assert result.exit_code == 2
    assert "num_key_value_heads 6 does not divide num_attention_heads 32" in flat(result.stderr)


def test_an_mqa_model_is_refused_where_an_option_cuts_to_one_kv_head(run: Run) -> None:
    text = refusal_text(run, "llama2-70b-mi300x", "--model", "gemma-3-1b", "--gpu", "l4")
    assert "Gemma-3-1B already has a single KV head" in text


def test_one_kv_head_under_tp_is_said_to_be_copied_not_split(run: Run, tmp_path: Path) -> None:
    path = config_with(tmp_path, "Qwen3-30B-A3B", num_key_value_heads=1)
    text = _solution(run, "mixtral-moe-decode", "--model", path)
    assert "a copy of every token's KV (its 1 KV head, fewer than the GPUs, cannot be split)" \
        in text and "(its 1 of the 1 KV heads)" not in text


def test_a_draft_whose_table_is_padded_differently_is_refused(run: Run) -> None:
    text = refusal_text(run, "speculative-decoding", "--model", "qwen2.5-14b", "--gpu", "h200")
    assert "151,936 rows against the target's 152,064" in text and "vLLM refuses" in text


def test_tp2_at_full_batch_says_the_step_grows_where_it_does(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-8b", "--gpu", "a100-40gb")
    assert "the step grows to 19.3 ms (against 16.7 ms on one card)" in text
    assert "TP=2 also improves both" not in text


def test_the_measured_pair_is_named_as_the_measured_models(run: Run) -> None:
    text = _solution(run, "prefill-vs-decode", "--model", "qwen2.5-7b")
    assert "The pair measured with the Llama-3.1-8B shape at 4k gives 111.3 ms ÷ 7.60 ms ≈ 15, " \
           "that model's ratio" in text


def test_a_saving_too_small_for_one_decimal_gets_two(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen2.5-0.5b", "--gpu", "b200")
    assert "(21.97 ms instead of 22.04 ms at 419 sequences)" in text


def test_a_model_whose_one_sequence_outweighs_its_weights_is_refused(run: Run) -> None:
    # Qwen3-0.6B at 32,768 tokens: 3.76 GB of KV a sequence against 1.19 GB of weights, so
    # "serving many users at once costs each of them little" (3c) is false there
    text = refusal_text(run, "llama2-70b-mi300x", "--model", "qwen3-0.6b", "--gpu", "l4")
    assert "one 32,768-token sequence's KV (3.76 GB) outweighs the weights a step reads " \
           "(1.19 GB)" in text


def test_fp8_kv_is_the_lever_for_both_where_the_kv_is_most_of_the_step(run: Run) -> None:
    # Llama-3.1-8B on an MI300X at 32k: the weights are 9% of a full step; at the same 38
    # sequences fp8 KV gives 18.4 ms, int8 weights 32.3 ms (from 33.8)
    text = _solution(run, "llama2-70b-mi300x", "--model", "llama-3.1-8b", "--gpu", "mi300x")
    assert "the option that improves **both** concurrency and per-token latency the most is " \
           "**fp8 KV**: at the same 38 sequences it shortens the step to 18.4 ms (from 33.8 ms)" \
        in text
    assert "is **int8 weights**" not in text


def test_a_gddr_card_is_named_in_every_sizing_line(run: Run) -> None:
    text = _solution(run, "prefix-caching", "--model", "qwen3-4b", "--gpu", "l4")
    assert "weights are in GDDR6 whatever the cache does" in text and "HBM" not in text


def test_a_shared_expert_is_named_in_the_active_share(run: Run) -> None:
    # Llama-4-Scout: every MoE layer has one always-on shared expert beside its 16 routed ones
    shown = flat(run("show", "mixtral-moe-decode", "--model", "llama-4-scout", "--gpu",
                     "mi300x").output)
    assert "(attention, embeddings, 1 shared expert and 1 routed expert per layer)" in shown
    text = _solution(run, "mixtral-moe-decode", "--model", "llama-4-scout", "--gpu", "mi300x")
    assert "1 of 16 routed experts in each layer, and through its 1 shared expert too" in text


def test_a_model_without_shared_experts_says_nothing_of_them(run: Run) -> None:
    shown = flat(run("show", "mixtral-moe-decode").output)
    assert "(attention, embeddings and 2 experts per layer)" in shown


def test_a_publishers_active_count_is_said_beside_kvdrills(run: Run) -> None:
    # GPT-OSS-120B: 5.71B with the embedding table (kvdrill), 5.13B without (OpenAI's card)
    shown = flat(run("show", "mixtral-moe-decode", "--model", "gpt-oss-120b").output)
    assert "about 5.71B of them used by any one token" in shown
    assert "(Its publisher counts 5.13B active, leaving the embedding table out.)" in shown
