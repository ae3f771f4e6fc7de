"""Expert pass 35's NITs, and what a refusal suggests: a faster card or a card with more memory
is named only where the drill runs on it with that model, and a family with no draft model is
refused for that, whatever the card (a larger card would not help)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from retarget_text import flat, refusal_text

Run = Callable[..., Result]


_refusal = refusal_text


def test_a_refusal_for_the_tpot_target_names_faster_cards_that_run(run: Run) -> None:
    said = _refusal(run, "littles-law-capacity", "--model", "qwen3-32b", "--gpu", "h100")
    assert "choose a faster card with --gpu (such as h200 or mi300x)" in said
    run("solution", "littles-law-capacity", "--model", "qwen3-32b", "--gpu", "h200")
    run("solution", "littles-law-capacity", "--model", "qwen3-32b", "--gpu", "mi300x")


def test_a_refusal_for_a_long_context_names_cards_with_more_memory_that_run(run: Run) -> None:
    # Qwen3-32B's 65.5 GB leave an H100 no room for one 32k sequence; Gaudi 3 (128 GB) has
    # no driver figure for the drill's reserve step, so it is not named
    said = _refusal(run, "llama31-8b-h100", "--model", "qwen3-32b", "--gpu", "h100")
    assert "choose a card with more memory with --gpu (such as h200 or b200)" in said
    run("solution", "llama31-8b-h100", "--model", "qwen3-32b", "--gpu", "h200")


@pytest.mark.parametrize("model, card", [("deepseek-v3", "h100"), ("deepseek-v3", "mi325x"),
                                         ("kimi-k2", "b200")])
def test_a_family_without_a_draft_is_refused_for_that_before_the_card(
        run: Run, model: str, card: str) -> None:
    said = _refusal(run, "speculative-decoding", "--model", model, "--gpu", card)
    assert "no draft for this drill to run beside it" in said
    assert "do not fit" not in said and "larger card" not in said


def test_deepseek_v3_is_said_to_speculate_with_its_own_mtp_layer(run: Run) -> None:
    said = _refusal(run, "speculative-decoding", "--model", "deepseek-v3")
    assert "multi-token-prediction layer" in said and "deepseek_mtp" in said


def test_llama_4_scout_is_refused_for_its_draft_not_for_a_card_that_would_hold_it(
        run: Run) -> None:
    # 216 GB fit on an MI325X: the card is not what stops the drill
    said = _refusal(run, "speculative-decoding", "--model", "llama-4-scout", "--gpu", "mi300x")
    assert "shared only by Scout and Maverick" in said
    assert "no card kvdrill knows" not in said


# ---- expert pass 36 (2,572 outputs: 0 WRONG, 2 MISLEADING) ----------------------------------

def test_models_suggested_for_a_drill_no_card_runs_say_the_card_to_run_them_on(
        run: Run) -> None:
    # M1: Gaudi 3 has no driver figure, which the drill asks for: the GQA models it names run
    # on the drill's own card, and the refusal says so
    said = _refusal(run, "llama2-70b-mi300x", "--model", "llama-2-7b", "--gpu", "gaudi3")
    assert "such as llama-3.3-70b" in said and "with --gpu mi300x" in said
    run("solution", "llama2-70b-mi300x", "--model", "llama-3.3-70b", "--gpu", "mi300x")


def test_the_mha_question_does_not_say_the_answer_ought_to_worry_the_candidate(
        run: Run) -> None:
    # M2: Gemma-3-27B's MHA holds 20 sessions on an MI300X against 40 under GQA: whether the
    # result should worry anyone is what the step asks, not what it tells
    sheet = flat(run("show", "llama2-70b-mi300x", "--model", "gemma-3-27b", "--gpu",
                     "mi300x").output)
    assert "ought to worry" not in sheet
    assert "Say precisely what the MHA result means for the product" in sheet


def test_the_gaudi_block_size_is_said_as_a_launch_flag_in_the_assumptions(run: Run) -> None:
    text = flat(run("solution", "observed-concurrency-lower", "--gpu", "gaudi3").output)
    assert "blocks of 16 tokens (set with --block-size 16: vLLM's default on Intel Gaudi 3 is " \
        "128)" in text


def test_multi_turn_growth_on_gaudi_says_its_blocks_are_set_not_the_default(run: Run) -> None:
    text = flat(run("solution", "multi-turn-growth", "--gpu", "gaudi3").output)
    assert "64 blocks of 16 here, set with --block-size 16" in text
    assert "set with --block-size" not in flat(run("solution", "multi-turn-growth").output)


def test_a_larger_moe_target_of_a_drafts_family_is_said_to_lose(run: Run) -> None:
    # N4: Mixtral-8x7B renders a 0.667× slowdown; the refusal must not read as a gain
    said = _refusal(run, "speculative-decoding", "--model", "mistral-7b-v0.1", "--gpu", "h100")
    assert "such as mixtral-8x7b" in said and "speculation losing" in said
    dense = _refusal(run, "speculative-decoding", "--model", "llama-2-7b", "--gpu", "h100")
    assert "losing" not in dense


def test_an_active_count_that_includes_the_embedding_says_so(run: Run) -> None:
    # N5: 4.19B counts the input embedding; OpenAI's 3.61B does not
    text = flat(run("solution", "mixtral-moe-decode", "--model", "gpt-oss-20b").output)
    assert "4.19B active parameters counting the input embedding, less its 1.16 GB table" in text


def test_a_preset_with_no_listed_release_does_not_say_none_exists(run: Run) -> None:
    # N8: Qwen publishes FP8 checkpoints kvdrill does not list (the TP=2 drill now sizes
    # Qwen3-32B as vLLM quantizes it at load; calc --checkpoint fp8 still asks for a release)
    result = run("calc", "--model", "qwen3-32b", "--gpu", "h200", "--checkpoint", "fp8",
                 ok=False)
    assert "does not mean none exists" in result.output
