"""The timed prompt for a real terminal: the only module that imports prompt_toolkit.

A bottom toolbar counts down the step's budget and the whole drill's, refreshed twice a
second; when a budget passes it turns to overtime in another colour (the answer still counts).
Text steps take several lines: Esc then Enter (or Meta+Enter) submits."""

from __future__ import annotations

import shutil
import textwrap
import time
from collections.abc import Callable
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import HTML
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.output import Output
from prompt_toolkit.styles import Style

from trainer.session import StepPrompt

STYLE = Style.from_dict({
    "bottom-toolbar": "noreverse bg:#1c1c1c #d0d0d0",
    "bottom-toolbar.over": "bg:#5f0000 #ffd7d7 bold",
})


def clock_text(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    seconds = abs(int(seconds))
    return f"{sign}{seconds // 60}:{seconds % 60:02d}"


def toolbar(prompt: StepPrompt, started: float, now: Callable[[], float]) -> Any:
    spent = now() - started
    step_left = prompt.budget - spent
    drill_left = prompt.drill_budget - prompt.drill_elapsed - spent
    over = step_left < 0
    step = f"overtime {clock_text(-step_left)}" if over else f"step {clock_text(step_left)}"
    drill = f"drill {clock_text(drill_left)}" if drill_left >= 0 else \
        f"drill overtime {clock_text(-drill_left)}"
    style = "bottom-toolbar.over" if over else "bottom-toolbar"
    extra = " · Esc Enter to submit" if prompt.multiline else ""
    return HTML(f"<style class='{style}'> {prompt.number}/{prompt.total} · {step} · {drill}"
                f" · ? hint · :skip · :back · :quit{extra} </style>")


def is_command(text: str) -> bool:
    stripped = text.strip()
    return stripped == "?" or (stripped.startswith(":") and "\n" not in stripped)


def _enter_bindings(multiline: Callable[[], bool]) -> KeyBindings:
    """In a text step Enter starts a new line, except after a command (`:skip`, `?`), which it
    submits at once; Esc then Enter submits the text."""
    bindings = KeyBindings()
    in_text_step = Condition(multiline)

    @bindings.add("enter", filter=in_text_step)
    def _(event: Any) -> None:
        buffer = event.current_buffer
        if is_command(buffer.text):
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return bindings


def make_ask(input: Input | None = None, output: Output | None = None,
             now: Callable[[], float] = time.monotonic) -> Callable[[StepPrompt], str | None]:
    """An `ask` for Session that reads from the terminal (or the given pipe input)."""
    session: PromptSession[str] = PromptSession(input=input, output=output, style=STYLE)
    # The session's own flag, set by each prompt() call (its buffer reports multiline always).
    session.key_bindings = _enter_bindings(lambda: bool(session.multiline))

    def ask(prompt: StepPrompt) -> str | None:
        started = now()
        unit = f" [{prompt.step.unit}]" if prompt.step.unit else ""
        width = max(40, min(100, shutil.get_terminal_size().columns - 2))
        lines = textwrap.wrap(f"{prompt.number}. {prompt.text}{unit}", width=width)
        print_formatted_text("\n" + "\n".join(lines), output=session.output)
        try:
            return session.prompt(
                "> ",
                multiline=prompt.multiline,
                bottom_toolbar=lambda: toolbar(prompt, started, now),
                refresh_interval=0.5,
            )
        except EOFError:
            return None
        except KeyboardInterrupt:
            return ":quit"

    return ask
