"""What the expert-pass tests read of a re-targeted drill: the configs they name, a text with
its line breaks folded, and a practice session fed keys as a candidate types them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result

Run = Callable[..., Result]
CONFIGS = Path(__file__).parent / "corpus" / "configs"
QWEN3_VL_8B = str(CONFIGS / "Qwen3-VL-8B-Instruct")
QWEN3_VL_30B = str(CONFIGS / "Qwen3-VL-30B-A3B-Instruct")


def flat(text: str) -> str:
    return " ".join(text.split())


def practice_text(run: Run, drill: str, *args: str, keys: str) -> str:
    """A practice session fed `keys` (skips, hints, :formula), as a candidate would type."""
    return run("practice", drill, *args, input=keys, ok=False).output


def solution_text(run: Run, *args: str) -> str:
    """`kvdrill solution ARGS` with its line breaks folded."""
    return flat(run("solution", *args).output)


def refusal_text(run: Run, *args: str) -> str:
    """The one-line refusal of `kvdrill solution ARGS` (exit 2), its line breaks folded."""
    result = run("solution", *args, ok=False)
    assert result.exit_code == 2
    return flat(result.stderr)


def graded_text(run: Run, folder: Path, sheet: str, *args: str) -> str:
    """`kvdrill grade ARGS` of a sheet written into `folder`, its output's line breaks
    folded."""
    path = folder / "sheet.yaml"
    path.write_text(sheet, encoding="utf-8")
    return flat(run("grade", *args, "--answers", str(path), ok=False).output)
