"""The store's schema: its tables, the migrations that take a file from one version to the next,
and whether a file is ours at all (application id, version, tables), read without writing."""

from __future__ import annotations

import functools
import sqlite3
from pathlib import Path

from trainer.errors import StoreError

APPLICATION_ID = 0x6B766472  # "kvdr"


OUR_TABLES = frozenset({"attempts", "answers", "overrides"})


# Tables a schema adds after the first: a file of that version must have them.
LATER_TABLES = {3: frozenset({"scores", "schedule"}), 4: frozenset({"skills", "imports"})}


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
    (
        # Each attempt's marks and rubric score as last computed, and what they were computed
        # with (`stamp`: marking version, drill and rubric hashes; `answers_seen`: the newest
        # answer row then), so history and review need not re-mark what has not changed.
        """CREATE TABLE scores (
            attempt_id INTEGER PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
            stamp TEXT NOT NULL,
            answers_seen INTEGER NOT NULL,
            summary TEXT NOT NULL,
            marked_at TEXT NOT NULL
        )""",
        # Whether the attempt's rating is in its drill's schedule card yet.
        "ALTER TABLE attempts ADD COLUMN scheduled INTEGER NOT NULL DEFAULT 0",
        # One spaced-repetition card per drill, updated as attempts complete.
        """CREATE TABLE schedule (
            drill_id TEXT PRIMARY KEY,
            card TEXT NOT NULL,
            reviews INTEGER NOT NULL CHECK (reviews >= 0),
            last_share REAL,
            last_rating TEXT,
            updated_at TEXT NOT NULL
        )""",
        "CREATE INDEX attempts_by_drill_status ON attempts (drill_id, status, id)",
    ),
    (
        # One spaced-repetition card per skill (trainer/drills/skills.py), updated from each marked
        # answer of a step tagged with it: how many steps were rated, how many were wrong, and
        # the mistake (and drill) of the last wrong one.
        """CREATE TABLE skills (
            skill TEXT PRIMARY KEY,
            card TEXT NOT NULL,
            reviews INTEGER NOT NULL CHECK (reviews >= 0),
            steps INTEGER NOT NULL CHECK (steps >= 0),
            wrong INTEGER NOT NULL CHECK (wrong >= 0),
            last_rating TEXT,
            last_mistake TEXT,
            last_drill TEXT,
            updated_at TEXT NOT NULL
        )""",
        # Whether the attempt's answers are in the skill cards yet.
        "ALTER TABLE attempts ADD COLUMN skills_scheduled INTEGER NOT NULL DEFAULT 0",
        "CREATE INDEX attempts_skills_pending ON attempts (skills_scheduled, status)",
        # Attempts taken in by `kvdrill import`: the file, the candidate it names, the SHA-256
        # of its content (a second copy is refused) and what it contradicts (JSON list).
        """CREATE TABLE imports (
            attempt_id INTEGER PRIMARY KEY REFERENCES attempts (id) ON DELETE CASCADE,
            content_sha TEXT NOT NULL UNIQUE,
            candidate TEXT NOT NULL,
            source TEXT NOT NULL,
            flags TEXT NOT NULL,
            imported_at TEXT NOT NULL
        )""",
    ),
    (
        # A drill re-targeted at another model or GPU (--model, --gpu): the model as plain
        # JSON (a preset id, or every field read from a config.json) and the GPU preset id, so
        # the attempt is re-marked with the same numbers (variants.make_target); NULL for the
        # drill as written.
        "ALTER TABLE attempts ADD COLUMN target TEXT",
    ),
]


SCHEMA_VERSION = len(MIGRATIONS)


def empty_store() -> sqlite3.Connection:
    """An in-memory store with the current schema and no attempts (read_only, no file)."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.row_factory = sqlite3.Row
    for migration in MIGRATIONS:
        for statement in migration:
            conn.execute(statement)
    return conn


def damaged_error(path: Path, why: str) -> StoreError:
    return StoreError(
        f"{path} is damaged or not a database ({why}); move it away to start afresh "
        "(or restore a backup)"
    )


def foreign_error(path: Path) -> StoreError:
    return StoreError(f"{path} is not a kvdrill database; move it away or set KVDRILL_HOME")


def newer_error(path: Path, version: int) -> StoreError:
    return StoreError(
        f"{path} was written by a newer kvdrill (schema {version}); upgrade kvdrill"
    )


def _columns(conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """Each table of a database (SQLite's own left out) and its column names."""
    tables = [str(row[0]) for row in
              conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
              if not str(row[0]).startswith("sqlite_")]
    return {table: frozenset(str(row[1]) for row in
                             conn.execute(f'PRAGMA table_info("{table.replace(chr(34), "")}")'))
            for table in tables}


@functools.cache
def _shapes() -> tuple[dict[str, frozenset[str]], ...]:
    """The tables and columns of each schema version (index = version; 0 has none)."""
    conn = sqlite3.connect(":memory:")
    shapes = [_columns(conn)]
    try:
        for migration in MIGRATIONS:
            for statement in migration:
                conn.execute(statement)
            shapes.append(_columns(conn))
    finally:
        conn.close()
    return tuple(shapes)


def version_by_tables(conn: sqlite3.Connection) -> int | None:
    """The schema version a database's tables and columns are exactly, or None when they are
    no version of ours: a store restored from `sqlite3 … .dump` (no application id, user
    version 0) or one whose user_version was edited is recognised by its tables."""
    found = _columns(conn)
    for version in range(len(_shapes()) - 1, 0, -1):
        if found == _shapes()[version]:
            return version
    return None


def already_applied(conn: sqlite3.Connection, statement: str) -> bool:
    """Whether a migration statement's table, index or column is already there, so a migration
    run again over a store whose user_version was lost (or edited) skips it, not fails on it
    ("duplicate column name")."""
    words = statement.split()
    if len(words) >= 6 and [w.upper() for w in words[:2]] == ["ALTER", "TABLE"] and \
            [w.upper() for w in words[3:5]] == ["ADD", "COLUMN"]:
        return words[5] in _columns(conn).get(words[2], frozenset())
    if len(words) >= 3 and words[0].upper() == "CREATE" and \
            words[1].upper() in ("TABLE", "INDEX"):
        return conn.execute("SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?",
                            (words[1].lower(), words[2])).fetchone() is not None
    return False


def check_ours(path: Path, conn: sqlite3.Connection) -> int:
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
        restored = version_by_tables(conn) if tables and app_id in (0, APPLICATION_ID) and \
            (app_id == 0 or version <= 0) else None
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")
    if restored is not None:
        # ours by its tables, its stamp lost (a dump restored) or edited: the writer repairs it
        return restored
    if app_id == APPLICATION_ID and version < 0:
        raise damaged_error(path, f"schema version {version}, and its tables are not "
                            "kvdrill's of any version")
    if app_id == 0 and (tables or version != 0):
        raise foreign_error(path)
    if app_id not in (0, APPLICATION_ID):
        raise foreign_error(path)
    if version > SCHEMA_VERSION:
        raise newer_error(path, version)
    wanted = OUR_TABLES.union(*(extra for since, extra in LATER_TABLES.items()
                                if version >= since))
    if version >= 1 and not tables >= wanted:
        raise damaged_error(path, f"tables missing: {', '.join(sorted(wanted - tables))}")
    return version
