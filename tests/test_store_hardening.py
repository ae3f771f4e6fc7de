"""The store against what users do to it, through the real CLI: attempts of drills given as a
file, moved, changed or deleted still show; an old store upgrades in place; foreign, damaged
and newer files stay byte-identical; ids that are not attempts; reading a read-only store; a
process killed between creating the file and writing the attempt."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from trainer.store.database import Store, default_path
from trainer.store.schema import MIGRATIONS, SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = "llama31-8b-h100"
Run = Callable[..., Result]


def _copy_as(folder: Path, new_id: str, source: str = SHIPPED) -> Path:
    """A copy of a shipped drill under another id (its solution and rubric still shipped)."""
    text = (ROOT / "drills" / f"{source}.yaml").read_text(encoding="utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{new_id}.yaml"
    path.write_text(text.replace(f"\nid: {source}\n", f"\nid: {new_id}\n"), encoding="utf-8")
    return path


def _data_copy(root: Path) -> Path:
    """A KVDRILL_DATA folder: the shipped drills, rubrics and solutions."""
    for kind in ("drills", "rubrics", "solutions"):
        shutil.copytree(ROOT / kind, root / kind)
    return root


def _fails_cleanly(result: Result, code: int, *needles: str) -> None:
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output
    for needle in needles:
        assert needle in lines[0], lines[0]


def _history_ids(run: Run) -> list[int]:
    return [row["id"] for row in json.loads(run("history", "--json").stdout)]


def _fingerprint(folder: Path) -> dict[str, str]:
    """The store file and every companion SQLite could give it (-wal, -shm, -journal); the
    caches kept beside it (the drill list, parsed files) are not the store."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()
            if p.name.startswith(default_path().name)}


# -- 1. an attempt carries its drill ---------------------------------------------------------

def test_history_lists_an_attempt_of_a_drill_given_as_a_file_with_the_others(
    run: Run, tmp_path: Path
) -> None:
    run("practice", SHIPPED, input="32\n")
    run("practice", str(_copy_as(tmp_path, "mine")), input="32\n8\n")
    rows = json.loads(run("history", "--json").stdout)
    assert [(r["drill"], r["answered"]) for r in rows] == [("mine", 2), (SHIPPED, 1)]
    assert "mine" in run("history").stdout


def test_next_still_chooses_after_an_attempt_of_a_drill_given_as_a_file(
    run: Run, tmp_path: Path
) -> None:
    run("practice", str(_copy_as(tmp_path, "mine")), input="32\n")
    assert json.loads(run("next", "--json").stdout)["drill"] != "mine"


def test_export_review_and_resume_work_after_the_drill_file_is_deleted(
    run: Run, tmp_path: Path
) -> None:
    path = _copy_as(tmp_path, "mine")
    run("practice", str(path), input="32\n")
    path.unlink()
    exported = json.loads(run("export", "1").stdout)
    assert exported["drill"] == "mine" and exported["steps"][0]["verdict"] == "correct"
    assert "not in the drills folder" in exported["note"]
    assert "Review of attempt 1: mine" in run("review", "1").stdout
    resumed = run("practice", "--resume", "1", input="8\n")
    assert "Resuming attempt 1 of mine at step shape-kv-heads (2 of 17)" in resumed.stdout
    answers = [s["answer"] for s in json.loads(run("export", "1").stdout)["steps"][:2]]
    assert answers == ["32", "8"]


def test_an_attempt_is_marked_against_the_drill_as_practised_after_the_file_changes(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data_copy(tmp_path / "data")
    monkeypatch.setenv("KVDRILL_DATA", str(data))
    run("practice", SHIPPED, input="32\n")
    drill_file = data / "drills" / f"{SHIPPED}.yaml"
    text = drill_file.read_text(encoding="utf-8")
    drill_file.write_text(text.replace("\nid: ", "\n# edited\nid: ", 1), encoding="utf-8")
    exported = json.loads(run("export", "1").stdout)
    assert "has changed; marked against the copy kept with the attempt" in exported["note"]
    assert exported["steps"][0]["verdict"] == "correct"


def test_an_attempt_survives_kvdrill_data_pointing_elsewhere(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data_copy(tmp_path / "data")
    _copy_as(data / "drills", "extra")
    monkeypatch.setenv("KVDRILL_DATA", str(data))
    run("practice", "extra", input="32\n")
    monkeypatch.delenv("KVDRILL_DATA")
    assert _history_ids(run) == [1]
    assert json.loads(run("export", "1").stdout)["steps"][0]["verdict"] == "correct"


def _attempt_without_a_drill(drill_text: str | None) -> None:
    """An attempt of drill 'gone': recorded before drill text was kept (None), or with a
    stored copy that no longer parses."""
    with Store() as store:
        attempt_id = store.create_attempt("gone", "0" * 64, None, {}, "0.1.0", "practice",
                                          False, drill_text=drill_text)
        store.record_answer(attempt_id, "shape-layers", "32", None, None, "correct", None,
                            False, 0, 3.0, 15, False)
        store.finish(attempt_id)  # complete, so history tries to score it


@pytest.mark.parametrize("drill_text", [None, "id: [unclosed\n"],
                         ids=["no stored copy", "stored copy unreadable"])
def test_an_attempt_whose_drill_cannot_be_had_is_listed_and_exported_with_a_note(
    run: Run, drill_text: str | None
) -> None:
    run("practice", SHIPPED, input="32\n")
    _attempt_without_a_drill(drill_text)
    rows = json.loads(run("history", "--json").stdout)
    assert [r["id"] for r in rows] == [2, 1]
    assert rows[0]["share"] is None and "drill 'gone'" in rows[0]["note"]
    assert "drill 'gone'" in run("history").stdout
    exported = json.loads(run("export", "2").stdout)
    assert exported["note"].startswith("not re-marked: drill 'gone'")
    assert exported["steps"][0]["answer"] == "32" and exported["rubric"] is None
    assert "- note: not re-marked" in run("export", "2", "--format", "md").stdout
    assert run("next").exit_code == 0


@pytest.mark.parametrize("command", [["review", "2"], ["practice", "--resume", "2"]])
def test_reviewing_or_resuming_an_attempt_whose_drill_is_gone_is_one_clear_error(
    run: Run, command: list[str]
) -> None:
    _attempt_without_a_drill(None)
    _attempt_without_a_drill(None)
    _fails_cleanly(run(*command, ok=False, input=""), 1, "attempt 2 cannot be",
                   "drill 'gone'", "kvdrill export 2")


def _schema_1_store(path: Path) -> None:
    """A database exactly as the first kvdrill wrote it: one attempt, answers, an override."""
    conn = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0]:
        conn.execute(statement)
    conn.execute("PRAGMA user_version = 1")
    conn.execute(
        "INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version, mode,"
        " strict, started_at, status) VALUES (?, 'h', NULL, '{}', '0.1.0', 'practice', 0,"
        " '2025-01-01T00:00:00+00:00', 'incomplete')", (SHIPPED,))
    conn.execute(
        "INSERT INTO answers (attempt_id, step_id, revision, raw, verdict, carried_forward,"
        " hints, seconds, budget_seconds, overtime, answered_at) VALUES (1, 'shape-layers', 1,"
        " '32', 'correct', 0, 1, 4.5, 15, 0, '2025-01-01T00:00:05+00:00')")
    conn.execute("INSERT INTO overrides (attempt_id, dimension, score, note, at)"
                 " VALUES (1, 'levers', 2, 'said FP8', '2025-01-02T00:00:00+00:00')")
    conn.close()


def test_a_schema_1_store_upgrades_in_place_losing_nothing(tmp_path: Path) -> None:
    path = tmp_path / "kvdrill.sqlite3"
    _schema_1_store(path)
    with Store(path, read_only=True) as old:
        before = (old.attempts(), old.answers(1, latest_only=False), old.overrides(1))
    with Store(path) as store:
        after = (store.attempts(), store.answers(1, latest_only=False), store.overrides(1))
        second = store.create_attempt(SHIPPED, "h2", None, {}, "0.1.0", "exam", True,
                                      drill_text="id: x\n")
        assert store.attempt(second).drill_text == "id: x\n"
    assert after == before and before[0][0].drill_text is None
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 5
    conn.close()


def test_history_and_export_read_a_schema_1_store_without_changing_it(run: Run) -> None:
    _schema_1_store(default_path())
    before = _fingerprint(default_path().parent)
    assert _history_ids(run) == [1]
    assert json.loads(run("export", "1").stdout)["steps"][0]["hints"] == 1
    assert _fingerprint(default_path().parent) == before


# -- 6. foreign, damaged and newer files stay byte-identical ---------------------------------

def _foreign_with_attempts(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE attempts (id INTEGER PRIMARY KEY, score REAL)")
    conn.execute("INSERT INTO attempts (score) VALUES (0.5)")
    conn.commit()
    conn.close()


def _corrupt(path: Path) -> None:
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 32)


def _newer(path: Path) -> None:
    with Store(path):
        pass
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()


@pytest.mark.parametrize(("make", "says"), [
    (_foreign_with_attempts, "is not a kvdrill database"),
    (_corrupt, "damaged or not a database"),
    (_newer, "written by a newer kvdrill"),
], ids=["foreign with an attempts table", "corrupt", "newer version"])
@pytest.mark.parametrize("command", [["history"], ["practice", SHIPPED], ["export", "1"],
                                     ["review", "1"], ["next"]])
def test_a_file_that_is_not_our_store_is_refused_and_stays_byte_identical(
    run: Run, make: Callable[[Path], None], says: str, command: list[str]
) -> None:
    path = default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    make(path)
    before = _fingerprint(path.parent)
    _fails_cleanly(run(*command, ok=False, input="32\n"), 1, str(path), says)
    assert _fingerprint(path.parent) == before


# -- 10. ids that are not attempts -----------------------------------------------------------

ID_COMMANDS = ["export", "review", "practice"]


def _with_id(command: str, attempt_id: str) -> list[str]:
    return ["practice", f"--resume={attempt_id}"] if command == "practice" \
        else [command, "--", attempt_id]


@pytest.mark.parametrize("command", ID_COMMANDS)
@pytest.mark.parametrize("attempt_id", ["99999999999999999999999", "9" * 5000,
                                        "9223372036854775808"])
def test_an_id_beyond_any_attempt_is_no_attempt(run: Run, command: str,
                                                attempt_id: str) -> None:
    run("practice", SHIPPED, input="32\n")
    _fails_cleanly(run(*_with_id(command, attempt_id), ok=False, input=""), 1, "no attempt 9")


@pytest.mark.parametrize("command", ID_COMMANDS)
@pytest.mark.parametrize("attempt_id", ["٣", "３", "²", "-1"],
                         ids=["arabic-indic", "full-width", "superscript", "negative"])
def test_an_id_not_written_with_ascii_digits_is_no_attempt_even_when_its_value_is_one(
    run: Run, command: str, attempt_id: str
) -> None:
    for _ in range(3):
        run("practice", SHIPPED, input="32\n")
    _fails_cleanly(run(*_with_id(command, attempt_id), ok=False, input=""), 2,
                   f"no attempt {attempt_id!r}", "digits 0-9")


# -- 12. reading a read-only store; history of an unknown drill ------------------------------

def _sqlite_error(message: str, name: str) -> sqlite3.OperationalError:
    error = sqlite3.OperationalError(message)
    error.sqlite_errorname = name  # type: ignore[attr-defined]  # as SQLite sets it
    return error


def test_reading_commands_open_the_store_read_only(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("practice", SHIPPED, input="32\n")
    real_connect = sqlite3.connect

    def read_only_disk(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if database != ":memory:" and "mode=ro" not in str(database):
            raise _sqlite_error("attempt to write a readonly database", "SQLITE_READONLY")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", read_only_disk)
    assert _history_ids(run) == [1]
    assert json.loads(run("export", "1").stdout)["id"] == 1
    assert "Review of attempt 1" in run("review", "1").stdout
    assert "kvdrill practice" in run("next").stdout
    _fails_cleanly(run("practice", SHIPPED, ok=False, input="32\n"), 1, "cannot write")


def test_a_store_whose_wal_index_cannot_be_created_is_read_as_immutable(
    run: Run, monkeypatch: pytest.MonkeyPatch
) -> None:
    run("practice", SHIPPED, input="32\n")
    real_connect = sqlite3.connect

    def no_shm(database: Any, *args: Any, **kwargs: Any) -> sqlite3.Connection:
        if "mode=ro" in str(database) and "immutable=1" not in str(database):
            raise _sqlite_error("unable to open database file", "SQLITE_CANTOPEN")
        return real_connect(database, *args, **kwargs)

    monkeypatch.setattr(sqlite3, "connect", no_shm)
    assert _history_ids(run) == [1]


def test_reading_commands_do_not_create_a_store(run: Run) -> None:
    assert "No attempts yet" in run("history").stdout
    assert "never practised" in run("next").stdout
    _fails_cleanly(run("export", "1", ok=False), 1, "no attempt 1")
    assert not default_path().exists()


def test_history_of_an_unknown_drill_suggests_the_nearest_id(run: Run) -> None:
    run("practice", SHIPPED, input="32\n")
    _fails_cleanly(run("history", "--drill", "llama31-8b-h10", ok=False), 2,
                   "unknown drill 'llama31-8b-h10'", f"did you mean {SHIPPED}")


def test_history_of_a_very_long_unknown_drill_id_is_one_short_error(run: Run) -> None:
    result = run("history", "--drill", "x" * 5000, ok=False)
    _fails_cleanly(result, 2, "unknown drill 'xxx")
    assert len(result.stderr) < 200


def test_history_of_a_drill_without_attempts_says_no_attempts_yet(run: Run) -> None:
    run("practice", SHIPPED, input="32\n")
    assert "No attempts yet" in run("history", "--drill", "llama2-70b-mi300x").stdout


def test_history_of_a_drill_known_only_from_the_store_lists_it(run: Run, tmp_path: Path) -> None:
    run("practice", str(_copy_as(tmp_path, "mine")), input="32\n")
    assert [r["drill"] for r in json.loads(run("history", "--drill", "mine", "--json").stdout)
            ] == ["mine"]


# -- next never recommends a broken drill ----------------------------------------------------

def test_next_passes_over_a_broken_drill(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = _data_copy(tmp_path / "data")
    first = sorted((data / "drills").glob("*.yaml"))[0]
    first.write_text(first.read_text(encoding="utf-8").replace("\nsteps:", "\nsteps: 7\nx:", 1),
                     encoding="utf-8")
    monkeypatch.setenv("KVDRILL_DATA", str(data))
    payload = json.loads(run("next", "--json").stdout)
    assert payload["drill"] != first.stem
    assert first.stem not in [card["drill"] for card in payload["schedule"]]


def test_next_with_no_usable_drill_is_one_clear_error(
    run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "data" / "drills").mkdir(parents=True)
    (tmp_path / "data" / "drills" / "broken.yaml").write_text("id: [\n", encoding="utf-8")
    monkeypatch.setenv("KVDRILL_DATA", str(tmp_path / "data"))
    _fails_cleanly(run("next", ok=False), 1, "can be practised", "kvdrill lint")


# -- 13. a process killed between creating the file and writing the attempt -------------------

def _empty_file(path: Path) -> None:
    path.write_bytes(b"")


def _wal_without_tables(path: Path) -> None:
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()


def _schema_without_attempts(path: Path) -> None:
    with Store(path):
        pass


KILLED_EARLY = [_empty_file, _wal_without_tables, _schema_without_attempts]


@pytest.mark.parametrize("make", KILLED_EARLY,
                         ids=["empty file", "WAL, no tables", "schema, no attempt"])
def test_a_store_killed_before_its_first_attempt_reads_as_empty(
    run: Run, make: Callable[[Path], None]
) -> None:
    default_path().parent.mkdir(parents=True, exist_ok=True)
    make(default_path())
    assert "No attempts yet" in run("history").stdout
    assert "never practised" in run("next").stdout
    _fails_cleanly(run("practice", "--resume", "1", ok=False, input=""), 1, "no attempt 1")
    _fails_cleanly(run("export", "1", ok=False), 1, "no attempt 1")


@pytest.mark.parametrize("make", KILLED_EARLY,
                         ids=["empty file", "WAL, no tables", "schema, no attempt"])
def test_practice_starts_afresh_on_a_store_killed_before_its_first_attempt(
    run: Run, make: Callable[[Path], None]
) -> None:
    default_path().parent.mkdir(parents=True, exist_ok=True)
    make(default_path())
    run("practice", SHIPPED, input="32\n")
    assert _history_ids(run) == [1]

