"""Issue 37, dates and numbers read back from a store or a transcript: each is checked where it
enters (a date finite, in range, timezone-aware and in UTC; a number finite), and a bad one is
repaired or named by its attempt id. `progress` and `next` never fail on one, and nothing
prints NaN or Infinity."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from store_sql import store_sql

from trainer.store import moments
from trainer.store.database import default_path

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
WHOLE = "\n".join(["32", "8", "128", "2", "128 KiB", "52 GB", "396728", "96", "193", "12",
                   "44", "12", "cap context", "3", "tier it", "20", "measure"]) + "\n"
NOT_FOLDED = ", scheduled = 0, skills_scheduled = 0"  # not yet in the drill's or skills' cards


def _practised(run: Run) -> None:
    run("practice", DRILL, input=WHOLE)




def _clean(result: Result, code: int = 0) -> None:
    assert result.exit_code == code, result.output + result.stderr
    assert "internal error" not in result.stderr and "Traceback" not in result.output


def _no_nan(text: str) -> None:
    assert "NaN" not in text and "Infinity" not in text, text


def _progress(run: Run) -> dict[str, Any]:
    result = run("progress", "--json", ok=False)
    _clean(result)
    _no_nan(result.stdout)
    payload: dict[str, Any] = json.loads(result.stdout)
    return payload


# ---- dates where they enter ----------------------------------------------------------------

@pytest.mark.parametrize(("stamp", "expected"), [
    ("2026-03-01T11:00:00+02:00", datetime(2026, 3, 1, 9, tzinfo=UTC)),
    ("2026-03-01T09:00:00", datetime(2026, 3, 1, 9, tzinfo=UTC)),  # no zone: UTC, as written
    ("2026-03-01T09:00:00Z", datetime(2026, 3, 1, 9, tzinfo=UTC)),
    ("9999-12-31T23:59:59-14:00", None),  # past the calendar once in UTC
    ("0001-01-01T00:00:00+14:00", None),
    ("8999-12-31T00:00:00+00:00", datetime(8999, 12, 31, tzinfo=UTC)),
    ("9500-01-01T00:00:00+00:00", None),  # no room left for the schedule's intervals
    ("yesterday", None), ("", None), (None, None), (12, None), ("2" * 5000, None),
])
def test_a_stored_stamp_is_a_utc_moment_in_range_or_none(stamp: Any,
                                                         expected: datetime | None) -> None:
    moment = moments.utc(stamp)
    assert moment == expected
    assert moment is None or moment.tzinfo is UTC


def test_a_moment_in_another_zone_is_normalised_to_utc() -> None:
    moment = moments.utc(datetime(2026, 3, 1, 11, tzinfo=timezone(timedelta(hours=2))))
    assert moment is not None and moment.tzinfo is UTC and moment.hour == 9


@pytest.mark.parametrize("command", [["progress", "--json"], ["progress"], ["next"],
                                     ["next", "--json"], ["progress", "--format", "html"]])
def test_a_finish_time_past_the_calendar_is_repaired_not_a_crash(run: Run,
                                                                 command: list[str]) -> None:
    _practised(run)
    store_sql(f"UPDATE attempts SET finished_at = '9999-12-31T23:59:59-14:00'{NOT_FOLDED}")
    result = run(*command, ok=False)
    _clean(result)
    _no_nan(result.stdout)


def test_a_finish_time_past_the_calendar_is_named_by_attempt_in_progress(run: Run) -> None:
    _practised(run)
    store_sql(f"UPDATE attempts SET finished_at = '9999-12-31T23:59:59-14:00'{NOT_FOLDED}")
    notes = _progress(run)["notes"]
    assert len(notes) == 1 and notes[0].startswith("attempt 1: its finish time")
    assert "start time stands in" in notes[0]


@pytest.mark.parametrize("command", [["progress", "--json"], ["next", "--json"]])
def test_a_finish_time_in_another_zone_is_folded_into_the_cards_in_utc(
        run: Run, command: list[str]) -> None:
    _practised(run)
    store_sql("DELETE FROM skills")  # the cards made afresh from the attempt, as on a first run
    store_sql("DELETE FROM schedule")
    store_sql(f"UPDATE attempts SET finished_at = '2026-03-01T11:00:00+02:00'{NOT_FOLDED}")
    result = run(*command, ok=False)
    _clean(result)
    skills = json.loads(result.stdout)["skills"]
    assert skills and all(s["due"].endswith("+00:00") for s in skills)
    assert any(s["due"].startswith("2026-03-02T09:00:00") for s in skills)  # a day after 09:00


def test_an_attempt_time_in_another_zone_is_exported_in_utc(run: Run) -> None:
    _practised(run)
    store_sql("UPDATE attempts SET finished_at = '2026-03-01T11:00:00+02:00'")
    assert json.loads(run("export", "1").stdout)["finished_at"] == "2026-03-01T09:00:00+00:00"


@pytest.mark.parametrize("command", [["progress", "--json"], ["next"], ["history"],
                                     ["export", "1", "--format", "md"], ["review", "1"]])
def test_a_finish_time_that_is_not_a_date_is_no_crash(run: Run, command: list[str]) -> None:
    _practised(run)
    store_sql(f"UPDATE attempts SET finished_at = 'yesterday'{NOT_FOLDED}")
    _clean(run(*command, ok=False))


def test_no_usable_time_at_all_leaves_the_attempt_out_and_says_which(run: Run) -> None:
    _practised(run)
    store_sql(f"UPDATE attempts SET finished_at = 'yesterday', started_at = 'soon'{NOT_FOLDED}")
    notes = _progress(run)["notes"]
    assert len(notes) == 1 and notes[0].startswith("attempt 1: neither its finish time")
    result = run("next", ok=False)
    _clean(result)
    assert "Note: attempt 1: neither its finish time 'yesterday'" in result.stderr


def test_the_progress_note_is_shown_in_text_markdown_and_html(run: Run) -> None:
    _practised(run)
    store_sql(f"UPDATE attempts SET finished_at = 'yesterday'{NOT_FOLDED}")
    for fmt in ("text", "md", "html"):
        output = run("progress", "--format", fmt).stdout
        assert "attempt 1: its finish time" in output.replace("&#39;", "'"), fmt


@pytest.mark.parametrize("table", ["skills", "schedule"])
@pytest.mark.parametrize("command", [["progress", "--json"], ["next", "--json"], ["next"]])
def test_a_kept_card_due_with_no_time_zone_is_read_as_utc(run: Run, table: str,
                                                          command: list[str]) -> None:
    _practised(run)
    store_sql(f"UPDATE {table} SET card = json_set(card, '$.due', '2026-03-02T09:00:00')")
    result = run(*command, ok=False)
    _clean(result)
    if command[-1] == "--json" and table == "skills":
        dues = [s["due"] for s in json.loads(result.stdout)["skills"]]
        assert "2026-03-02T09:00:00+00:00" in dues


@pytest.mark.parametrize("damage", [
    "json_set(card, '$.due', '9999-12-31T23:59:59-14:00')",
    "json_set(card, '$.last_review', 'never')",
    "json_set(card, '$.stability', 9e999)",
    "json_set(card, '$.step', 7)",
    "replace(card, '\"difficulty\": ', '\"difficulty\": NaN, \"x\": ')",
])
def test_a_kept_card_that_cannot_be_read_starts_again(run: Run, damage: str) -> None:
    _practised(run)
    store_sql(f"UPDATE skills SET card = {damage}")
    store_sql(f"UPDATE schedule SET card = {damage}")
    for command in (["progress", "--json"], ["next", "--json"]):
        result = run(*command, ok=False)
        _clean(result)
        _no_nan(result.stdout)
    # the next attempt is rated into a card started again
    run("practice", DRILL, input=WHOLE)
    _clean(run("next", ok=False))


def test_a_transcript_finish_time_past_the_calendar_is_malformed(run: Run,
                                                                 tmp_path: Path) -> None:
    _practised(run)
    data = json.loads(run("export", "1").stdout)
    data["finished_at"] = "9999-12-31T23:59:59-14:00"
    path = tmp_path / "t.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    result = run("review", str(path), ok=False)
    _clean(result, 2)
    assert "malformed transcript: finished_at: 9999-12-31T23:59:59-14:00 is not a date" \
        in result.stderr


def test_a_transcript_time_in_another_zone_is_imported_in_utc(run: Run, tmp_path: Path) -> None:
    _practised(run)
    data = json.loads(run("export", "1").stdout)
    data["started_at"], data["finished_at"] = "2026-03-01T11:00:00+02:00", \
        "2026-03-01T11:20:00+02:00"
    data["steps"][0]["seconds"] += 0.5  # another candidate's attempt, not this one moved
    path = tmp_path / "bob.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    run("import", str(path))
    stored = json.loads(run("export", "2").stdout)
    assert (stored["started_at"], stored["finished_at"]) == \
        ("2026-03-01T09:00:00+00:00", "2026-03-01T09:20:00+00:00")


# ---- numbers: never NaN or Infinity --------------------------------------------------------

def _summary_with(field: str, value: float) -> None:
    """The kept marks of attempt 1 with a score (or its share) edited to `value`, written as
    JSON writes NaN and Infinity."""
    conn = sqlite3.connect(default_path())
    summary = json.loads(conn.execute("SELECT summary FROM scores").fetchone()[0])
    if field == "share":
        summary["share"] = value
    else:
        summary["scores"][field] = value
    conn.execute("UPDATE scores SET summary = ?", (json.dumps(summary),))
    conn.commit()
    conn.close()


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
@pytest.mark.parametrize("field", ["share", "arithmetic"])
@pytest.mark.parametrize("command", [["progress", "--json"], ["history", "--json"],
                                     ["review", "1", "--json"], ["next", "--json"]])
def test_damaged_kept_marks_never_print_nan_or_infinity(run: Run, value: float, field: str,
                                                        command: list[str]) -> None:
    _practised(run)
    _summary_with(field, value)
    result = run(*command, ok=False)
    _clean(result)
    _no_nan(result.stdout)


def test_damaged_kept_marks_are_remarked_to_real_numbers(run: Run) -> None:
    _practised(run)
    _summary_with("share", float("nan"))
    point = _progress(run)["drills"][0]["points"][0]
    assert 0 <= point["share"] <= 1


@pytest.mark.parametrize("command", [["progress", "--json"], ["export", "1"],
                                     ["review", "1", "--json"],
                                     ["cohort", DRILL, "--json"], ["export", "1", "--format", "md"],
                                     ["progress", "--format", "html"]])
def test_an_infinite_answer_time_is_never_printed(run: Run, command: list[str]) -> None:
    _practised(run)
    store_sql("UPDATE answers SET seconds = 9e999 WHERE step_id = 'shape-layers'")
    result = run(*command, ok=False)
    _clean(result)
    _no_nan(result.stdout)


def test_an_infinite_answer_time_reads_as_a_week_at_most(run: Run) -> None:
    _practised(run)
    store_sql("UPDATE answers SET seconds = 9e999 WHERE step_id = 'shape-layers'")
    steps = {s["id"]: s for s in json.loads(run("export", "1").stdout)["steps"]}
    assert steps["shape-layers"]["seconds"] == 7 * 24 * 3600


@pytest.mark.parametrize("command", [["export", "1"], ["progress", "--json"],
                                     ["review", "1", "--json"]])
def test_infinite_hints_and_budget_are_no_crash(run: Run, command: list[str]) -> None:
    _practised(run)
    store_sql("UPDATE answers SET hints = 9e999, budget_seconds = 9e999"
         " WHERE step_id = 'shape-layers'")
    result = run(*command, ok=False)
    _clean(result)
    _no_nan(result.stdout)


@pytest.mark.parametrize("command", [["next", "--json"], ["next"]])
def test_an_infinite_last_score_in_a_drill_card_is_not_shown(run: Run,
                                                             command: list[str]) -> None:
    _practised(run)
    store_sql("UPDATE schedule SET last_share = 9e999")
    result = run(*command, ok=False)
    _clean(result)
    _no_nan(result.stdout)
    assert "inf%" not in result.stdout


def test_nan_in_stored_params_is_not_exported(run: Run) -> None:
    _practised(run)
    store_sql("UPDATE attempts SET params = '{\"x\": NaN}'")
    result = run("export", "1", ok=False)
    _clean(result)
    _no_nan(result.stdout)


def test_an_infinite_reviewer_score_is_ignored(run: Run) -> None:
    _practised(run)
    run("review", "1", "--set", "levers=2")
    store_sql("UPDATE overrides SET score = 9e999")
    result = run("review", "1", "--json", ok=False)
    _clean(result)
    _no_nan(result.stdout)
