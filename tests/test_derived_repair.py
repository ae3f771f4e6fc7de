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


# ---- limits are misuse; completion completes every drill argument and never fails ---------

def test_more_variants_than_the_space_holds_is_misuse(run: Run) -> None:
    result = run("variants", DRILL, "--count", "500", ok=False)
    assert result.exit_code == 2 and "--count 81 or fewer" in result.stderr


@pytest.mark.parametrize("args", [["variants", DRILL, "--count", "2", "--out", ""],
                                  ["export", "1", "--out", ""],
                                  ["review", "1", "--out", ""]])
def test_an_empty_path_is_misuse_and_writes_nothing(run: Run, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    args: list[str]) -> None:
    monkeypatch.chdir(tmp_path)
    run("practice", DRILL, input="32\n")
    result = run(*args, ok=False)
    assert result.exit_code == 2 and "an empty path" in result.stderr
    assert list(tmp_path.iterdir()) == []


def _complete(words: str, cword: str) -> str:
    import os
    import subprocess
    import sys

    env = dict(os.environ, _KVDRILL_COMPLETE="bash_complete", COMP_WORDS=words,
               COMP_CWORD=cword)
    done = subprocess.run([sys.executable, "-c", "from trainer.app.cli import main; main()"],
                          capture_output=True, text=True, timeout=60, check=False, env=env)
    assert done.returncode == 0 and "Error" not in done.stderr, done.stderr
    return done.stdout


@pytest.mark.parametrize(("words", "cword"), [("kvdrill cohort ll", "2"),
                                              ("kvdrill history --drill ll", "3"),
                                              ("kvdrill show ll", "2")])
def test_every_drill_argument_completes(words: str, cword: str) -> None:
    assert "plain,llama31-8b-h100" in _complete(words, cword)


@pytest.mark.parametrize("cword", ["x", "", "-1", "1e9"])
def test_a_malformed_completion_index_offers_nothing_and_never_fails(cword: str) -> None:
    assert _complete("kvdrill show ll", cword) == ""
