"""The attempts database: answers survive crashes and kills, concurrent writers all land, and
damaged, foreign, newer or unwritable files are refused with a StoreError, untouched."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from trainer.errors import StoreError, UsageError
from trainer.store import schema as store_schema
from trainer.store.database import AnswerRow, Store, default_path
from trainer.store.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
CHILD_ENV = {
    **os.environ,
    "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
}


def _attempt(store: Store, drill_id: str = "kv-basics", **changes: Any) -> int:
    values: dict[str, Any] = {
        "drill_id": drill_id,
        "drill_hash": "sha256:abc",
        "variant": 7,
        "params": {"context": 4096, "gpu": "h100", "utilization": 0.9},
        "solver_version": "0.1.0",
        "mode": "practice",
        "strict": False,
    }
    values.update(changes)
    return store.create_attempt(**values)


def _answer(store: Store, attempt_id: int, step_id: str, raw: str | None = "64 KiB",
            **changes: Any) -> AnswerRow:
    values: dict[str, Any] = {
        "raw": raw,
        "parsed_value": "65536/1",
        "parsed_unit": "B",
        "verdict": "correct",
        "misconception": None,
        "carried_forward": False,
        "hints": 0,
        "seconds": 12.5,
        "budget_seconds": 90,
        "overtime": False,
    }
    values.update(changes)
    return store.record_answer(attempt_id, step_id, **values)


def _spawn(code: str, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=CHILD_ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )


def test_round_trip_of_an_attempt_and_its_answers(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as store:
        attempt_id = _attempt(store, mode="exam", strict=True, variant=None)
        given = _answer(store, attempt_id, "kv_per_token")
        skipped = _answer(store, attempt_id, "max_users", raw=None, parsed_value=None,
                          parsed_unit=None, verdict="skipped", misconception="fp32-kv",
                          carried_forward=True, hints=2, seconds=100.25, overtime=True)
        store.finish(attempt_id)
    with Store(tmp_path / "db.sqlite3") as store:
        row = store.attempt(attempt_id)
        assert store.answers(attempt_id) == [given, skipped]
    assert (row.drill_id, row.drill_hash, row.variant) == ("kv-basics", "sha256:abc", None)
    assert row.params == {"context": 4096, "gpu": "h100", "utilization": 0.9}
    assert (row.solver_version, row.mode, row.strict) == ("0.1.0", "exam", True)
    assert row.status == "complete" and row.finished_at is not None
    assert row.started_at.endswith("+00:00") and row.started_at <= row.finished_at
    assert skipped.raw is None and skipped.carried_forward and skipped.overtime
    assert (skipped.hints, skipped.seconds, skipped.misconception) == (2, 100.25, "fp32-kv")


def test_answering_a_step_again_adds_a_revision_and_latest_only_keeps_the_last(
    tmp_path: Path,
) -> None:
    with Store(tmp_path / "db.sqlite3") as store:
        attempt_id = _attempt(store)
        _answer(store, attempt_id, "a", raw="1")
        _answer(store, attempt_id, "b", raw="2")
        again = _answer(store, attempt_id, "a", raw="3")
        everything = store.answers(attempt_id, latest_only=False)
        latest = store.answers(attempt_id)
    assert again.revision == 2
    assert [(a.step_id, a.revision, a.raw) for a in everything] == [
        ("a", 1, "1"), ("b", 1, "2"), ("a", 2, "3")]
    assert [(a.step_id, a.revision, a.raw) for a in latest] == [("a", 2, "3"), ("b", 1, "2")]


def test_attempts_are_listed_newest_first_and_filtered_by_drill(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as store:
        first = _attempt(store, "kv-basics")
        second = _attempt(store, "decode-cost")
        third = _attempt(store, "kv-basics")
        assert [a.id for a in store.attempts()] == [third, second, first]
        assert [a.id for a in store.attempts("kv-basics")] == [third, first]
        assert store.attempts("nothing-here") == []


def test_default_path_honours_kvdrill_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / "kvdrill.sqlite3"
    with Store() as store:
        _attempt(store)
    assert (tmp_path / "home" / "kvdrill.sqlite3").is_file()


def test_default_path_without_kvdrill_home_is_the_user_data_folder(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("KVDRILL_HOME", raising=False)
    assert default_path() == platformdirs.user_data_path("kvdrill") / "kvdrill.sqlite3"


def test_the_database_is_in_wal_mode(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3"):
        pass
    conn = sqlite3.connect(tmp_path / "db.sqlite3")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_two_stores_on_one_file_can_write_alternately(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as one, Store(tmp_path / "db.sqlite3") as two:
        attempt_id = _attempt(one)
        for number in range(6):
            _answer(one if number % 2 == 0 else two, attempt_id, "step", raw=str(number))
        seen_by_one = one.answers(attempt_id, latest_only=False)
        assert two.answers(attempt_id, latest_only=False) == seen_by_one
    assert [(a.revision, a.raw) for a in seen_by_one] == [(n + 1, str(n)) for n in range(6)]


WRITER = """
    import sys, time
    from pathlib import Path
    from trainer.store.database import Store
    path, go, name = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    deadline = time.monotonic() + 30
    while not go.exists() and time.monotonic() < deadline:
        time.sleep(0.005)
    with Store(path) as store:
        attempt_id = store.create_attempt(name, "h", None, {}, "0.1.0", "practice", False)
        for number in range(50):
            store.record_answer(attempt_id, f"s{number}", str(number), None, None, "correct",
                                None, False, 0, 1.0, 60, False)
    print(attempt_id)
"""


@pytest.mark.parametrize("writers", [2, 4])
def test_concurrent_writer_processes_all_land(tmp_path: Path, writers: int) -> None:
    path, go = tmp_path / "db.sqlite3", tmp_path / "go"
    children = [_spawn(WRITER, str(path), str(go), f"drill-{n}") for n in range(writers)]
    try:
        go.touch()  # they race to create the file and then to write
        errors = [child.communicate(timeout=120)[1] for child in children]
    finally:
        for child in children:
            if child.poll() is None:
                child.kill()
                child.communicate()
    assert [child.returncode for child in children] == [0] * writers, errors
    with Store(path) as store:
        attempts = store.attempts()
        assert sorted(a.drill_id for a in attempts) == [f"drill-{n}" for n in range(writers)]
        for attempt in attempts:
            answers = store.answers(attempt.id)
            assert [a.raw for a in answers] == [str(n) for n in range(50)]


KILLED = """
    import sys, time
    from pathlib import Path
    from trainer.store.database import Store
    store = Store(Path(sys.argv[1]))
    attempt_id = store.create_attempt("kv-basics", "h", None, {}, "0.1.0", "practice", False)
    for step in ("a", "b", "c"):
        store.record_answer(attempt_id, step, step.upper(), None, None, "correct", None, False,
                            0, 1.0, 60, False)
    print("ready", flush=True)
    time.sleep(120)
"""


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_answers_survive_sigkill_of_the_writer(tmp_path: Path) -> None:
    child = _spawn(KILLED, str(tmp_path / "db.sqlite3"))
    try:
        assert child.stdout is not None
        line = child.stdout.readline()
    finally:
        os.kill(child.pid, signal.SIGKILL)
        _, err = child.communicate(timeout=30)
    assert line.strip() == "ready", err
    assert child.returncode == -signal.SIGKILL
    with Store(tmp_path / "db.sqlite3") as store:
        (attempt,) = store.attempts()
        assert attempt.status == "incomplete"
        assert [a.raw for a in store.answers(attempt.id)] == ["A", "B", "C"]


def _truncated_database(path: Path) -> None:
    with Store(path) as store:
        attempt_id = _attempt(store)
        for number in range(300):
            _answer(store, attempt_id, f"s{number}", raw="x" * 200)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


@pytest.mark.parametrize("damage", ["random bytes", "bad pages", "truncated", "short header"])
def test_a_damaged_file_is_refused_and_left_untouched(tmp_path: Path, damage: str) -> None:
    path = tmp_path / "kvdrill.sqlite3"
    if damage == "random bytes":
        path.write_bytes(os.urandom(8192))
    elif damage == "bad pages":
        path.write_bytes(b"SQLite format 3\x00" + os.urandom(8192 - 16))
    elif damage == "truncated":
        _truncated_database(path)
    else:
        path.write_bytes(b"SQLite format 3\x00\x10\x00")
    before = path.read_bytes()
    with pytest.raises(StoreError, match="damaged or not a database") as raised:
        Store(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kvdrill.sqlite3"]


def test_a_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "kvdrill.sqlite3"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE photos (id INTEGER PRIMARY KEY, name TEXT)")
    conn.execute("INSERT INTO photos (name) VALUES ('cat.jpg')")
    conn.commit()
    conn.close()
    before = path.read_bytes()
    with pytest.raises(StoreError, match="is not a kvdrill database; move it away"):
        Store(path)
    assert path.read_bytes() == before


def test_a_database_from_a_newer_kvdrill_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "kvdrill.sqlite3"
    with Store(path) as store:
        _attempt(store)
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    before = path.read_bytes()
    newer = rf"newer kvdrill \(schema {SCHEMA_VERSION + 1}\); upgrade kvdrill"
    with pytest.raises(StoreError, match=newer):
        Store(path)
    assert path.read_bytes() == before


def test_a_folder_where_the_file_should_be_is_refused(tmp_path: Path) -> None:
    (tmp_path / "kvdrill.sqlite3").mkdir()
    with pytest.raises(StoreError, match=r"cannot write .*kvdrill.sqlite3 \(read-only\?\)"):
        Store(tmp_path / "kvdrill.sqlite3")


def test_a_file_where_the_folder_should_be_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "home").write_text("not a folder")
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "home"))
    # misuse (exit 2), said as such: KVDRILL_HOME names a file (issue 37, round 5)
    with pytest.raises(UsageError, match=r"KVDRILL_HOME names a file, not a folder"):
        Store()


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0,
                    reason="root ignores file permissions")
@pytest.mark.parametrize("read_only", ["file", "folder"])
def test_a_read_only_file_or_folder_is_refused(tmp_path: Path, read_only: str) -> None:
    path = tmp_path / "home" / "kvdrill.sqlite3"
    with Store(path) as store:
        _attempt(store)
    target = path if read_only == "file" else path.parent
    mode = target.stat().st_mode
    target.chmod(mode & ~0o222)
    try:
        with pytest.raises(StoreError, match=r"cannot write .* \(read-only\?\)"):
            Store(path)
    finally:
        target.chmod(mode)


def test_a_full_disk_is_a_store_error_and_keeps_earlier_answers(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as store:
        attempt_id = _attempt(store)
        _answer(store, attempt_id, "a")
        conn = store._conn
        assert conn is not None
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(f"PRAGMA max_page_count = {pages}")  # stands in for a full disk
        with pytest.raises(StoreError, match="disk is full"):
            _answer(store, attempt_id, "b", raw="x" * 100_000)
        assert [a.step_id for a in store.answers(attempt_id)] == ["a"]


def test_a_closed_store_raises_store_error(tmp_path: Path) -> None:
    store = Store(tmp_path / "db.sqlite3")
    store.close()
    store.close()
    with pytest.raises(StoreError, match="is closed"):
        store.attempts()


def test_a_missing_attempt_is_a_store_error(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as store, pytest.raises(
        StoreError, match="no attempt 42: see kvdrill history"
    ):
        store.attempt(42)


def test_the_latest_override_per_dimension_wins(tmp_path: Path) -> None:
    with Store(tmp_path / "db.sqlite3") as store:
        attempt_id = _attempt(store, mode="grade")
        store.set_override(attempt_id, "accuracy", 2.0, "unit slip")
        store.set_override(attempt_id, "reasoning", 3.0, "clear")
        store.set_override(attempt_id, "accuracy", 3.5, "second look: fine")
        assert store.overrides(attempt_id) == {
            "accuracy": (3.5, "second look: fine"),
            "reasoning": (3.0, "clear"),
        }


def test_a_store_being_created_by_another_process_is_not_taken_for_a_foreign_file(
        tmp_path: Path) -> None:
    # Another process commits the first migration between the identity check's reads (no
    # application id yet, then its tables): one snapshot must see the file empty or whole.
    path = tmp_path / "kvdrill.sqlite3"
    creator = sqlite3.connect(path, isolation_level=None)
    creator.execute("PRAGMA journal_mode = WAL")
    reader = sqlite3.connect(path, isolation_level=None)

    class Interleaved:
        in_transaction = property(lambda self: reader.in_transaction)

        def execute(self, sql: str) -> sqlite3.Cursor:
            cursor = reader.execute(sql)
            if sql == "PRAGMA application_id":
                cursor = _Fetched(cursor.fetchall())
                creator.execute("BEGIN IMMEDIATE")
                for statement in store_schema.MIGRATIONS[0]:
                    creator.execute(statement)
                creator.execute("PRAGMA user_version = 1")
                creator.execute("COMMIT")
            return cursor

    assert store_schema.check_ours(path, Interleaved()) == 0  # type: ignore[arg-type]
    creator.close()
    reader.close()


class _Fetched:
    def __init__(self, rows: list[Any]) -> None:
        self.rows = rows

    def fetchone(self) -> Any:
        return self.rows[0]
