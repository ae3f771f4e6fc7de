"""The eleventh expert pass (/tmp/expert11.md), on pairings earlier passes rarely ran: a drill's
own card re-targeted as if it were another, an MoE request alone priced at its batch's read,
another vendor's words on Gaudi 3, a formula sentence false for windowed layers, GDDR6 called
HBM, a sentence that did not follow the numbers, refusals whose advice does not run, and unit
mixes offered for a figure no byte enters. Each test fails on the text as it was before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import refusal_text as _refusal
from retarget_text import solution_text as _solution

Run = Callable[..., Result]


def test_a_measured_drill_on_its_own_card_keeps_the_measured_rates(run: Run) -> None:
    # --gpu h200 on an H200-measured drill put the datasheet's 4.8 TB/s and 989 TFLOP/s in
    # place of the measured 3.4 and 456 (a chunk of 926 tokens instead of 320)
    for drill in ("chunked-prefill-tpot", "disaggregated-prefill", "swap-or-recompute"):
        assert _solution(run, drill, "--gpu", "h200") == _solution(run, drill), drill


def test_an_moe_request_alone_reads_what_one_token_touches(run: Run) -> None:
    # alone, a Mixtral step reads 25.8 GB, not the 64.87 GB four long sessions touch
    text = _solution(run, "long-context-tier", "--model", "mixtral-8x7b", "--gpu", "mi300x")
    assert "25.8 GB of weights a request alone touches" in text
    assert "takes 1.63× a chat request's" in text


def test_gaudi_is_given_its_own_links_and_no_flashmla(run: Run) -> None:
    assert "over Gaudi 3's scale-up RoCE ports" in _solution(
        run, "llama31-70b-tp2-h100", "--gpu", "gaudi3")
    text = _solution(run, "deepseek-v3-mla-h200", "--gpu", "gaudi3")
    assert "FlashMLA and vLLM both support" not in text
    assert "FlashMLA is NVIDIA's" in text


def test_a_pcie_card_pays_its_all_reduces_over_pcie(run: Run) -> None:
    assert "over PCIe:" in _solution(run, "llama31-70b-tp2-h100", "--gpu", "l40s")


def test_a_windowed_models_sequence_is_not_n_times_a_token(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "gemma-3-27b", "--gpu", "mi300x")
    assert "Multiplying by N gives one sequence" not in text
    assert "at most the 1,024-token window on the 52 windowed ones" in text


def test_gddr6_is_not_called_hbm(run: Run) -> None:
    text = _solution(run, "llama31-8b-h100", "--model", "qwen3-8b", "--gpu", "l40s")
    assert "HBM stacks" not in text and "its GDDR6 is built in GiB" in text


def test_twenty_sessions_are_not_a_handful(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "gemma-3-27b", "--gpu", "mi300x")
    assert "handful" not in text
    assert "20 sequences fit, against 40 sequences under GQA" in text


def test_one_sequence_fits_in_the_singular(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-8b", "--gpu", "l40s")
    assert "Only 1 sequence fits" in text and "1 sequence fit " not in text


def test_weights_larger_than_the_card_are_said_not_to_fit(run: Run) -> None:
    said = _refusal(run, "deepseek-v3-mla-h200", "--gpu", "l4")
    assert "do not fit on 8 × NVIDIA L4 (673 GB against 192 GB)" in said
    assert "smaller model" not in said  # the drill is DeepSeek-V3's own


def test_no_larger_card_is_offered_where_none_holds_the_model(run: Run) -> None:
    said = _refusal(run, "mixtral-moe-decode", "--model", "qwen3-235b-a22b", "--gpu", "b200")
    assert "choose a larger card" not in said and "the largest card kvdrill knows" in said


def test_a_key_offers_no_unit_mix_for_a_figure_no_byte_enters(run: Run, tmp_path: Path) -> None:
    # expected tokens per round, (1 − α^(k+1)) ÷ (1 − α), has no bytes in it
    run("variants", "speculative-decoding", "--count", "1", "--out", str(tmp_path))
    key = next(tmp_path.glob("*-key.md")).read_text(encoding="utf-8")
    row = next(line for line in key.splitlines() if line.startswith("| expected-tokens"))
    assert "KiB" not in row and "MiB" not in row and "GiB" not in row


def test_a_lone_users_kv_is_not_called_nothing_where_it_is_a_third_of_the_read(run: Run) -> None:
    text = _solution(run, "llama2-70b-mi300x", "--model", "qwen3-8b", "--gpu", "a100-40gb")
    assert "reads almost nothing but the weights" not in text
    assert "one user's 32,768-token KV adds 29% to what a step reads" in text


def test_a_shortfall_of_a_quarter_is_not_small(run: Run) -> None:
    text = _solution(run, "observed-concurrency-lower", "--model", "qwen3-8b", "--gpu", "l40s")
    assert "real but small" not in text and "no, not alone: 27% of the 40%" in text


def test_the_copied_projections_cost_half_a_session(run: Run) -> None:
    # 8.5 GB of copied k_proj and v_proj against a 16.9 GB session at TP=16
    assert "they cost about half a session" in _solution(run, "llama31-405b-h200-tp")


def test_calc_prints_what_its_prefix_and_block_options_compute(run: Run) -> None:
    # (expert pass 12, M6) --prefix-tokens gave 207 sequences in --json only; the text said 104
    text = " ".join(run("calc", "--model", "llama-3.1-8b", "--gpu", "h100", "--context", "4096",
                        "--prefix-tokens", "2048", "--utilization", "0.9",
                        "--block-size", "16").output.split())
    assert "= 207 sequences" in text
    assert "blocks per sequence" in text
