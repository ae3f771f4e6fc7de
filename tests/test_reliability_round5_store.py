"""Issue 37, fifth round, the store: one damaged attempt row is named by id and left out while
the rest works (never advice to move the whole store away); a store restored from `sqlite3 …
.dump` (no application id, user_version 0) or with an edited user_version is recognised by its
tables and repaired; KVDRILL_HOME naming a file is misuse."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result
from one_line import one_line_error
from store_sql import store_sql

from trainer.store.database import default_path
from trainer.store.schema import APPLICATION_ID, SCHEMA_VERSION

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
WHOLE = "\n".join(["32", "8", "128", "2", "128 KiB", "52 GB", "396728", "96", "193", "12",
                   "44", "12", "cap context", "3", "tier it", "20", "measure"]) + "\n"


def _two_attempts(run: Run) -> None:
    run("practice", DRILL, input=WHOLE)
    run("practice", DRILL, input=WHOLE)




def _pragmas(path: Path) -> tuple[int, int]:
    conn = sqlite3.connect(path)
    try:
        return (int(conn.execute("PRAGMA application_id").fetchone()[0]),
                int(conn.execute("PRAGMA user_version").fetchone()[0]))
    finally:
        conn.close()


# ---- F7: one damaged row -----------------------------------------------------------------

@pytest.mark.parametrize("command", [["history"], ["progress"], ["progress", "--json"],
                                     ["cohort", DRILL]])
def test_a_damaged_params_row_is_left_out_and_named(run: Run, command: list[str]) -> None:
    _two_attempts(run)
    store_sql("UPDATE attempts SET params = 'not json' WHERE id = 2")
    result = run(*command, ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert "attempt 2 is damaged (unreadable params): left out" in result.stderr
    assert "move it away" not in result.stderr and "Traceback" not in result.output


@pytest.mark.parametrize("column", ["params", "target"])
def test_a_json_value_nested_past_the_readers_depth_is_a_damaged_row(
        run: Run, column: str) -> None:
    _two_attempts(run)
    store_sql(f"UPDATE attempts SET {column} = ? WHERE id = 2",
              "[" * 100_000 + "]" * 100_000)
    result = run("history", ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert f"attempt 2 is damaged (unreadable {column}): left out" in result.stderr


def test_history_still_lists_the_attempts_that_are_whole(run: Run) -> None:
    _two_attempts(run)
    store_sql("UPDATE attempts SET params = 'not json' WHERE id = 2")
    result = run("history", "--json", ok=False)
    assert result.exit_code == 0 and '"id": 1' in result.output


@pytest.mark.parametrize("command", [["review", "2"], ["export", "2"],
                                     ["export", "2", "--format", "md"]])
def test_the_damaged_attempt_itself_is_refused_by_id(run: Run, command: list[str]) -> None:
    _two_attempts(run)
    store_sql("UPDATE attempts SET params = 'not json' WHERE id = 2")
    result = run(*command, ok=False)
    one_line_error(result, 1, "attempt 2 is damaged (unreadable params)")
    assert "move it away" not in result.stderr


# ---- F8: a store restored from a dump, or its user_version edited -------------------------

def test_a_store_restored_from_a_dump_is_recognised_and_repaired(run: Run) -> None:
    _two_attempts(run)
    path = default_path()
    source = sqlite3.connect(path)
    dump = "\n".join(source.iterdump())  # as `sqlite3 FILE .dump`: no id, no user_version
    source.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    restored = sqlite3.connect(path)
    restored.executescript(dump)
    restored.close()
    assert _pragmas(path) == (0, 0)
    result = run("history", "--json", ok=False)
    assert result.exit_code == 0, result.stderr
    assert '"id": 2' in result.output
    run("practice", DRILL, input=WHOLE)  # a write repairs the stamp
    assert _pragmas(path) == (APPLICATION_ID, SCHEMA_VERSION)


def test_a_negative_user_version_resumes_without_a_duplicate_column(run: Run) -> None:
    run("practice", DRILL, input="32\n")
    store_sql("PRAGMA user_version = -1")
    result = run("practice", "--resume", "1", input="", ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert "duplicate column" not in result.stderr
    assert _pragmas(default_path())[1] == SCHEMA_VERSION


def test_a_migration_run_again_skips_what_is_there(run: Run) -> None:
    run("practice", DRILL, input="32\n")
    store_sql(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")  # the last column is there already
    result = run("practice", "--resume", "1", input="", ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert _pragmas(default_path())[1] == SCHEMA_VERSION


def test_tables_not_ours_without_an_id_stay_foreign(run: Run) -> None:
    path = default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript("CREATE TABLE attempts (x); CREATE TABLE answers (y); "
                       "CREATE TABLE overrides (z);")
    conn.close()
    one_line_error(run("history", ok=False), 1, "not a kvdrill database")


# ---- F9: KVDRILL_HOME naming a file ------------------------------------------------------

@pytest.mark.parametrize("command", [["history"], ["progress"], ["practice", DRILL]])
def test_kvdrill_home_naming_a_file_is_misuse(run: Run, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch,
                                              command: list[str]) -> None:
    afile = tmp_path / "afile"
    afile.write_text("x")
    monkeypatch.setenv("KVDRILL_HOME", str(afile))
    one_line_error(run(*command, input="", ok=False), 2, "KVDRILL_HOME names a file, not a "
                   "folder", str(afile))
    assert afile.read_text() == "x"


# ---- F22: counts read back, and a full disk said as full ----------------------------------

def test_a_skill_with_an_absurd_count_is_left_out_and_named(run: Run) -> None:
    run("practice", DRILL, input=WHOLE)
    run("progress")  # the skill cards are kept
    store_sql("UPDATE skills SET steps = 1000000000000000000 WHERE skill = 'concurrency'")
    result = run("progress", ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert "1000000000000000000" not in result.output
    assert "skill concurrency: its kept counts are damaged" in result.stderr


def test_an_io_error_on_a_full_disk_says_the_disk_is_full(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import shutil

    from trainer.store import sqlite_file

    error = sqlite3.OperationalError("disk I/O error")
    error.sqlite_errorname = "SQLITE_IOERR_WRITE"
    monkeypatch.setattr(shutil, "disk_usage", lambda _: shutil._ntuple_diskusage(10, 10, 0))
    assert "the disk is full" in str(sqlite_file.store_error(tmp_path / "k.sqlite3", error))


def test_a_reviewer_score_no_rubric_has_is_not_shown(run: Run) -> None:
    _two_attempts(run)
    store_sql("INSERT INTO overrides (attempt_id, dimension, score, note, at) "
              "VALUES (2, 'levers', -5, 'edited', '2026-01-01T00:00:00+00:00')")
    text = run("review", "2").output
    assert "-5/4" not in text and "edited" not in text
