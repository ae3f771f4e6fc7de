"""Expert pass 48 (re-targeted drills at configs and quantised checkpoints): the measured drills
keep the measured weights for the measured model's own config.json and refuse a quantised
checkpoint of it (W1-W3); the decode step's read-to-compute ratio is computed (W4); an AWQ
checkpoint served as int8 keeps its fp16 tables (W5); Llama-2-70B's own positions are said
(M2); a window the context does not pass leaves no empty clause (N1); "an 8,192-token" (N5); the
same count with larger blocks said as the same (N4)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs_pass48"
MEASURED = ("decode-roofline-vs-measured", "chunked-prefill-tpot", "disaggregated-prefill",
            "prefill-vs-decode", "swap-or-recompute")


def _solution(run: Run, *args: str) -> str:
    return flat(run("solution", *args).output)


def test_the_measured_models_own_config_reads_the_measured_weights(run: Run) -> None:
    # (W1) Meta's config as released: 16.06 − 1.05 = 15.01 GB a step, as the measurement read
    said = _solution(run, "decode-roofline-vs-measured", "--model",
                     str(CONFIGS / "llama31-8b-bf16"))
    assert "So a step reads 16.06 − 1.05 = **15.01 GB** of weights" in said


@pytest.mark.parametrize("drill", MEASURED)
def test_a_quantised_checkpoint_of_the_measured_model_is_refused(run: Run, drill: str) -> None:
    # (W2, W3) the rates were measured with the bf16 weights; an FP8 checkpoint never ran
    said = refusal_text(run, drill, "--model", str(CONFIGS / "llama31-8b-fp8block"))
    assert f"drill {drill} was measured on Llama-3.1-8B's bf16 weights, and " \
           "llama31-8b-fp8block is that decoder with fp8 weights, never measured" in said


def test_the_decode_steps_read_against_its_arithmetic_is_computed(run: Run) -> None:
    # (W4) 3.46 ms ÷ 16 µs = 213
    said = _solution(run, "prefill-vs-decode")
    assert "The step needs about 210× longer to read its bytes than to do its arithmetic" \
        in said


def test_an_awq_checkpoint_served_as_int8_keeps_its_fp16_tables(run: Run) -> None:
    # (W5) 31.2B linear params × 1 B + 1.56B table params × 2 B = 34.3 GB; 148 GB ÷ 8.59 GB = 17
    said = _solution(run, "llama2-70b-mi300x", "--model", str(CONFIGS / "qwen2.5-32b-awq"))
    assert "| (b) int8 weights | weights 34.3 GB, budget 148 GB | **17 sequences** |" in said
    assert "would grow them to 34.3 GB" in said


def test_the_drills_own_model_past_its_positions_says_so(run: Run) -> None:
    # (M2) Llama-2-70B has 4,096 positions; the exercise asks for 32,768
    said = _solution(run, "llama2-70b-mi300x")
    assert "Llama-2-70B itself was trained at 4,096 positions, so vLLM refuses a " \
           "max_model_len of 32,768 without RoPE scaling" in said


def test_a_window_the_context_does_not_pass_leaves_no_empty_clause(run: Run) -> None:
    # (N1) Mistral-7B-v0.1 at 4,096 tokens, its window: nothing to compare
    said = _solution(run, "swap-or-recompute", "--variant", "1")
    assert "would be )" not in said and "would give ." not in said


def test_a_figure_said_with_a_vowel_takes_an(run: Run) -> None:
    # (N5) "a 8,192-token document" read aloud is "an eight thousand …"
    said = _solution(run, "chunked-prefill-tpot")
    assert "an 8,192-token document" in said and "a 8,192" not in said


def test_the_same_count_with_larger_blocks_is_said_as_the_same(run: Run) -> None:
    # (N4) four sessions either way on an L4: no "0 fewer sessions"
    said = _solution(run, "prefix-caching", "--gpu", "l4")
    assert "0 fewer" not in said
    assert "the same number of sessions as with 16-token blocks (4)" in said
