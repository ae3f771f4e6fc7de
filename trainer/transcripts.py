"""Stored attempts as transcripts: re-marked from the raw answers with the current solver, so a
transcript can always be re-derived, and as the history's one-line summaries."""

from __future__ import annotations

from typing import Any

from trainer.grading import grade, in_step_unit, score_json
from trainer.reference import show
from trainer.loader import find_drill
from trainer.store import AttemptRow, Store
from trainer.variants import answer_key


def _graded(store: Store, attempt: AttemptRow) -> tuple[Any, list[Any]]:
    drill, _ = find_drill(attempt.drill_id)
    key = answer_key(drill, attempt.variant)
    rows = store.answers(attempt.id)
    sheet = {row.step_id: row.raw for row in rows}
    return grade(drill, key, sheet, attempt.variant), rows


def attempt_summary(store: Store, attempt: AttemptRow) -> dict[str, Any]:
    graded, rows = _graded(store, attempt)
    return {
        "id": attempt.id,
        "drill": attempt.drill_id,
        "variant": attempt.variant,
        "started_at": attempt.started_at,
        "status": attempt.status,
        "answered": sum(1 for row in rows if row.raw is not None),
        "scores": {d.id: float(d.score) for d in graded.score.dimensions},
    }


def transcript(store: Store, attempt_id: int) -> dict[str, Any]:
    attempt = store.attempt(attempt_id)
    graded, rows = _graded(store, attempt)
    by_step = {row.step_id: row for row in rows}
    steps = []
    for mark in graded.marks.values():
        row = by_step.get(mark.step_id)
        recorded = None if row is None else row.verdict
        steps.append({
            "id": mark.step_id,
            "kind": mark.kind,
            "answer": None if row is None else row.raw,
            "verdict": mark.verdict,
            "expected": None if mark.expected is None
            else {"value": in_step_unit(mark.expected, mark.unit), "unit": mark.unit},
            "reference": None if mark.expected is None else show(mark.expected, mark.unit),
            "parsed": None if mark.parsed is None
            else {"value": in_step_unit(mark.parsed, mark.unit), "unit": mark.unit},
            "shown": mark.shown,
            "recorded_verdict": recorded,
            "remarked_differs": recorded is not None and recorded != mark.verdict,
            "misconception": mark.misconception,
            "carried_forward": mark.carried_forward,
            "seconds": None if row is None else row.seconds,
            "budget_seconds": None if row is None else row.budget_seconds,
            "overtime": None if row is None else row.overtime,
            "hints": None if row is None else row.hints,
            "feedback": mark.feedback,
        })
    return {
        "id": attempt.id,
        "drill": attempt.drill_id,
        "drill_hash": attempt.drill_hash,
        "variant": attempt.variant,
        "params": attempt.params,
        "solver_version": attempt.solver_version,
        "mode": attempt.mode,
        "strict": attempt.strict,
        "started_at": attempt.started_at,
        "finished_at": attempt.finished_at,
        "status": attempt.status,
        "steps": steps,
        "rubric": score_json(graded.score),
    }


def markdown(t: dict[str, Any]) -> str:
    variant = "none (the drill as written)" if t["variant"] is None else t["variant"]
    lines = [f"# Attempt {t['id']}: {t['drill']}", "",
             f"- started {t['started_at']}, {t['status']}, mode {t['mode']}",
             f"- variant {variant}", "",
             "| step | answer | verdict | mistake | seconds / budget | hints |",
             "|---|---|---|---|---|---|"]
    for s in t["steps"]:
        answer = (s["answer"] or "").replace("|", "\\|").replace("\n", " ")
        seconds = "" if s["seconds"] is None else f"{s['seconds']:.0f} / {s['budget_seconds']}"
        verdict = s["verdict"] + (" (carried forward)" if s["carried_forward"] else "")
        lines.append(f"| {s['id']} | {answer} | {verdict} | {s['misconception'] or ''} | "
                     f"{seconds} | {s['hints'] if s['hints'] is not None else ''} |")
    lines += ["", "## Rubric", ""]
    for dim, d in t["rubric"]["dimensions"].items():
        lines.append(f"- **{dim}** {d['score']:g}/{d['max']}: {'; '.join(d['evidence'])}")
    if t["rubric"]["level"]:
        lines.append(f"- sounds like: {t['rubric']['level']}")
    for flag in t["rubric"]["red_flags"]:
        lines.append(f"- red flag: {flag['says']}")
    return "\n".join(lines)
