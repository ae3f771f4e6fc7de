"""The thirteenth expert pass (/tmp/expert13.md), on new models and cards: a sentence about the
hidden size true of Llama-2 only, the CUDA runtime named on AMD sheets, a tied embedding table
said to be read a row at a time, a card-only re-target's banner, copies and slips rounded as
no count is, refusals that blamed the card for the model. Each test fails on the text as it
was before."""

from __future__ import annotations

from collections.abc import Callable

from click.testing import Result
from retarget_text import flat
from retarget_text import refusal_text as _refusal
from retarget_text import solution_text as _solution

Run = Callable[..., Result]


def test_the_hidden_size_is_not_called_the_queries_width_where_it_is_not(run: Run) -> None:
    # Qwen3-32B: 64 query heads × 128 = 8,192 wide, hidden 5,120
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-32b", "--gpu", "b200")
    assert "width of the queries" not in text
    assert "not even the queries' width, 64 × 128 = 8,192" in text


def test_an_amd_sheet_names_hip_graphs_and_rccl(run: Run) -> None:
    text = flat(run("show", "llama31-405b-h200-tp", "--gpu", "mi300x").output)
    assert "HIP graphs and RCCL buffers" in text and "CUDA graphs" not in text


def test_a_tied_embedding_table_is_said_to_be_read_whole(run: Run) -> None:
    text = flat(run("show", "littles-law-capacity", "--model", "qwen3-4b",
                    "--gpu", "mi300x").output)
    assert "also the LM head here, so all of it is read" in text
    assert "few rows of the embedding table" not in text


def test_a_card_only_retarget_says_the_model_is_the_drills_own(run: Run) -> None:
    out = run("variants", "sliding-window-kv", "--count", "1", "--gpu", "l40s").output
    assert "Re-targeted at NVIDIA L40S: every number is this card's" in flat(out)
    assert "its own model" not in out


def test_the_per_gpu_slip_is_a_whole_count(run: Run) -> None:
    text = _solution(run, "llama31-70b-tp2-h100")
    assert "48 sessions instead of 97" in text and "48.5" not in text


def test_a_context_past_the_targets_positions_is_noted_on_its_sheet(run: Run) -> None:
    out = flat(run("variants", "llama2-70b-mi300x", "--count", "1", "--model",
                   "mistral-small-24b", "--gpu", "h200").output)
    assert "Mistral-Small-24B has 32,768 positions" in out


def test_a_refusal_names_models_that_fit_the_card(run: Run) -> None:
    text = _refusal(run, "llama2-70b-mi300x", "--model", "phi-3-mini", "--gpu", "l4")
    assert "none kvdrill knows fits" not in text
    suggested = text.split("such as ")[-1].replace(" or ", ", ").split(", ")[0]
    assert run("solution", "llama2-70b-mi300x", "--model", suggested, "--gpu",
               "l4").exit_code == 0


def test_a_refusal_gives_the_models_reason_before_the_cards(run: Run) -> None:
    text = _refusal(run, "llama31-8b-h100", "--model", "phi-3-mini", "--gpu", "gaudi3")
    assert "positions" in text and "no card it has one for" not in text


def test_a_16_bit_drill_is_not_refused_for_fp8(run: Run) -> None:
    assert "FP8" not in _refusal(run, "hybrid-state-kv", "--gpu", "mi250x")
    assert "no FP8 path" in _refusal(run, "deepseek-v3-mla-h200", "--gpu", "mi250x")


def test_equal_session_counts_are_not_a_percentage(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", "qwen3-14b", "--gpu", "l40s")
    assert "by about 0%" not in text and "Here both give 14 sessions." in text


def test_an_moe_step_reads_one_row_of_the_embedding_table(run: Run) -> None:
    # GPT-OSS-120B on a B200 pair: 6.22 GB less the 1.16 GB table a step never reads
    text = _solution(run, "mixtral-moe-decode", "--model", "gpt-oss-120b", "--gpu", "b200")
    assert "used by one token (5.71B active parameters counting the input embedding, less its " \
           "1.16 GB table, of which a step reads one row): **5.06 GB**" in " ".join(text.split())
    assert "**3,044 tokens/s**" in text


def test_counting_the_table_as_read_is_a_named_mistake(run: Run) -> None:
    out = run("variants", "mixtral-moe-decode", "--count", "1", "--model", "gpt-oss-20b",
              "--gpu", "a100-40gb").output
    assert "4.87 GB: counted the whole embedding table as read by a decode step" in out


def test_the_default_mixtral_drill_keeps_its_figures(run: Run) -> None:
    # its preset has no vocabulary: nothing is taken off, 25.8 GB as before
    assert "used by one token (12.9B active parameters): **25.8 GB**" in _solution(
        run, "mixtral-moe-decode")
