"""The attempts database: every practice answer is committed the moment it is given.

One SQLite file in WAL mode (default: $KVDRILL_HOME/kvdrill.sqlite3, else the platform's user
data folder). Each write is its own short BEGIN IMMEDIATE … COMMIT transaction with
synchronous=FULL, so a crash, Ctrl-C, a closed terminal or SIGKILL loses nothing already
answered, and several terminals can practise at once (writers queue for up to 10 s).

A file is only ever written once it is known to be ours: its header is read first, then a
read-only connection checks the application id, the schema version and the table names. A
damaged, foreign or newer file is refused untouched (byte for byte). Commands that only read
open the file read-only (`Store(read_only=True)`), so a read-only file or folder can still be
listed and exported; a missing file then reads as an empty store and is not created. Every
database failure surfaces as a one-line StoreError naming the file and the fix; sqlite3
exceptions never escape.

Each attempt keeps the text of its drill file as it was at practice time (schema 2), so an
attempt can be shown and re-marked after its drill file is moved, changed or deleted.
"""

from __future__ import annotations

import errno
import json
import math
import os
import sqlite3
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

import platformdirs

from trainer.errors import StoreError

FILE_NAME = "kvdrill.sqlite3"
APPLICATION_ID = 0x6B766472  # "kvdr"
BUSY_TIMEOUT_MS = 10_000
SQLITE_MAGIC = b"SQLite format 3\x00"
MODES = ("practice", "exam", "grade")
STATUSES = ("incomplete", "complete")
OUR_TABLES = frozenset({"attempts", "answers", "overrides"})
MAX_ATTEMPT_ID = 2**63 - 1  # SQLite's largest INTEGER

# MIGRATIONS[i] takes a database from schema version i to i + 1, as one transaction. Each entry
# is a tuple of single statements (executescript would commit half-way).
MIGRATIONS: list[tuple[str, ...]] = [
    (
        f"PRAGMA application_id = {APPLICATION_ID}",
        """CREATE TABLE attempts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            drill_id TEXT NOT NULL,
            drill_hash TEXT NOT NULL,
            variant INTEGER,
            params TEXT NOT NULL,
            solver_version TEXT NOT NULL,
            mode TEXT NOT NULL CHECK (mode IN ('practice', 'exam', 'grade')),
            strict INTEGER NOT NULL CHECK (strict IN (0, 1)),
            started_at TEXT NOT NULL,
            finished_at TEXT,
            status TEXT NOT NULL DEFAULT 'incomplete'
                CHECK (status IN ('incomplete', 'complete'))
        )""",
        "CREATE INDEX attempts_by_drill ON attempts (drill_id, id)",
        """CREATE TABLE answers (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            attempt_id INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
            step_id TEXT NOT NULL,
            revision INTEGER NOT NULL CHECK (revision >= 1),
            raw TEXT,
            parsed_value TEXT,
            parsed_unit TEXT,
            verdict TEXT NOT NULL,
            misconception TEXT,
            carried_forward INTEGER NOT NULL CHECK (carried_forward IN (0, 1)),
            hints INTEGER NOT NULL CHECK (hints >= 0),
            seconds REAL NOT NULL CHECK (seconds >= 0),
            budget_seconds INTEGER NOT NULL,
            overtime INTEGER NOT NULL CHECK (overtime IN (0, 1)),
            answered_at TEXT NOT NULL,
            UNIQUE (attempt_id, step_id, revision)
        )""",
        """CREATE TABLE overrides (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            attempt_id INTEGER NOT NULL REFERENCES attempts (id) ON DELETE CASCADE,
            dimension TEXT NOT NULL,
            score REAL NOT NULL,
            note TEXT NOT NULL,
            at TEXT NOT NULL
        )""",
        "CREATE INDEX overrides_by_attempt ON overrides (attempt_id, dimension, id)",
    ),
    (
        # The drill file's text at practice time (drill_hash is its SHA-256); NULL for attempts
        # recorded before schema 2.
        "ALTER TABLE attempts ADD COLUMN drill_text TEXT",
    ),
]
SCHEMA_VERSION = len(MIGRATIONS)


def default_path() -> Path:
    """$KVDRILL_HOME/kvdrill.sqlite3 when KVDRILL_HOME is set, else the user data folder's."""
    home = os.environ.get("KVDRILL_HOME")
    if home:
        return Path(home).expanduser() / FILE_NAME
    return platformdirs.user_data_path("kvdrill") / FILE_NAME


@dataclass(frozen=True)
class AttemptRow:
    id: int
    drill_id: str
    drill_hash: str
    variant: int | None
    params: dict[str, Any]
    solver_version: str
    mode: str
    strict: bool
    started_at: str
    finished_at: str | None
    status: str
    drill_text: str | None = None  # the drill file as practised; None before schema 2


@dataclass(frozen=True)
class AnswerRow:
    attempt_id: int
    step_id: str
    revision: int
    raw: str | None
    parsed_value: str | None
    parsed_unit: str | None
    verdict: str
    misconception: str | None
    carried_forward: bool
    hints: int
    seconds: float
    budget_seconds: int
    overtime: bool
    answered_at: str


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _error(path: Path, exc: BaseException) -> StoreError:
    """The one-line StoreError for a sqlite3 or OS failure on `path`."""
    text = _one_line(str(exc))
    if isinstance(exc, OSError):
        detail = _one_line(exc.strerror or text)
        if exc.filename:
            detail = f"{exc.filename}: {detail}"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return StoreError(f"cannot write {path}: the disk is full; free some space and retry")
        return StoreError(
            f"cannot write {path} (read-only?): {detail}; make it and its folder writable, "
            "or set KVDRILL_HOME to another folder"
        )
    name = str(getattr(exc, "sqlite_errorname", ""))
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return StoreError(f"cannot write {path}: the disk is full; free some space and retry")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "malformed" in text:
        return _damaged(path, text)
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return StoreError(
            f"cannot write {path} (read-only?): {text}; make it and its folder writable, "
            "or set KVDRILL_HOME to another folder"
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(
            f"{path} stayed locked by another program for {BUSY_TIMEOUT_MS // 1000} s: "
            "close other kvdrill sessions and retry"
        )
    if name.startswith("SQLITE_IOERR"):
        return StoreError(
            f"cannot read or write {path} ({text}); check the disk, or set KVDRILL_HOME to "
            "another folder"
        )
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"{path} refused a row ({text}); this is a kvdrill bug: report it")
    return StoreError(
        f"database error on {path} ({text}); if it persists, move the file away or set "
        "KVDRILL_HOME to another folder"
    )


def _read_error(path: Path, exc: BaseException) -> StoreError:
    """_error for a read-only open: a permission problem is about reading, not writing."""
    error = _error(path, exc)
    if str(error).startswith(f"cannot write {path} (read-only?)"):
        detail = _one_line(str(exc))
        if isinstance(exc, OSError):
            detail = _one_line(exc.strerror or detail)
        return StoreError(f"cannot read {path}: {detail}; make it readable or set "
                          "KVDRILL_HOME to another folder")
    return error


def _storable_id(attempt_id: int) -> bool:
    return 1 <= attempt_id <= MAX_ATTEMPT_ID


def _no_attempt(attempt_id: object) -> StoreError:
    return StoreError(f"no attempt {attempt_id}: see kvdrill history")


def _empty_store() -> sqlite3.Connection:
    """An in-memory store with the current schema and no attempts (read_only, no file)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    for migration in MIGRATIONS:
        for statement in migration:
            conn.execute(statement)
    return conn


def _damaged(path: Path, why: str) -> StoreError:
    return StoreError(
        f"{path} is damaged or not a database ({why}); move it away to start afresh "
        "(or restore a backup)"
    )


def _foreign(path: Path) -> StoreError:
    return StoreError(f"{path} is not a kvdrill database; move it away or set KVDRILL_HOME")


def _newer(path: Path, version: int) -> StoreError:
    return StoreError(
        f"{path} was written by a newer kvdrill (schema {version}); upgrade kvdrill"
    )


def _check_ours(path: Path, conn: sqlite3.Connection) -> int:
    """Refuse a foreign or newer database (reading only); return its schema version.

    Ours is a file stamped with our application id whose tables are ours, or an empty one (no
    tables, version 0: a process stopped between creating the file and its first commit). The
    first migration sets the id in the same transaction as it creates the tables, so a file
    with tables and no id, even tables named like ours, is someone else's."""
    # One snapshot for the three reads: read one at a time, a process creating the file could
    # commit between them (no id yet, then its tables), and the file would look foreign.
    own = not conn.in_transaction
    if own:
        conn.execute("BEGIN")
    try:
        app_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
        version = int(conn.execute("PRAGMA user_version").fetchone()[0])
        tables = {
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(row[0]).startswith("sqlite_")
        }
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")
    if app_id == 0 and (tables or version != 0):
        raise _foreign(path)
    if app_id not in (0, APPLICATION_ID):
        raise _foreign(path)
    if version > SCHEMA_VERSION:
        raise _newer(path, version)
    if version >= 1 and not tables >= OUR_TABLES:
        raise _damaged(path, f"tables missing: {', '.join(sorted(OUR_TABLES - tables))}")
    return version


def _enable_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL; return the journal mode in force. The switch needs an exclusive lock and
    SQLite does not wait for it (no busy handler), so retry while another process creating the
    same file holds it, up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            busy = str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def _text(value: Any) -> str | None:
    """A text column as text: bytes (a file edited by hand) decoded with U+FFFD, never raw."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


def _check_header(path: Path) -> None:
    """Refuse an existing file that is not SQLite at all, before SQLite ever touches it: first
    anything but a regular file (a FIFO would make every open wait for a writer)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise StoreError(f"{path} is not a regular file (a pipe, device or socket is in the "
                         "way); move it away or set KVDRILL_HOME to another folder")
    with path.open("rb") as file:
        header = file.read(100)
    if header and (len(header) < 100 or not header.startswith(SQLITE_MAGIC)):
        raise _damaged(path, "no SQLite header")


def _read_only_uri(path: Path, immutable: bool = False) -> str:
    return f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")


def _inspect_read_only(path: Path) -> None:
    """Check an existing file through a read-only connection, which cannot modify it (SQLite
    may create empty -wal/-shm companions; for a refused file they are removed again)."""
    companions = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    existed = [companion.exists() for companion in companions]
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return  # the read-write open below reports it
    try:
        _check_ours(path, conn)
    except StoreError:
        conn.close()
        _remove_new_companions(companions, existed)
        raise
    except sqlite3.Error as exc:
        name = str(getattr(exc, "sqlite_errorname", ""))
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "malformed" in str(exc):
            conn.close()
            _remove_new_companions(companions, existed)
            raise _damaged(path, _one_line(str(exc))) from exc
        # Anything else (a hot journal a read-only connection may not roll back, a locked
        # file…) is left to the read-write connection, which checks again before writing.
    finally:
        conn.close()


def _remove_new_companions(companions: list[Path], existed: list[bool]) -> None:
    """Delete the -wal/-shm files our read-only look created next to a refused file, if the
    -wal is still empty (nothing can be lost)."""
    wal = companions[0]
    with suppress(OSError):
        if existed[0] or wal.stat().st_size != 0:
            return
    for companion, was_there in zip(companions, existed, strict=True):
        if not was_there:
            with suppress(OSError):
                companion.unlink()


class Store:
    """The attempts database. Use as a context manager, or call close(). One Store per thread;
    do not carry one across fork()."""

    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        """Open (creating and upgrading it if need be) the database at `path`, default
        default_path(). With read_only, nothing is created, upgraded or written: the file is
        opened read-only, and a missing file reads as an empty store."""
        self.path = Path(path) if path is not None else default_path()
        self.read_only = read_only
        self._conn: sqlite3.Connection | None = None
        if read_only:
            self._conn = self._open_read_only()
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            if self.path.is_dir():
                raise StoreError(
                    f"cannot write {self.path} (read-only?): a folder is in the way; move it "
                    "away or set KVDRILL_HOME to another folder"
                )
            for target in (self.path.parent, self.path):
                if target.exists() and not os.access(target, os.W_OK):
                    raise StoreError(
                        f"cannot write {self.path} (read-only?): {target} is not writable; "
                        "make it writable or set KVDRILL_HOME to another folder"
                    )
            if self.path.exists():
                _check_header(self.path)
                _inspect_read_only(self.path)
        except OSError as exc:
            raise _error(self.path, exc) from exc
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            _check_ours(self.path, conn)  # again, before anything is written
            mode = _enable_wal(conn)
            if mode.lower() != "wal":
                raise StoreError(
                    f"{self.path} cannot use WAL journaling (journal mode {mode}); set "
                    "KVDRILL_HOME to a folder on a local disk"
                )
            conn.execute("PRAGMA synchronous = FULL")
            conn.execute("PRAGMA foreign_keys = ON")
            self._conn = conn
            self._migrate()
        except BaseException as exc:
            self._conn = None
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.Error):
                raise _error(self.path, exc) from exc
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A read-only connection to the file; an in-memory empty store when there is no
        file, or it has no tables yet (a process stopped right after creating it)."""
        try:
            if not self.path.exists():
                return _empty_store()
            if self.path.is_dir():
                raise StoreError(
                    f"cannot read {self.path}: a folder is in the way; move it away or set "
                    "KVDRILL_HOME to another folder"
                )
            _check_header(self.path)
        except OSError as exc:
            raise _read_error(self.path, exc) from exc
        companions = [self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")]
        existed = [companion.exists() for companion in companions]
        last: sqlite3.Error | None = None
        # A WAL file in a folder we may not write needs its -shm to exist; failing that, the
        # file is read as immutable (nobody can be writing where we cannot).
        for immutable in (False, True):
            conn: sqlite3.Connection | None = None
            try:
                conn = sqlite3.connect(_read_only_uri(self.path, immutable), uri=True,
                                       timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
                conn.row_factory = sqlite3.Row
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                version = _check_ours(self.path, conn)
            except StoreError:
                if conn is not None:
                    conn.close()
                _remove_new_companions(companions, existed)
                raise
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                name = str(getattr(exc, "sqlite_errorname", ""))
                if name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")) and not immutable:
                    last = exc
                    continue
                _remove_new_companions(companions, existed)
                raise _read_error(self.path, exc) from exc
            if version == 0:
                conn.close()
                return _empty_store()
            return conn
        assert last is not None
        raise _read_error(self.path, last) from last

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent). Everything is already committed."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:
                raise _error(self.path, exc) from exc

    def __enter__(self) -> Store:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    @contextmanager
    def _guard(self) -> Iterator[sqlite3.Connection]:
        """The open connection; sqlite3 errors inside become StoreError."""
        if self._conn is None:
            raise StoreError(f"{self.path} is closed: open a new Store")
        try:
            yield self._conn
        except sqlite3.Error as exc:
            raise _error(self.path, exc) from exc

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One short write transaction, committed before the block's caller continues."""
        if self.read_only:
            raise StoreError(f"{self.path} was opened read-only: this is a kvdrill bug")
        with self._guard() as conn:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    with suppress(sqlite3.Error):  # the original error is the one to report
                        conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> None:
        with self._write() as conn:
            version = _check_ours(self.path, conn)  # re-read under the write lock
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")

    @staticmethod
    def _require_attempt(conn: sqlite3.Connection, attempt_id: int) -> None:
        if not _storable_id(attempt_id) or conn.execute(
            "SELECT 1 FROM attempts WHERE id = ?", (attempt_id,)
        ).fetchone() is None:
            raise _no_attempt(attempt_id)

    # -- attempts ---------------------------------------------------------------------------

    def create_attempt(
        self,
        drill_id: str,
        drill_hash: str,
        variant: int | None,
        params: dict[str, Any],
        solver_version: str,
        mode: str,
        strict: bool,
        drill_text: str | None = None,
    ) -> int:
        """A new incomplete attempt, committed; returns its id. `drill_text` is the drill
        file's text (whose SHA-256 is `drill_hash`), kept so the attempt can be shown and
        re-marked when the file is gone or changed."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        try:
            params_json = json.dumps(params, sort_keys=True, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"params must be plain JSON values: {exc}") from exc
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version,"
                " mode, strict, started_at, status, drill_text)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (drill_id, drill_hash, variant, params_json, solver_version, mode,
                 int(bool(strict)), _now(), "incomplete", drill_text),
            )
            attempt_id = cursor.lastrowid
        assert attempt_id is not None
        return attempt_id

    def finish(self, attempt_id: int, status: str = "complete") -> None:
        """Stamp the attempt's end time and status, committed."""
        if status not in STATUSES:
            raise ValueError(f"status {status!r} is not one of {', '.join(STATUSES)}")
        with self._write() as conn:
            self._require_attempt(conn, attempt_id)
            conn.execute(
                "UPDATE attempts SET finished_at = ?, status = ? WHERE id = ?",
                (_now(), status, attempt_id),
            )

    def attempt(self, attempt_id: int) -> AttemptRow:
        if not _storable_id(attempt_id):
            raise _no_attempt(attempt_id)
        with self._guard() as conn:
            row = conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        if row is None:
            raise _no_attempt(attempt_id)
        return self._attempt_row(row)

    def attempts(self, drill_id: str | None = None) -> list[AttemptRow]:
        """All attempts (or one drill's), newest first."""
        with self._guard() as conn:
            if drill_id is None:
                rows = conn.execute("SELECT * FROM attempts ORDER BY id DESC").fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM attempts WHERE drill_id = ? ORDER BY id DESC", (drill_id,)
                ).fetchall()
        return [self._attempt_row(row) for row in rows]

    def _attempt_row(self, row: sqlite3.Row) -> AttemptRow:
        try:
            return self._attempt_from(row)
        except (IndexError, KeyError, TypeError, ValueError) as exc:
            raise _damaged(self.path, f"an attempt row is not kvdrill's ({exc})") from None

    def _attempt_from(self, row: sqlite3.Row) -> AttemptRow:
        try:
            params = json.loads(row["params"])
        except ValueError as exc:
            raise _damaged(self.path, f"attempt {row['id']} has unreadable params") from exc
        return AttemptRow(
            id=int(row["id"]),
            drill_id=str(row["drill_id"]),
            drill_hash=str(row["drill_hash"]),
            variant=None if row["variant"] is None else int(row["variant"]),
            params=params,
            solver_version=str(row["solver_version"]),
            mode=str(row["mode"]),
            strict=bool(row["strict"]),
            started_at=str(row["started_at"]),
            finished_at=None if row["finished_at"] is None else str(row["finished_at"]),
            status=str(row["status"]),
            # absent from a schema-1 file read read-only (it is upgraded on the next write)
            drill_text=_text(row["drill_text"]) if "drill_text" in row.keys() else None,  # noqa: SIM118
        )

    # -- answers ----------------------------------------------------------------------------

    def record_answer(
        self,
        attempt_id: int,
        step_id: str,
        raw: str | None,
        parsed_value: str | None,
        parsed_unit: str | None,
        verdict: str,
        misconception: str | None,
        carried_forward: bool,
        hints: int,
        seconds: float,
        budget_seconds: int,
        overtime: bool,
    ) -> AnswerRow:
        """Append the next revision of a step's answer; committed before this returns."""
        if hints < 0:
            raise ValueError(f"hints must be 0 or more, not {hints}")
        if not math.isfinite(seconds) or seconds < 0:
            raise ValueError(f"seconds must be a finite number ≥ 0, not {seconds}")
        with self._write() as conn:
            self._require_attempt(conn, attempt_id)
            revision = int(
                conn.execute(
                    "SELECT COALESCE(MAX(revision), 0) + 1 FROM answers"
                    " WHERE attempt_id = ? AND step_id = ?",
                    (attempt_id, step_id),
                ).fetchone()[0]
            )
            row = AnswerRow(
                attempt_id=attempt_id,
                step_id=step_id,
                revision=revision,
                raw=raw,
                parsed_value=parsed_value,
                parsed_unit=parsed_unit,
                verdict=verdict,
                misconception=misconception,
                carried_forward=bool(carried_forward),
                hints=int(hints),
                seconds=float(seconds),
                budget_seconds=int(budget_seconds),
                overtime=bool(overtime),
                answered_at=_now(),
            )
            conn.execute(
                "INSERT INTO answers (attempt_id, step_id, revision, raw, parsed_value,"
                " parsed_unit, verdict, misconception, carried_forward, hints, seconds,"
                " budget_seconds, overtime, answered_at)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (row.attempt_id, row.step_id, row.revision, row.raw, row.parsed_value,
                 row.parsed_unit, row.verdict, row.misconception, int(row.carried_forward),
                 row.hints, row.seconds, row.budget_seconds, int(row.overtime),
                 row.answered_at),
            )
        return row

    def answers(self, attempt_id: int, latest_only: bool = True) -> list[AnswerRow]:
        """The attempt's answers in the order given. With latest_only, one row per step (its
        latest revision), steps ordered by when each was first answered."""
        with self._guard() as conn:
            self._require_attempt(conn, attempt_id)
            if latest_only:
                rows = conn.execute(
                    "SELECT a.* FROM answers AS a JOIN ("
                    "  SELECT step_id, MAX(revision) AS latest, MIN(id) AS first"
                    "  FROM answers WHERE attempt_id = ? GROUP BY step_id"
                    ") AS s ON a.step_id = s.step_id AND a.revision = s.latest"
                    " WHERE a.attempt_id = ? ORDER BY s.first",
                    (attempt_id, attempt_id),
                ).fetchall()
            else:
                rows = conn.execute(
                    "SELECT * FROM answers WHERE attempt_id = ? ORDER BY id", (attempt_id,)
                ).fetchall()
        try:
            return [self._answer_from(row) for row in rows]
        except (IndexError, KeyError, TypeError, ValueError) as exc:
            raise _damaged(self.path, f"an answer row is not kvdrill's ({exc})") from None

    @staticmethod
    def _answer_from(row: sqlite3.Row) -> AnswerRow:
        return AnswerRow(
            attempt_id=int(row["attempt_id"]),
            step_id=str(row["step_id"]),
            revision=int(row["revision"]),
            raw=_text(row["raw"]),
            parsed_value=_text(row["parsed_value"]),
            parsed_unit=_text(row["parsed_unit"]),
            verdict=str(row["verdict"]),
            misconception=_text(row["misconception"]),
            carried_forward=bool(row["carried_forward"]),
            hints=int(row["hints"]),
            seconds=float(row["seconds"]),
            budget_seconds=int(row["budget_seconds"]),
            overtime=bool(row["overtime"]),
            answered_at=str(row["answered_at"]),
        )

    # -- reviewer overrides -----------------------------------------------------------------

    def set_override(self, attempt_id: int, dimension: str, score: float, note: str) -> None:
        """Record a reviewer's score for one rubric dimension; the latest per dimension wins."""
        if not math.isfinite(score):
            raise ValueError(f"score must be a finite number, not {score}")
        with self._write() as conn:
            self._require_attempt(conn, attempt_id)
            conn.execute(
                "INSERT INTO overrides (attempt_id, dimension, score, note, at)"
                " VALUES (?, ?, ?, ?, ?)",
                (attempt_id, dimension, float(score), note, _now()),
            )

    def overrides(self, attempt_id: int) -> dict[str, tuple[float, str]]:
        """dimension → (score, note), the latest override of each dimension."""
        with self._guard() as conn:
            self._require_attempt(conn, attempt_id)
            rows = conn.execute(
                "SELECT dimension, score, note FROM overrides WHERE attempt_id = ?"
                " ORDER BY dimension, id",
                (attempt_id,),
            ).fetchall()
        latest: dict[str, tuple[float, str]] = {}
        for row in rows:
            latest[str(row["dimension"])] = (float(row["score"]), str(row["note"]))
        return latest
