"""Expert pass 35's NITs, and what a refusal suggests: a faster card or a card with more memory
is named only where the drill runs on it with that model, and a family with no draft model is
refused for that, whatever the card (a larger card would not help)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]


def _refusal(run: Run, *args: str) -> str:
    result = run("solution", *args, ok=False)
    assert result.exit_code == 2
    return flat(result.stderr)


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
