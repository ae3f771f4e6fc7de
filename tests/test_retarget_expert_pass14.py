"""The fourteenth expert pass (/tmp/expert14.md), on default and re-targeted drills: a lesson
sentence left blank where its wrong value equals the right one, a per-GPU rate ratio called a
count of GPUs, a ratio keyed only after its floors, an MLA model given KV heads, refusals that
blamed the wrong thing or offered no command, a TP degree vLLM refuses. Each test fails on the
text as it was before."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat
from retarget_text import refusal_text as _refusal
from retarget_text import solution_text as _solution

Run = Callable[..., Result]


def test_open_conversations_that_need_no_more_gpus_say_so(run: Run) -> None:
    text = _solution(run, "littles-law-capacity", "--model", "qwen2.5-0.5b", "--gpu", "mi300x")
    assert "would buy GPUs" not in text and "Even sized for all of those" in text


def test_the_tail_is_priced_in_gpus_not_in_a_rate_ratio(run: Run) -> None:
    text = _solution(run, "littles-law-capacity", "--model", "qwen2.5-0.5b", "--gpu", "mi300x")
    assert "buys about 8× the GPUs" not in text
    assert "8× fewer requests at the p99, though at this load the count of GPUs is the same" \
        in text


def test_a_ratio_before_the_floors_is_right(run: Run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("hybrid-advantage: ~8x\n", encoding="utf-8")
    out = run("grade", "hybrid-state-kv", "--answers", str(sheet), ok=False).output
    assert "hybrid-advantage" in out and "~8x     correct" in out


def test_an_mla_model_is_given_its_latent_not_kv_heads(run: Run) -> None:
    text = flat(run("show", "deepseek-v3-mla-h200").output)
    assert "KV heads" not in text.split("Given:")[1].split("GPU:")[0]
    assert "512-element latent and a 64-element RoPE key" in text


def test_a_step_read_is_not_said_to_leave_out_a_table_it_counts(run: Run) -> None:
    text = flat(run("show", "mixtral-moe-decode").output)
    assert "(not the embedding table)" not in text


def test_a_measured_drill_names_the_models_it_takes(run: Run) -> None:
    text = _refusal(run, "swap-or-recompute", "--model", "qwen3-8b", "--gpu", "h200")
    assert "llama-3.1-8b, qwen2.5-7b or mistral-7b-v0.1" in text
    assert "is Llama-3.1-8B's own" not in text


def test_a_speculative_refusal_names_targets_that_fit_the_card(run: Run) -> None:
    text = _refusal(run, "speculative-decoding", "--model", "mistral-7b-v0.3", "--gpu", "l40s")
    assert "none kvdrill drafts for fits" not in text
    target = text.rsplit("such as ", 1)[1].split(",")[0].split(" or ")[0]
    assert run("solution", "speculative-decoding", "--model", target, "--gpu",
               "l40s").exit_code == 0


def test_calc_refuses_a_tp_degree_that_splits_query_heads_unevenly(run: Run) -> None:
    result = run("calc", "--model", "qwen2.5-7b", "--gpu", "l4", "--gpus", "8", ok=False)
    assert result.exit_code == 2
    assert "28 query heads cannot be split over 8 GPUs" in result.stderr
    assert "--gpus 1 or 2 or 4" in result.stderr


def test_a_context_past_the_targets_positions_is_noted_in_its_solution(run: Run) -> None:
    # expert pass 15: Gemma-2-27B has 8,192 positions and the drill asks for 32,768
    text = _solution(run, "llama2-70b-mi300x", "--model", "gemma-2-27b", "--gpu", "h200")
    assert "Gemma-2-27B has 8,192 positions" in text
