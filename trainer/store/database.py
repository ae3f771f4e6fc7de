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

import json
import math
import os
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any

from trainer.errors import StoreError
from trainer.records import record
from trainer.store.moments import utc_text
from trainer.store.schema import (
    APPLICATION_ID,
    MIGRATIONS,
    SCHEMA_VERSION,
    already_applied,
    check_ours,
    empty_store,
)
from trainer.store.sqlite_file import (
    BUSY_TIMEOUT_MS,
    check_header,
    enable_wal,
    inspect_read_only,
    read_only_uri,
    read_store_error,
    remove_new_companions,
    store_error,
)

MAX_OVERRIDE_SCORE = 10  # the largest max a rubric dimension may have (schema)
FILE_NAME = "kvdrill.sqlite3"
MODES = ("practice", "exam", "grade")
STATUSES = ("incomplete", "complete")
MAX_ATTEMPT_ID = 2**63 - 1  # SQLite's largest INTEGER


def default_path() -> Path:
    """$KVDRILL_HOME/kvdrill.sqlite3 when KVDRILL_HOME is set, else the user data folder's."""
    home = os.environ.get("KVDRILL_HOME")
    if home:
        folder = Path(home).expanduser()
        _check_home(folder)
        return folder / FILE_NAME
    import platformdirs  # not at import: a set KVDRILL_HOME never needs it

    return platformdirs.user_data_path("kvdrill") / FILE_NAME


def _check_home(folder: Path) -> None:
    """KVDRILL_HOME must name a folder, or a path that can become one: a file there (or in the
    way above it) is misuse, said, not read as an empty store."""
    from trainer.errors import UsageError

    for place in (folder, *folder.parents):
        try:
            if not place.exists() and not place.is_symlink():
                continue
            if place.is_dir():
                return
        except (OSError, ValueError):
            return  # the open that follows names the problem
        shown = str(folder) if place == folder else f"{folder} ({place} is a file)"
        raise UsageError(f"KVDRILL_HOME names a file, not a folder: {shown}; set KVDRILL_HOME "
                         "to a folder (it is made if missing), or unset it")


class DamagedAttempt(StoreError):
    """One attempt row that cannot be read (its params or target edited into something that is
    not JSON, a field of the wrong kind): that attempt is named, the rest of the store works."""

    def __init__(self, attempt_id: int | None, why: str) -> None:
        self.attempt_id, self.why = attempt_id, why
        name = f"attempt {attempt_id}" if attempt_id is not None else "an attempt"
        super().__init__(f"{name} is damaged ({why}): it cannot be shown, reviewed or "
                         "exported; the store's other attempts are unaffected")


# The attempts left out of lists because their rows are damaged, by id, for the command to say
# ("attempt 2 is damaged (unreadable params): left out"); cleared as each command starts.
DAMAGED: dict[int | None, str] = {}


# Skill cards left out because their counts are damaged (negative, absurd, more wrong than
# steps), by skill, for the command to say; cleared as each command starts.
DAMAGED_SKILLS: dict[str, str] = {}
MAX_COUNT = 10**9  # steps rated for one skill: far past any real store


def _answer_damage(row: Any, exc: BaseException, step: Any = None) -> str:
    """Why an answer row cannot be read, naming its step: "its answer to shape-kv-heads is
    not kvdrill's (could not convert string to float: 'abc')"."""
    try:
        step = row["step_id"] if step is None else step
    except (IndexError, KeyError):
        step = None
    which = f"its answer to {str(step)[:64]}" if isinstance(step, str) else "an answer"
    return f"{which} is not kvdrill's ({str(exc)[:100]})"


def _count(value: Any) -> int:
    """A stored count (reviews, steps, wrong): a whole number from 0 to MAX_COUNT, else
    ValueError saying what it is."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"a count of {str(value)[:30]!r} is not a whole number")
    if not 0 <= value <= MAX_COUNT:
        raise ValueError(f"a count of {value:,} is outside 0 to {MAX_COUNT:,}")
    return value


def _row_id(row: sqlite3.Row) -> int | None:
    try:
        return int(row["id"])
    except (IndexError, KeyError, TypeError, ValueError):
        return None


@record
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
    # the model and GPU the drill was re-targeted at (--model, --gpu); None: as written
    target: dict[str, Any] | None = None


@record
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


@record
class ScoreRow:
    """An attempt's kept marks: `summary` (what history shows: scores, share, level, each
    step's verdict) as computed under `stamp` when its newest answer row was `answers_seen`."""
    attempt_id: int
    stamp: str
    answers_seen: int
    summary: dict[str, Any]


@record
class ScheduleRow:
    """A drill's spaced-repetition card (FSRS's own dict) and the last rating put into it."""
    drill_id: str
    card: dict[str, Any]
    reviews: int
    last_share: float | None
    last_rating: str | None


@record
class SkillRow:
    """A skill's spaced-repetition card (FSRS's own dict): how many attempts rated it, over how
    many steps, how many of those were wrong, and the last rating, mistake and drill."""
    skill: str
    card: dict[str, Any]
    reviews: int
    steps: int
    wrong: int
    last_rating: str | None
    last_mistake: str | None
    last_drill: str | None


@record
class ImportRow:
    """An attempt taken in by `kvdrill import`: whom the file names, where it came from, and
    what it contradicts (tampering findings, {step, field, says})."""
    attempt_id: int
    content_sha: str
    candidate: str
    source: str
    flags: list[dict[str, Any]]


def _chunks(ids: list[int], size: int = 500) -> Iterator[list[int]]:
    for start in range(0, len(ids), size):
        yield ids[start:start + size]


def _for_ids(conn: sqlite3.Connection, sql: str, ids: list[int]) -> Iterator[sqlite3.Row]:
    """The rows of `sql` for many attempt ids, a chunk of ids at a time (SQLite bounds the
    parameters of one statement); `{ids}` in `sql` stands for the chunk's placeholders."""
    for chunk in _chunks(ids):
        yield from conn.execute(sql.format(ids=", ".join("?" * len(chunk))), chunk)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds")


def _storable_id(attempt_id: int) -> bool:
    return 1 <= attempt_id <= MAX_ATTEMPT_ID


def _no_attempt(attempt_id: object) -> StoreError:
    return StoreError(f"no attempt {attempt_id}: see kvdrill history")


def _no_number(name: str) -> Any:
    """json.loads' reading of NaN, Infinity and -Infinity in a stored JSON text: refused, so a
    row edited by hand is unreadable (made again, or said), never NaN carried into output."""
    raise ValueError(f"{name} is not a number JSON allows")


def _none(name: str) -> None:
    """NaN or Infinity edited into an attempt's own JSON (its givens, its target): read as no
    value, which the attempt's readers already refuse or show as missing."""
    return None


MAX_SECONDS = 7 * 24 * 3600  # a week on one step: a longer time read back is cut to it
MAX_HINTS = 1000


def _seconds(value: Any) -> float:
    """A stored answer time as a finite number of seconds: NaN or below zero (edited by hand)
    reads as 0, above a week (Infinity included) as a week, so no sum or ratio of them is
    ever NaN or Infinity."""
    seconds = float(value)
    if not seconds >= 0:  # NaN too
        return 0.0
    return min(seconds, float(MAX_SECONDS))


def _whole(value: Any, cap: int) -> int:
    """A stored count (hints, a budget in seconds) as a whole number from 0 to `cap`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return max(0, min(value, cap))
    number = float(value)
    if not number >= 0:
        return 0
    return int(min(number, float(cap)))


def _stamp(value: Any) -> str | None:
    """A stored date and time as UTC ISO text (moments.utc); one that is not a usable date
    is kept as its text, and whoever needs the moment repairs it or names the attempt."""
    if value is None:
        return None
    return utc_text(value) or (_text(value) or "")


def _text(value: Any) -> str | None:
    """A text column as text: bytes (a file edited by hand) decoded with U+FFFD, never raw."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class Store:
    """The attempts database. Use as a context manager, or call close(). One Store per thread;
    do not carry one across fork()."""

    def __init__(self, path: Path | None = None, *, read_only: bool = False) -> None:
        """Open (creating and upgrading it if need be) the database at `path`, default
        default_path(). With read_only, nothing is created, upgraded or written: the file is
        opened read-only, and a missing file reads as an empty store."""
        self.path = Path(path) if path is not None else default_path()
        self.read_only = read_only
        self.version = SCHEMA_VERSION  # the file's schema (older only when read read-only)
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
                check_header(self.path)
                inspect_read_only(self.path)
        except OSError as exc:
            raise store_error(self.path, exc) from exc
        conn: sqlite3.Connection | None = None
        try:
            conn = sqlite3.connect(
                self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
            )
            conn.row_factory = sqlite3.Row
            conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            check_ours(self.path, conn)  # again, before anything is written
            mode = enable_wal(conn)
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
                raise store_error(self.path, exc) from exc
            raise

    def _open_read_only(self) -> sqlite3.Connection:
        """A read-only connection to the file; an in-memory empty store when there is no
        file, or it has no tables yet (a process stopped right after creating it)."""
        try:
            if not self.path.exists():
                return empty_store()
            if self.path.is_dir():
                raise StoreError(
                    f"cannot read {self.path}: a folder is in the way; move it away or set "
                    "KVDRILL_HOME to another folder"
                )
            check_header(self.path)
        except OSError as exc:
            raise read_store_error(self.path, exc) from exc
        companions = [self.path.with_name(self.path.name + s) for s in ("-wal", "-shm")]
        existed = [companion.exists() for companion in companions]
        last: sqlite3.Error | None = None
        # A WAL file in a folder we may not write needs its -shm to exist; failing that, the
        # file is read as immutable (nobody can be writing where we cannot).
        for immutable in (False, True):
            conn: sqlite3.Connection | None = None
            try:
                conn = sqlite3.connect(read_only_uri(self.path, immutable), uri=True,
                                       timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
                conn.row_factory = sqlite3.Row
                conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
                version = check_ours(self.path, conn)
            except StoreError:
                if conn is not None:
                    conn.close()
                remove_new_companions(companions, existed)
                raise
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                name = str(getattr(exc, "sqlite_errorname", ""))
                if name.startswith(("SQLITE_CANTOPEN", "SQLITE_READONLY")) and not immutable:
                    last = exc
                    continue
                remove_new_companions(companions, existed)
                raise read_store_error(self.path, exc) from exc
            if version == 0:
                conn.close()
                return empty_store()
            self.version = version
            return conn
        assert last is not None
        raise read_store_error(self.path, last) from last

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        """Close the connection (idempotent). Everything is already committed."""
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                conn.close()
            except sqlite3.Error as exc:
                raise store_error(self.path, exc) from exc

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
            raise store_error(self.path, exc) from exc

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
            version = check_ours(self.path, conn)  # re-read under the write lock
            for number in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[number]:
                    if not already_applied(conn, statement):
                        conn.execute(statement)
                conn.execute(f"PRAGMA user_version = {number + 1}")
            # a store recognised by its tables (restored from a dump, or its stamp edited)
            # gets its stamp back
            if int(conn.execute("PRAGMA user_version").fetchone()[0]) != SCHEMA_VERSION:
                conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            if int(conn.execute("PRAGMA application_id").fetchone()[0]) != APPLICATION_ID:
                conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")

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
        target: dict[str, Any] | None = None,
    ) -> int:
        """A new incomplete attempt, committed; returns its id. `drill_text` is the drill
        file's text (whose SHA-256 is `drill_hash`), kept so the attempt can be shown and
        re-marked when the file is gone or changed; `target` the model and GPU the drill was
        re-targeted at."""
        if mode not in MODES:
            raise ValueError(f"mode {mode!r} is not one of {', '.join(MODES)}")
        try:
            params_json = json.dumps(params, sort_keys=True, allow_nan=False)
            target_json = None if target is None else json.dumps(target, sort_keys=True,
                                                                 allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"params must be plain JSON values: {exc}") from exc
        with self._write() as conn:
            cursor = conn.execute(
                "INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version,"
                " mode, strict, started_at, status, drill_text, target)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (drill_id, drill_hash, variant, params_json, solver_version, mode,
                 int(bool(strict)), _now(), "incomplete", drill_text, target_json),
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

    def discard_unanswered(self, attempt_id: int) -> bool:
        """Delete an attempt that has no answer at all (a session whose input ended before its
        first answer); True when it was deleted. An attempt with any answer is kept."""
        with self._write() as conn:
            deleted = conn.execute(
                "DELETE FROM attempts WHERE id = ? AND status = 'incomplete' AND NOT EXISTS "
                "(SELECT 1 FROM answers WHERE attempt_id = ?)", (attempt_id, attempt_id))
            return deleted.rowcount == 1

    def attempt(self, attempt_id: int) -> AttemptRow:
        if not _storable_id(attempt_id):
            raise _no_attempt(attempt_id)
        with self._guard() as conn:
            row = conn.execute("SELECT * FROM attempts WHERE id = ?", (attempt_id,)).fetchone()
        if row is None:
            raise _no_attempt(attempt_id)
        return self._attempt_row(row)

    def attempts(self, drill_id: str | None = None, *, limit: int | None = None,
                 with_text: bool = True) -> list[AttemptRow]:
        """All attempts (or one drill's), newest first; with `limit`, only that many. Without
        `with_text`, each row's drill_text is left out (None), which keeps long lists small."""
        return list(self.iter_attempts(drill_id, limit=limit, with_text=with_text))

    def iter_attempts(self, drill_id: str | None = None, *, limit: int | None = None,
                      with_text: bool = False, batch: int = 500) -> Iterator[AttemptRow]:
        """Attempts newest first, read `batch` rows at a time, so a long history is never
        held in memory at once."""
        columns = "*" if with_text else self._list_columns()
        remaining = limit
        before: int | None = None
        while remaining is None or remaining > 0:
            size = batch if remaining is None else min(batch, remaining)
            where: list[str] = []
            args: list[Any] = []
            if drill_id is not None:
                where.append("drill_id = ?")
                args.append(drill_id)
            if before is not None:
                where.append("id < ?")
                args.append(before)
            clause = f" WHERE {' AND '.join(where)}" if where else ""
            with self._guard() as conn:
                rows = conn.execute(
                    f"SELECT {columns} FROM attempts{clause} ORDER BY id DESC LIMIT ?",
                    (*args, size),
                ).fetchall()
            if not rows:
                return
            yield from self._readable(rows)
            before = int(rows[-1]["id"])
            if remaining is not None:
                remaining -= len(rows)
            if len(rows) < size:
                return

    _LIST_COLUMNS = ("id", "drill_id", "drill_hash", "variant", "params", "solver_version",
                     "mode", "strict", "started_at", "finished_at", "status")

    def _list_columns(self, prefix: str = "") -> str:
        """The columns a list of attempts reads (not the drill's text); the re-target where
        the file's schema has it."""
        names = (*self._LIST_COLUMNS, "target") if self.version >= 5 else self._LIST_COLUMNS
        return ", ".join(prefix + name for name in names)

    def own_attempts_started_at(self, drill_id: str, started_at: str) -> list[AttemptRow]:
        """The attempts of a drill practised here (not imported) that started at that moment:
        the only ones an export of this store can be. One indexed query, however many attempts
        were imported with the same start."""
        not_imported = "" if self.version < 4 else \
            " AND NOT EXISTS (SELECT 1 FROM imports AS i WHERE i.attempt_id = a.id)"
        with self._guard() as conn:
            rows = conn.execute(
                f"SELECT {self._list_columns('a.')} FROM attempts AS a"
                f" WHERE a.drill_id = ? AND a.started_at = ?{not_imported} ORDER BY a.id",
                (drill_id, started_at)).fetchall()
        return list(self._readable(rows))

    def own_attempts_answered_in(self, drill_id: str, variant: int | None,
                                 seconds: float) -> list[AttemptRow]:
        """The attempts of a drill and variant practised here (not imported) with an answer
        that took exactly `seconds`: those an export of this store, its start moved, could be
        (a time measured to the microsecond all but names its attempt)."""
        not_imported = "" if self.version < 4 else \
            " AND NOT EXISTS (SELECT 1 FROM imports AS i WHERE i.attempt_id = a.id)"
        with self._guard() as conn:
            rows = conn.execute(
                f"SELECT {self._list_columns('a.')} FROM attempts AS a"
                f" WHERE a.drill_id = ? AND a.variant IS ?{not_imported} AND EXISTS"
                " (SELECT 1 FROM answers AS s WHERE s.attempt_id = a.id AND s.seconds = ?)"
                " ORDER BY a.id", (drill_id, variant, seconds)).fetchall()
        return list(self._readable(rows))

    def count_attempts(self, drill_id: str | None = None) -> int:
        with self._guard() as conn:
            if drill_id is None:
                row = conn.execute("SELECT COUNT(*) FROM attempts").fetchone()
            else:
                row = conn.execute("SELECT COUNT(*) FROM attempts WHERE drill_id = ?",
                                   (drill_id,)).fetchone()
        return int(row[0])

    def count_own(self, status: str) -> int:
        """How many of your own attempts (not imported) have this status."""
        with self._guard() as conn:
            row = conn.execute(f"SELECT COUNT(*) FROM attempts WHERE status = ?{self._own()}",
                               (status,)).fetchone()
        return int(row[0])

    def drill_ids(self) -> list[str]:
        """The drills that have attempts, by id."""
        with self._guard() as conn:
            rows = conn.execute("SELECT DISTINCT drill_id FROM attempts ORDER BY drill_id")
            return [str(row[0]) for row in rows]

    def _own(self, column: str = "id") -> str:
        """A WHERE condition that leaves out attempts taken in by `kvdrill import` (other
        people's): trends are the store owner's progress."""
        if self.version < 4:
            return ""
        return f" AND {column} NOT IN (SELECT attempt_id FROM imports)"

    def complete_attempts(self, drill_id: str, *, limit: int) -> list[AttemptRow]:
        """A drill's newest complete attempts of your own (not imported), newest first (no
        drill_text)."""
        columns = self._list_columns()
        with self._guard() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM attempts WHERE drill_id = ? AND status = 'complete'"
                f"{self._own()} ORDER BY id DESC LIMIT ?", (drill_id, limit)).fetchall()
        return list(self._readable(rows))

    def _attempt_row(self, row: sqlite3.Row) -> AttemptRow:
        """One attempt row read; a damaged one is DamagedAttempt naming it (exit 1), never
        advice to move the whole store away for one row."""
        try:
            return self._attempt_from(row)
        except DamagedAttempt:
            raise
        except (IndexError, KeyError, TypeError, ValueError, OverflowError) as exc:
            raise DamagedAttempt(_row_id(row), f"a field is not kvdrill's: {exc}") from None

    def _readable(self, rows: Iterable[sqlite3.Row]) -> Iterator[AttemptRow]:
        """The attempt rows of a list, a damaged one left out and kept in DAMAGED (the
        command says it by id), so one bad row never hides the others."""
        for row in rows:
            try:
                yield self._attempt_row(row)
            except DamagedAttempt as damaged:
                DAMAGED.setdefault(damaged.attempt_id, damaged.why)

    def _attempt_from(self, row: sqlite3.Row) -> AttemptRow:
        try:
            params = json.loads(row["params"], parse_constant=_none)
        except (TypeError, ValueError, RecursionError) as exc:
            raise DamagedAttempt(_row_id(row), "unreadable params") from exc
        if not isinstance(params, dict):
            raise DamagedAttempt(_row_id(row), "unreadable params")
        return AttemptRow(
            id=int(row["id"]),
            drill_id=str(row["drill_id"]),
            drill_hash=str(row["drill_hash"]),
            variant=None if row["variant"] is None else int(row["variant"]),
            params=params,
            solver_version=str(row["solver_version"]),
            mode=str(row["mode"]),
            strict=bool(row["strict"]),
            started_at=_stamp(row["started_at"]) or "",
            finished_at=_stamp(row["finished_at"]),
            status=str(row["status"]),
            # absent from a schema-1 file read read-only (it is upgraded on the next write)
            drill_text=_text(row["drill_text"]) if "drill_text" in row.keys() else None,  # noqa: SIM118
            target=self._target(row),
        )

    def _target(self, row: sqlite3.Row) -> dict[str, Any] | None:
        if "target" not in row.keys() or row["target"] is None:  # noqa: SIM118
            return None
        try:
            target = json.loads(row["target"], parse_constant=_none)
        except (TypeError, ValueError, RecursionError) as exc:
            raise DamagedAttempt(_row_id(row), "unreadable target") from exc
        if not isinstance(target, dict):
            raise DamagedAttempt(_row_id(row), "unreadable target")
        return target

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
        found = []
        for row in rows:
            try:
                found.append(self._answer_from(row))
            except (IndexError, KeyError, TypeError, ValueError, RecursionError) as exc:
                raise DamagedAttempt(attempt_id, _answer_damage(row, exc)) from None
        return found

    def revealed_steps(self, attempt_id: int) -> frozenset[str]:
        """The steps whose latest answer came after a skip of that step. Outside exam mode a
        skip shows the reference, so such an answer was given with the answer in view."""
        with self._guard() as conn:
            self._require_attempt(conn, attempt_id)
            rows = conn.execute(
                "SELECT DISTINCT later.step_id FROM answers AS later JOIN answers AS skip"
                " ON skip.attempt_id = later.attempt_id AND skip.step_id = later.step_id"
                " AND skip.id < later.id"
                " WHERE later.attempt_id = ? AND (skip.raw IS NULL OR trim(skip.raw) = '')"
                " AND later.raw IS NOT NULL AND trim(later.raw) != ''"
                " AND later.revision = (SELECT MAX(revision) FROM answers"
                "   WHERE attempt_id = later.attempt_id AND step_id = later.step_id)",
                (attempt_id,),
            ).fetchall()
        return frozenset(str(row[0]) for row in rows)

    def latest_answers(self, attempt_ids: Iterable[int]) -> dict[int, list[AnswerRow]]:
        """answers(id) for many attempts in a few queries: each step's latest revision, steps
        in the order first answered."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        found: dict[int, list[AnswerRow]] = {i: [] for i in ids}
        with self._guard() as conn:
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                rows = conn.execute(
                    "SELECT a.* FROM answers AS a JOIN ("
                    "  SELECT attempt_id, step_id, MAX(revision) AS latest, MIN(id) AS first"
                    f"  FROM answers WHERE attempt_id IN ({marks}) GROUP BY attempt_id, step_id"
                    ") AS s ON a.attempt_id = s.attempt_id AND a.step_id = s.step_id"
                    " AND a.revision = s.latest ORDER BY a.attempt_id, s.first", chunk,
                ).fetchall()
                for row in rows:
                    owner = int(row["attempt_id"])
                    try:
                        found[owner].append(self._answer_from(row))
                    except (IndexError, KeyError, TypeError, ValueError, RecursionError) as exc:
                        DAMAGED.setdefault(owner, _answer_damage(row, exc))
        # an attempt with a damaged answer is left out whole, never marked on the others
        return {owner: rows for owner, rows in found.items() if owner not in DAMAGED}

    def step_times(self, attempt_ids: Iterable[int]
                   ) -> dict[int, dict[str, tuple[float, int, int, bool]]]:
        """attempt id → step id → (seconds, budget seconds, hints, overtime) of each step's
        latest revision: what progress needs of many attempts' answers, without their text."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        found: dict[int, dict[str, tuple[float, int, int, bool]]] = {i: {} for i in ids}
        with self._guard() as conn:
            for row in _for_ids(
                conn,
                "SELECT a.attempt_id, a.step_id, a.seconds, a.budget_seconds, a.hints,"
                " a.overtime FROM answers AS a JOIN ("
                "  SELECT attempt_id, step_id, MAX(revision) AS latest FROM answers"
                "  WHERE attempt_id IN ({ids}) GROUP BY attempt_id, step_id"
                ") AS s ON a.attempt_id = s.attempt_id AND a.step_id = s.step_id"
                " AND a.revision = s.latest",
                ids):
                try:
                    found[int(row[0])][str(row[1])] = (
                        _seconds(row[2]), _whole(row[3], MAX_SECONDS), _whole(row[4], MAX_HINTS),
                        bool(row[5]))
                except (TypeError, ValueError, RecursionError) as exc:
                    DAMAGED.setdefault(int(row[0]), _answer_damage(row, exc, step=row[1]))
        return {owner: times for owner, times in found.items() if owner not in DAMAGED}

    def answer_digests(self, attempt_ids: Iterable[int]) -> dict[int, str]:
        """attempt id → one text that stands for its answers (each step's latest revision, in
        the order first answered, length-prefixed so no two different sets of answers give the
        same text): what its marks depend on, read for many attempts at once."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        found: dict[int, str] = dict.fromkeys(ids, "")
        with self._guard() as conn:
            for attempt_id, digest in _for_ids(
                conn,
                "SELECT attempt_id, group_concat(part, '') FROM ("
                "  SELECT a.attempt_id, length(a.step_id) || ':' || a.step_id ||"
                "   CASE WHEN a.raw IS NULL THEN '-' ELSE"
                "   length(CAST(a.raw AS TEXT)) || ':' || CAST(a.raw AS TEXT) END AS part"
                "  FROM answers AS a JOIN ("
                "   SELECT attempt_id, step_id, MAX(revision) AS latest, MIN(id) AS first"
                "   FROM answers WHERE attempt_id IN ({ids})"
                "   GROUP BY attempt_id, step_id"
                "  ) AS s ON a.attempt_id = s.attempt_id AND a.step_id = s.step_id"
                "  AND a.revision = s.latest ORDER BY a.attempt_id, s.first"
                ") GROUP BY attempt_id",
                ids):
                found[int(attempt_id)] = _text(digest) or ""
        return found

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
            hints=_whole(row["hints"], MAX_HINTS),
            seconds=_seconds(row["seconds"]),
            budget_seconds=_whole(row["budget_seconds"], MAX_SECONDS),
            overtime=bool(row["overtime"]),
            answered_at=str(row["answered_at"]),
        )

    # -- kept marks -------------------------------------------------------------------------

    def latest_answer_ids(self, attempt_ids: Iterable[int]) -> dict[int, int]:
        """attempt id → the id of its newest answer row (0 when it has none): a stored score
        made before that answer is stale."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        found: dict[int, int] = dict.fromkeys(ids, 0)
        with self._guard() as conn:
            for row in _for_ids(
                conn,
                "SELECT attempt_id, MAX(id) FROM answers WHERE attempt_id IN ({ids})"
                " GROUP BY attempt_id",
                ids):
                found[int(row[0])] = int(row[1])
        return found

    def answered_counts(self, attempt_ids: Iterable[int]) -> dict[int, int]:
        """attempt id → how many steps have an answer (their latest revision not a skip)."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        found: dict[int, int] = dict.fromkeys(ids, 0)
        with self._guard() as conn:
            for row in _for_ids(
                conn,
                "SELECT a.attempt_id, COUNT(*) FROM answers AS a"
                " WHERE a.attempt_id IN ({ids}) AND a.raw IS NOT NULL"
                " AND a.revision = (SELECT MAX(b.revision) FROM answers AS b"
                "  WHERE b.attempt_id = a.attempt_id AND b.step_id = a.step_id)"
                " GROUP BY a.attempt_id",
                ids):
                found[int(row[0])] = int(row[1])
        return found

    def count_complete(self, drill_id: str) -> int:
        with self._guard() as conn:
            row = conn.execute("SELECT COUNT(*) FROM attempts WHERE drill_id = ?"
                               f" AND status = 'complete'{self._own()}", (drill_id,)).fetchone()
        return int(row[0])

    def kept_trend(self, drill_id: str, limit: int) -> list[tuple[int, str, dict[str, Any]]]:
        """(attempt id, started at, kept summary) of a drill's newest complete attempts that
        have kept marks, oldest first: one indexed query, nothing re-marked."""
        if self.version < 3:
            return []
        with self._guard() as conn:
            rows = conn.execute(
                "SELECT a.id, a.started_at, s.summary FROM attempts AS a JOIN scores AS s"
                " ON s.attempt_id = a.id WHERE a.drill_id = ? AND a.status = 'complete'"
                f"{self._own('a.id')} ORDER BY a.id DESC LIMIT ?", (drill_id, limit)).fetchall()
        trend = []
        for row in reversed(rows):
            try:
                summary = json.loads(row["summary"], parse_constant=_no_number)
            except (TypeError, ValueError, RecursionError):
                continue
            if isinstance(summary, dict):
                trend.append((int(row["id"]), _stamp(row["started_at"]) or "", summary))
        return trend

    def scores(self, attempt_ids: Iterable[int]) -> dict[int, ScoreRow]:
        """The kept marks of these attempts (those that have any)."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        if self.version < 3:
            return {}
        found: dict[int, ScoreRow] = {}
        with self._guard() as conn:
            for row in _for_ids(
                conn,
                "SELECT attempt_id, stamp, answers_seen, summary FROM scores"
                " WHERE attempt_id IN ({ids})",
                ids):
                try:
                    summary = json.loads(row["summary"], parse_constant=_no_number)
                    kept = ScoreRow(int(row["attempt_id"]), str(row["stamp"]),
                                    int(row["answers_seen"]), summary)
                except (TypeError, ValueError, RecursionError):
                    continue  # an unreadable kept score is only stale: it is re-made
                if isinstance(summary, dict):
                    found[kept.attempt_id] = kept
        return found

    def save_scores(self, rows: Iterable[ScoreRow]) -> None:
        """Keep (or replace) these attempts' marks, in one transaction. An attempt deleted
        meanwhile is skipped."""
        values = [(r.attempt_id, r.stamp, r.answers_seen,
                   json.dumps(r.summary, sort_keys=True, allow_nan=False), _now())
                  for r in rows]
        if not values:
            return
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO scores (attempt_id, stamp, answers_seen, summary, marked_at)"
                " SELECT ?1, ?2, ?3, ?4, ?5 WHERE EXISTS (SELECT 1 FROM attempts WHERE id = ?1)"
                " ON CONFLICT (attempt_id) DO UPDATE SET stamp = excluded.stamp,"
                " answers_seen = excluded.answers_seen, summary = excluded.summary,"
                " marked_at = excluded.marked_at", values)

    # -- the schedule -----------------------------------------------------------------------

    def unscheduled(self, drill_id: str) -> list[AttemptRow]:
        """A drill's complete attempts whose rating is not in its card yet, in the order they
        were finished (no drill_text)."""
        columns = self._list_columns()
        pending = " AND scheduled = 0" if self.version >= 3 else ""
        with self._guard() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM attempts WHERE drill_id = ? AND status = 'complete'"
                f"{pending} ORDER BY COALESCE(finished_at, started_at), id", (drill_id,),
            ).fetchall()
        return list(self._readable(rows))

    def schedule_card(self, drill_id: str) -> ScheduleRow | None:
        if self.version < 3:
            return None
        with self._guard() as conn:
            row = conn.execute("SELECT * FROM schedule WHERE drill_id = ?",
                               (drill_id,)).fetchone()
        if row is None:
            return None
        try:
            card = json.loads(row["card"], parse_constant=_no_number)
            share = None if row["last_share"] is None else float(row["last_share"])
            if share is not None and not 0 <= share <= 1:  # NaN, Infinity or edited by hand
                share = None
            return ScheduleRow(str(row["drill_id"]), card if isinstance(card, dict) else {},
                               int(row["reviews"]), share, _text(row["last_rating"]))
        except (TypeError, ValueError, OverflowError, RecursionError):
            return None  # rebuilt from the attempts

    def save_schedule(self, row: ScheduleRow, applied: Iterable[int]) -> None:
        """Keep a drill's card and mark the attempts it now includes, in one transaction."""
        ids = list(applied)
        with self._write() as conn:
            conn.execute(
                "INSERT INTO schedule (drill_id, card, reviews, last_share, last_rating,"
                " updated_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (drill_id) DO UPDATE SET"
                " card = excluded.card, reviews = excluded.reviews, last_share ="
                " excluded.last_share, last_rating = excluded.last_rating, updated_at ="
                " excluded.updated_at",
                (row.drill_id, json.dumps(row.card, sort_keys=True), row.reviews,
                 row.last_share, row.last_rating, _now()))
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                conn.execute(f"UPDATE attempts SET scheduled = 1 WHERE id IN ({marks})", chunk)

    def skill_cards(self) -> list[SkillRow]:
        """Every skill's card (none before schema 4)."""
        if self.version < 4:
            return []
        with self._guard() as conn:
            rows = conn.execute("SELECT * FROM skills ORDER BY skill").fetchall()
        found = []
        for row in rows:
            try:
                card = json.loads(row["card"], parse_constant=_no_number)
                reviews, steps, wrong = (_count(row[name]) for name in
                                         ("reviews", "steps", "wrong"))
                if wrong > steps:
                    raise ValueError(f"{wrong:,} wrong of {steps:,} steps")
                found.append(SkillRow(str(row["skill"]), card if isinstance(card, dict) else {},
                                      reviews, steps, wrong,
                                      _text(row["last_rating"]), _text(row["last_mistake"]),
                                      _text(row["last_drill"])))
            except (TypeError, ValueError, OverflowError, RecursionError) as exc:
                # an unreadable card starts again on its next rating; said by its skill
                DAMAGED_SKILLS.setdefault(str(row["skill"])[:80], str(exc)[:120])
                continue
        return found

    def skills_pending(self, limit: int | None = None) -> list[AttemptRow]:
        """Complete attempts whose answers are not in the skill cards yet, oldest finished
        first, at most `limit` (no drill_text); none before schema 4."""
        if self.version < 4:
            return []
        columns = self._list_columns()
        with self._guard() as conn:
            rows = conn.execute(
                f"SELECT {columns} FROM attempts WHERE status = 'complete' AND"
                " skills_scheduled = 0 ORDER BY COALESCE(finished_at, started_at), id LIMIT ?",
                (-1 if limit is None else limit,)).fetchall()
        return list(self._readable(rows))

    def save_skills(self, rows: Iterable[SkillRow], applied: Iterable[int]) -> None:
        """Keep these skill cards and mark the attempts they now include, in one transaction."""
        values = [(r.skill, json.dumps(r.card, sort_keys=True), r.reviews, r.steps, r.wrong,
                   r.last_rating, r.last_mistake, r.last_drill, _now()) for r in rows]
        ids = list(applied)
        with self._write() as conn:
            conn.executemany(
                "INSERT INTO skills (skill, card, reviews, steps, wrong, last_rating,"
                " last_mistake, last_drill, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (skill) DO UPDATE SET card = excluded.card, reviews ="
                " excluded.reviews, steps = excluded.steps, wrong = excluded.wrong, last_rating"
                " = excluded.last_rating, last_mistake = excluded.last_mistake, last_drill ="
                " excluded.last_drill, updated_at = excluded.updated_at", values)
            for chunk in _chunks(ids):
                marks = ", ".join("?" * len(chunk))
                conn.execute(f"UPDATE attempts SET skills_scheduled = 1 WHERE id IN ({marks})",
                             chunk)

    # -- imported attempts ------------------------------------------------------------------

    def import_attempt(self, attempt: dict[str, Any], answers: list[dict[str, Any]],
                       content_sha: str, candidate: str, source: str,
                       flags: list[dict[str, Any]]) -> int | None:
        """Store an exported attempt as it was (its times, mode, status and answers as given,
        each answer with today's verdict), with its import record, in one transaction; None
        (nothing written) when an attempt with the same content is already imported. It is
        marked as in the schedule already: someone else's attempt does not rate this store's
        drills and skills."""
        try:
            params_json = json.dumps(attempt["params"] or {}, sort_keys=True, allow_nan=False)
            flags_json = json.dumps(flags, sort_keys=True, allow_nan=False)
            target = attempt.get("target")
            target_json = None if target is None else json.dumps(target, sort_keys=True,
                                                                 allow_nan=False)
        except (TypeError, ValueError, RecursionError) as exc:
            raise ValueError(f"params and flags must be plain JSON values: {exc}") from exc
        with self._write() as conn:
            if conn.execute("SELECT 1 FROM imports WHERE content_sha = ?",
                            (content_sha,)).fetchone() is not None:
                return None
            cursor = conn.execute(
                "INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version,"
                " mode, strict, started_at, finished_at, status, drill_text, scheduled,"
                " skills_scheduled, target) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 1, ?)",
                (attempt["drill"], attempt["drill_hash"] or "", attempt["variant"], params_json,
                 str(attempt["solver_version"] or ""), attempt["mode"],
                 int(bool(attempt["strict"])), attempt["started_at"], attempt["finished_at"],
                 attempt["status"], attempt["drill_text"], target_json))
            attempt_id = cursor.lastrowid
            assert attempt_id is not None
            for answer in answers:
                conn.execute(
                    "INSERT INTO answers (attempt_id, step_id, revision, raw, parsed_value,"
                    " parsed_unit, verdict, misconception, carried_forward, hints, seconds,"
                    " budget_seconds, overtime, answered_at)"
                    " VALUES (?, ?, 1, ?, NULL, NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (attempt_id, answer["id"], answer["answer"], answer["verdict"],
                     answer["misconception"], int(bool(answer["carried_forward"])),
                     int(answer["hints"] or 0), float(answer["seconds"] or 0),
                     int(answer["budget_seconds"] or 0), int(bool(answer["overtime"])),
                     attempt["finished_at"] or attempt["started_at"]))
            conn.execute(
                "INSERT INTO imports (attempt_id, content_sha, candidate, source, flags,"
                " imported_at) VALUES (?, ?, ?, ?, ?, ?)",
                (attempt_id, content_sha, candidate, source, flags_json, _now()))
        return attempt_id

    def imported(self, content_sha: str) -> int | None:
        """The attempt imported with this content, if any."""
        if self.version < 4:
            return None
        with self._guard() as conn:
            row = conn.execute("SELECT attempt_id FROM imports WHERE content_sha = ?",
                               (content_sha,)).fetchone()
        return None if row is None else int(row[0])

    def imports(self, attempt_ids: Iterable[int]) -> dict[int, ImportRow]:
        """The import records of these attempts (those imported)."""
        ids = [i for i in attempt_ids if _storable_id(i)]
        if self.version < 4:
            return {}
        found: dict[int, ImportRow] = {}
        with self._guard() as conn:
            for row in _for_ids(
                conn,
                "SELECT attempt_id, content_sha, candidate, source, flags FROM imports"
                " WHERE attempt_id IN ({ids})",
                ids):
                try:
                    flags = json.loads(row["flags"])
                except (TypeError, ValueError, RecursionError):
                    flags = [{"step": None, "field": "import",
                              "says": "its import record is unreadable"}]
                found[int(row["attempt_id"])] = ImportRow(
                    int(row["attempt_id"]), str(row["content_sha"]),
                    _text(row["candidate"]) or "", _text(row["source"]) or "",
                    flags if isinstance(flags, list) else [])
        return found

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
            try:
                score = float(row["score"])
            except (TypeError, ValueError, RecursionError):
                continue
            # NaN, Infinity or a score no rubric has (a dimension's max is at most 10) edited
            # in: no reviewer's score
            if math.isfinite(score) and 0 <= score <= MAX_OVERRIDE_SCORE:
                latest[str(row["dimension"])] = (score, str(row["note"]))
        return latest
