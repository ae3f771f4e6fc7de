"""What commands print and write: no control character reaches the terminal, JSON escapes
them, the store is never overwritten, output files are whole or absent, and piped practice
survives bytes that are not UTF-8 and answers of any length (issue 11)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import Result

from trainer.files.paths import data_dir
from trainer.printable import json_text, printable
from trainer.store.database import Store

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
# Clear screen, a window title, an OSC 52 clipboard write, a bell, a C1 CSI, a bidi override.
INJECTIONS = ["\x1b[2J", "\x1b]0;pwned\x07", "\x1b]52;c;cHduZWQ=\x07", "\x07", "\x9b31m",
              "\u202e"]
HOSTILE = "32 " + "".join(INJECTIONS) + " layers"


@pytest.fixture
def home(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("KVDRILL_HOME", str(folder))
    return folder


def raw_controls(text: str) -> list[str]:
    return [c for c in text if unicodedata.category(c) in ("Cc", "Cf") and c not in "\n\t"]


@pytest.mark.parametrize("text", INJECTIONS)
def test_printable_shows_each_control_as_a_replacement_character(text: str) -> None:
    assert raw_controls(printable(f"a{text}b")) == []


def test_printable_leaves_ordinary_text_and_line_breaks_alone() -> None:
    assert printable("128 KiB × 2\n≈ 52 GB\tok") == "128 KiB × 2\n≈ 52 GB\tok"


def test_json_text_escapes_c1_and_bidi_characters() -> None:
    text = json_text({"answer": "\x9b31m\u202e"})
    assert raw_controls(text) == [] and json.loads(text) == {"answer": "\x9b31m\u202e"}


def test_grade_prints_no_raw_control_character(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text(yaml.safe_dump({"shape-layers": HOSTILE}), encoding="utf-8")
    result = run("grade", DRILL, "--answers", str(sheet), ok=False)
    assert result.exit_code == 1 and raw_controls(result.output) == []


def test_piped_practice_echoes_no_raw_control_character(run: Run) -> None:
    result = run("practice", DRILL, input=HOSTILE + "\n")
    assert raw_controls(result.output) == []


def test_export_markdown_prints_no_raw_control_character(run: Run) -> None:
    run("practice", DRILL, input=HOSTILE + "\n")
    assert raw_controls(run("export", "1", "--format", "md").output) == []


def test_export_json_keeps_the_answer_exactly_but_escaped(run: Run) -> None:
    run("practice", DRILL, input=HOSTILE + "\n")
    output = run("export", "1").output
    assert raw_controls(output) == []
    assert json.loads(output)["steps"][0]["answer"] == HOSTILE


def test_an_error_message_prints_no_raw_control_character(run: Run) -> None:
    result = run("show", "\x1b[2Jnosuch", ok=False)
    assert result.exit_code == 2 and raw_controls(result.output) == []


def test_bytes_that_are_not_utf8_are_read_and_the_rest_of_the_input_kept(run: Run) -> None:
    result = run("practice", DRILL, input=b"32\n\xff\xfe\n128\n")
    assert "Attempt 1 saved" in result.output
    steps = json.loads(run("export", "1").output)["steps"]
    assert [s["verdict"] for s in steps[:3]] == ["correct", "invalid", "correct"]


def test_an_answer_over_the_cap_is_not_stored(run: Run, home: Path) -> None:
    result = run("practice", DRILL, input="32\n" + "x" * 1_000_000 + "\n128\n")
    assert "longer than 8,000 characters" in result.output
    with Store(home / "kvdrill.sqlite3") as store:
        raws = [row.raw for row in store.answers(1)]
    assert raws == ["32", None, "128"]


def test_export_refuses_to_write_over_the_store(run: Run, home: Path) -> None:
    run("practice", DRILL, input="32\n")
    store = home / "kvdrill.sqlite3"
    before = store.read_bytes()
    result = run("export", "1", "--out", str(store), ok=False)
    assert result.exit_code == 2 and "SQLite database" in result.output
    assert store.read_bytes() == before


def test_export_refuses_to_write_over_any_sqlite_file(run: Run, home: Path,
                                                     tmp_path: Path) -> None:
    run("practice", DRILL, input="32\n")
    other = tmp_path / "other.db"
    other.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    assert run("export", "1", "--out", str(other), ok=False).exit_code == 2


def test_out_dash_means_standard_output(run: Run, home: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    run("practice", DRILL, input="32\n")
    monkeypatch.chdir(tmp_path)
    result = run("export", "1", "--out", "-")
    assert json.loads(result.output)["drill"] == DRILL and not (tmp_path / "-").exists()


def test_a_failed_write_names_the_file_and_leaves_no_partial_file(run: Run, home: Path,
                                                                 tmp_path: Path) -> None:
    run("practice", DRILL, input="32\n")
    target = tmp_path / "missing-folder" / "t.json"
    result = run("export", "1", "--out", str(target), ok=False)
    assert result.exit_code == 1 and str(target) in result.output
    assert not target.parent.exists()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full here")
def test_a_full_device_names_the_path(run: Run, home: Path) -> None:
    run("practice", DRILL, input="32\n")
    result = run("export", "1", "--out", "/dev/full", ok=False)
    assert result.exit_code == 1 and "/dev/full" in result.output


def test_review_note_without_set_is_a_usage_error(run: Run, home: Path) -> None:
    run("practice", DRILL, input="32\n")
    result = run("review", "1", "--note", "named FP8 aloud", ok=False)
    assert result.exit_code == 2 and "--note goes with --set" in result.output


@pytest.mark.parametrize("companion", ["-wal", "-shm", "-journal"])
def test_export_refuses_to_write_over_a_file_sqlite_keeps_beside_the_store(
        run: Run, home: Path, companion: str) -> None:
    run("practice", DRILL, input="32\n")
    target = home / f"kvdrill.sqlite3{companion}"
    result = run("export", "1", "--out", str(target), ok=False)
    assert result.exit_code == 2
    assert not target.exists() or not target.read_bytes().startswith(b"{")


def test_out_to_a_fifo_is_refused_without_waiting_for_a_reader(run: Run, home: Path,
                                                             tmp_path: Path) -> None:
    run("practice", DRILL, input="32\n")
    fifo = tmp_path / "out.json"
    os.mkfifo(fifo)
    result = run("export", "1", "--out", str(fifo), ok=False)
    assert result.exit_code == 2 and "pipe or socket" in result.output


def test_a_fifo_where_the_store_belongs_is_refused_without_waiting(run: Run, home: Path) -> None:
    os.mkfifo(home / "kvdrill.sqlite3")
    result = run("history", ok=False)
    assert result.exit_code == 1 and "not a regular file" in result.output


def test_a_folder_named_like_a_drill_in_the_drills_folder_is_reported_once(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = tmp_path / "data"
    for kind in ("rubrics", "solutions"):
        shutil.copytree(data_dir(kind), data / kind)
    # (one drill beside the folder: linting all twenty scores every anchor, half a minute)
    (data / "drills").mkdir()
    shutil.copy(data_dir("drills") / "prefix-caching.yaml", data / "drills")
    (data / "drills" / "folder.yaml").mkdir()
    monkeypatch.setenv("KVDRILL_DATA", str(data))
    result = run("lint", ok=False)
    assert result.exit_code == 1 and result.output.count("folder.yaml: is a folder") == 1


@pytest.mark.parametrize("option", ["--utilization=1e400", "--bandwidth-tbs=1e-320",
                                    "--params=8e99999T"])
def test_calc_refuses_a_number_out_of_range_as_misuse(run: Run, option: str) -> None:
    result = run("calc", "--preset", "llama2-70b", "--gpu", "mi300x", option, "--json", ok=False)
    assert result.exit_code == 2 and "out of range" in result.output


def test_an_argument_that_is_not_utf8_is_refused_as_misuse(run: Run, home: Path) -> None:
    result = run("history", "--drill", "\udcff\udcfe", ok=False)
    assert result.exit_code == 2 and "not UTF-8" in result.output


def test_bytes_stored_where_text_belongs_are_shown_not_a_crash(run: Run, home: Path) -> None:
    run("practice", DRILL, input="32\n")
    with sqlite3.connect(home / "kvdrill.sqlite3") as conn:
        conn.execute("UPDATE answers SET raw = ?", (b"\xff\x1b[2J",))
    assert raw_controls(run("export", "1", "--format", "md").output) == []
