"""Kept marks and caches are derived data: anything unreadable in them is dropped and made
again, never a crash and never the user's fault (issue 24, part 2)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

from trainer.drills.catalog import cache_path
from trainer.store.database import default_path

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
WHOLE = "\n".join(["32", "8", "128", "2", "128 KiB", "52 GB", "396728", "96", "193", "12",
                   "44", "12", "cap context", "3", "tier it", "20", "measure"]) + "\n"


@pytest.mark.parametrize("damage", ["title missing", "tags a number", "id missing",
                                    "not a mapping"])
def test_a_damaged_drill_list_entry_is_made_again(run: Run, damage: str) -> None:
    run("list")
    data = json.loads(cache_path().read_text(encoding="utf-8"))
    entry = next(iter(data["entries"].values()))
    if damage == "title missing":
        del entry["title"]
    elif damage == "tags a number":
        entry["tags"] = 5
    elif damage == "id missing":
        del entry["id"]
    else:
        data["entries"][next(iter(data["entries"]))] = [1, 2]
    cache_path().write_text(json.dumps(data), encoding="utf-8")
    listed = json.loads(run("list", "--json").stdout)
    assert all(isinstance(d["title"], str) and isinstance(d["tags"], list) for d in listed)
    assert run("next").exit_code == 0


def _damage_scores(sql_set: str) -> None:
    conn = sqlite3.connect(default_path())
    conn.execute(f"UPDATE scores SET summary = {sql_set}")
    conn.commit()
    conn.close()


@pytest.mark.parametrize("sql_set", ["json_set(summary, '$.maxima', 'x')",
                                     "json_set(summary, '$.steps', json('[1,2]'))",
                                     "json_set(summary, '$.scores', json('{\"a\": \"b\"}'))",
                                     "'[]'"])
def test_damaged_kept_marks_are_remarked_not_shown(run: Run, sql_set: str) -> None:
    run("practice", DRILL, input=WHOLE)
    _damage_scores(sql_set)
    history = json.loads(run("history", "--json").stdout)
    assert history[0]["scored"] is True and isinstance(history[0]["maxima"], dict)
    assert run("review", "1").exit_code == 0
    conn = sqlite3.connect(default_path())
    summary = json.loads(conn.execute("SELECT summary FROM scores").fetchone()[0])
    conn.close()
    assert isinstance(summary["maxima"], dict)  # kept anew, well formed


def test_a_damaged_row_is_not_compared_with_todays_marks(run: Run, tmp_path: Path) -> None:
    run("practice", DRILL, input=WHOLE)
    _damage_scores("json_set(summary, '$.maxima', 'x')")
    assert "kept marks" not in run("review", "1").stdout
