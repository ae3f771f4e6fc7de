"""`kvdrill practice` as a person sees it (issue 25): the real command on an 80×24 (or 60×24)
terminal, driven by pexpect and read off a pyte screen. Each test waits for specific text."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import Result
from screen import CTRL_C, ENTER, ESC, Screen

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"
POLICY_INDEX = 12  # the 8B drill's first text step (policy) is its 13th
LONG_ANSWER = ("cap context at 8k in the default pool and send the long documents to a "
               "separate pool with fp8 kv, priced in kv-seconds, because one long user "
               "displaces dozens of chat users")


@pytest.fixture
def home() -> Path:
    return Path(os.environ["KVDRILL_HOME"])  # tests/conftest.py gives each test its own


@pytest.fixture
def opened(home: Path) -> Iterator[Callable[..., Screen]]:
    screens: list[Screen] = []

    def open_screen(*args: str, columns: int = 80) -> Screen:
        screen = Screen(list(args), home, columns=columns)
        screens.append(screen)
        return screen

    yield open_screen
    for screen in screens:
        screen.close()


def started(screen: Screen) -> Screen:
    # an intro taller than the screen is paged: Enter through it to the clock's start
    prompts = "More of the situation: press Enter|Press Enter to start the clock"
    shown = 1
    screen.wait_count(prompts, shown)
    while "Press Enter to start the clock" not in screen.text():
        screen.send(ENTER)
        shown += 1
        screen.wait_count(prompts, shown)
    screen.send(ENTER)
    screen.wait_for(r" 1/\d+ · step ")
    return screen


def at_step(screen: Screen, index: int, total: int = 17) -> Screen:
    """Skip to the step at `index` (0-based), waiting for each."""
    for number in range(1, index + 1):
        screen.type_line(":skip")
        screen.wait_for(rf" {number + 1}/{total} · ")
    return screen


def answer_box(lines: list[str]) -> list[str]:
    """The rows of the answer being typed: from the "> " row to the toolbar."""
    start = max(i for i, line in enumerate(lines) if line.startswith("> "))
    rows = []
    for line in lines[start:]:
        if re.match(r" \d+/\d+ · ", line):
            break
        rows.append(line)
    return rows


# -- the introduction ----------------------------------------------------------------------------


def test_an_intro_taller_than_the_screen_starts_at_its_top(opened: Callable[..., Screen]) -> None:
    # multi-turn-growth's situation runs past 24 rows: its first screenful waits for Enter
    screen = opened("practice", "multi-turn-growth")
    screen.wait_for("More of the situation: press Enter")
    assert screen.history()[0] == screen.display()[0]  # nothing scrolled away yet
    assert screen.display()[0].startswith("The context that keeps growing")


def test_a_paged_intro_ends_at_the_clocks_start(opened: Callable[..., Screen]) -> None:
    screen = opened("practice", "multi-turn-growth")
    screen.wait_for("More of the situation: press Enter")
    screen.send(ENTER)
    started(screen)


def test_a_table_in_the_situation_shows_without_its_markdown_rule(
        opened: Callable[..., Screen]) -> None:
    screen = opened("practice", "multi-turn-growth")
    screen.wait_for("More of the situation: press Enter")
    screen.send(ENTER)
    screen.wait_for("Press Enter to start the clock")
    assert not any("|---" in line for line in screen.history() + screen.display())


@pytest.mark.parametrize("drill_id", [DRILL, "llama2-70b-mi300x"])
def test_the_intro_fits_an_80_by_24_screen(opened: Callable[..., Screen],
                                           drill_id: str) -> None:
    screen = opened("practice", drill_id)
    screen.wait_for("Press Enter to start the clock")
    assert screen.history()[0] == screen.display()[0]  # nothing scrolled away
    assert screen.display()[0].startswith(("KV bytes per token", "The KV-cache budget drill"))


def test_the_intro_shows_the_givens_once(opened: Callable[..., Screen]) -> None:
    text = "\n".join(opened("practice", DRILL).wait_for("Press Enter to start the clock"))
    assert text.count("Given:") == 1 and text.count("16 GB") == 1
    assert text.count("Target 14 min") == 1


def test_givens_at_the_prompt_prints_the_givens_block_only(
        opened: Callable[..., Screen]) -> None:
    screen = started(opened("practice", DRILL))
    screen.type_line(":givens")
    text = "\n".join(screen.wait_for(r"> :givens\n(.*\n)+\[shape-layers\]"))
    shown = text.split("> :givens\n")[-1].split("\n[shape-layers]")[0]
    assert shown.startswith("Given:\n  model: Llama-3.1-8B")
    assert "capacity planning" not in shown and "KV bytes per token and sessions" not in shown


# -- questions -----------------------------------------------------------------------------------


def test_a_question_is_labelled_by_its_step_id_as_the_drill_text_refers_to_it(
        opened: Callable[..., Screen]) -> None:
    screen = started(opened("practice", "llama2-70b-mi300x"))
    text = "\n".join(screen.display())
    assert "[1a] After the weights" in text
    assert not re.search(r"^1\. ", text, re.MULTILINE)


@pytest.mark.parametrize("columns", [80, 60])
def test_a_long_answer_wraps_between_words_as_it_is_typed(opened: Callable[..., Screen],
                                                          columns: int) -> None:
    screen = started(opened("practice", DRILL, columns=columns))
    screen.send(LONG_ANSWER)
    lines = screen.wait_for(r"\busers\n")
    rows = answer_box(lines)
    assert len(rows) >= 3
    typed = rows[0][2:].split() + [word for row in rows[1:] for word in row.split()]
    assert typed == LONG_ANSWER.split()  # every word whole on one row
    assert all(len(row) <= columns for row in rows)
    assert not any(row.startswith("   ") for row in rows[1:])  # no space opens a row


def test_a_wrapped_answer_is_sent_as_typed(opened: Callable[..., Screen],
                                           run: Run) -> None:
    screen = at_step(started(opened("practice", DRILL)), POLICY_INDEX)
    screen.send(LONG_ANSWER + ESC + ENTER)
    screen.wait_for(r"Noted; text answers are scored at the end")
    screen.send(":quit" + ENTER)
    screen.wait_for("Stopped: ")
    export = json.loads(run("export", "1").stdout)
    policy = next(s for s in export["steps"] if s["id"] == "policy")
    assert policy["answer"] == LONG_ANSWER


# -- the toolbar ---------------------------------------------------------------------------------


def test_a_text_steps_toolbar_offers_back_and_no_hint(opened: Callable[..., Screen]) -> None:
    screen = at_step(started(opened("practice", DRILL)), POLICY_INDEX)
    lines = screen.wait_for(r" 13/17 · ")
    bar = "\n".join(lines[-2:])
    assert ":back" in bar and ":skip" in bar and "Esc Enter submits" in bar
    assert "? hint" not in bar


def test_the_first_steps_toolbar_offers_a_hint_and_no_back(
        opened: Callable[..., Screen]) -> None:
    bar = "\n".join(started(opened("practice", DRILL)).display()[-2:])
    assert "? hint" in bar and ":back" not in bar


# -- an unreadable answer ------------------------------------------------------------------------


def test_an_unreadable_answer_gets_a_form_with_no_figure_to_take_as_a_hint(
        opened: Callable[..., Screen]) -> None:
    screen = at_step(started(opened("practice", DRILL)), 5)  # kv-budget: 52 GB
    screen.type_line("dunno, some gigs")
    text = "\n".join(screen.wait_for(r"Try a number with its unit, such as <number> GB"))
    told = text[text.index("Try a number"):text.index("asked again")]
    assert not re.search(r"\d", told), told


# -- Ctrl-C --------------------------------------------------------------------------------------


def test_ctrl_c_with_a_typed_answer_asks_and_sends_it(opened: Callable[..., Screen],
                                                      run: Run) -> None:
    screen = started(opened("practice", DRILL))
    screen.send("32 layers")
    screen.wait_for("> 32 layers")
    screen.send(CTRL_C)
    screen.wait_for(r"Send it, then stop\? \[Y/n\]")
    screen.send(ENTER)
    text = "\n".join(screen.wait_for(r"Stopped: 1 of 17 steps saved"))
    assert "Saved." not in text
    assert screen.wait_exit() == 0
    export = json.loads(run("export", "1").stdout)
    assert export["steps"][0]["answer"] == "32 layers"


def test_ctrl_c_declined_shows_the_unsent_answer_and_claims_nothing_saved(
        opened: Callable[..., Screen]) -> None:
    screen = started(opened("practice", DRILL))
    screen.send("thirty two")
    screen.wait_for("> thirty two")
    screen.send(CTRL_C)
    screen.wait_for(r"Send it, then stop\?")
    screen.type_line("n")
    text = "\n".join(screen.wait_for(r"Stopped: "))
    assert "Not sent, so not saved: 'thirty two'" in text
    assert "Stopped: no step answered yet." in text and "Saved." not in text


def test_ctrl_c_keeps_what_was_saved_before(opened: Callable[..., Screen], run: Run) -> None:
    screen = started(opened("practice", DRILL))
    screen.type_line("32")
    screen.wait_for(r" 2/17 · ")
    screen.send(CTRL_C)
    screen.wait_for(r"Stopped: 1 of 17 steps saved")
    assert json.loads(run("export", "1").stdout)["steps"][0]["answer"] == "32"


# -- --weak ----------------------------------------------------------------------------------------


def _with_mistakes(run: Run) -> None:
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    answers = {str(k): " ".join(str(v).split()) for k, v in data.items()}
    answers.update({"shape-kv-heads": "32", "bytes-per-token": "512 KiB", "kv-budget": "72 GB"})
    run("practice", DRILL, input="".join(f"{a}\n" for a in answers.values()))


def test_a_weak_question_shows_one_line_of_where_it_comes_from_and_givens_on_request(
        opened: Callable[..., Screen], run: Run) -> None:
    _with_mistakes(run)
    screen = opened("practice", "--weak")
    intro = "\n".join(screen.wait_for("Press Enter to start the clock"))
    assert "Given:" not in intro
    screen.send(ENTER)
    lines = screen.wait_for(r" 1/6 · step ")
    question = "\n".join(lines[[i for i, row in enumerate(lines) if row.startswith("[1-")][-1]:])
    assert re.match(r"\[1-[a-z0-9-]+\] \[[a-z-]+ · [a-z0-9-]+, (variant \d+|its own givens)\]",
                    question)
    assert "Given" not in question
    screen.type_line(":givens")
    text = "\n".join(screen.wait_for(r"Given:\n  model: "))
    assert "A short timed session" not in text.split("> :givens")[-1]
