"""Stored attempts and exported files as transcripts: always re-marked from the raw answers with
the current solver, so any transcript can be re-derived, and a recorded verdict that disagrees
with today's re-mark is flagged. Also the history's summaries and trends."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from trainer.errors import UsageError
from trainer.grading import grade, in_step_unit, parsed_json, score_json
from trainer.loader import find_drill, load_rubric
from trainer.reference import show
from trainer.render import render_solution
from trainer.store import AttemptRow, Store
from trainer.variants import answer_key

MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024
ATTEMPT_FIELDS = ("id", "drill", "drill_hash", "variant", "params", "solver_version", "mode",
                  "strict", "started_at", "finished_at", "status")


def _meta(attempt: AttemptRow) -> dict[str, Any]:
    return {"id": attempt.id, "drill": attempt.drill_id, "drill_hash": attempt.drill_hash,
            "variant": attempt.variant, "params": attempt.params,
            "solver_version": attempt.solver_version, "mode": attempt.mode,
            "strict": attempt.strict, "started_at": attempt.started_at,
            "finished_at": attempt.finished_at, "status": attempt.status}


def _rows(store: Store, attempt_id: int) -> list[dict[str, Any]]:
    return [{"id": r.step_id, "answer": r.raw, "verdict": r.verdict, "seconds": r.seconds,
             "budget_seconds": r.budget_seconds, "overtime": r.overtime, "hints": r.hints}
            for r in store.answers(attempt_id)]


def build(meta: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """A transcript: the attempt, every step re-marked from its raw answer, the rubric."""
    drill, _ = find_drill(meta["drill"])
    key = answer_key(drill, meta["variant"])
    by_step = {row["id"]: row for row in rows}
    graded = grade(drill, key, {k: v.get("answer") for k, v in by_step.items()},
                   meta["variant"])
    steps = []
    for mark in graded.marks.values():
        row = by_step.get(mark.step_id, {})
        recorded = row.get("verdict")
        steps.append({
            "id": mark.step_id,
            "kind": mark.kind,
            "answer": row.get("answer"),
            "verdict": mark.verdict,
            "expected": None if mark.expected is None
            else {"value": in_step_unit(mark.expected, mark.unit), "unit": mark.unit},
            "reference": None if mark.expected is None else show(mark.expected, mark.unit),
            "parsed": parsed_json(mark),
            "shown": mark.shown,
            "recorded_verdict": recorded,
            "remarked_differs": recorded is not None and recorded != mark.verdict,
            "misconception": mark.misconception,
            "misconceptions": list(mark.misconceptions),
            "carried_forward": mark.carried_forward,
            "seconds": row.get("seconds"),
            "budget_seconds": row.get("budget_seconds"),
            "overtime": row.get("overtime"),
            "hints": row.get("hints"),
            "feedback": mark.feedback,
        })
    return {**{k: meta.get(k) for k in ATTEMPT_FIELDS}, "steps": steps,
            "rubric": score_json(graded.score)}


def transcript(store: Store, attempt_id: int) -> dict[str, Any]:
    return build(_meta(store.attempt(attempt_id)), _rows(store, attempt_id))


def from_file(path: Path) -> dict[str, Any]:
    """An exported JSON transcript, re-marked; its own verdicts become the recorded ones."""
    try:
        size = path.stat().st_size
    except OSError as error:
        raise UsageError(f"{path}: cannot read: {error.strerror}") from None
    if size > MAX_TRANSCRIPT_BYTES:
        raise UsageError(f"{path}: {size:,} bytes is too large for a transcript")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise UsageError(f"{path}: not a JSON transcript ({error}): use `kvdrill export ID`"
                         ) from None
    if not isinstance(data, dict) or not isinstance(data.get("drill"), str) \
            or not isinstance(data.get("steps"), list):
        raise UsageError(f"{path}: a transcript needs 'drill' and 'steps': use kvdrill export")
    variant = data.get("variant")
    if variant is not None and not isinstance(variant, int):
        raise UsageError(f"{path}: 'variant' must be a whole number or null")
    rows = []
    for step in data["steps"]:
        if not isinstance(step, dict) or not isinstance(step.get("id"), str):
            raise UsageError(f"{path}: every step needs an 'id'")
        answer = step.get("answer")
        if answer is not None and not isinstance(answer, str):
            raise UsageError(f"{path}: the answer to {step['id']} must be text or null")
        rows.append({k: step.get(k) for k in ("id", "answer", "verdict", "seconds",
                                               "budget_seconds", "overtime", "hints")})
    meta = {k: data.get(k) for k in ATTEMPT_FIELDS}
    return build(meta, rows)


def solution_markdown(transcript: dict[str, Any]) -> str:
    drill, _ = find_drill(transcript["drill"])
    return render_solution(answer_key(drill, transcript["variant"]))


def started(attempt: AttemptRow) -> datetime:
    return datetime.fromisoformat(attempt.started_at)


def attempt_summary(store: Store, attempt: AttemptRow) -> dict[str, Any]:
    t = transcript(store, attempt.id)
    dimensions = t["rubric"]["dimensions"]
    return {
        "id": attempt.id,
        "drill": attempt.drill_id,
        "variant": attempt.variant,
        "started_at": attempt.started_at,
        "status": attempt.status,
        "answered": sum(1 for s in t["steps"] if s["answer"] is not None),
        "scores": {k: d["score"] for k, d in dimensions.items()},
        "share": sum(d["score"] for d in dimensions.values())
        / sum(d["max"] for d in dimensions.values()),
    }


def trend_of(store: Store, drill_id: str) -> list[dict[str, Any]]:
    """Past attempts of a drill, oldest first, with their dimension scores."""
    rows = [attempt_summary(store, a) for a in store.attempts(drill_id)]
    return [{"id": r["id"], "started_at": r["started_at"], "scores": r["scores"]}
            for r in reversed(rows)]


def trend_lines(rows: Iterable[dict[str, Any]]) -> list[str]:
    """Per drill, per dimension: a sparkline of the scores, oldest to newest."""
    from trainer.report import sparkline

    by_drill: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_drill.setdefault(row["drill"], []).insert(0, row)
    lines = []
    for drill_id, attempts in by_drill.items():
        rubric = load_rubric(find_drill(drill_id)[0].rubric)
        tops = {d.id: d.max for d in rubric.dimensions}
        lines.append(f"{drill_id} ({len(attempts)} attempt{'s' if len(attempts) > 1 else ''})")
        for dimension in attempts[-1]["scores"]:
            values = [a["scores"].get(dimension, 0.0) for a in attempts]
            lines.append(f"  {dimension:<18} {sparkline(values, tops.get(dimension, 4))} "
                         f"{values[-1]:g}")
    return lines


def parse_overrides(settings: Iterable[str], store: Store,
                    attempt_id: int) -> list[tuple[str, float]]:
    """`levers=2` → ("levers", 2.0), checked against the drill's rubric."""
    attempt = store.attempt(attempt_id)
    rubric = load_rubric(find_drill(attempt.drill_id)[0].rubric)
    dimensions = {d.id: d for d in rubric.dimensions}
    parsed = []
    for setting in settings:
        name, _, value = setting.partition("=")
        dimension = dimensions.get(name.strip())
        if dimension is None:
            raise UsageError(f"--set {setting}: no dimension {name!r}: use one of "
                             f"{', '.join(dimensions)}")
        if dimension.scored_from == "numeric":
            raise UsageError(f"--set {setting}: {name} is scored from the numbers; override a "
                             "text dimension")
        try:
            score = float(value)
        except ValueError:
            raise UsageError(f"--set {setting}: the score must be a number") from None
        if not 0 <= score <= dimension.max:
            raise UsageError(f"--set {setting}: the score must be between 0 and {dimension.max}")
        parsed.append((dimension.id, score))
    return parsed


def markdown(t: dict[str, Any]) -> str:
    """A transcript as Markdown, for `kvdrill export --format md`."""
    variant = "none (the drill as written)" if t["variant"] is None else t["variant"]
    lines = [f"# Attempt {t['id']}: {t['drill']}", "",
             f"- started {t['started_at']}, {t['status']}, mode {t['mode']}",
             f"- variant {variant}", "",
             "| step | answer | reference | verdict | mistake | seconds / budget | hints |",
             "|---|---|---|---|---|---|---|"]
    for s in t["steps"]:
        answer = (s["answer"] or "").replace("|", "\\|").replace("\n", " ")
        seconds = "" if s["seconds"] is None else f"{s['seconds']:.0f} / {s['budget_seconds']}"
        verdict = s["verdict"] + (" (carried forward)" if s["carried_forward"] else "")
        lines.append(f"| {s['id']} | {answer} | {s['reference'] or ''} | {verdict} | "
                     f"{s['misconception'] or ''} | {seconds} | "
                     f"{s['hints'] if s['hints'] is not None else ''} |")
    lines += ["", "## Rubric", ""]
    for dim, d in t["rubric"]["dimensions"].items():
        lines.append(f"- **{dim}** {d['score']:g}/{d['max']}: {'; '.join(d['evidence'])}")
    if t["rubric"]["level"]:
        lines.append(f"- sounds like: {t['rubric']['level']}")
    for flag in t["rubric"]["red_flags"]:
        lines.append(f"- red flag: {flag['says']}")
    return "\n".join(lines)
