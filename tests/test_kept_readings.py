"""A drill's word stems and rubric-phrase tokens, worked out once and kept (issue 39): the next
grade of the drill stems no word it has seen and folds no phrase again, and what it prints is
what it printed before anything was kept."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from probes import imported_after

from trainer.marking import kept_readings, prose

DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"


def _sheet(tmp_path: Path, name: str, extra: str) -> Path:
    """The drill's right sheet with a comment of its own: a sheet its grade is not kept for."""
    path = tmp_path / name
    path.write_text(SHEET.read_text(encoding="utf-8") + f"\n# {extra}\n", encoding="utf-8")
    return path


def _grade_json(sheet: Path, home: Path) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", "from trainer.app.cli import main; main()", "grade", DRILL,
         "--answers", str(sheet), "--json"],
        capture_output=True, text=True, timeout=120, check=False,
        env=dict(os.environ, KVDRILL_HOME=str(home)), stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stderr
    graded: dict[str, object] = json.loads(done.stdout)
    return graded


def test_a_second_sheet_of_the_drill_imports_no_stemmer(tmp_path: Path) -> None:
    home = tmp_path / "home"
    first = _sheet(tmp_path, "first.yaml", "one candidate")
    assert "snowballstemmer" in imported_after(["grade", DRILL, "--answers", str(first)],
                                               home, ("snowballstemmer",))
    second = _sheet(tmp_path, "second.yaml", "another candidate, the same words")
    assert imported_after(["grade", DRILL, "--answers", str(second)], home,
                          ("snowballstemmer",)) == []


def test_a_grade_with_readings_kept_is_the_grade_without(tmp_path: Path) -> None:
    home = tmp_path / "home"
    fresh = _grade_json(_sheet(tmp_path, "first.yaml", "one"), home)
    kept = _grade_json(_sheet(tmp_path, "second.yaml", "two"), home)
    assert kept == fresh


def test_a_word_never_seen_is_still_stemmed(tmp_path: Path) -> None:
    home = tmp_path / "home"
    _grade_json(_sheet(tmp_path, "first.yaml", "one"), home)
    sheet = tmp_path / "new-words.yaml"
    sheet.write_text("policy: quokkas share key-value heads\n", encoding="utf-8")
    assert "snowballstemmer" in imported_after(["grade", DRILL, "--answers", str(sheet)],
                                               home, ("snowballstemmer",))


def _entry_of(home: Path) -> Path:
    for entry in (home / "parsed").glob("*.json"):
        data = json.loads(entry.read_text(encoding="utf-8"))["data"]
        if isinstance(data, dict) and "phrases" in data and "stems" in data:
            return entry
    raise AssertionError("no kept readings")


def test_an_entry_edited_by_hand_is_read_as_missing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    expected = _grade_json(_sheet(tmp_path, "first.yaml", "one"), home)
    entry = _entry_of(home)
    kept = json.loads(entry.read_text(encoding="utf-8"))
    kept["data"]["phrases"] = {p: ["nothing"] for p in kept["data"]["phrases"]}
    entry.write_text(json.dumps(kept), encoding="utf-8")  # its digest no longer matches
    assert _grade_json(_sheet(tmp_path, "second.yaml", "two"), home) == expected


@pytest.mark.parametrize("data", [
    None, [], {"stems": {}}, {"stems": [], "phrases": {}}, {"stems": {"a": 1}, "phrases": {}},
    {"stems": {}, "phrases": {"kv cache": "kv cache"}},
    {"stems": {}, "phrases": {"kv cache": ["kv", 2]}},
])
def test_an_entry_of_another_shape_holds_nothing(data: object) -> None:
    assert kept_readings._valid(data) == ({}, {})


def test_a_drills_entry_holds_what_its_own_marking_added(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(kept_readings, "_scope", {})
    monkeypatch.setattr(prose, "STEMS", {})
    monkeypatch.setattr(prose, "PHRASES", {})
    kept_readings.use("first-drill")
    prose.phrase_words("an idea of the first drill")
    kept_readings.use("second-drill")  # keeps the first drill's entry
    prose.phrase_words("an idea of the second drill")
    kept_readings.keep_new()
    monkeypatch.setattr(kept_readings, "_scope", {})
    monkeypatch.setattr(prose, "PHRASES", {})
    kept_readings.use("second-drill")
    assert set(prose.PHRASES) == {"an idea of the second drill"}


def test_the_shipped_stemmer_rules_are_what_the_stamp_reads() -> None:
    # the stamp names the English rules' file: another version of it makes the entries stale
    stamp = kept_readings._stemmer_stamp()
    assert stamp.split("\0")[0].endswith("english_stemmer.py")
    assert Path(stamp.split("\0")[0]).is_file()

