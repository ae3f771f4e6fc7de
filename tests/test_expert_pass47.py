"""Expert pass 47 (grade feedback on re-targeted drills), the findings fixed after stop 62:
a count asked exactly is on a knife edge only within its inputs' own rounding (W6), ..."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from retarget_text import flat

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "corpus" / "feedback_sheets_pass47"


def _graded(run: Run, tmp_path: Path, sheet: str, *args: str) -> str:
    path = tmp_path / "sheet.yaml"
    path.write_text(sheet, encoding="utf-8")
    return " ".join(flat(run("grade", *args, "--answers", str(path), ok=False).output).split())


def test_a_count_asked_exactly_is_not_rounded_up_past_its_inputs(run: Run,
                                                                 tmp_path: Path) -> None:
    # (W6) 2 × (141 × 0.92 − 4) − 72.66 = 178.78 GB ÷ 335,544,320 B = 532.81: 533 needs
    # 178.85 GB, and the step says "Exactly"
    said = _graded(run, tmp_path, "sessions-released-checkpoint: 533\n",
                   "llama31-70b-tp2-h100", "--variant", "144962", "--gpu", "h200")
    assert "sessions-released-checkpoint 533 wrong" in said


def test_a_count_asked_exactly_keeps_the_edge_its_checkpoints_rounding_makes(
        run: Run, tmp_path: Path) -> None:
    # the H200 default: 72.66 GB gives 257.998; the checkpoint's exact 72,655,052,800 B, 258.006
    said = _graded(run, tmp_path, "sessions-released-checkpoint: 258\n",
                   "llama31-70b-tp2-h100", "--gpu", "h200")
    assert "sessions-released-checkpoint 258 correct" in said
