"""What `kvdrill progress` shows, gathered from your own attempts (imported ones are other
people's and stay out): whether you are ready (the shipped drills whose newest complete attempt
sounds Solid or better, and the weakest skills), each skill's card (its recall tomorrow, when it
is due, how its last answers went, the last mistake it matched) and each drill's series, a
point per complete attempt (the rubric's dimensions, the level, the time against the budget).

Recall is the chance of a right answer a day from now: FSRS's retrievability of the skill's
card then (at the moment of an answer it is 1 for every card, right or wrong, so it is never
read now), and for a skill missed at its last answer no more than the share of its last answers
that were right, so a skill just missed never reads as known.

One count: a skill's steps, how many were missed (wrong, skipped or with a hint: rated Again),
its last answers and its weeks all come from the same attempts, so the table and the week grid
agree. The work is bounded, so it costs the same with a hundred stored attempts or ten
thousand: per drill, the newest SERIES_POINTS complete attempts, with their kept marks
(re-marked once when stale, as history's trends are) and their answers read in a few queries;
the skill cards as `next` keeps them.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import Any

from trainer.errors import KvdrillError
from trainer.store import moments, schedule
from trainer.store.database import Store
from trainer.store.kept_marks import Keeper

SERIES_POINTS = 50  # the newest complete attempts of each drill in its series
LAST_ANSWERS = 8  # ratings shown per skill, oldest to newest
WEEKS = 12  # the newest weeks in the skills-by-week grid
WEAKEST = 3  # skills named in the readiness line
WEAK_RECALL = 0.9  # below this a skill is slipping, whatever its last rating
RECALL_AFTER = timedelta(days=1)  # recall is the chance of a right answer this long from now
RECALL_WHEN = "tomorrow"
RATING_ORDER = ("Again", "Hard", "Good", "Easy")


def progress_data(store: Store, now: datetime | None = None) -> dict[str, Any]:
    """Everything `kvdrill progress` shows, as plain JSON-able values."""
    now = now or datetime.now(UTC)
    shipped = _shipped()
    with Keeper(store) as keeper:
        cards = keeper.skill_cards()
        drills, recent = _drills(store, keeper, set(shipped))
        notes = [keeper.notes[attempt_id] for attempt_id in sorted(keeper.notes)]
    by_skill = _answers_by_skill(recent)
    weeks = _weeks(recent)
    skills = _ranked([_skill_entry(card, by_skill.get(card.skill, {}),
                                   _by_week(card.skill, recent, weeks), now)
                      for card in cards if card.reviews])
    weakest = [s["skill"] for s in skills if s["weak"]][:WEAKEST]
    solid = sorted(d["drill"] for d in drills if d["solid"] and d["shipped"])
    return {
        "complete_attempts": store.count_own("complete"),
        "unfinished_attempts": store.count_own("incomplete"),
        "readiness": {"solid": len(solid), "drills": len(shipped), "solid_drills": solid,
                      "weakest": weakest},
        "recall_when": RECALL_WHEN,
        "recall_at": (now + RECALL_AFTER).isoformat(),
        "skills": skills,
        "drills": drills,
        "weeks": [week.isoformat() for week in weeks],
        "series_points": SERIES_POINTS,
        # stored times that are not usable dates, by attempt: repaired or left out, and said
        "notes": notes,
    }


def _shipped() -> list[str]:
    """The drills `kvdrill list` shows (none when there is no drills folder)."""
    from trainer.drills import catalog

    try:
        return [str(entry["id"]) for entry in catalog.drill_list()]
    except KvdrillError:
        return []


def _drills(store: Store, keeper: Keeper, shipped: set[str]
            ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Each drill with complete attempts of your own: its series, oldest first; and, per
    attempt in those series, when it finished and each skill's steps (verdict, rating)."""
    drills: list[dict[str, Any]] = []
    recent: list[dict[str, Any]] = []
    for drill_id in store.drill_ids():
        complete = store.count_complete(drill_id)
        if not complete:
            continue
        attempts = list(reversed(store.complete_attempts(drill_id, limit=SERIES_POINTS)))
        keeper.marked.clear()
        rows = keeper.summaries(attempts, count_answered=False, remember=True)
        times = store.step_times(a.id for a in attempts)
        points: list[dict[str, Any]] = []
        maxima: dict[str, Any] = {}
        note = None
        for attempt, row in zip(attempts, rows, strict=True):
            if row["share"] is None:  # not re-markable today: its scores are not to be trusted
                note = row["note"]
                continue
            given = times.get(attempt.id, {})
            points.append({
                "attempt": attempt.id, "started_at": attempt.started_at,
                "finished_at": attempt.finished_at,
                "scores": dict(row["scores"]), "share": round(float(row["share"]), 4),
                "level": row["level"],
                "seconds": round(sum(t[0] for t in given.values()), 1),
                "budget_seconds": sum(t[1] for t in given.values()),
            })
            maxima = dict(row["maxima"])
            steps = (keeper.marked.get(attempt.id) or {}).get("steps", {})
            skills: dict[str, list[tuple[str, str]]] = {}
            for step_id, skill in keeper.skills_of(attempt).items():
                verdict = (steps.get(step_id) or ["unanswered", None])[0] or "unanswered"
                _, _, hints, overtime = given.get(step_id, (0.0, 0, 0, False))
                rating = schedule.step_rating(verdict, hints, overtime)
                skills.setdefault(skill, []).append((verdict, rating.name))
            when = keeper.when(attempt)  # None: no usable time (said in keeper.notes)
            recent.append({"when": when or moments.EARLIEST, "id": attempt.id,
                           "skills": skills, "week": None if when is None else _monday(when)})
        level = points[-1]["level"] if points else None
        drills.append({"drill": drill_id, "shipped": drill_id in shipped,
                       "complete": complete, "shown": len(points),
                       "maxima": maxima, "level": level, "solid": level is not None,
                       "note": None if points else note, "points": points})
    keeper.marked.clear()
    drills.sort(key=lambda d: d["drill"])
    recent.sort(key=lambda r: (r["when"], r["id"]))
    return drills, recent


def missed(rating: str) -> bool:
    """A step rated Again: wrong, skipped, or answered with a hint."""
    return rating == "Again"


def _answers_by_skill(recent: Iterable[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """skill → its steps in these attempts and how many were missed, and the rating of each
    attempt that asked it (the worst of its steps, as its card was rated), oldest first, the
    newest LAST_ANSWERS."""
    found: dict[str, dict[str, Any]] = {}
    for attempt in recent:
        for skill, steps in attempt["skills"].items():
            entry = found.setdefault(skill, {"steps": 0, "missed": 0, "ratings": []})
            entry["steps"] += len(steps)
            entry["missed"] += sum(1 for _, rating in steps if missed(rating))
            entry["ratings"].append(min((rating for _, rating in steps),
                                        key=RATING_ORDER.index))
    for entry in found.values():
        entry["ratings"] = entry["ratings"][-LAST_ANSWERS:]
    return found


def _monday(when: datetime) -> date:
    day = when.astimezone(UTC).date()
    return day - timedelta(days=day.weekday())


def _weeks(recent: list[dict[str, Any]]) -> list[date]:
    """The weeks (their Mondays) from the first practised to the newest, the newest WEEKS."""
    mondays = [r["week"] for r in recent if r["week"] is not None]
    if not mondays:
        return []
    last = max(mondays)
    first = max(min(mondays), last - timedelta(weeks=WEEKS - 1))
    return [first + timedelta(weeks=n) for n in range((last - first).days // 7 + 1)]


def _by_week(skill: str, recent: list[dict[str, Any]], weeks: list[date]
             ) -> list[dict[str, int] | None]:
    """Per week: how many of the skill's steps were asked, and how many right (not missed:
    right without a hint, in time or over it), counted as the skills table counts them."""
    if not weeks:
        return []
    cells: dict[date, dict[str, int]] = {}
    for attempt in recent:
        steps = attempt["skills"].get(skill)
        monday = attempt["week"]
        if not steps or monday is None or monday < weeks[0]:
            continue
        cell = cells.setdefault(monday, {"right": 0, "steps": 0})
        cell["steps"] += len(steps)
        cell["right"] += sum(1 for _, rating in steps if not missed(rating))
    return [cells.get(week) for week in weeks]


def _ranked(skills: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rated skills, weakest first: the lowest recall (to two figures), then missed at the
    last answer, then over time, then the most often missed."""
    def order(skill: dict[str, Any]) -> tuple[Any, ...]:
        last = skill["last_rating"]
        rating = RATING_ORDER.index(last) if last in RATING_ORDER else len(RATING_ORDER)
        share = skill["missed"] / skill["answers"] if skill["answers"] else 0.0
        return (round(skill["recall"], 2), rating, -share, skill["skill"])

    return sorted(skills, key=order)


def recall_then(card: schedule.SkillCard, ratings: list[str], now: datetime) -> float:
    """The chance of a right answer at now + RECALL_AFTER: FSRS's retrievability of the card
    then, and for a skill missed at its last answer no more than the share of `ratings` (its
    last answers) that were right."""
    chance = schedule.recall(card.card, now + RECALL_AFTER) if card.card else 0.0
    if ratings and missed(ratings[-1]):
        chance = min(chance, sum(1 for r in ratings if not missed(r)) / len(ratings))
    return chance


def _skill_entry(card: schedule.SkillCard, answered: dict[str, Any],
                 by_week: list[dict[str, int] | None], now: datetime) -> dict[str, Any]:
    from trainer.capacity.wrong_paths import WRONG_PATHS

    path = WRONG_PATHS.get(card.last_mistake or "")
    ratings = answered.get("ratings") or ([card.last_rating] if card.last_rating else [])
    last = ratings[-1] if ratings else None
    chance = recall_then(card, ratings, now)
    if answered:  # counted from the attempts the week grid counts
        steps, missed_steps = answered["steps"], answered["missed"]
    else:  # none of its attempts is shown (not re-markable today): as its card counts them
        steps, missed_steps = card.steps, card.wrong
    return {
        "skill": card.skill,
        "recall": round(chance, 3),
        "due": card.due.isoformat() if card.due else None,
        "due_in_days": None if card.due is None else
        round((card.due - now).total_seconds() / 86400, 2),
        "last_rating": last,
        "last_answers": ratings,
        "answers": steps,
        "missed": missed_steps,
        "attempts": card.reviews,
        "last_mistake": card.last_mistake,
        "last_mistake_text": path.mistake if path else None,
        "last_drill": card.last_drill,
        "weak": last in ("Again", "Hard") or chance < WEAK_RECALL,
        "by_week": by_week,
    }
