"""Run a kvdrill command on a pseudo-terminal of a fixed width and read what a person would see:
pexpect drives the real command, pyte emulates the terminal (line wrapping included), so a line
the program prints wider than the screen shows up broken, as it would in a real terminal."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path

import pexpect
import pyte

TIMEOUT = 120  # a busy 2-core machine; pexpect returns as soon as the command ends


def kvdrill_command() -> list[str]:
    """The installed console script, or the module when the script is not on PATH."""
    script = shutil.which("kvdrill")
    return [script] if script else [sys.executable, "-m", "trainer"]


def screen_lines(args: list[str], columns: int = 80, env: Mapping[str, str] | None = None,
                 cwd: Path | None = None) -> list[str]:
    """Every line the command leaves on a `columns`-wide terminal, trailing blanks dropped.
    The emulated screen is tall enough to keep the whole output (nothing scrolls away)."""
    command = kvdrill_command()
    environment = {**os.environ, **(env or {}), "COLUMNS": str(columns), "LINES": "24",
                   "TERM": "xterm-256color"}
    child = pexpect.spawn(command[0], [*command[1:], *args], env=environment,
                          dimensions=(24, columns), encoding="utf-8", timeout=TIMEOUT,
                          cwd=str(cwd) if cwd else None)
    output = child.read()  # until the command exits
    child.close()
    screen = pyte.Screen(columns, 2000)
    stream = pyte.Stream(screen)
    stream.feed(output.replace("\n", "\r\n").replace("\r\r\n", "\r\n"))
    lines = [line.rstrip() for line in screen.display]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def printed_lines(args: list[str], columns: int = 80, env: Mapping[str, str] | None = None
                  ) -> list[str]:
    """The lines as the program wrote them (before the terminal wraps them), to measure."""
    command = kvdrill_command()
    environment = {**os.environ, **(env or {}), "COLUMNS": str(columns), "LINES": "24",
                   "TERM": "xterm-256color"}
    child = pexpect.spawn(command[0], [*command[1:], *args], env=environment,
                          dimensions=(24, columns), encoding="utf-8", timeout=TIMEOUT)
    output = child.read()
    child.close()
    import re

    plain = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", output)
    return [line.rstrip("\r") for line in plain.split("\n")]


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
