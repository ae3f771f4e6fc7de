"""Stores as an older kvdrill wrote them, built by hand for the upgrade tests."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

from trainer.drills.loader import find_drill
from trainer.store.schema import MIGRATIONS


def schema_2_store(path: Path, drill_id: str, answers: list[tuple[str, str]]) -> int:
    """A store as kvdrill wrote it before marks were kept (schema 2): one complete attempt of
    `drill_id` with these answers, and a reviewer's override; the attempt's id."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    for migration in MIGRATIONS[:2]:
        for statement in migration:
            conn.execute(statement)
    conn.execute("PRAGMA user_version = 2")
    text = find_drill(drill_id)[1].read_text(encoding="utf-8")
    conn.execute(
        "INSERT INTO attempts (drill_id, drill_hash, variant, params, solver_version, mode,"
        " strict, started_at, finished_at, status, drill_text) VALUES (?, ?, NULL, '{}', '2',"
        " 'practice', 0, '2026-11-01T09:00:00+00:00', '2026-11-01T09:20:00+00:00',"
        " 'complete', ?)", (drill_id, hashlib.sha256(text.encode()).hexdigest(), text))
    for number, (step_id, raw) in enumerate(answers):
        conn.execute(
            "INSERT INTO answers (attempt_id, step_id, revision, raw, verdict, carried_forward,"
            " hints, seconds, budget_seconds, overtime, answered_at) VALUES (1, ?, 1, ?,"
            " 'correct', 0, 0, 12.5, 60, 0, ?)",
            (step_id, raw, f"2026-11-01T09:{number:02d}:30+00:00"))
    conn.execute("INSERT INTO overrides (attempt_id, dimension, score, note, at)"
                 " VALUES (1, 'levers', 3, 'named FP8 KV', '2026-11-02T00:00:00+00:00')")
    conn.close()
    return 1
