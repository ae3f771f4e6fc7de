"""Hostile answers and hostile drill files: refused or marked, never run, never hung, never a
traceback — through the real parser, the checker and the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from bounded import lines_run
from hypothesis import given, settings
from hypothesis import strategies as st

from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.errors import AnswerParseError
from trainer.marking.checker import mark_sheet
from trainer.reading.reader import Answer, parse_answer, read_answer

CORPUS = Path(__file__).parent / "corpus"
PWNED = [Path("/tmp/kvdrill-pwned-by-answer"), Path("/tmp/kvdrill-pwned-by-lint")]
LAUNCH = [sys.executable, "-c", "from trainer.app.cli import main; main()"]


def hostile_answers() -> list[str]:
    lines = (CORPUS / "hostile_answers.txt").read_text(encoding="utf-8").splitlines()
    answers = [line for line in lines if line.strip() and not line.startswith("# ")]
    return [
        *answers, "9" * 100_000, "(" * 10_000 + "1" + ")" * 10_000, "1" + "\0" * 10,
        "\u202e131072", "2*" * 5000 + "2", "-" * 10_000 + "1", "1" + " GB" * 1000,
    ]


HOSTILE = hostile_answers()


@pytest.fixture(autouse=True)
def nothing_ran() -> object:
    for path in PWNED:
        path.unlink(missing_ok=True)
    yield
    assert not any(path.exists() for path in PWNED)


# Work is counted in lines of trainer/ code run (tests/bounded.py), not timed: one answer of the
# worst kind runs about a thousand; the bound leaves room and still catches runaway work.
ONE_ANSWER_LINES = 60_000


def read_or_refuse(text: str, unit: str) -> object:
    """The reader's whole contract: a reading, or its own error and nothing else."""
    try:
        return read_answer(text, unit)
    except AnswerParseError as error:
        return error


@pytest.mark.parametrize("answer", HOSTILE, ids=[f"{i}" for i in range(len(HOSTILE))])
def test_a_hostile_answer_is_read_or_refused_within_a_bound(answer: str) -> None:
    assert lines_run(lambda: parse_answer(answer, default_unit="B")) < ONE_ANSWER_LINES
    assert lines_run(lambda: read_or_refuse(answer, "GB")) < ONE_ANSWER_LINES


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8", include_characters="\x00"), max_size=400))
def test_the_reader_returns_a_reading_or_its_own_error_within_a_bound(text: str) -> None:
    assert lines_run(lambda: read_or_refuse(text, "GB")) < ONE_ANSWER_LINES
    assert isinstance(read_or_refuse(text, "sequences"), Answer | AnswerParseError)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="0123456789.eE+-*/^()×÷ ~kKMGBiTs%,_=x:to", max_size=80))
def test_arithmetic_shaped_text_never_escapes_the_reader(text: str) -> None:
    assert isinstance(read_or_refuse(text, "KiB"), Answer | AnswerParseError)
    assert lines_run(lambda: read_or_refuse(text, "")) < ONE_ANSWER_LINES


def test_a_whole_sheet_of_hostile_answers_is_marked_without_error() -> None:
    drill, _ = find_drill("llama2-70b-mi300x")
    numeric = [s.id for s in drill.steps if s.kind == "numeric"]
    sheet = {step: HOSTILE[i % len(HOSTILE)] for i, step in enumerate(numeric)}
    marks = mark_sheet(AnswerKey(drill), sheet)
    assert all(m.verdict in ("invalid", "wrong", "correct") for m in marks.values() if m.answer)


def test_grade_of_a_hostile_sheet_exits_1_without_a_traceback(tmp_path: Path) -> None:
    drill, _ = find_drill("llama31-8b-h100")
    steps = [s.id for s in drill.steps]
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({steps[i % len(steps)]: a for i, a in
                                     enumerate(HOSTILE[: len(steps)])}), encoding="utf-8")
    done = subprocess.run([*LAUNCH, "grade", "llama31-8b-h100", "--answers", str(sheet)],
                          capture_output=True, text=True, timeout=60, check=False,
                          env=dict(os.environ, KVDRILL_HOME=str(tmp_path)))
    assert done.returncode == 1
    assert "Traceback" not in done.stdout + done.stderr


DRILL_CORPUS = sorted((CORPUS / "drills").glob("*.yaml"))


@pytest.mark.parametrize("path", DRILL_CORPUS, ids=[p.stem for p in DRILL_CORPUS])
def test_lint_refuses_each_hostile_drill_file_quickly_and_names_it(path: Path) -> None:
    start = time.perf_counter()
    done = subprocess.run([*LAUNCH, "lint", str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert time.perf_counter() - start < 60  # bounded (an interpreter start included), not fast
    assert done.returncode == 1
    assert f"FAIL {path}" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_lint_refuses_a_100_mb_file_without_reading_it(tmp_path: Path) -> None:
    huge = tmp_path / "huge.yaml"
    with huge.open("wb") as handle:
        handle.seek(100 * 1024 * 1024)
        handle.write(b"\n")
    start = time.perf_counter()
    done = subprocess.run([*LAUNCH, "lint", str(huge)], capture_output=True, text=True,
                          timeout=60, check=False)
    assert time.perf_counter() - start < 60  # bounded, not fast
    assert done.returncode == 1 and "too large" in done.stdout
