"""Marks and scores are kept in the store, not re-computed: history, next and review do work in
proportion to what they show (issue 12). Re-marking is counted by wrapping transcripts.build,
the one function that marks a stored attempt from its raw answers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import Result
from old_stores import schema_2_store

from trainer.app.session import drill_hash
from trainer.drills.loader import find_drill
from trainer.store import kept_marks as progress
from trainer.store import transcripts
from trainer.store.database import Store, default_path
from trainer.store.schema import SCHEMA_VERSION

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"


def _answers() -> list[tuple[str, str]]:
    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    return [(str(k), " ".join(str(v).split())) for k, v in data.items()]


def finish_practice(run: Run) -> int:
    """One complete attempt through the real piped practice; its id."""
    run("practice", DRILL, input="".join(f"{a}\n" for _, a in _answers()))
    with Store() as store:
        attempt = store.attempts(limit=1)[0]
    assert attempt.status == "complete"
    return attempt.id


def stored_attempt(store: Store, *, complete: bool, answers: list[tuple[str, str]] | None = None
                   ) -> int:
    """An attempt written through the store API alone (nothing kept), as another kvdrill or a
    copied store leaves it."""
    _, path = find_drill(DRILL)
    attempt_id = store.create_attempt(DRILL, drill_hash(path), None, {}, "2", "practice", False,
                                      drill_text=path.read_text(encoding="utf-8"))
    for step_id, raw in answers if answers is not None else _answers():
        store.record_answer(attempt_id, step_id, raw, None, None, "correct", None, False, 0,
                            5.0, 60, False)
    if complete:
        store.finish(attempt_id)
    return attempt_id


@pytest.fixture
def remarks(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every re-mark of a stored attempt from its raw answers, as it happens."""
    calls: list[Any] = []
    real = transcripts.build

    def counted(meta: dict[str, Any], *args: Any, **kwargs: Any) -> dict[str, Any]:
        calls.append(meta.get("id"))
        return real(meta, *args, **kwargs)

    monkeypatch.setattr(transcripts, "build", counted)
    return calls


def _db() -> sqlite3.Connection:
    return sqlite3.connect(default_path())


def _history(run: Run, *args: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads(run("history", "--json", *args).stdout)
    return rows


# -- kept when made ---------------------------------------------------------------------------

def test_finishing_a_practice_keeps_its_marks_under_todays_stamp(run: Run) -> None:
    attempt_id = finish_practice(run)
    with Store() as store:
        kept = store.scores([attempt_id])[attempt_id]
        assert kept.stamp == progress.Keeper(store).stamp(store.attempt(attempt_id))
    assert kept.summary["share"] > 0.5 and kept.summary["steps"]["bytes-per-token"][0] == \
        "correct"


def test_finishing_a_practice_puts_its_rating_in_the_drills_card(run: Run) -> None:
    attempt_id = finish_practice(run)
    with Store() as store:
        card = store.schedule_card(DRILL)
        assert card is not None and card.reviews == 1 and card.last_share is not None
        assert store.unscheduled(DRILL) == []
    assert _db().execute("SELECT scheduled FROM attempts WHERE id = ?",
                         (attempt_id,)).fetchone() == (1,)


# -- history ----------------------------------------------------------------------------------

def test_history_shows_kept_scores_without_re_marking(run: Run, remarks: list[Any]) -> None:
    finish_practice(run)
    remarks.clear()
    (row,) = _history(run)
    assert row["scored"] and row["scores"]["arithmetic"] > 0 and remarks == []


def test_history_shows_what_was_kept_not_a_fresh_computation(run: Run) -> None:
    attempt_id = finish_practice(run)
    conn = _db()
    summary = json.loads(conn.execute("SELECT summary FROM scores").fetchone()[0])
    summary["scores"]["levers"] = 0.25  # a value no marking gives this sheet
    conn.execute("UPDATE scores SET summary = ? WHERE attempt_id = ?",
                 (json.dumps(summary), attempt_id))
    conn.commit()
    assert _history(run)[0]["scores"]["levers"] == 0.25


def test_a_mark_kept_under_another_stamp_is_re_marked_once_and_kept_again(
        run: Run, remarks: list[Any]) -> None:
    attempt_id = finish_practice(run)
    conn = _db()
    conn.execute("UPDATE scores SET stamp = 'an older kvdrill'")
    conn.commit()
    remarks.clear()
    _history(run)
    _history(run)
    assert remarks == [attempt_id]
    with Store() as store:
        assert store.scores([attempt_id])[attempt_id].stamp != "an older kvdrill"


def test_a_new_answer_makes_the_kept_mark_stale(run: Run, remarks: list[Any]) -> None:
    attempt_id = finish_practice(run)
    with Store() as store:
        store.record_answer(attempt_id, "bytes-per-token", "64 KiB", None, None, "wrong", None,
                            False, 0, 9.0, 60, False)
    remarks.clear()
    before = _history(run)[0]["scores"]["arithmetic"]
    assert remarks == [attempt_id]
    with Store() as store:
        kept = store.scores([attempt_id])[attempt_id]
    assert kept.summary["steps"]["bytes-per-token"][0] == "wrong"
    assert kept.summary["scores"]["arithmetic"] == before


def test_copies_of_the_same_answers_are_re_marked_once_per_run(
        run: Run, remarks: list[Any]) -> None:
    with Store() as store:
        ids = [stored_attempt(store, complete=True) for _ in range(12)]
    rows = _history(run)
    assert len(remarks) == 1 and {r["id"] for r in rows} == set(ids)
    assert len({json.dumps(r["scores"], sort_keys=True) for r in rows}) == 1
    with Store() as store:
        assert set(store.scores(ids)) == set(ids)  # all kept, for the next run


def test_history_lists_the_newest_20_by_default(run: Run) -> None:
    with Store() as store:
        ids = [stored_attempt(store, complete=False, answers=[]) for _ in range(23)]
    assert [r["id"] for r in _history(run)] == ids[::-1][:20]
    assert "(20 of 23 attempts; --all or --limit N shows more)" in run("history").stdout


def test_history_limit_and_all_choose_how_many(run: Run) -> None:
    with Store() as store:
        ids = [stored_attempt(store, complete=False, answers=[]) for _ in range(23)]
    assert [r["id"] for r in _history(run, "--limit", "3")] == ids[::-1][:3]
    assert [r["id"] for r in _history(run, "--all")] == ids[::-1]


def test_history_refuses_a_limit_below_one(run: Run) -> None:
    result = run("history", "--limit", "0", ok=False)
    assert result.exit_code == 2 and "--limit" in result.output


def test_an_incomplete_attempt_is_listed_but_not_scored(run: Run, remarks: list[Any]) -> None:
    with Store() as store:
        attempt_id = stored_attempt(store, complete=False, answers=_answers()[:3])
    (row,) = _history(run)
    assert (row["id"], row["status"], row["answered"]) == (attempt_id, "incomplete", 3)
    assert not row["scored"] and row["scores"] == {} and remarks == []
    assert "not scored" in run("history").stdout


def test_an_incomplete_attempt_stays_out_of_the_trend(run: Run) -> None:
    finish_practice(run)
    with Store() as store:
        stored_attempt(store, complete=False, answers=_answers()[:2])
    text = run("history").stdout
    assert f"{DRILL} (1 complete attempt)" in text
    assert "▁" not in text.split("Trends")[1]  # no zero point dragged in by the incomplete one


def test_the_trend_line_holds_at_most_the_newest_complete_attempts(run: Run) -> None:
    with Store() as store:
        for _ in range(progress.TREND_POINTS + 5):
            stored_attempt(store, complete=True)
    trend = run("history").stdout.split("Trends")[1]
    assert f"({progress.TREND_POINTS + 5} complete attempts, the last " \
           f"{progress.TREND_POINTS})" in trend
    assert any(line.strip().startswith("arithmetic") and
               line.split()[1] == "█" * progress.TREND_POINTS for line in trend.splitlines())


# -- review -----------------------------------------------------------------------------------

def test_review_re_marks_its_one_attempt_only(run: Run, remarks: list[Any]) -> None:
    with Store() as store:
        ids = [stored_attempt(store, complete=True) for _ in range(6)]
    remarks.clear()
    run("review", str(ids[2]))
    assert remarks == [ids[2]]


def test_review_flags_a_kept_mark_that_disagrees_with_todays(run: Run) -> None:
    attempt_id = finish_practice(run)
    conn = _db()
    summary = json.loads(conn.execute("SELECT summary FROM scores").fetchone()[0])
    summary["steps"]["bytes-per-token"][0] = "wrong"
    conn.execute("UPDATE scores SET summary = ?", (json.dumps(summary),))
    conn.commit()
    text = run("review", str(attempt_id)).stdout
    assert "disagrees with the marks kept: bytes-per-token wrong → correct" in " ".join(
        text.split())
    with Store() as store:  # and the kept marks are today's again
        assert store.scores([attempt_id])[attempt_id].summary["steps"]["bytes-per-token"][0] \
            == "correct"


def test_review_says_nothing_when_the_kept_marks_agree(run: Run) -> None:
    attempt_id = finish_practice(run)
    assert "Flagged" not in run("review", str(attempt_id)).stdout


def test_the_reviews_trend_comes_from_kept_scores(run: Run, remarks: list[Any]) -> None:
    finish_practice(run)
    second = finish_practice(run)
    remarks.clear()
    text = run("review", str(second)).stdout
    assert "Trend over 2 attempts" in text and remarks == [second]


# -- next -------------------------------------------------------------------------------------

def test_next_reads_the_kept_card_without_re_marking(run: Run, remarks: list[Any]) -> None:
    finish_practice(run)
    remarks.clear()
    schedule = json.loads(run("next", "--json").stdout)["schedule"]
    (card,) = [c for c in schedule if c["drill"] == DRILL]
    assert card["attempts"] == 1 and card["due"] is not None and remarks == []


def test_next_puts_in_an_attempt_finished_without_its_card_once(
        run: Run, remarks: list[Any]) -> None:
    with Store() as store:
        attempt_id = stored_attempt(store, complete=True)
    for _ in range(2):
        schedule = json.loads(run("next", "--json").stdout)["schedule"]
    assert [c["attempts"] for c in schedule if c["drill"] == DRILL] == [1]
    assert remarks == [attempt_id]


def test_next_leaves_incomplete_attempts_out_of_the_schedule(run: Run) -> None:
    with Store() as store:
        stored_attempt(store, complete=False, answers=_answers()[:4])
    payload = json.loads(run("next", "--json").stdout)
    assert [c["attempts"] for c in payload["schedule"] if c["drill"] == DRILL] == [0]


# -- old stores -------------------------------------------------------------------------------

def _schema_2_store(path: Path) -> int:
    """The 8B drill's every answer, in a store from before marks were kept."""
    return schema_2_store(path, DRILL, _answers())


def test_a_schema_2_store_upgrades_in_place_losing_nothing() -> None:
    path = default_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    _schema_2_store(path)
    with Store(path, read_only=True) as old:
        before = (old.attempts(), old.answers(1, latest_only=False), old.overrides(1))
    with Store(path) as store:
        after = (store.attempts(), store.answers(1, latest_only=False), store.overrides(1))
    assert after == before
    assert sqlite3.connect(path).execute("PRAGMA user_version").fetchone()[0] == \
        SCHEMA_VERSION == 5


def test_an_upgraded_store_scores_its_old_attempts_once(run: Run, remarks: list[Any]) -> None:
    default_path().parent.mkdir(parents=True, exist_ok=True)
    _schema_2_store(default_path())
    Store().close()  # the upgrade practice does
    first = _history(run)
    second = _history(run)
    assert first == second and first[0]["scored"] and remarks == [1]


def test_history_reads_an_older_store_without_changing_it(run: Run) -> None:
    default_path().parent.mkdir(parents=True, exist_ok=True)
    _schema_2_store(default_path())
    before = default_path().read_bytes()
    (row,) = _history(run)
    assert row["scored"] and row["scores"]["arithmetic"] > 0
    assert json.loads(run("next", "--json").stdout)["drill"]
    assert default_path().read_bytes() == before


# -- the store reads a long history in batches -----------------------------------------------

def test_attempts_are_read_newest_first_in_batches_without_losing_any() -> None:
    with Store() as store:
        ids = [stored_attempt(store, complete=False, answers=[]) for _ in range(7)]
        read = [a.id for a in store.iter_attempts(batch=2)]
        limited = [a.id for a in store.iter_attempts(limit=5, batch=2)]
    assert read == ids[::-1] and limited == ids[::-1][:5]


def test_listed_attempts_leave_the_drill_text_out() -> None:
    with Store() as store:
        attempt_id = stored_attempt(store, complete=False, answers=[])
        listed = next(store.iter_attempts())
        assert listed.drill_text is None and store.attempt(attempt_id).drill_text


def test_a_card_that_fell_far_behind_catches_up_on_its_newest_attempts(run: Run) -> None:
    behind = progress.CATCH_UP_REVIEWS + 5
    with Store() as store:
        for _ in range(behind):
            stored_attempt(store, complete=True)
    schedule = json.loads(run("next", "--json").stdout)["schedule"]
    assert [c["attempts"] for c in schedule if c["drill"] == DRILL] == [progress.CATCH_UP_REVIEWS]
    with Store() as store:
        assert store.unscheduled(DRILL) == []  # the older ones count as taken in
