"""`kvdrill progress` (issue 28): after piped attempts on two drills, improving, the JSON gives a
recall in [0, 1] for each skill seen and a point per complete attempt of each drill; imported
attempts stay out; an empty store says how to start; the HTML page is self-contained with
inline SVG charts and escapes what it shows; the text fits 80- and 60-column terminals."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from probes import imported_after
from screen import broken_words, printed_lines, screen_lines

from trainer.app.cli import cli
from trainer.drills.loader import find_drill
from trainer.store.database import FILE_NAME

Run = Callable[..., Result]
SHEETS = Path(__file__).parent / "sheets"
FIRST, SECOND, IMPORTED = "llama31-8b-h100", "llama2-70b-mi300x", "prefix-caching"
# Worse to better: the first attempt of each drill misses numbers and says nothing in words.
FIRST_TRIES = [
    {"shape-kv-heads": "16", "bytes-per-token": "512 KiB", "kv-budget": "72 GB",
     "live-tokens": "10k tokens", "sessions": "3", "policy": "no idea",
     "followup-128k-policy": "no idea", "followup-observed-lower": "no idea"},
    {"sessions-32k": "40", "followup-observed-lower": "no idea"},
    {},
]
SECOND_TRIES = [
    {"1a": "64 GB", "2a-bytes-per-token": "2.5 MiB", "2a-bytes-per-sequence": "1 GB",
     "2b-bytes-per-token": "2.5 MiB", "2b-max-sequences": "17", "2c-ratio": "1",
     "2c-why": "no idea", "2d": "no idea", "3a-bytes-per-step": "1 GB", "3a-step-time": "10 ms",
     "3b-aggregate": "500 tok/s", "3c-explain": "no idea", "4a": "4", "4b": "20",
     "4f": "no idea", "5a": "no idea"},
    # the KV width taken as the hidden size (the query heads' width), in d_kv alone (the bytes
    # per token and the sessions right after it: the seed's Solid computes them, carried is
    # not enough)
    {"2b-dkv": "8192"},
]


def sheet(drill_id: str) -> dict[str, str]:
    data = yaml.safe_load((SHEETS / f"{drill_id}-correct.yaml").read_text(encoding="utf-8"))
    return {str(k): " ".join(str(v).split()) for k, v in data.items()}


def _invoke(*args: str, input: str | None = None) -> Result:
    result = CliRunner().invoke(cli, list(args), input=input, catch_exceptions=False)
    assert result.exit_code == 0, result.output + result.stderr
    return result


def _piped(drill_id: str, changes: dict[str, str]) -> None:
    answers = {**sheet(drill_id), **changes}
    _invoke("practice", drill_id, input="".join(f"{a}\n" for a in answers.values()))


@pytest.fixture(scope="module")
def store_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Five complete attempts of your own on two drills, each drill improving, one left
    unfinished; and two imported from another candidate's store (one of a drill you never
    practised)."""
    folder = tmp_path_factory.mktemp("progress")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KVDRILL_HOME", str(folder / "other"))
        _piped(FIRST, {})
        _piped(IMPORTED, {})
        files = []
        for attempt in (1, 2):
            path = folder / f"ada-{attempt}.json"
            _invoke("export", str(attempt), "--out", str(path))
            files.append(str(path))
        patch.setenv("KVDRILL_HOME", str(folder / "home"))
        for changes in FIRST_TRIES:
            _piped(FIRST, changes)
        for changes in SECOND_TRIES:
            _piped(SECOND, changes)
        _invoke("practice", FIRST, input="32\n8\n")  # unfinished
        _invoke("import", *files)
    yield folder / "home"


@pytest.fixture
def home(store_home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KVDRILL_HOME", str(store_home))
    return store_home


@pytest.fixture
def copied_home(store_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the store, for a test that changes it."""
    target = tmp_path / "copy"
    target.mkdir()
    source = sqlite3.connect(store_home / FILE_NAME)
    copy = sqlite3.connect(target / FILE_NAME)
    source.backup(copy)
    source.close()
    copy.close()
    monkeypatch.setenv("KVDRILL_HOME", str(target))
    return target


def progress_json(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run("progress", "--json").stdout)
    return data


def own_complete(run: Run) -> dict[str, list[int]]:
    """drill → the ids of your own complete attempts, oldest first, as history lists them."""
    found: dict[str, list[int]] = {}
    for row in reversed(json.loads(run("history", "--all", "--json").stdout)):
        if row["status"] == "complete" and row["candidate"] is None:
            found.setdefault(row["drill"], []).append(row["id"])
    return found


def skills_of(*drill_ids: str) -> set[str]:
    return {step.skill for drill_id in drill_ids for step in find_drill(drill_id)[0].steps
            if step.skill}


def test_json_gives_a_recall_between_0_and_1_for_each_skill_seen(run: Run, home: Path) -> None:
    skills = progress_json(run)["skills"]
    assert {s["skill"] for s in skills} == skills_of(FIRST, SECOND)
    assert all(isinstance(s["recall"], float) and 0 <= s["recall"] <= 1 for s in skills)
    assert all(s["due"] and s["answers"] >= s["missed"] >= 0 for s in skills)


def test_json_gives_a_point_per_complete_attempt_of_each_drill(run: Run, home: Path) -> None:
    drills = {d["drill"]: d for d in progress_json(run)["drills"]}
    complete = own_complete(run)
    assert {drill: [p["attempt"] for p in d["points"]] for drill, d in drills.items()} == \
        complete == {FIRST: complete[FIRST], SECOND: complete[SECOND]}
    assert len(complete[FIRST]) == 3 and len(complete[SECOND]) == 2
    point = drills[FIRST]["points"][0]
    assert set(point["scores"]) == set(drills[FIRST]["maxima"]) == {
        "arithmetic", "assumptions", "levers", "operational-close"}
    assert point["budget_seconds"] > 0 and point["seconds"] >= 0


def test_each_drills_series_shows_the_improvement(run: Run, home: Path) -> None:
    drills = {d["drill"]: d for d in progress_json(run)["drills"]}
    for drill_id in (FIRST, SECOND):
        shares = [p["share"] for p in drills[drill_id]["points"]]
        arithmetic = [p["scores"]["arithmetic"] for p in drills[drill_id]["points"]]
        assert shares == sorted(shares) and shares[0] < shares[-1], (drill_id, shares)
        assert arithmetic[0] < arithmetic[-1]
        assert drills[drill_id]["points"][0]["level"] is None
        assert drills[drill_id]["level"] == drills[drill_id]["points"][-1]["level"] is not None


def test_readiness_counts_the_drills_at_solid_of_every_shipped_drill(run: Run,
                                                                     home: Path) -> None:
    data = progress_json(run)
    shipped = json.loads(run("list", "--json").stdout)
    assert data["readiness"]["drills"] == len(shipped) == 20
    assert data["readiness"]["solid_drills"] == sorted([FIRST, SECOND])
    line = run("progress").stdout.splitlines()[2]
    assert line.startswith("Ready: Solid or better on 2 of 20 drills")


def test_a_skill_missed_at_its_last_answer_is_named_weakest_with_its_mistake(
        run: Run, home: Path) -> None:
    data = progress_json(run)
    weakest = data["skills"][0]
    assert weakest["skill"] == data["readiness"]["weakest"][0] == "model-shape"
    assert weakest["weak"] and weakest["last_answers"] == ["Again", "Good", "Good", "Good",
                                                           "Again"]
    assert (weakest["last_mistake"], weakest["last_drill"]) == ("hidden-for-kv-width", SECOND)
    assert "hidden size" in weakest["last_mistake_text"]
    assert "weakest skills: model-shape (missed last time)" in run("progress").stdout


def test_imported_attempts_stay_out(run: Run, home: Path) -> None:
    data = progress_json(run)
    history = json.loads(run("history", "--all", "--json").stdout)
    imported = {row["id"] for row in history if row["candidate"] is not None}
    assert len(imported) == 2
    assert IMPORTED not in {d["drill"] for d in data["drills"]}
    assert not imported & {p["attempt"] for d in data["drills"] for p in d["points"]}
    assert data["complete_attempts"] == 5 and data["unfinished_attempts"] == 1


def test_an_empty_store_says_how_to_start(run: Run) -> None:
    result = run("progress")
    assert result.stdout.startswith("No complete attempts of your own yet")
    assert "kvdrill practice llama31-8b-h100" in result.stdout
    data = progress_json(run)
    assert data["skills"] == data["drills"] == [] and data["readiness"]["solid"] == 0


def test_the_html_page_is_self_contained_with_inline_svg_charts(
        run: Run, home: Path, tmp_path: Path) -> None:
    page = tmp_path / "progress.html"
    result = run("progress", "--format", "html", "--out", str(page))
    assert result.stderr == f"Wrote {page}\n"
    html = page.read_text(encoding="utf-8")
    # recall by skill, and per drill its dimensions and its time against the budget
    assert html.count('<svg class="chart"') == 1 + 2 * 2
    assert "<polyline" in html and 'class="weeks"' in html
    assert not re.search(r"""(?:src|href|action)\s*=\s*["']?(?!#)|url\(|@import|<link""", html)
    assert "http://" not in html and "https://" not in html
    assert "default-src 'none'" in unescape(html)  # the page's policy: nothing fetched


def test_the_html_page_escapes_a_drill_id_and_a_mistake(
        run: Run, copied_home: Path, tmp_path: Path) -> None:
    conn = sqlite3.connect(copied_home / FILE_NAME)
    with conn:
        conn.execute("UPDATE attempts SET drill_id = '<script>alert(1)</script>' WHERE id = "
                     "(SELECT MIN(id) FROM attempts WHERE drill_id = ?)", (SECOND,))
        conn.execute("UPDATE skills SET last_mistake = '<script>alert(2)</script>',"
                     " last_drill = '<img src=x onerror=alert(3)>'")
    conn.close()
    page = tmp_path / "progress.html"
    run("progress", "--format", "html", "--out", str(page))
    html = page.read_text(encoding="utf-8")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=alert(3)&gt;" in html
    assert "<script>alert" not in html and "<img" not in html
    assert html.count("<script>") == 1  # the page's own, allowed by its policy


def test_misuse_is_one_line_and_exit_2(run: Run) -> None:
    for args in (["--json", "--format", "md"], ["--format", "pdf"], ["extra"]):
        result = run("progress", *args, ok=False)
        assert result.exit_code == 2, args
        assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_the_command_is_imported_only_when_it_runs_and_never_imports_sympy(
        home: Path, tmp_path: Path) -> None:
    ours = ("trainer.store.progress", "trainer.views.progress", "sympy")
    assert imported_after(["list"], tmp_path, ours) == []
    assert imported_after(["progress"], home, ours) == list(ours[:2])


@pytest.mark.parametrize("columns", [80, 60])
def test_the_text_fits_the_terminal(home: Path, columns: int) -> None:
    env = {"KVDRILL_HOME": str(home), "NO_COLOR": "1"}
    printed = printed_lines(["progress"], columns, env)
    assert [line for line in printed if len(line) > columns] == []
    screen = screen_lines(["progress"], columns, env)
    assert broken_words(screen, printed) == []
    assert screen[0].startswith("Your progress: 5 complete attempts")
    assert any(line.startswith("Ready: Solid or better on 2 of 20") for line in screen)
    assert any(FIRST in line and "%" in line for line in screen)  # its sparkline row
