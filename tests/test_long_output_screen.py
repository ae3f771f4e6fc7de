"""Long output starts at its top on a terminal: `kvdrill solution` on 80×24 shows its title
first (through the pager), and a pipe still gets all of it. Under pexpect and pyte."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from screen import Screen

Run = Callable[..., Result]


@pytest.fixture
def opened() -> Iterator[Callable[..., Screen]]:
    screens: list[Screen] = []

    def open_screen(*args: str) -> Screen:
        screen = Screen(list(args), Path(os.environ["KVDRILL_HOME"]))
        screens.append(screen)
        return screen

    yield open_screen
    for screen in screens:
        screen.close()


def test_a_solution_on_a_terminal_starts_at_its_title(opened: Callable[..., Screen]) -> None:
    screen = opened("solution", "llama31-8b-h100")
    lines = screen.wait_for("KV bytes per token and sessions per card")
    assert lines[0].startswith("KV bytes per token and sessions per card")


def test_a_solution_through_a_pipe_is_printed_whole(run: Run) -> None:
    text = run("solution", "llama31-8b-h100").output
    assert text.lstrip().startswith("# KV bytes per token") or "KV bytes per token" in text[:200]
    assert "Red flags" in text


def test_a_review_on_a_terminal_starts_at_its_top(opened: Callable[..., Screen],
                                                  run: Run) -> None:
    sheet = Path(__file__).parent / "sheets" / "llama31-8b-h100-correct.yaml"
    import yaml

    answers = yaml.safe_load(sheet.read_text())
    lines = "\n".join(str(answers[key]) for key in answers if key not in ("drill", "variant"))
    run("practice", "llama31-8b-h100", input=lines + "\n")
    screen = opened("review", "1")
    first = screen.wait_for(r"\S")[0]
    assert first.strip() and "Red flags" not in first
    assert screen.history()[0] == screen.display()[0]  # nothing scrolled away
