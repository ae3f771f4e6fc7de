"""Expert passes 37 (6,846 outputs: 1 WRONG, 2 MISLEADING) and 38 (473: 1 WRONG, 2 MISLEADING):
an MoE's full batch beside a long request reads only the experts its few tokens touch, and its
FLOPs leave the embedding lookup out; a refusal on a card with no driver figure ties "with
--gpu" only to models for this drill; a draft run too long for its acceptance says the shorter k
that pays; the sliding window on Gaudi says its blocks. Each test of a fix fails on what was
printed before."""

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
    # (since pass 39 the suggested drill keeps the card asked for, where it runs there)
    assert "kvdrill practice deepseek-v3-mla-h200 --gpu gaudi3 (nor does this drill run on " \
        "Intel Gaudi 3" in said
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



# ---- expert pass 38 (473 outputs: 1 WRONG, 2 MISLEADING) --------------------------------------

def test_an_moe_verify_ridge_leaves_the_embedding_lookup_out_of_the_flops(
        run: Run, tmp_path: Path) -> None:
    # W1: Qwen3-30B-A3B on an MI300X multiplies 3.04B per token, not its 3.35B active:
    # 1,307e12 × 61.06e9 ÷ (2 × 3.04e9 × 5.3e12) ≈ 2,475, and at k = 5, 413 and 1,522
    run("variants", "speculative-decoding", "--model", "qwen3-30b-a3b", "--gpu", "mi300x",
        "--count", "1", "--out", str(tmp_path))
    key = flat(next(tmp_path.glob("*-key.md")).read_text(encoding="utf-8"))
    assert "| compute-bound-batch | 413 sequences |" in key
    assert "| spec-breakeven | 1,522 sequences |" in key


def test_a_loss_at_half_acceptance_says_the_shorter_k_that_still_gains(
        run: Run, tmp_path: Path) -> None:
    # M1: Gemma-2-9B on an L40S loses at α = 0.5 and k = 5 (0.81×); k = 1 gives
    # 1.5 × 23.02 ÷ (6.56 + 23.02) ≈ 1.17×
    run("variants", "speculative-decoding", "--model", "gemma-2-9b", "--gpu", "l40s",
        "--count", "6", "--out", str(tmp_path))
    keys = " ".join(flat(p.read_text(encoding="utf-8")) for p in tmp_path.glob("*-key.md"))
    assert "and a gain at k = 1 (about 1.17×): lower k when acceptance falls" in keys


def test_the_sliding_window_on_gaudi_says_its_blocks_are_set_to_16(run: Run) -> None:
    # M2: vLLM on Gaudi pages in 128-token blocks by default: a 4,096-token window spans up to
    # 33 of them, 4,224 slots, 3.1% over
    text = flat(run("solution", "sliding-window-kv", "--gpu", "gaudi3").output)
    assert "vLLM's default on Gaudi is 128-token blocks" in text and "4,224 slots" in text
    assert "128-token blocks" not in flat(run("solution", "sliding-window-kv").output)
