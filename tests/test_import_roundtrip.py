"""Imports that never accuse (issue 24, part 1): numbers that are infinite once read are
refused by name; your own export, finished or not, is a duplicate; an export-import round trip
through another store flags nothing."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"


def _export(run: Run, tmp_path: Path, name: str, attempt: int = 1) -> Path:
    out = tmp_path / f"{name}.json"
    run("export", str(attempt), "--out", str(out))
    return out


def test_your_own_incomplete_export_is_a_duplicate(run: Run, tmp_path: Path) -> None:
    run("practice", DRILL, input="32\n8\n128\n")
    result = run("import", str(_export(run, tmp_path, "mine")), ok=False)
    assert result.exit_code == 1 and "already in the store as attempt 1" in result.stderr
    assert len(json.loads(run("history", "--json").stdout)) == 1


def test_an_imported_incomplete_attempt_round_trips_without_a_flag(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run("practice", DRILL, input="32\n8\n128\n")
    first = _export(run, tmp_path, "alice")
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "interviewer"))
    assert "flagged" not in run("import", str(first)).stdout
    again = _export(run, tmp_path, "alice-again")
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "third"))
    imported = run("import", str(again), "--json").stdout
    assert json.loads(imported)[0]["flags"] == []
    steps = json.loads(again.read_text(encoding="utf-8"))["steps"]
    unvisited = [s for s in steps if s["answer"] is None and s["seconds"] is None]
    assert unvisited  # the round trip kept the steps never reached as never reached


@pytest.mark.parametrize("number", ["1e400", "-1e400", "1E999"])
def test_a_number_infinite_once_read_is_refused_by_name(run: Run, tmp_path: Path,
                                                        number: str) -> None:
    run("practice", DRILL, input="32\n8\n128\n")
    text = _export(run, tmp_path, "x").read_text(encoding="utf-8")
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text.replace('"context": 4096', f'"context": {number}', 1),
                       encoding="utf-8")
    assert number in hostile.read_text(encoding="utf-8")
    # import names the broken file and fails (1); review was misused on it (2)
    for command, code in (("import", 1), ("review", 2)):
        result = run(command, str(hostile), ok=False)
        assert result.exit_code == code and "too large a number" in result.stderr
        assert "internal error" not in result.stderr


def test_imports_sharing_one_start_are_each_compared_once(run: Run, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    from trainer.store.database import Store

    run("practice", DRILL, input="32\n8\n128\n")
    original = json.loads(_export(run, tmp_path, "base").read_text(encoding="utf-8"))
    files = []
    for n in range(5):
        copy = json.loads(json.dumps(original))
        copy["steps"][0]["answer"] = str(30 + n)
        path = tmp_path / f"candidate-{n}.json"
        path.write_text(json.dumps(copy), encoding="utf-8")
        files.append(str(path))
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path / "interviewer"))
    run("import", *files)
    with Store(read_only=True) as store:  # the imports are not what an export of here can be
        assert store.own_attempts_started_at(DRILL, original["started_at"]) == []
    assert os.environ["KVDRILL_HOME"].endswith("interviewer")
