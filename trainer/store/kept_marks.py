"""What history, next and review show about progress, from marks kept in the store.

Each attempt's marks and rubric score are kept (store.ScoreRow) with the stamp they were made
under: the marking version (kvdrill's and the solver's), the hashes of the drill file and the
rubric. A kept mark is used while its stamp and the attempt's newest answer still match; a
stale or missing one is re-marked from the raw answers once, and kept again when the store is
writable. So history, next and review do work in proportion to what they show, not to how many
attempts are stored. Attempts with the same drill, variant and answers (copies) are re-marked
once per run.

Only complete attempts are scored for trends and the schedule: an incomplete one is listed
with what was answered, and left out of both.

Keeping marks never changes an attempt: it writes derived rows (scores, the schedule's cards)
into a store already at the current schema, and is skipped on a read-only store or file, or an
older schema (which `practice` upgrades).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from contextlib import suppress
from datetime import datetime
from typing import Any

from trainer import MARKING_VERSION, SOLVER_VERSION, __version__
from trainer.errors import KvdrillError, StoreError
from trainer.reading.sparkline import sparkline
from trainer.records import field, record
from trainer.store import moments
from trainer.store.database import (
    DAMAGED,
    AttemptRow,
    DamagedAttempt,
    ScheduleRow,
    ScoreRow,
    SkillRow,
    Store,
)
from trainer.store.schema import SCHEMA_VERSION

TREND_POINTS = 20  # complete attempts per drill in a trend line
# The newest complete attempts a card takes in at once when it has fallen behind (an upgraded
# store, attempts copied in): enough for FSRS's state, which the latest reviews dominate, and
# a bound on the re-marking a first `next` can do. The older ones are counted as taken in.
CATCH_UP_REVIEWS = 50
CATCH_UP_SKILL_ATTEMPTS = 200


def marking_version() -> str:
    return f"{__version__}/{SOLVER_VERSION}/{MARKING_VERSION}"


@record(frozen=False)
class Keeper:
    """Marks attempts as needed and keeps what it marked. One per command run."""

    store: Store
    _hashes: dict[str, tuple[str, str]] | None = None
    _version: str | None = None
    _by_content: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)
    _pending: list[ScoreRow] = field(default_factory=list)
    _opened: Store | bool | None = None  # the writer: None not tried yet, False none to be had
    # attempt id → its summary (scores and each step's verdict), as summaries() last found it
    marked: dict[int, dict[str, Any]] = field(default_factory=dict)
    _skills_by_hash: dict[str, dict[str, str]] = field(default_factory=dict)
    # attempt id → what is wrong with its stored times (moments.attempt_time), as found
    notes: dict[int, str] = field(default_factory=dict)

    # -- stamps -------------------------------------------------------------------------------

    def stamp(self, attempt: AttemptRow) -> str:
        """What an attempt's marks depend on now: the marking version and, when the drill file
        of its id is the one practised, that file's and its rubric's hashes; otherwise the
        practised drill's hash with the current file's (a change to either re-marks it)."""
        if self._hashes is None:
            from trainer.drills import catalog

            try:
                self._hashes = catalog.drill_hashes()
            except KvdrillError:  # no drills folder: every mark is made afresh
                self._hashes = {}
        if self._version is None:
            self._version = marking_version()
        drill_sha, rubric_sha = self._hashes.get(attempt.drill_id, ("-", "-"))
        if drill_sha == attempt.drill_hash:
            return f"{self._version}:{drill_sha}:{rubric_sha}"
        return f"{self._version}:{attempt.drill_hash}:{drill_sha}:{rubric_sha}"

    # -- summaries ----------------------------------------------------------------------------

    def summaries(self, attempts: Iterable[AttemptRow], *, score_incomplete: bool = False,
                  count_answered: bool = True, keep: bool = True,
                  remember: bool = False) -> list[dict[str, Any]]:
        """One history row per attempt, in the order given. Complete attempts (and incomplete
        ones with score_incomplete) carry their scores, from kept marks where fresh, else
        re-marked; incomplete ones otherwise list what was answered and are not scored."""
        attempts = list(attempts)
        ids = [a.id for a in attempts]
        newest = self.store.latest_answer_ids(ids)
        kept = self.store.scores(ids)
        answered = self.store.answered_counts(ids) if count_answered else {}
        summaries: dict[int, dict[str, Any]] = {}
        stale: list[tuple[AttemptRow, str]] = []
        for attempt in attempts:
            if attempt.status != "complete" and not score_incomplete:
                continue
            stamp = self.stamp(attempt)
            row = kept.get(attempt.id)
            if row is not None and row.stamp == stamp and row.answers_seen == newest[attempt.id] \
                    and well_formed(row.summary):
                summaries[attempt.id] = row.summary
            else:
                stale.append((attempt, stamp))
        if stale:
            digests = self.store.answer_digests(a.id for a, _ in stale)
            for attempt, stamp in stale:
                summaries[attempt.id] = self._remark(attempt, stamp, newest[attempt.id],
                                                     digests[attempt.id])
        if keep:
            self.flush()
        if remember:  # the skill cards read each step's verdict from here
            self.marked.update(summaries)
        imported = self.store.imports(ids) if count_answered else {}
        return [_history_row(a, answered.get(a.id, 0), summaries.get(a.id),
                             imported[a.id].candidate if a.id in imported else None)
                for a in attempts]

    def fresh(self, attempt: AttemptRow, transcript: dict[str, Any]) -> tuple[dict[str, Any],
                                                                            str | None]:
        """Keep the summary of a transcript just re-marked (review, the end of a practice)
        and say how it differs from what was kept, if it does."""
        newest = self.store.latest_answer_ids([attempt.id])[attempt.id]
        stamp = self.stamp(attempt)
        summary = summary_of(transcript)
        before = self.store.scores([attempt.id]).get(attempt.id)
        if before is not None and not well_formed(before.summary):
            before = None  # damaged derived data: replaced, never compared or shown
        self._pending.append(ScoreRow(attempt.id, stamp, newest, summary))
        self.flush()
        if before is None or before.summary == summary:
            return summary, None
        if before.stamp != stamp:
            return summary, ("its kept marks were made with another version of kvdrill or of "
                             "the drill; re-marked today: " + _difference(before.summary,
                                                                          summary))
        return summary, "today's re-mark disagrees with the marks kept: " + _difference(
            before.summary, summary)

    def _remark(self, attempt: AttemptRow, stamp: str, newest: int,
                answers: str) -> dict[str, Any]:
        """`answers`: the store's answer_digests text for the attempt; attempts that agree in
        it and in drill, variant and givens are marked once."""
        from trainer.store import transcripts

        content = (stamp, attempt.drill_hash, attempt.variant,
                   json.dumps(attempt.params, sort_keys=True),
                   json.dumps(attempt.target, sort_keys=True), answers)
        summary = self._by_content.get(content)
        if summary is None:
            full = self.store.attempt(attempt.id)  # with its drill's text, to mark against
            try:
                answers_of = self.store.answers(attempt.id)
            except DamagedAttempt as damaged:  # said by the command, the others go on
                DAMAGED.setdefault(attempt.id, damaged.why)
                return {"scores": {}, "maxima": {}, "share": None, "level": None, "steps": {},
                        "note": f"attempt {attempt.id} is damaged ({damaged.why}): left out"}
            rows = [{"id": r.step_id, "answer": r.raw, "verdict": r.verdict,
                     "seconds": r.seconds, "budget_seconds": r.budget_seconds,
                     "overtime": r.overtime, "hints": r.hints}
                    for r in answers_of]
            summary = summary_of(transcripts.build(transcripts.attempt_meta(full), rows,
                                                   unmarked_ok=True))
            self._by_content[content] = summary
        if summary["share"] is not None:  # not re-markable today: nothing worth keeping
            self._pending.append(ScoreRow(attempt.id, stamp, newest, summary))
        return summary

    def flush(self) -> None:
        """Write what was marked into the store, when it can take it; never an error."""
        pending, self._pending = self._pending, []
        writer = self._writer() if pending else None
        if writer is not None:
            with suppress(StoreError):  # failing to keep derived rows costs only speed later
                writer.save_scores(pending)

    def _writer(self) -> Store | None:
        """A writable Store on the same file for derived rows (opened once), or None when one
        cannot be had without changing anything else: a read-only file or folder, an older
        schema (practice upgrades it), no file at all."""
        if not self.store.read_only:
            return self.store
        if self._opened is None:
            self._opened = False
            if self.store.version == SCHEMA_VERSION and self.store.path.exists():
                with suppress(StoreError):
                    self._opened = Store(self.store.path)
        return self._opened if isinstance(self._opened, Store) else None

    def close(self) -> None:
        if isinstance(self._opened, Store):
            self._opened.close()
        self._opened = None

    def __enter__(self) -> Keeper:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- trends -------------------------------------------------------------------------------

    def trends(self, drill_ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        """Per drill with complete attempts: how many there are and the newest TREND_POINTS
        of them, oldest first, with their scores."""
        result = []
        for drill_id in (self.store.drill_ids() if drill_ids is None else drill_ids):
            count = self.store.count_complete(drill_id)
            if not count:
                continue
            recent = self.summaries(self.store.complete_attempts(drill_id, limit=TREND_POINTS))
            points = [r for r in reversed(recent) if r["share"] is not None]
            if points:
                result.append({"drill": drill_id, "complete": count, "points": points})
        return result

    def kept_trend(self, drill_id: str) -> list[dict[str, Any]]:
        """A drill's trend from kept scores alone (one indexed query; nothing re-marked), oldest
        first: what review shows beside its one attempt."""
        return [{"id": attempt_id, "started_at": started_at, "scores": summary["scores"]}
                for attempt_id, started_at, summary in
                self.store.kept_trend(drill_id, TREND_POINTS)
                if well_formed(summary)]

    # -- the schedule -------------------------------------------------------------------------

    def cards(self, drill_ids: Iterable[str]) -> list[Any]:
        """Each drill's spaced-repetition card (schedule.DrillCard), from its kept card plus
        the complete attempts not in it yet, which are then put in and kept."""
        from trainer.store import schedule

        cards = []
        for drill_id in drill_ids:
            kept = self.store.schedule_card(drill_id)
            pending = self.store.unscheduled(drill_id)
            state = schedule.CardState.start() if kept is None else schedule.CardState(
                kept.card, kept.reviews, kept.last_share, kept.last_rating)
            if pending:
                for batch in chunked(pending[-CATCH_UP_REVIEWS:], 500):
                    shares = [r["share"] for r in self.summaries(batch, count_answered=False,
                                                                 keep=False)]
                    for attempt, share in zip(batch, shares, strict=True):
                        when = self.when(attempt)
                        if share is not None and when is not None:
                            state = state.review(share, when)
                self.flush()
                writer = self._writer()
                if writer is not None:
                    with suppress(StoreError):
                        writer.save_schedule(ScheduleRow(drill_id, state.card, state.reviews,
                                                         state.last_share, state.last_rating),
                                             [a.id for a in pending])
            cards.append(state.drill_card(drill_id))
        return cards

    # -- skill cards --------------------------------------------------------------------------

    def skill_cards(self) -> list[Any]:
        """Every skill's card (schedule.SkillCard), from the kept cards plus the complete
        attempts whose answers are not in them yet, which are then put in and kept. Each step
        tagged with a skill rates it (schedule.step_rating) from its kept verdict and the
        answer's hints and time."""
        from trainer.store import schedule

        states = {row.skill: schedule.SkillState(
            row.skill, schedule.CardState(row.card, row.reviews, None, row.last_rating),
            row.steps, row.wrong, row.last_mistake, row.last_drill)
            for row in self.store.skill_cards()}
        pending = self.store.skills_pending(limit=None)
        skipped = pending[:-CATCH_UP_SKILL_ATTEMPTS]
        writer = self._writer() if skipped else None
        if writer is not None:
            with suppress(StoreError):
                writer.save_skills([], [a.id for a in skipped])
        for batch in chunked(pending[-CATCH_UP_SKILL_ATTEMPTS:], 500):
            self.marked.clear()
            self.summaries(batch, remember=True)
            answers = self.store.latest_answers(a.id for a in batch)
            changed: set[str] = set()
            for attempt in batch:
                summary = self.marked.get(attempt.id) or {}
                when = self.when(attempt)
                if summary.get("share") is None or when is None:
                    continue  # not re-markable today (its verdicts are not to be trusted), or
                    # no usable time to rate it at (said in self.notes)
                rows = {row.step_id: row for row in answers.get(attempt.id, [])}
                by_skill: dict[str, list[Any]] = {}
                mistakes: dict[str, str] = {}
                for step_id, skill in self.skills_of(attempt).items():
                    verdict, mistake = (summary.get("steps", {}).get(step_id)
                                        or ["unanswered", None])
                    row = rows.get(step_id)
                    rating = schedule.step_rating(verdict, row.hints if row else 0,
                                                  row.overtime if row else False)
                    by_skill.setdefault(skill, []).append(rating)
                    if mistake and verdict != "correct":
                        mistakes[skill] = mistake
                for skill, ratings in by_skill.items():
                    state = states.get(skill) or schedule.SkillState.start(skill)
                    states[skill] = state.review(ratings, mistakes.get(skill), attempt.drill_id,
                                                 when)
                    changed.add(skill)
            writer = self._writer()
            if writer is not None:
                with suppress(StoreError):
                    writer.save_skills([_skill_row(states[s]) for s in sorted(changed)],
                                       [a.id for a in batch])
        return [states[skill].skill_card() for skill in sorted(states)]

    def when(self, attempt: AttemptRow) -> datetime | None:
        """When the attempt is placed in time (its finish, else its start), in UTC; None when
        neither stored time is a usable date. What is wrong with them is kept in `notes`,
        by attempt id."""
        when, note = attempt_time(attempt)
        if note is not None:
            self.notes[attempt.id] = note
        return when

    def skills_of(self, attempt: AttemptRow) -> dict[str, str]:
        """step id → skill, for the steps of the attempt's drill that name one ({} when the
        drill cannot be had)."""
        if attempt.drill_hash not in self._skills_by_hash:
            from trainer.store import transcripts

            try:
                drill, _ = transcripts.drill_for(transcripts.attempt_meta(
                    self.store.attempt(attempt.id)), check_target=False)
            except KvdrillError:
                self._skills_by_hash[attempt.drill_hash] = {}
            else:
                self._skills_by_hash[attempt.drill_hash] = {
                    step.id: step.skill for step in drill.steps if step.skill}
        return self._skills_by_hash[attempt.drill_hash]


def _skill_row(state: Any) -> SkillRow:
    return SkillRow(state.skill, state.card.card, state.card.reviews, state.steps, state.wrong,
                    state.card.last_rating, state.last_mistake, state.last_drill)


def trend_lines(trends: Iterable[dict[str, Any]]) -> list[str]:
    """Per drill, per dimension: a sparkline of the scores, oldest to newest (trends as
    Keeper.trends gives them)."""
    lines = []
    for trend in trends:
        points, count = trend["points"], trend["complete"]
        tops = {k: v for point in points for k, v in point.get("maxima", {}).items()}
        shown = f", the last {len(points)}" if len(points) < count else ""
        lines.append(f"{trend['drill']} ({count} complete attempt{'s' if count > 1 else ''}"
                     f"{shown})")
        for dimension in points[-1]["scores"]:
            values = [point["scores"].get(dimension, 0.0) for point in points]
            lines.append(f"  {dimension:<18} {sparkline(values, tops.get(dimension, 4))} "
                         f"{values[-1]:g}")
    return lines


def keep_finished(store: Store, attempt_id: int) -> None:
    """Keep a just-finished attempt's marks and put its rating in its drill's card, so the
    next history and next need not re-mark it. Failing costs only speed later."""
    from trainer.store import transcripts

    try:
        attempt = store.attempt(attempt_id)
        with Keeper(store) as keeper:
            keeper.fresh(attempt, transcripts.transcript(store, attempt_id, unmarked_ok=True))
            keeper.cards([attempt.drill_id])
            keeper.skill_cards()
    except KvdrillError:
        pass


def attempt_time(attempt: AttemptRow) -> tuple[datetime | None, str | None]:
    """When an attempt is placed in time, and a note naming it when a stored time is not a
    usable date (moments.attempt_time)."""
    return moments.attempt_time(attempt.id, attempt.finished_at, attempt.started_at)


def well_formed(summary: Any) -> bool:
    """Whether kept marks have the shape summary_of gives: anything else (a row damaged or
    edited by hand) is stale, re-marked and kept anew."""
    def number(value: Any) -> bool:
        return isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value)

    def numbers(value: Any) -> bool:
        return isinstance(value, dict) and all(
            isinstance(k, str) and number(v) for k, v in value.items())

    if not isinstance(summary, dict):
        return False
    steps = summary.get("steps")
    share, level, note = summary.get("share"), summary.get("level"), summary.get("note")
    return (numbers(summary.get("scores")) and numbers(summary.get("maxima"))
            and (share is None or number(share))
            and (level is None or isinstance(level, str))
            and (note is None or isinstance(note, str))
            and isinstance(steps, dict)
            and all(isinstance(v, list) and len(v) == 2
                    and all(x is None or isinstance(x, str) for x in v)
                    for v in steps.values()))


def summary_of(transcript: dict[str, Any]) -> dict[str, Any]:
    """What is kept of a re-marked transcript: the rubric's scores, level and share, and each
    step's verdict and mistake."""
    rubric = transcript["rubric"]
    dimensions = rubric["dimensions"] if rubric else {}
    total = sum(d["max"] for d in dimensions.values())
    return {
        "scores": {k: d["score"] for k, d in dimensions.items()},
        "maxima": {k: d["max"] for k, d in dimensions.items()},
        "share": sum(d["score"] for d in dimensions.values()) / total if total else None,
        "level": rubric["level"] if rubric else None,
        "note": transcript["note"],
        "steps": {s["id"]: [s["verdict"], s["misconception"]] for s in transcript["steps"]},
    }


def _history_row(attempt: AttemptRow, answered: int, summary: dict[str, Any] | None,
                 candidate: str | None = None) -> dict[str, Any]:
    """`candidate`: whose attempt it is when `kvdrill import` took it in (None: yours)."""
    row: dict[str, Any] = {"id": attempt.id, "drill": attempt.drill_id,
                           "variant": attempt.variant, "started_at": attempt.started_at,
                           "status": attempt.status, "answered": answered, "scored": False,
                           "scores": {}, "maxima": {}, "share": None, "level": None,
                           "note": None, "candidate": candidate}
    steps = summary.get("steps") if summary is not None else None
    row["steps"] = len(steps) if isinstance(steps, dict) else None
    row["skipped"] = None if not isinstance(steps, dict) else sum(
        1 for marks in steps.values() if marks and marks[0] == "unanswered")
    row["status_text"] = status_text(attempt.status, answered, row["steps"], row["skipped"])
    if summary is None:
        row["note"] = (f"imported (candidate {candidate}), incomplete: not scored"
                       if candidate is not None else
                       f"incomplete: not scored (kvdrill practice --resume {attempt.id} "
                       "finishes it)")
        return row
    row.update({k: summary.get(k) for k in ("scores", "maxima", "share", "level", "note")})
    row["scored"] = summary.get("share") is not None
    return row


def status_text(status: str, answered: int, steps: int | None, skipped: int | None) -> str:
    """An attempt's state in words that say how much of it was done: "complete, 31 of 31
    answered"; "ended, 6 of 31 answered" when it ran to the end with steps skipped (or left
    unanswered); "incomplete, 6 answered" (of 31, when known) when it stopped part-way."""
    of = f" of {steps}" if steps is not None else ""
    if status == "complete":
        word = "ended" if skipped or (steps is not None and answered < steps) else "complete"
        return f"{word}, {answered}{of} answered"
    return f"{status}, {answered}{of} answered"


def _difference(before: dict[str, Any], after: dict[str, Any]) -> str:
    changes = []
    for step, (verdict, _) in after.get("steps", {}).items():
        old = before.get("steps", {}).get(step)
        if old and old[0] != verdict:
            changes.append(f"{step} {old[0]} → {verdict}")
    for dimension, score in after.get("scores", {}).items():
        old_score = before.get("scores", {}).get(dimension)
        if old_score is not None and old_score != score:
            changes.append(f"{dimension} {old_score:g} → {score:g}")
    return "; ".join(changes) or "details changed"


def chunked(rows: Iterable[AttemptRow], size: int) -> Iterator[list[AttemptRow]]:
    batch: list[AttemptRow] = []
    for row in rows:
        batch.append(row)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
