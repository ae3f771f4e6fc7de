"""Expert pass 37 (6,846 outputs: 1 WRONG, 2 MISLEADING): an MoE's full batch beside a long
request reads only the experts its few tokens touch; a refusal on a card with no driver figure
ties "with --gpu" only to models for this drill; a draft run too long for its acceptance says
the shorter k that pays. Each test of a fix fails on what was printed before."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]


def test_a_long_requests_share_beside_few_moe_tokens_reads_the_experts_they_touch(
        run: Run) -> None:
    # W1: on a Gaudi 3 one chat fits beside the long Mixtral request; two tokens touch
    # 1 − (6/8)² of the experts, 42.7 GB, not 93.4: (21.3 + 17.2) ÷ (21.3 + 0.54) ≈ 1.8
    text = flat(run("solution", "long-context-tier", "--model", "mixtral-8x7b",
                    "--gpu", "gaudi3").output)
    assert "about 1.4×" not in text
    assert "whose tokens touch 42.7 GB of the weights) is about 1.8× a chat request's" in text


def test_another_drill_suggested_on_a_card_with_no_driver_figure_keeps_its_own_card(
        run: Run) -> None:
    # M1: the suggested drill runs as suggested; no "with --gpu h100" after it
    said = refusal_text(run, "littles-law-capacity", "--model", "deepseek-v3", "--gpu",
                        "gaudi3")
    assert "kvdrill practice deepseek-v3-mla-h200 (nor does this drill run on Intel Gaudi 3" \
        in said
    assert "with --gpu" not in said and "on its own GPU" not in said


def test_models_for_this_drill_still_say_the_card_to_run_them_on(run: Run) -> None:
    said = refusal_text(run, "llama2-70b-mi300x", "--model", "llama-2-7b", "--gpu", "gaudi3")
    assert "or llama-3.1-8b, with --gpu mi300x (kvdrill has no sourced figure" in said


def test_a_draft_run_too_long_for_its_acceptance_says_the_k_that_pays(
        run: Run, tmp_path: Path) -> None:
    # M2: Gemma-2-9B on a Gaudi 3 at α = 0.6 and k = 5 loses (0.98×); k = 2 gives
    # (1 − 0.6³) ÷ 0.4 = 1.96 tokens a round and about 1.25×
    run("variants", "speculative-decoding", "--model", "gemma-2-9b", "--gpu", "gaudi3",
        "--count", "3", "--out", str(tmp_path))
    key = flat((tmp_path / "speculative-decoding-440568-key.md").read_text(encoding="utf-8"))
    assert "at k = 2 a round yields 1.96 tokens" in key and "about 1.25×" in key
    assert "Keep it off for this target" not in key
    assert "lower k (to 2) rather than leave it off" in key

