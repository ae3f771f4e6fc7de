"""The seventeenth expert pass: the card's memory named as it is (GDDR6 on an L4, not HBM), the
card's graphs named in the paged-blocks prompt, and a ratio called "essentially" the context
ratio only when it is. Each test fails on what was printed before."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from click.testing import Result
from retarget_text import flat
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
