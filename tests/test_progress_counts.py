"""Progress that does not contradict itself (issue 38): recall is the chance of a right answer
tomorrow, never 1.00 on the day of an answer and never 0.9 or more for a skill just missed; the
skills table and the week grid count the same steps the same way (a right answer with a hint is
missed in both); a level is spelled one way in progress, cohort, review and export."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from fsrs import Rating

from trainer.store import progress, schedule
from trainer.store.database import FILE_NAME

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
SHEET = Path(__file__).parent / "sheets" / f"{DRILL}-correct.yaml"
LEVELS = {"Solid", "Senior", "Staff"}


def sheet() -> dict[str, str]:
    import yaml

    data = yaml.safe_load(SHEET.read_text(encoding="utf-8"))
    return {str(k): " ".join(str(v).split()) for k, v in data.items()}


def piped(run: Run, changes: dict[str, str]) -> None:
    answers = {**sheet(), **changes}
    run("practice", DRILL, input="".join(f"{a}\n" for a in answers.values()))


def progress_json(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run("progress", "--json").stdout)
    return data


# -- recall -----------------------------------------------------------------------------------

def skill_after(ratings: list[Rating], start: datetime) -> schedule.SkillCard:
    """A skill's card rated `ratings`, a day apart, the last at `start`."""
    state = schedule.SkillState.start("model-shape")
    for n, rating in enumerate(ratings):
        when = start - timedelta(days=len(ratings) - 1 - n)
        state = state.review([rating], "query-heads" if rating == Rating.Again else None,
                             DRILL, when)
    return state.skill_card(start)


def test_fsrs_alone_would_call_a_skill_just_missed_known_and_progress_does_not() -> None:
    """Right four days running, then missed: FSRS puts tomorrow's chance above 0.9 (its card
    assumes the answer was then learnt); progress shows at most the share of the last answers
    right, 4 of 5."""
    now = datetime(2026, 3, 2, 9, tzinfo=UTC)
    card = skill_after([Rating.Good] * 4 + [Rating.Again], now)
    assert card.card is not None
    assert schedule.recall(card.card, now + progress.RECALL_AFTER) >= 0.9
    assert schedule.recall(card.card, now) == 1.0  # the figure the issue saw: 1.00 on the day
    ratings = ["Good"] * 4 + ["Again"]
    assert progress.recall_then(card, ratings, now) == pytest.approx(0.8)
    assert progress.recall_then(card, ["Again"], now) == 0.0


def test_a_skill_right_at_its_last_answer_reads_fsrs_tomorrow_below_one() -> None:
    now = datetime(2026, 3, 2, 9, tzinfo=UTC)
    card = skill_after([Rating.Good], now)
    chance = progress.recall_then(card, ["Good"], now)
    assert card.card is not None
    assert chance == schedule.recall(card.card, now + timedelta(days=1))
    assert 0.9 <= chance < 1.0


def test_on_the_day_of_an_answer_no_recall_reads_1_and_a_skill_just_missed_reads_under_0_9(
        run: Run) -> None:
    piped(run, {})
    piped(run, {"shape-layers": "40", "shape-kv-heads": "32"})  # model-shape missed
    data = progress_json(run)
    assert data["recall_when"] == "tomorrow"
    skills = {s["skill"]: s for s in data["skills"]}
    assert all(s["recall"] < 1.0 for s in skills.values())
    shape = skills["model-shape"]
    assert shape["last_rating"] == "Again" and shape["recall"] < 0.9 and shape["weak"]
    assert data["skills"][0]["skill"] == "model-shape"  # weakest first
    text = run("progress").stdout
    assert "chance of a right answer tomorrow" in text
    row = next(line for line in text.splitlines() if line.startswith("model-shape "))
    assert row.split()[1] == f"{shape['recall']:.2f}"
    assert "model-shape (missed last time)" in text


# -- one count --------------------------------------------------------------------------------

def test_the_week_grid_and_the_table_count_a_right_answer_with_a_hint_alike(run: Run) -> None:
    piped(run, {})
    piped(run, {"shape-layers": "40"})
    conn = sqlite3.connect(_home() / FILE_NAME)
    with conn:  # the newest attempt's right head_dim was given after a hint
        conn.execute("UPDATE answers SET hints = 1 WHERE step_id = 'shape-head-dim' AND "
                     "attempt_id = (SELECT MAX(id) FROM attempts)")
    conn.close()
    data = progress_json(run)
    for skill in data["skills"]:
        cells = [c for c in skill["by_week"] if c]
        assert sum(c["steps"] for c in cells) == skill["answers"], skill["skill"]
        assert sum(c["steps"] - c["right"] for c in cells) == skill["missed"], skill["skill"]
    shape = next(s for s in data["skills"] if s["skill"] == "model-shape")
    assert (shape["missed"], shape["answers"]) == (2, 8)  # the 40 layers and the hint
    html = run("progress", "--format", "html").stdout
    grid = html[html.index('class="weeks"'):]
    assert re.search(r'title="6 of 8 steps right, 2 missed">6/8<', grid)
    assert ">2 of 8<" in html  # the table's Missed column, from the same count
    assert "Missed" in run("progress").stdout


def _home() -> Path:
    import os

    return Path(os.environ["KVDRILL_HOME"])


# -- one spelling of levels -------------------------------------------------------------------

def page_text(html: str) -> str:
    """What a page shows: no style sheet (its `1px solid` borders), no tags."""
    return unescape(re.sub(r"<style.*?</style>|<[^>]*>", " ", html, flags=re.DOTALL))


def test_a_level_is_spelled_one_way_in_every_view(run: Run) -> None:
    piped(run, {})
    attempt = json.loads(run("history", "--json").stdout)[0]
    assert attempt["level"] in {"solid", "senior", "staff"}  # the data keeps the rubric's id
    title = attempt["level"].capitalize()
    shown = {
        "progress": run("progress").stdout,
        "progress md": run("progress", "--format", "md").stdout,
        "progress html": page_text(run("progress", "--format", "html").stdout),
        "cohort": run("cohort", DRILL).stdout,
        "cohort md": run("cohort", DRILL, "--format", "md").stdout,
        "cohort html": page_text(run("cohort", DRILL, "--format", "html").stdout),
        "review": run("review", str(attempt["id"])).stdout,
        "export md": run("export", str(attempt["id"]), "--format", "md").stdout,
    }
    for view, text in shown.items():
        words = set(re.findall(r"(?<![-\w.])(solid|senior|staff)(?![-\w])", text,
                               flags=re.IGNORECASE))
        assert title in words and words <= LEVELS, (view, words)


def test_the_candidate_pages_sample_says_what_progress_says(run: Run) -> None:
    """docs/candidate.md shows progress at 80 columns: its headings, column heads and legend
    are the ones progress prints today."""
    from trainer.store.database import Store
    from trainer.views.progress import progress_text

    piped(run, {"shape-kv-heads": "32"})
    store = Store(read_only=True)
    try:
        shown = progress_text(progress.progress_data(store), 80).splitlines()
    finally:
        store.close()
    page = (Path(__file__).parent.parent / "docs" / "candidate.md").read_text(encoding="utf-8")
    sample = page[page.index("```text\nYour progress:"):].split("\n```", 1)[0].splitlines()
    start = shown.index(next(line for line in shown if line.startswith("Skills, weakest")))
    heads = shown[start:start + 3]  # the heading (two lines at 80 columns), the columns
    said = sample[sample.index(heads[0]):][:3]
    assert said[:2] == heads[:2] and said[2].split() == heads[2].split()
    legend = shown.index(next(line for line in shown if line.startswith("Last answers, ")))
    assert shown[legend:legend + 2] == sample[sample.index(shown[legend]):][:2]
