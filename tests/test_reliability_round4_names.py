"""Issue 37, names from outside and stored targets: a model folder's name, a stored drill id or
target label never puts a newline, a heading or raw HTML into `export --format md` (escaped as
review's Markdown escapes it); a transcript whose target the drill cannot be re-targeted at is
a malformed transcript (exit 2); resuming an attempt whose stored target is damaged names the
attempt."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from one_line import one_line_error
from store_sql import store_sql

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
CONFIGS = Path(__file__).parent / "corpus" / "configs"
HOSTILE = "Q\n# Owned <img src=x onerror=alert(1)>"
IMPOSSIBLE = {"model": {"preset": "llama-3.1-405b"}, "gpu": "l4"}  # 812 GB of weights on 24 GB






def _safe_markdown(text: str) -> None:
    """No line the hostile name made: no heading of its own, no raw HTML element."""
    assert not any(line.startswith("# Owned") for line in text.splitlines()), text
    assert re.search(r"(?<!\\)<img", text) is None, text  # only as \<img, escaped


def _practised_on_hostile_folder(run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "models" / HOSTILE
    shutil.copytree(CONFIGS / "Qwen3-32B", folder)
    # (on an H200: on the drill's own H100 Qwen3-32B holds no 32k session, and is refused)
    run("practice", DRILL, "--model", str(folder), "--gpu", "h200", input="64\n")


# ---- Markdown never takes a line from a name -----------------------------------------------

def test_a_model_folder_name_with_a_newline_is_escaped_in_export_markdown(
        run: Run, tmp_path: Path) -> None:
    _practised_on_hostile_folder(run, tmp_path)
    text = run("export", "1", "--format", "md").stdout
    _safe_markdown(text)
    assert r"- re-targeted at Q \# Owned ‹img src=x onerror=alert(1)› on NVIDIA H200 SXM 141GB" \
        in text


def test_export_markdown_escapes_the_name_as_review_does(run: Run, tmp_path: Path) -> None:
    _practised_on_hostile_folder(run, tmp_path)
    exported = run("export", "1", "--format", "md").stdout
    reviewed = run("review", "1", "--format", "md").stdout
    label = r"Q \# Owned ‹img src=x onerror=alert(1)› on NVIDIA H200 SXM 141GB"
    assert label in exported and label in reviewed


@pytest.mark.parametrize("column", ["drill_id", "variant"])
def test_a_stored_value_with_a_newline_is_escaped_in_export_markdown(run: Run,
                                                                     column: str) -> None:
    run("practice", DRILL, input="32\n")
    store_sql(f"UPDATE attempts SET {column} = ?", HOSTILE)
    result = run("export", "1", "--format", "md", ok=False)
    assert result.exit_code in (0, 1), result.stderr
    assert "internal error" not in result.stderr
    _safe_markdown(result.stdout)


def test_an_answer_with_markdown_in_it_stays_in_its_cell(run: Run) -> None:
    run("practice", DRILL, input="32 | <b>x</b> # y\n")
    rows = [line for line in run("export", "1", "--format", "md").stdout.splitlines()
            if line.startswith("| shape-layers |")]
    assert len(rows) == 1 and len(re.findall(r"(?<!\\)\|", rows[0])) == 8  # 7 cells, unsplit
    assert "<b>" not in rows[0]


def test_a_stored_note_never_reaches_a_markdown_line_raw(run: Run) -> None:
    run("practice", DRILL, input="32\n")
    store_sql("UPDATE attempts SET target = ?", json.dumps({"model": {"preset": HOSTILE}}))
    text = run("export", "1", "--format", "md").stdout
    _safe_markdown(text)
    assert "- note: not re-marked: its stored target cannot be used" in text


# ---- an impossible or damaged stored target ------------------------------------------------

def _exported_with_target(run: Run, tmp_path: Path, target: Any) -> Path:
    run("practice", DRILL, "--model", "qwen3-8b", input="32\n")
    data = json.loads(run("export", "1").stdout)
    data["target"] = target
    path = tmp_path / "attempt.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_review_of_a_transcript_with_an_impossible_target_is_malformed(
        run: Run, tmp_path: Path) -> None:
    path = _exported_with_target(run, tmp_path, IMPOSSIBLE)
    one_line_error(run("review", str(path), ok=False), 2,
                    "malformed transcript: target: drill llama31-8b-h100 cannot be "
                    "re-targeted at Llama-3.1-405B on NVIDIA L4")


def test_import_of_a_transcript_with_an_impossible_target_fails_that_file(
        run: Run, tmp_path: Path) -> None:
    path = _exported_with_target(run, tmp_path, IMPOSSIBLE)
    result = run("import", str(path), ok=False)
    one_line_error(result, 1, "malformed transcript: target")


@pytest.mark.parametrize("target", [IMPOSSIBLE, {"model": {"preset": "nope"}},
                                    {"model": 5}, {"gpu": "no-such-card"}])
def test_resuming_an_attempt_with_a_damaged_target_names_the_attempt(run: Run,
                                                                      target: Any) -> None:
    run("practice", DRILL, "--model", "qwen3-8b", input="32\n")
    store_sql("UPDATE attempts SET target = ?", json.dumps(target))
    one_line_error(run("practice", "--resume", "1", input="", ok=False), 1,
                    "attempt 1 cannot be resumed: its stored target cannot be used",
                    "kvdrill export 1")


@pytest.mark.parametrize("target", [IMPOSSIBLE, {"model": 5}])
def test_review_of_an_attempt_with_a_damaged_target_names_the_attempt(run: Run,
                                                                      target: Any) -> None:
    run("practice", DRILL, "--model", "qwen3-8b", input="32\n")
    store_sql("UPDATE attempts SET target = ?", json.dumps(target))
    one_line_error(run("review", "1", ok=False), 1, "attempt 1 cannot be re-marked")


@pytest.mark.parametrize("command", [["history"], ["export", "1"], ["progress"], ["next"],
                                     ["export", "1", "--format", "md"]])
def test_an_attempt_with_a_damaged_target_is_still_listed_and_exported(
        run: Run, command: list[str]) -> None:
    run("practice", DRILL, "--model", "qwen3-8b", input="32\n")
    store_sql("UPDATE attempts SET target = ?", json.dumps(IMPOSSIBLE))
    result = run(*command, ok=False)
    assert result.exit_code == 0, result.stderr
    assert "internal error" not in result.stderr


def test_a_models_folder_name_is_text_in_a_worked_solutions_markdown(
        tmp_path: Path, run: Any) -> None:
    folder = tmp_path / "x<img onerror=1>"
    folder.mkdir()
    folder.joinpath("config.json").write_text(
        (Path(__file__).parent / "corpus" / "configs" / "Qwen3-8B" / "config.json").read_text())
    text = run("solution", "llama31-8b-h100", "--model", str(folder), "--format", "md").output
    assert "<img" not in text and "x‹img onerror=1›" in text


def test_variants_markdown_never_takes_markup_from_a_folder_name(
        run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "models" / (HOSTILE + " `x` |pipe| [l](javascript:alert(1))")
    shutil.copytree(CONFIGS / "Qwen3-8B", folder)
    out = tmp_path / "out"
    run("variants", DRILL, "--model", str(folder), "--count", "1", "--seed", "3",
        "--out", str(out))
    for written in out.glob("*.md"):
        text = written.read_text(encoding="utf-8")
        _safe_markdown(text)
        assert "](javascript" not in text and "|pipe|" not in text


def test_the_blank_sheets_grading_command_keeps_a_newline_in_a_name_on_one_line(
        run: Run, tmp_path: Path) -> None:
    folder = tmp_path / "models" / HOSTILE
    shutil.copytree(CONFIGS / "Qwen3-8B", folder)
    out = tmp_path / "out"
    run("variants", DRILL, "--model", str(folder), "--count", "1", "--out", str(out))
    text = next(out.glob("*-blank.yaml")).read_text(encoding="utf-8")
    graded_with = next(line for line in text.splitlines() if "Graded with" in line)
    assert "$'" in graded_with and "\\x0a# Owned" in graded_with
