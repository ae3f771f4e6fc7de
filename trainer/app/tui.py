"""The timed prompt for a real terminal: the only module that imports prompt_toolkit.

A bottom toolbar counts down the step's budget and the whole drill's, refreshed twice a
second; when a budget passes it turns to overtime in another colour (the answer still counts).
The step's clock includes the seconds already spent on it (earlier visits, earlier asks). Text
steps take several lines: Esc then Enter (or Meta+Enter) submits. What is typed wraps between
words on the screen (the text itself is unchanged), and Ctrl-C with an answer typed but not
sent asks whether to send it before stopping."""

from __future__ import annotations

import bisect
import re
import shutil
import time
from collections.abc import Callable
from typing import Any

from prompt_toolkit import PromptSession, print_formatted_text
from prompt_toolkit.filters import Condition
from prompt_toolkit.formatted_text import FormattedText, StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout.processors import Processor, Transformation, TransformationInput
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.styles import Style

from trainer.app.session import SendThenStop, StepPrompt, wrap_lines
from trainer.printable import printable
from trainer.views.terminal_text import Line, render

STYLE = Style.from_dict({
    "bottom-toolbar": "noreverse bg:#1c1c1c #d0d0d0",
    "bottom-toolbar.over": "noreverse bg:ansired ansiwhite bold",
    "right": "ansigreen bold",
    "wrong": "ansired bold",
    "overtime": "ansired bold",
    "md.heading": "bold underline",
    "md.strong": "bold",
    "md.em": "italic",
    "md.code": "ansicyan",
})
_MARKS = {"✓": "class:right", "✗": "class:wrong"}
_OVERTIME = re.compile(r"(\bovertime\b|\b\d+s over\b)")


def clock_text(seconds: float) -> str:
    sign = "-" if seconds < 0 else ""
    seconds = abs(int(seconds))
    return f"{sign}{seconds // 60}:{seconds % 60:02d}"


def step_commands(prompt: StepPrompt) -> list[str]:
    """The commands that work at this step, as the toolbar offers them: a hint only where the
    step has one (and not in exam mode), :back only after the first step."""
    commands = ["? hint", ":skip", ":back", ":help"]
    if prompt.exam or not prompt.step.hints:
        commands.remove("? hint")
    if prompt.number == 1:
        commands.remove(":back")
    return commands


def toolbar(prompt: StepPrompt, started: float, now: Callable[[], float],
            width: int | None = None) -> Any:
    """The clocks and the commands that work at this step: on one line of `width` when they
    fit, else the commands on a second line (none is left out)."""
    spent = prompt.spent + now() - started
    step_left = prompt.budget - spent
    drill_left = prompt.drill_budget - prompt.drill_elapsed - spent
    over = step_left < 0
    step = f"overtime {clock_text(-step_left)}" if over else f"step {clock_text(step_left)}"
    drill = f"drill {clock_text(drill_left)}" if drill_left >= 0 else \
        f"drill overtime {clock_text(-drill_left)}"
    style = "bottom-toolbar.over" if over else "bottom-toolbar"
    parts = [f"{prompt.number}/{prompt.total}", step, drill]
    if prompt.multiline:
        parts.append("Esc Enter submits")
    commands = step_commands(prompt)
    fits = (width or shutil.get_terminal_size().columns) - 2
    line = " · ".join(parts + commands)
    if len(line) > fits:
        line = " · ".join(parts) + " \n " + " · ".join(commands)
    return FormattedText([(f"class:{style}", f" {line} ")])


def is_command(text: str) -> bool:
    stripped = text.strip()
    return stripped == "?" or (stripped.startswith(":") and "\n" not in stripped)


def _enter_bindings(multiline: Callable[[], bool]) -> KeyBindings:
    """In a text step Enter starts a new line, except after a command (`:skip`, `?`) or in an
    empty box, which it submits at once (the session then says how to submit text); Esc then
    Enter submits the text."""
    bindings = KeyBindings()
    in_text_step = Condition(multiline)

    @bindings.add("enter", filter=in_text_step)
    def _(event: Any) -> None:
        buffer = event.current_buffer
        if is_command(buffer.text) or not buffer.text.strip():
            buffer.validate_and_handle()
        else:
            buffer.insert_text("\n")

    return bindings


PROMPT = "> "
CONTINUATION = " " * len(PROMPT)  # wrapped and further lines of an answer, under its text


class WordWrap(Processor):
    """Shows each line of the answer wrapped between words: spaces are inserted on the screen
    before a word that would not fit on the rest of a row (the window then wraps it whole to
    the next). Only what is displayed changes; the cursor is mapped through the padding. A
    word longer than a row is left to wrap where it must."""

    def apply_transformation(self, ti: TransformationInput) -> Transformation:
        room = ti.width - len(PROMPT)  # every row starts with the prompt or its continuation
        text = "".join(fragment[1] for fragment in ti.fragments)
        if room <= 0 or len(text) <= room:
            return Transformation(ti.fragments)
        pads: list[tuple[int, int]] = []  # (source index of a word, spaces put before it)
        column = 0
        index = 0
        while index < len(text):
            if text[index] == " ":
                column = (column + 1) % room
                index += 1
                continue
            end = index
            while end < len(text) and text[end] != " ":
                end += 1
            size = end - index
            # The space after a word must fit too, or it would start the next row.
            need = size + (1 if end < len(text) else 0)
            if column and column + need > room and size <= room:
                pads.append((index, room - column))
                column = 0
            column = (column + size) % room
            index = end
        if not pads:
            return Transformation(ti.fragments)
        starts = [start for start, _ in pads]
        before = [0]  # spaces inserted before the nth padded word, cumulatively
        for _, count in pads:
            before.append(before[-1] + count)
        fragments: StyleAndTextTuples = []
        position = 0
        for style, piece, *_ in ti.fragments:
            for char in piece:
                at = bisect.bisect_left(starts, position)
                if at < len(starts) and starts[at] == position:
                    fragments.append(("", " " * pads[at][1]))
                fragments.append((style, char))
                position += 1

        def to_display(i: int) -> int:
            return i + before[bisect.bisect_right(starts, i)]

        def to_source(j: int) -> int:
            for n, start in enumerate(starts):  # the padding before a word maps to the word
                if j < start + before[n]:
                    return j - before[n]
                if j < start + before[n + 1]:
                    return start
            return j - before[-1]

        return Transformation(fragments, to_display, to_source)


def terminal_width() -> int:
    return max(40, min(100, shutil.get_terminal_size().columns - 2))


def said_lines(text: str, width: int) -> list[Line]:
    """What `say` shows: each line made printable and wrapped between words at `width`; a
    verdict's ✓ styled right, its ✗ wrong, and the word overtime styled as overtime."""
    lines: list[Line] = []
    for line in wrap_lines(printable(text), width).split("\n"):
        fragments: Line = []
        if line[:2] in ("✓ ", "✗ "):
            fragments.append((_MARKS[line[0]], line[0]))
            line = line[1:]
        fragments += [("class:overtime" if _OVERTIME.fullmatch(part) else "", part)
                      for part in _OVERTIME.split(line) if part]
        lines.append(fragments)
    return lines


def show_lines(lines: list[Line], output: Output | None = None) -> None:
    """Print styled lines in colour where the terminal has it (NO_COLOR turns colour off)."""
    fragments: list[tuple[str, str]] = []
    for number, line in enumerate(lines):
        if number:
            fragments.append(("", "\n"))
        fragments += line
    if output is None:
        from prompt_toolkit.application.current import get_app_session

        output = get_app_session().output
    depth = ColorDepth.from_env() or output.get_default_color_depth()
    print_formatted_text(FormattedText(fragments), style=STYLE, output=output,
                         color_depth=depth)


def terminal_height() -> int:
    return max(8, shutil.get_terminal_size().lines)


MORE_MESSAGE = "More of the situation: press Enter"


def make_intro(ready: Callable[[str], bool], output: Output | None = None,
               width: Callable[[], int] | None = None,
               height: Callable[[], int] | None = None) -> Callable[[str], bool]:
    """Show an introduction from its top: a screenful at a time, Enter for the next, so the
    title and the first lines never scroll away before the clock starts. False when the
    candidate stops (Ctrl-C, :quit) while reading."""

    def intro(text: str) -> bool:
        lines = said_lines(text, (width or terminal_width)())
        # room below for the prompt line the next screen or the clock's start needs
        page = max(4, (height or terminal_height)() - 2)
        while len(lines) > page:
            show_lines(lines[:page], output)
            if not ready(MORE_MESSAGE):
                return False
            lines = lines[page:]
        show_lines(lines, output)
        return True

    return intro


def make_say(output: Output | None = None,
             width: Callable[[], int] | None = None) -> Callable[[str], None]:
    """A `say` for Session: wrapped at the terminal's width, verdicts and overtime in colour."""

    def say(text: str) -> None:
        show_lines(said_lines(text, (width or terminal_width)()), output)

    return say


def show_markdown(markdown: str, output: Output | None = None,
                  width: int | None = None) -> None:
    """Markdown (a worked solution) as formatted text at the terminal's width."""
    show_lines(render(printable(markdown), width or terminal_width()), output)


def question_text(prompt: StepPrompt, width: int) -> str:
    """The question as shown above the answer box: labelled by its step id, wrapped between
    words (each line of a prompt that has several on its own)."""
    unit = f" [{prompt.step.unit}]" if prompt.step.unit else ""
    return wrap_lines(printable(f"{prompt.label} {prompt.text.strip()}{unit}"), width)


def make_ask(input: Input | None = None, output: Output | None = None,
             now: Callable[[], float] = time.monotonic) -> Callable[[StepPrompt], str | None]:
    """An `ask` for Session that reads from the terminal (or the given pipe input)."""
    session: PromptSession[str] = PromptSession(
        input=input, output=output, style=STYLE, input_processors=[WordWrap()],
        prompt_continuation=CONTINUATION)
    # The session's own flag, set by each prompt() call (its buffer reports multiline always).
    session.key_bindings = _enter_bindings(lambda: bool(session.multiline))

    def ask(prompt: StepPrompt) -> str | None:
        started = now()
        if prompt.show_question:
            print_formatted_text("\n" + question_text(prompt, terminal_width()),
                                 output=session.output)
        try:
            return session.prompt(
                PROMPT,
                multiline=prompt.multiline,
                bottom_toolbar=lambda: toolbar(prompt, started, now),
                refresh_interval=0.5,
                default=prompt.draft,
            )
        except EOFError:
            return None
        except KeyboardInterrupt:
            typed = session.default_buffer.text
            if not typed.strip() or is_command(typed):
                return ":quit"
            return _unsent(typed, session)

    return ask


def _unsent(typed: str, session: PromptSession[str]) -> str:
    """Ctrl-C with an answer typed and not sent: ask whether to send it before stopping. Not
    sent, it is printed, so nothing typed vanishes unseen."""
    print_formatted_text(wrap_lines("You typed an answer and did not send it.", terminal_width()),
                         output=session.output)
    try:
        reply = session.prompt("Send it, then stop? [Y/n] ", multiline=False, default="",
                               bottom_toolbar=None)
    except (EOFError, KeyboardInterrupt):
        reply = "n"
    if reply.strip().lower() in ("", "y", "yes"):
        return SendThenStop(typed)
    print_formatted_text(f"Not sent, so not saved: {printable(typed)!r}",
                         output=session.output)
    return ":quit"


def make_ready(input: Input | None = None,
               output: Output | None = None) -> Callable[[str], bool]:
    """A `ready` for Session: show the message and wait for Enter. False on Ctrl-C, Ctrl-D or
    :quit (the attempt is saved, nothing timed)."""
    session: PromptSession[str] = PromptSession(input=input, output=output, style=STYLE)

    def ready(message: str) -> bool:
        try:
            typed = session.prompt(f"{message} ")
        except (EOFError, KeyboardInterrupt):
            return False
        return typed.strip().lower() not in (":quit", ":q")

    return ready
