"""Issue 37, fifth round, the commands: conflicting practice options refused, a piped session
stopped by Ctrl-C or by an answer with no end said as a terminal says it (and an empty session
leaves no attempt), `lint` of a folder with no drill in it, an absurd answer's error bounded in
`review`, and one count of flags."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from one_line import one_line_error

from trainer.views.pages import percent_text

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
WHOLE = "\n".join(["32", "8", "128", "2", "128 KiB", "52 GB", "396728", "96", "193", "12",
                   "44", "12", "cap context", "3", "tier it", "20", "measure"]) + "\n"


# ---- F13 -------------------------------------------------------------------------------

def test_practice_random_with_variant_is_refused(run: Run) -> None:
    one_line_error(run("practice", DRILL, "--random", "--variant", "5", ok=False), 2,
                   "--random", "--variant")


# ---- F20: Ctrl-C through a pipe ----------------------------------------------------------

def test_ctrl_c_through_a_pipe_says_the_stop_line_with_the_attempt(
        run: Run, monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.app.commands import practice

    answers = iter(["32"])

    def ask(prompt: Any) -> str | None:
        for answer in answers:
            return answer
        raise KeyboardInterrupt

    monkeypatch.setattr(practice, "_piped_ask", ask)
    result = run("practice", DRILL, input="", ok=False)
    assert "Stopped: 1 of 17 steps saved. Resume with: kvdrill practice --resume 1" \
        in result.output
    assert "aborted" not in result.stderr


# ---- F6: a line with no end ------------------------------------------------------------

def test_an_answer_with_no_line_end_is_refused_and_leaves_no_attempt(run: Run) -> None:
    result = run("practice", DRILL, input="0" * 5_000_000, ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert "refused as too long" in result.stderr
    assert "no attempt was saved" in result.output
    assert "No attempts yet" in run("history").output


def test_a_piped_session_with_no_answer_leaves_no_attempt(run: Run) -> None:
    assert "no attempt was saved" in run("practice", DRILL, input="").output
    assert "No attempts yet" in run("history").output


# ---- F14 -------------------------------------------------------------------------------

def test_lint_of_a_folder_with_no_drill_files_says_so(run: Run, tmp_path: Path) -> None:
    result = run("lint", str(tmp_path), ok=False)
    one_line_error(result, 1, str(tmp_path), "no drill files were found there")


# ---- F17 -------------------------------------------------------------------------------

def test_an_absurd_relative_error_is_shown_bounded() -> None:
    assert percent_text(1.04e30) == "more than 1,000,000×"
    assert percent_text(250.0) == "+250%"


def test_review_of_an_answer_of_1e30_shows_no_30_digit_percentage(run: Run) -> None:
    run("practice", DRILL, input="1e30\n")
    out = run("review", "1").output
    assert "more than 1,000,000×" in out
    assert not re.search(r"\d{12,}%", out)


# ---- F21 -------------------------------------------------------------------------------

def test_review_header_counts_the_flags_import_counted(run: Run, tmp_path: Path) -> None:
    run("practice", DRILL, input=WHOLE)
    data = json.loads(run("export", "1").output)
    data["started_at"], data["finished_at"] = data["finished_at"], data["started_at"]
    data["started_at"] = data["started_at"].replace(data["started_at"][:4],
                                                    str(int(data["started_at"][:4]) + 1), 1)
    data["steps"][0]["seconds"] += 0.5  # another candidate's attempt, not this one moved
    sheet = tmp_path / "late.json"
    sheet.write_text(json.dumps(data))
    imported = run("import", str(sheet)).output
    count = int(re.search(r"⚑ (\d+) flagged", imported).group(1))  # type: ignore[union-attr]
    review = run("review", "2").output
    assert f"· {count} flagged" in review
