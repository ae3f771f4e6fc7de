"""The twenty-sixth expert pass (stress targets: Llama-4, Nemotron, MLA, Gemma-3, phi-4, small
cards): a paged-blocks variant whose server would not start is not drawn; a vision tower is
memory a text step does not read, in the sheet and in every share and step time; a refusal says
what the model lacks before what the card lacks, and names a drill that runs on the card asked
about; vLLM's MLA path before Hopper takes no FP8 cache; chunked attention is not called a
sliding window; calc offers tensor-parallel degrees that work. Each test of a fix fails on what
was printed before; its guards pass on both."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


# --- a server that would not start is no variant ----------------------------------------------

def test_a_card_where_the_logged_server_would_not_start_is_refused(run: Run) -> None:
    # one 8,192-token request needs 512 blocks; this L4 variant (utilisation 0.85, a 6 GB
    # reserve) leaves fewer: vLLM refuses to start, and its log line was keyed X = 0.21
    result = run("solution", "paged-blocks-vllm", "--gpu", "l4", "--variant", "531927",
                 ok=False)
    assert result.exit_code == 2
    assert "vLLM refuses to start" in result.stderr
    assert result.stderr.count("\n") == 1


def test_every_drawn_variant_logs_a_concurrency_of_at_least_one(run: Run) -> None:
    data = json.loads(run("variants", "paged-blocks-vllm", "--model", "phi-4", "--gpu",
                          "a100-40gb", "--count", "4", "--format", "json").output)
    assert all(v["answers"]["engine-max-concurrency"]["value"] >= 1 for v in data["variants"])


def test_the_drills_own_card_still_draws_its_variants(run: Run) -> None:
    data = json.loads(run("variants", "paged-blocks-vllm", "--count", "5",
                          "--format", "json").output)
    assert len(data["variants"]) == 5


# --- a vision tower is not read ---------------------------------------------------------------

def test_the_sheet_says_a_step_reads_the_weights_less_the_vision_tower(run: Run) -> None:
    text = run("show", "llama2-70b-mi300x", "--model", "gemma-3-4b", "--gpu", "l4").output
    assert "weights: 8.6 GB (bf16); a decode step reads 7.761 GB (not the vision tower)" in text


def test_int8_weights_shorten_the_step_by_half_the_weights_read(run: Run) -> None:
    # (3.88 + 6 × 0.7927) GB ÷ 0.3 TB/s = 28.8 ms, as calc --weights-dtype int8 --batch 6 says
    text = flat(run("solution", "llama2-70b-mi300x", "--model", "gemma-3-4b", "--gpu", "l4",
                    "--format", "md").output)
    assert "28.8 ms instead of 41.7 ms at 6 sequences" in text
    assert "the weights are 62% of what a full-batch step reads" in text
    assert "reading the 7.76 GB of weights" in text


def test_a_text_only_model_keeps_its_figures(run: Run) -> None:
    text = flat(run("solution", "llama2-70b-mi300x", "--format", "md").output)
    assert "reading the 138 GB of weights" in text


# --- refusals: the model's reason first, the card asked about first ---------------------------

@pytest.mark.parametrize(("args", "said"), [
    (("speculative-decoding", "--model", "llama-4-scout", "--gpu", "h200"),
     "no draft for this drill to run beside it"),
    (("multi-turn-growth", "--model", "llama-3.3-nemotron-super-49b", "--gpu", "mi250x"),
     "keeps KV on 49 of its 80 layers"),
    # (Mixtral-8x22B is now sized as vLLM quantizes it at load, and simply does not fit: the
    # preset of Mixtral-8x7B records no vocabulary to size its 16-bit tables by)
    (("llama31-70b-tp2-h100", "--model", "mixtral-8x7b", "--gpu", "l4"),
     "records no 'fp8' checkpoint"),
])
def test_what_the_model_lacks_is_said_before_what_the_card_lacks(
        run: Run, args: tuple[str, ...], said: str) -> None:
    result = run("show", *args, ok=False)
    assert said in result.stderr
    assert "choose a larger card" not in result.stderr
    assert "one device" not in result.stderr


def test_a_checkpoint_refusal_names_calc_with_the_model(run: Run) -> None:
    # (phi-4 now runs, quantized to FP8 at load by vLLM; Mixtral-8x7B's preset has no
    # vocabulary to size what that keeps in 16 bits)
    result = run("show", "llama31-70b-tp2-h100", "--model", "mixtral-8x7b", "--gpu", "l4",
                 ok=False)
    assert "known: none" not in result.stderr
    assert "kvdrill calc --model mixtral-8x7b" in result.stderr


def test_a_suggested_drill_runs_on_the_card_asked_about(run: Run) -> None:
    result = run("show", "hybrid-state-kv", "--model", "qwen2.5-0.5b", "--gpu", "l4", ok=False)
    assert "--gpu l4" in result.stderr and "does not run on" not in result.stderr


def test_a_model_of_few_positions_is_sized_by_calc_within_them(run: Run) -> None:
    result = run("show", "long-context-tier", "--model", "opt-125m", ok=False)
    assert "kvdrill calc --model opt-125m --seq 2048" in result.stderr


# --- engines and kernels ----------------------------------------------------------------------

def test_fp8_kv_is_no_lever_for_mla_on_a_card_before_hopper(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--model", "deepseek-v2-lite",
                    "--gpu", "l40s", "--format", "md").output)
    assert "Triton MLA, which takes no FP8 cache" in text
    assert "FP8 KV halves the bytes per token and about doubles" not in text


def test_fp8_kv_stays_a_lever_for_a_gqa_model_there(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--model", "mistral-nemo-12b",
                    "--gpu", "l40s", "--format", "md").output)
    assert "FP8 KV halves the bytes per token and about doubles" in text


def test_chunked_attention_is_not_called_a_sliding_window(run: Run) -> None:
    text = run("show", "mixtral-moe-decode", "--model", "llama-4-scout", "--gpu",
               "mi325x").output
    assert "attention within 8,192-token chunks on 36 of 48 layers" in text
    assert "sliding window" not in text


def test_calc_says_a_chunked_layer_is_counted_at_its_whole_chunk(run: Run) -> None:
    text = run("calc", "--model", "llama-4-scout", "--gpu", "mi325x", "--gpus", "2",
               "--seq", "20000").output
    assert "at 20,000 tokens it holds 3,616" in flat(text)


# --- calc's tensor-parallel degrees -----------------------------------------------------------

@pytest.mark.parametrize(("args", "offered"), [
    (("--model", "phi-4", "--gpus", "30"), "1 or 2 or 5 or 10 or 20 or 40"),
    (("--model", "qwen2.5-0.5b", "--gpus", "7"), "1 or 2 or 14"),
    (("--model", "qwen2.5-0.5b", "--gpus", "4"), "1 or 2 or 14"),
])
def test_calc_offers_only_degrees_that_split_both_kinds_of_head(
        run: Run, args: tuple[str, ...], offered: str) -> None:
    result = run("calc", *args, "--gpu", "l4", ok=False)
    assert result.exit_code == 2
    assert f"give --gpus {offered}" in result.stderr
    for degree in offered.split(" or "):
        run("calc", *args[:2], "--gpu", "h200", "--gpus", degree)  # each one works


# --- the twenty-seventh pass: calc under DP attention, int4, the bar; a branch of prose --------

def test_dp_attention_at_batch_one_waits_for_the_rank_that_reads_a_whole_copy(run: Run) -> None:
    # one rank reads its attention copy, its sequence's KV and a quarter of the rest: 24.6 GB
    # at 3.35 TB/s is 7.33 ms, not 67.7 GB over four cards (5.05 ms)
    data = json.loads(run("calc", "--model", "qwen2.5-32b", "--gpu", "h100", "--gpus", "4",
                          "--dp-attention", "--context", "8k", "--utilization", "0.9",
                          "--reserve-gb", "4", "--batch", "1", "--json").output)
    quantities = data.get("quantities", data)
    assert round(float(quantities["decode_step_seconds"]) * 1000, 2) == 7.33
    assert round(float(quantities["batch1_ceiling_tokens_per_second"])) == 149


def test_dp_attention_that_saves_no_kv_is_said_to_lose(run: Run) -> None:
    text = run("calc", "--model", "qwen2.5-32b", "--gpu", "h100", "--gpus", "4",
               "--dp-attention", "--context", "8k", "--utilization", "0.9",
               "--reserve-gb", "4").output
    assert "which holds 96 sequences against 80" in flat(text)


def test_an_int4_serving_says_what_its_count_leaves_out(run: Run) -> None:
    text = flat(run("calc", "--model", "qwen2.5-32b", "--gpu", "l40s", "--weights-dtype",
                    "int4", "--context", "8k").output)
    assert "vLLM keeps those two in bf16" in text and "scale and zero point" in text


def test_the_bar_calls_the_utilisation_cap_held_back_not_a_reserve(run: Run) -> None:
    text = run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--utilization", "0.9").output
    assert "▒ held back 8 GB" in text and "▒ reserve" not in text


def test_one_mha_session_beside_weights_that_leave_room_is_said_so(run: Run) -> None:
    text = flat(run("solution", "llama2-70b-mi300x", "--model", "mistral-small-24b", "--gpu",
                    "h100", "--format", "md").output)
    assert "the weights leave room, but each MHA session is so large that one user fills it" \
        in text
    assert "almost entirely weights" not in text
