"""The real `kvdrill` command on a pseudo-terminal of a fixed size, and what a person sees on it:
pexpect drives the command, pyte emulates the screen. Waits are for specific text on the
screen, with generous timeouts (a busy 2-core machine), never sleeps."""

from __future__ import annotations

import os
import re
import shutil
import sys
import time
from collections.abc import Mapping
from pathlib import Path

import pexpect
import pyte

TIMEOUT = 60.0  # seconds to wait for a screen to show something, at most
ENTER, ESC, CTRL_C, CTRL_D = "\r", "\x1b", "\x03", "\x04"


def kvdrill_command() -> list[str]:
    """The installed console script, or the module beside this interpreter."""
    found = shutil.which("kvdrill", path=str(Path(sys.executable).parent)) or \
        shutil.which("kvdrill")
    return [found] if found else [sys.executable, "-m", "trainer"]


class Screen:
    """One command on a `columns` × `lines` terminal."""

    def __init__(self, args: list[str], home: Path, columns: int = 80, lines: int = 24) -> None:
        self.columns, self.lines = columns, lines
        # The history keeps the lines that left the top of the screen, oldest first.
        self.screen = pyte.HistoryScreen(columns, lines, history=5000)
        self.stream = pyte.ByteStream(self.screen)
        env = {**os.environ, "KVDRILL_HOME": str(home), "COLUMNS": str(columns),
               "LINES": str(lines), "TERM": "xterm-256color", "NO_COLOR": "1"}
        env.pop("CI", None)
        command = kvdrill_command()
        self.child = pexpect.spawn(command[0], command[1:] + args, env=env,
                                   dimensions=(lines, columns), encoding=None, timeout=TIMEOUT)
        # The terminal answers the program's queries (where the cursor is), as a real one does.
        self.screen.write_process_input = self.send  # type: ignore[method-assign]

    def _text_of(self, row: dict[int, pyte.screens.Char]) -> str:
        return "".join(row[x].data for x in range(self.columns)).rstrip()

    def _row(self, y: int) -> str:
        return self._text_of(self.screen.buffer[y])

    def _pump(self, wait: float) -> None:
        if self.child.closed:
            return
        try:
            data = self.child.read_nonblocking(65536, timeout=wait)
        except pexpect.TIMEOUT:
            return
        except pexpect.EOF:
            return
        self.stream.feed(data)

    def display(self) -> list[str]:
        """The screen's lines as a person sees them (trailing spaces dropped)."""
        self._pump(0)
        return [self._row(y) for y in range(self.lines)]

    def text(self) -> str:
        return "\n".join(self.display())

    def history(self) -> list[str]:
        """Every line shown so far: those scrolled off the top, then the screen."""
        shown = self.display()
        return [self._text_of(row) for row in self.screen.history.top] + shown

    def wait_count(self, pattern: str, count: int, timeout: float = TIMEOUT) -> None:
        """Wait until `pattern` has shown on `count` lines so far (scrolled off or on screen):
        the next of a prompt that repeats, never the stale one still on screen."""
        found = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while sum(1 for line in self.history() if found.search(line)) < count:
            left = deadline - time.monotonic()
            if left <= 0 or (not self.child.isalive() and not self._pending()):
                raise AssertionError(f"{pattern!r} never showed {count} times; the screen:\n"
                                     + "\n".join(self.display()))
            self._pump(min(0.2, left))

    def wait_for(self, pattern: str, timeout: float = TIMEOUT) -> list[str]:
        """The screen, once `pattern` (a regular expression) shows on it."""
        found = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            lines = self.display()
            if found.search("\n".join(lines)):
                return lines
            left = deadline - time.monotonic()
            if left <= 0 or (not self.child.isalive() and not self._pending()):
                raise AssertionError(f"{pattern!r} never showed; the screen:\n"
                                     + "\n".join(lines))
            self._pump(min(0.2, left))

    def _pending(self) -> bool:
        if self.child.closed:
            return False
        try:
            data = self.child.read_nonblocking(65536, timeout=0)
        except (pexpect.TIMEOUT, pexpect.EOF):
            return False
        self.stream.feed(data)
        return bool(data)

    def send(self, keys: str) -> None:
        self.child.send(keys.encode("utf-8"))

    def type_line(self, text: str) -> None:
        self.send(text + ENTER)

    def close(self) -> int | None:
        """End the command (if it still runs) and return its exit status."""
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close()
        return self.child.exitstatus

    def wait_exit(self, timeout: float = TIMEOUT) -> int | None:
        deadline = time.monotonic() + timeout
        while self.child.isalive() and time.monotonic() < deadline:
            self._pump(0.2)
        while self._pending():
            pass
        self.child.close()
        return self.child.exitstatus


# ---- One-shot commands: everything a command prints, read at a fixed width -----------------

ONE_SHOT_TIMEOUT = 300  # a whole command on a busy machine; pexpect returns when it ends


def terminal_output(args: list[str], columns: int = 80, env: Mapping[str, str] | None = None,
                    cwd: Path | None = None) -> str:
    """Everything the command writes to a `columns`-wide pseudo-terminal, until it exits."""
    command = kvdrill_command()
    # the whole output, laid out: a pager would hold all but its first screen back
    environment = {**os.environ, **(env or {}), "COLUMNS": str(columns), "LINES": "24",
                   "TERM": "xterm-256color", "KVDRILL_PAGER": "never"}
    child = pexpect.spawn(command[0], [*command[1:], *args], env=environment,
                          dimensions=(24, columns), encoding="utf-8", timeout=ONE_SHOT_TIMEOUT,
                          cwd=str(cwd) if cwd else None)
    output: str = child.read()  # until the command exits
    child.close()
    return output


def screen_of(output: str, columns: int) -> list[str]:
    """Every line `output` leaves on a `columns`-wide terminal, trailing blanks dropped. The
    emulated screen is tall enough to keep the whole output (nothing scrolls away)."""
    screen = pyte.Screen(columns, 2000)
    stream = pyte.Stream(screen)
    stream.feed(output.replace("\n", "\r\n").replace("\r\r\n", "\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def printed_of(output: str) -> list[str]:
    """The lines of `output` as the program wrote them (before the terminal wraps them)."""
    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)
    return [line.rstrip("\r") for line in plain.split("\n")]


def screen_lines(args: list[str], columns: int = 80, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> list[str]:
    """Every line the command leaves on a `columns`-wide terminal (screen_of)."""
    return screen_of(terminal_output(args, columns, env, cwd), columns)


def printed_lines(args: list[str], columns: int = 80, env: Mapping[str, str] | None = None
                  ) -> list[str]:
    """The lines as the program wrote them (before the terminal wraps them), to measure."""
    return printed_of(terminal_output(args, columns, env))


def broken_words(screen: list[str], printed: list[str]) -> list[str]:
    """Words the terminal cut in two: the screen's words differ from the words the program
    wrote exactly where a line ran past the screen's edge and went on on the next line."""
    on_screen = " ".join(screen).split()
    written = " ".join(printed).split()
    differ = [f"{a!r} on screen, {b!r} written" for a, b in zip(on_screen, written, strict=False)
              if a != b]
    if len(on_screen) != len(written) and not differ:
        differ.append(f"{len(on_screen)} words on screen, {len(written)} written")
    return differ[:3]
