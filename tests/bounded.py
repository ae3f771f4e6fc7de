"""Work counted, not timed: how many lines of trainer/ code a call executes. A bound on it
catches runaway work (a power tower, a backtracking loop) the same way on an idle laptop and on
a busy 2-core CI machine, where a wall-clock bound would flake."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

TRAINER = str(Path(__file__).resolve().parent.parent / "trainer")


def lines_run(call: Callable[[], Any]) -> int:
    """Lines of trainer/ code executed by `call()`; an exception it raises is swallowed."""
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        if event == "line":
            count += 1
        return local

    def outer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename.startswith(TRAINER) else None

    previous = sys.gettrace()
    sys.settrace(outer)
    try:
        call()
    except Exception:  # the caller asserts on the result separately
        pass
    finally:
        sys.settrace(previous)
    return count
