"""The store's schema: its tables, the migrations that take a file from one version to the next,
and whether a file is ours at all (application id, version, tables), read without writing."""

from __future__ import annotations

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
    finally:
        if own and conn.in_transaction:
            conn.execute("COMMIT")
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
