"""A reviewer's report of one attempt (text, Markdown or HTML), and the interviewer's sheet and
answer key as HTML.

`review_data` gathers what a review shows from a transcript (`transcripts.transcript`), the
reviewer's overrides, the drill's earlier attempts and the worked solution; `render_review` lays
it out. An HTML file needs nothing but itself: inline CSS (with print rules), inline SVG charts
and one tiny inline script, no URL anywhere. Every value goes through a sandboxed, autoescaping
Jinja environment; Markdown (a worked solution) goes through markdown-it with raw HTML off, so
HTML in a solution is shown as text. The same input always gives the same bytes.
"""

from __future__ import annotations

import math
import re
import textwrap
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:  # a review needs no answer key; a sheet or key page imports it
    from trainer.drills.reference import AnswerKey

from trainer.errors import UsageError
from trainer.printable import printable
from trainer.reading.sparkline import sparkline
from trainer.views.pages import (
    BAR_H,
    BAR_W,
    CHART_W,
    LABEL_W,
    ROW_H,
    TOP,
    chart_axis,
    html_page,
    level_title,
    markdown_html,
    md_escape,
    one_line,
    percent_text,
    px,
    score_text,
    seconds_text,
    time_chart,
    time_scale,
    when_text,
)

Format = Literal["text", "md", "html"]
FORMATS: tuple[str, ...] = ("text", "md", "html")

VERDICT_MARKS = {"correct": "✓", "wrong": "✗", "invalid": "?", "unanswered": "·",
                 "revealed": "⊘",
                 "answered": "✎"}
TEXT_ANSWER_WIDTH = 40
TEXT_BAR_WIDTH = 30
TEXT_WIDTH = 100


# ---------------------------------------------------------------------------------------------
# Small helpers


def _number(quantity: Any) -> float | None:
    if not isinstance(quantity, dict):
        return None
    value = quantity.get("value")
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _count(number: int, word: str) -> str:
    return f"{number} {word}" + ("" if number == 1 else "s")


def _wrap(text: str, indent: int, width: int = TEXT_WIDTH) -> list[str]:
    return textwrap.wrap(one_line(text), width, initial_indent=" " * indent,
                         subsequent_indent=" " * indent, break_on_hyphens=False) or [""]


def _title(dimension: str) -> str:
    return dimension.replace("-", " ").replace("_", " ").capitalize()


def _level(level: str | None, short_of: str | None = None) -> str:
    return level_title(level, short_of or "no level (the rubric names none)")


# ---------------------------------------------------------------------------------------------
# The data of a review


def _in_step_unit(parsed: Any) -> float | None:
    """The answer in the step's unit: `in_step_unit` when the transcript has it (the value
    itself is in the unit it was typed in), else `value` (older transcripts, same unit)."""
    if isinstance(parsed, dict) and "in_step_unit" in parsed:
        return _number({"value": parsed["in_step_unit"]})
    return _number(parsed)


def _step_data(step: dict[str, Any]) -> dict[str, Any]:
    expected, parsed = _number(step.get("expected")), _in_step_unit(step.get("parsed"))
    error = None
    if expected is not None and parsed is not None and expected != 0:
        error = round((parsed - expected) / abs(expected) * 100, 6)
    misconception = step.get("misconception")
    named = None
    if misconception:
        from trainer.capacity.wrong_paths import WRONG_PATHS

        path = WRONG_PATHS.get(misconception)
        named = {"id": misconception, "mistake": path.mistake if path else "",
                 "advice": path.advice if path else ""}
    seconds, budget = step.get("seconds"), step.get("budget_seconds")
    overtime = step.get("overtime")
    if overtime is None and seconds is not None and budget is not None:
        overtime = seconds > budget
    unit = (step.get("expected") or {}).get("unit") or ""
    return {
        "id": step["id"],
        "kind": step.get("kind", "numeric"),
        "answer": step.get("answer"),
        "reference": step.get("reference"),
        "unit": unit,
        "verdict": step["verdict"],
        "recorded_verdict": step.get("recorded_verdict"),
        "flag": bool(step.get("remarked_differs")),
        "relative_error_pct": error,
        "misconception": named,
        "carried_forward": bool(step.get("carried_forward")),
        "diagnosis": _diagnosis_data(step.get("diagnosis")),
        "seconds": seconds,
        "budget_seconds": budget,
        "overtime": bool(overtime),
        "hints": step.get("hints"),
        "feedback": step.get("feedback") or "",
    }


def _diagnosis_data(diagnosis: Any) -> dict[str, Any] | None:
    """A re-mark's likely slip: the input it names and the sentence shown."""
    if not isinstance(diagnosis, dict) or not isinstance(diagnosis.get("phrase"), str):
        return None
    return {"input": str(diagnosis.get("input") or ""), "phrase": diagnosis["phrase"]}


def _trend_data(transcript: dict[str, Any], trend: list[dict[str, Any]] | None
                ) -> list[dict[str, Any]]:
    """The drill's attempts, oldest first, this one included (with its automatic scores)."""
    points: dict[int, dict[str, Any]] = {}
    for entry in trend or []:
        if entry.get("drill") not in (None, transcript["drill"]):
            continue
        points[int(entry["id"])] = {
            "id": int(entry["id"]),
            "started_at": entry.get("started_at"),
            "scores": {dim: float(score) for dim, score in entry.get("scores", {}).items()},
        }
    if transcript["id"] is not None:  # today's re-mark, not what was kept
        points[int(transcript["id"])] = {
            "id": int(transcript["id"]),
            "started_at": transcript.get("started_at"),
            "scores": {dim: float(d["score"])
                       for dim, d in transcript["rubric"]["dimensions"].items()},
        }
    return [{**points[key], "current": key == transcript["id"]} for key in sorted(points)]


def review_data(transcript: dict[str, Any], overrides: dict[str, tuple[float, str]],
                source: str, trend: list[dict[str, Any]] | None = None,
                solution_md: str | None = None) -> dict[str, Any]:
    """Everything a review shows, as plain JSON-able values: the attempt, each step (answer as
    typed, reference, verdict, relative error, the mistake named with its advice, time against
    budget, hints, and `flag` when the recorded verdict disagrees with today's re-mark), the
    rubric with each automatic score beside the reviewer's override, the trend across the
    drill's attempts and the worked solution (Markdown)."""
    steps = [_step_data(step) for step in transcript["steps"]]
    rubric = transcript["rubric"]
    dimensions = []
    for dim, d in rubric["dimensions"].items():
        override = overrides.get(dim)
        dimensions.append({
            "id": dim, "title": _title(dim), "score": float(d["score"]), "max": d["max"],
            "evidence": list(d["evidence"]),
            "override": None if override is None
            else {"score": float(override[0]), "note": override[1]},
        })
    other = [{"id": dim, "score": float(score), "note": note}
             for dim, (score, note) in sorted(overrides.items())
             if dim not in rubric["dimensions"]]
    numeric = [s for s in steps if s["kind"] == "numeric"]
    timed = [s for s in steps if s["seconds"] is not None]
    return {
        "drill": transcript["drill"],
        "attempt": {key: transcript.get(key) for key in
                    ("id", "variant", "mode", "status", "started_at", "finished_at")},
        # the model and GPU the drill was re-targeted at (--model, --gpu), and in words
        "target": transcript.get("target"),
        "retargeted": retargeted_label(transcript.get("target")),
        "source": source,
        "steps": steps,
        # What a file transcript says that its own fields or its drill contradict (seconds,
        # overtime, hints, budgets, drill hash, givens): {step, field, says}.
        "tampered": [{"step": t.get("step"), "field": t.get("field"), "says": t.get("says")}
                     for t in transcript.get("tampered") or []],
        # How today's re-mark differs from the marks kept in the store (None: it agrees).
        "kept_marks_differ": transcript.get("kept_marks_differ"),
        "summary": {
            "numeric": len(numeric),
            "correct": sum(1 for s in numeric if s["verdict"] == "correct"),
            "answered": sum(1 for s in steps if s["answer"] is not None),
            "mistakes": sum(1 for s in steps if s["misconception"]),
            # every ⚑ the review lists, counted once (import says the same number)
            "flagged": _flag_count(steps, transcript.get("tampered") or [],
                                   transcript.get("kept_marks_differ")),
            "tampered": len(transcript.get("tampered") or []),
            "overtime": sum(1 for s in steps if s["overtime"]),
            "seconds": sum(s["seconds"] for s in timed),
            "budget_seconds": sum(s["budget_seconds"] or 0 for s in timed),
        },
        "rubric": {"dimensions": dimensions, "level": rubric.get("level"),
                   "short_of": rubric.get("short_of"),
                   "red_flags": [dict(flag) for flag in rubric.get("red_flags", [])],
                   "other_overrides": other},
        "trend": _trend_data(transcript, trend),
        "solution_md": solution_md,
    }


def _flag_count(steps: list[dict[str, Any]], tampered: list[Any], kept_differ: Any) -> int:
    """The ⚑ items a review lists: what the transcript contradicts (an import's flags), each
    step whose recorded verdict today's re-mark does not give (unless a flag already says it)
    and kept marks that differ."""
    said = {t.get("step") for t in tampered if isinstance(t, dict) and t.get("field") == "verdict"}
    steps_flagged = sum(1 for s in steps if s["flag"] and s["id"] not in said)
    return len(tampered) + steps_flagged + (1 if kept_differ else 0)


def render_review(data: dict[str, Any], fmt: Format, width: int | None = None) -> str:
    """The review as text for a terminal (laid out for `width` columns; None: for a file,
    the worked solution kept as Markdown), as Markdown, or as one self-contained HTML file."""
    if fmt == "text":
        return _review_text(data, width)
    if fmt == "md":
        return _review_markdown(data)
    if fmt == "html":
        return _review_html(data)
    raise UsageError(f"unknown review format {fmt!r}: use one of {', '.join(FORMATS)}")


def _series(data: dict[str, Any], dim: str) -> list[tuple[dict[str, Any], float]]:
    return [(point, point["scores"][dim]) for point in data["trend"] if dim in point["scores"]]


def _time_text(step: dict[str, Any]) -> str:
    if step["seconds"] is None:
        return ""
    text = f"{seconds_text(step['seconds'])} / {step['budget_seconds']} s"
    return text + (" over" if step["overtime"] else "")


def _short_time(step: dict[str, Any]) -> str:
    """Seconds taken against the budget, as in "12/60 s" (the table's narrow form)."""
    if step["seconds"] is None:
        return ""
    text = f"{seconds_text(step['seconds']).removesuffix(' s')}/{step['budget_seconds']} s"
    return text + (" over" if step["overtime"] else "")


def _verdict_text(step: dict[str, Any]) -> str:
    text = f"{VERDICT_MARKS.get(step['verdict'], '?')} {step['verdict']}"
    if step["carried_forward"]:
        text += " (cf)"
    if step["flag"]:
        text += " ⚑"
    return text


# ---------------------------------------------------------------------------------------------
# Text


def _time_bar(step: dict[str, Any], scale: float) -> str:
    """█ for the time spent within the budget, ░ for the budget left, ▓ for time over it."""
    seconds: float = step["seconds"]
    budget: float = step["budget_seconds"] or 0
    spent = round(TEXT_BAR_WIDTH * seconds / scale)
    allowed = round(TEXT_BAR_WIDTH * budget / scale)
    if budget and seconds > budget:
        bar = "█" * allowed + "▓" * max(1, spent - allowed)
    else:
        bar = "█" * spent + "░" * max(0, allowed - spent)
    return bar.ljust(TEXT_BAR_WIDTH)


def _review_text(data: dict[str, Any], screen: int | None = None) -> str:
    from trainer.text_layout import Column, table

    text_width = screen or TEXT_WIDTH

    def wrap(text: str, indent: int) -> list[str]:
        return _wrap(text, indent, text_width)

    attempt, steps, summary = data["attempt"], data["steps"], data["summary"]
    variant = "none" if attempt["variant"] is None else str(attempt["variant"])
    lines = [
        f"Review of attempt {attempt['id']}: {data['drill']}",
        f"variant {variant} · {attempt['mode']} · {attempt['status']} · started "
        f"{when_text(attempt['started_at'])}",
        *([f"re-targeted at {one_line(data['retargeted'])}"] if data.get("retargeted") else []),
        f"source: {one_line(data['source'])}",
        f"{summary['correct']} of {summary['numeric']} numeric answers correct · "
        f"{_count(summary['mistakes'], 'mistake')} named · {summary['flagged']} flagged",
        "",
    ]
    columns = [Column("step", wrap=False), Column("answer"), Column("reference"),
               Column("verdict", wrap=False), Column("error", ">", wrap=False), Column("mistake"),
               Column("time", wrap=False), Column("hints", ">", wrap=False)]
    rows = []
    for s in steps:
        rows.append([
            s["id"], one_line(s["answer"], TEXT_ANSWER_WIDTH),
            s["reference"] or "(rubric)", _verdict_text(s), percent_text(s["relative_error_pct"]),
            s["misconception"]["id"] if s["misconception"] else "", _short_time(s),
            str(s["hints"]) if s["hints"] else "",  # a column of no hints is left out
        ])
    lines += table(columns, rows, screen, drop_empty=True).split("\n")
    named = [s for s in steps if s["misconception"]]
    if named:
        lines += ["", "Mistakes named:"]
        for s in named:
            m = s["misconception"]
            lines += wrap(f"✗ {s['id']}: {m['id']} — {m['mistake']}", 2)
            lines += wrap(f"advice: {m['advice']}", 6)
    diagnosed = [s for s in steps if s["diagnosis"]]
    if diagnosed:
        lines += ["", "Likely slips (the formula solved backwards; a guess, not a verdict):"]
        for s in diagnosed:
            lines += wrap(f"? {s['id']}: {s['diagnosis']['phrase']}", 2)
    flagged = [s for s in steps if s["flag"]]
    if flagged:
        lines += ["", "⚑ Flagged: the recorded verdict differs from today's re-mark:"]
        lines += [f"  {s['id']}: recorded {s['recorded_verdict']}, re-marked {s['verdict']}"
                  for s in flagged]
    if data["kept_marks_differ"]:
        lines += ["", *wrap(f"⚑ Flagged: {data['kept_marks_differ']}", 0)]
    if data["tampered"]:
        lines += ["", "⚑ Flagged: the transcript disagrees with itself or its drill:"]
        for t in data["tampered"]:
            lines += wrap(f"{t['step'] or 'attempt'}: {t['field']}: {t['says']}", 2)
    timed = [s for s in steps if s["seconds"] is not None]
    if timed:
        scale = time_scale(timed)
        width = max(len(s["id"]) for s in timed)
        lines += ["", "Time against budget (█ spent, ░ budget left, ▓ over budget):"]
        lines += [f"  {s['id']:<{width}}  {_time_bar(s, scale)}  {_time_text(s)}".rstrip()
                  for s in timed]
    lines += ["", "Rubric (automatic · reviewer):"]
    dims = data["rubric"]["dimensions"]
    width = max([len(d["title"]) for d in dims] + [10])
    for d in dims:
        auto = f"{score_text(d['score'])}/{d['max']}"
        line = f"  {d['title']:<{width}}  {auto:<7}"
        if d["override"]:
            line += (f"  reviewer {score_text(d['override']['score'])}/{d['max']}: "
                     f"{one_line(d['override']['note'])}")
        lines.append(line.rstrip())
        if d["evidence"]:
            lines += wrap("; ".join(d["evidence"]), width + 4)
    for o in data["rubric"]["other_overrides"]:
        lines.append(f"  reviewer, {o['id']} (not in this rubric): {score_text(o['score'])}: "
                     f"{one_line(o['note'])}")
    lines.append(f"Sounds like: {_level(data['rubric']['level'], data['rubric']['short_of'])}")
    for flag in data["rubric"]["red_flags"]:
        lines += wrap(f"Red flag: {flag['says']}", 0)
    lines += ["", f"Trend over {_count(len(data['trend']), 'attempt')} (oldest → newest):"]
    for d in dims:
        values = [value for _, value in _series(data, d["id"])]
        change = " → ".join(score_text(v) for v in (values[:1] + values[-1:] if len(values) > 1
                                                 else values))
        lines.append(f"  {d['title']:<{width}}  {sparkline(values, d['max'])}  {change}"
                     f" /{d['max']}")
    written = [s for s in steps if s["kind"] != "numeric" and s["answer"]]
    if written:
        lines += ["", "Written answers:"]
        for s in written:
            lines.append(f"  {s['id']}:")
            lines += [f"    {printable(line)}" for line in s["answer"].splitlines()]
    if data["solution_md"]:
        solution = data["solution_md"].rstrip()
        if screen is not None:  # laid out for the terminal; a file keeps the Markdown
            from trainer.views import terminal_text

            solution = terminal_text.plain(terminal_text.render(solution, screen), screen)
        lines += ["", "Worked solution:", "", solution]
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------------------------
# Markdown


def _cell(text: str | None) -> str:
    """Our own text (ids, mistakes, advice, evidence) in a Markdown line or table cell."""
    return one_line(text).replace("|", "\\|")


def _demote_headings(markdown: str, levels: int) -> str:
    lines, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,6}( |$)", line):
            hashes = len(line) - len(line.lstrip("#"))
            line = "#" * min(6, hashes + levels) + line[hashes:]
        lines.append(line)
    return "\n".join(lines)


def retargeted_label(target: Any) -> str | None:
    """A stored re-target in words ("Qwen3-32B on NVIDIA H200"), or None."""
    if not target:
        return None
    from trainer.drills.variants import target_label
    from trainer.errors import KvdrillError

    try:
        return target_label(target)
    except KvdrillError:
        return "a model and GPU the stored target no longer names"


def _review_markdown(data: dict[str, Any]) -> str:
    attempt, steps, summary = data["attempt"], data["steps"], data["summary"]
    variant = "none" if attempt["variant"] is None else str(attempt["variant"])
    lines = [
        f"# Review of attempt {attempt['id']}: {_cell(data['drill'])}", "",
        "| variant | mode | status | started | source |", "|---|---|---|---|---|",
        f"| {variant} | {_cell(attempt['mode'])} | {_cell(attempt['status'])} | "
        f"{when_text(attempt['started_at'])} | {md_escape(data['source'])} |", "",
        *([f"Re-targeted at {md_escape(data['retargeted'])}.", ""]
          if data.get("retargeted") else []),
        f"**{summary['correct']} of {summary['numeric']}** numeric answers correct, "
        f"**{summary['mistakes']}** named mistakes, **{summary['flagged']}** flagged.", "",
        "## Steps", "",
        "| step | answer | reference | verdict | error | mistake | seconds / budget | hints |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for s in steps:
        mistake = f"**{s['misconception']['id']}**" if s["misconception"] else ""
        lines.append(
            f"| {_cell(s['id'])} | {md_escape(s['answer'])} | "
            f"{_cell(s['reference'] or '(rubric)')} | "
            f"{_cell(_verdict_text(s))} | {percent_text(s['relative_error_pct'])} | {mistake} | "
            f"{_time_text(s)} | {'' if s['hints'] is None else s['hints']} |")
    named = [s for s in steps if s["misconception"]]
    if named:
        lines += ["", "## Mistakes named", ""]
        for s in named:
            m = s["misconception"]
            lines.append(f"- **{_cell(s['id'])}: {_cell(m['id'])}** — {_cell(m['mistake'])}. "
                         f"*Advice:* {_cell(m['advice'])}")
    diagnosed = [s for s in steps if s["diagnosis"]]
    if diagnosed:
        lines += ["", "## Likely slips", "",
                  "The formula solved backwards: a guess at the cause, not a verdict.", ""]
        lines += [f"- **{_cell(s['id'])}** ({_cell(s['diagnosis']['input'])}): "
                  f"{_cell(s['diagnosis']['phrase'])}" for s in diagnosed]
    flagged = [s for s in steps if s["flag"]]
    if flagged:
        lines += ["", "## ⚑ Flagged: recorded verdicts differ from today's re-mark", "",
                  "| step | recorded verdict | re-marked today |", "|---|---|---|"]
        lines += [f"| {_cell(s['id'])} | {_cell(s['recorded_verdict'])} | {_cell(s['verdict'])} |"
                  for s in flagged]
    if data["kept_marks_differ"]:
        lines += ["", f"**⚑ Flagged:** {_cell(data['kept_marks_differ'])}"]
    if data["tampered"]:
        lines += ["", "## ⚑ Flagged: the transcript disagrees with itself or its drill", "",
                  "| step | field | what is wrong |", "|---|---|---|"]
        lines += [f"| {_cell(t['step'] or 'attempt')} | {_cell(t['field'])} | {_cell(t['says'])} |"
                  for t in data["tampered"]]
    lines += ["", "## Rubric", "",
              "| dimension | automatic | reviewer | reviewer's note | evidence |",
              "|---|---|---|---|---|"]
    for d in data["rubric"]["dimensions"]:
        o = d["override"]
        reviewer = f"{score_text(o['score'])}/{d['max']}" if o else ""
        lines.append(f"| {_cell(d['title'])} | {score_text(d['score'])}/{d['max']} | {reviewer} | "
                     f"{md_escape(o['note']) if o else ''} | {_cell('; '.join(d['evidence']))} |")
    for o in data["rubric"]["other_overrides"]:
        lines.append(f"| {_cell(o['id'])} (not in this rubric) | | {score_text(o['score'])} | "
                     f"{md_escape(o['note'])} | |")
    lines += ["", "**Sounds like:** "
              f"{_cell(_level(data['rubric']['level'], data['rubric']['short_of']))}"]
    if data["rubric"]["red_flags"]:
        lines += ["", "## Red flags", ""]
        lines += [f"- **{_cell(f['id'])}**: {_cell(f['says'])}"
                  for f in data["rubric"]["red_flags"]]
    dims = data["rubric"]["dimensions"]
    lines += ["", "## Trend", "",
              "| attempt | started | " + " | ".join(_cell(d["title"]) for d in dims) + " |",
              "|---|---|" + "---|" * len(dims)]
    for point in data["trend"]:
        scores = " | ".join(score_text(point["scores"][d["id"]]) if d["id"] in point["scores"]
                            else "" for d in dims)
        mark = " (this one)" if point["current"] else ""
        lines.append(f"| {point['id']}{mark} | {when_text(point['started_at'])} | {scores} |")
    written = [s for s in steps if s["kind"] != "numeric" and s["answer"]]
    if written:
        lines += ["", "## Written answers"]
        for s in written:
            lines += ["", f"### {_cell(s['id'])}", ""]
            lines += [f"> {md_escape(line)}" if line.strip() else ">"
                      for line in s["answer"].splitlines()]
    if data["solution_md"]:
        lines += ["", "## Worked solution", "", _demote_headings(data["solution_md"], 2)]
    return "\n".join(lines).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# HTML


def _rubric_chart(dimensions: list[dict[str, Any]]) -> dict[str, Any]:
    scale = float(max([1] + [d["max"] for d in dimensions]))
    rows = []
    y = TOP
    for d in dimensions:
        bars = [("automatic", d["score"], "auto")]
        if d["override"]:
            bars.append(("reviewer", d["override"]["score"], "reviewer"))
        for index, (who, score, kind) in enumerate(bars):
            share = min(max(score, 0.0), float(d["max"])) / scale
            rows.append({
                "label": d["title"] if index == 0 else "reviewer's score",
                "sub": index > 0, "kind": kind, "y": px(y + (ROW_H - BAR_H) / 2),
                "text_y": px(y + ROW_H / 2 + 4), "max_w": px(BAR_W * d["max"] / scale),
                "w": px(BAR_W * share), "value": f"{score_text(score)} / {d['max']} ({who})",
            })
            y += ROW_H
        y += 6
    height = y + 4
    count = int(scale) if scale <= 10 else 5
    return {"width": CHART_W, "height": height, "rows": rows, "ticks": chart_axis(scale, count, ""),
            "bar_x": LABEL_W, "value_x": LABEL_W + BAR_W + 12, "label_x": LABEL_W - 10,
            "grid_bottom": height - 4, "bar_h": BAR_H}


TREND_W, TREND_H, TREND_LEFT, TREND_RIGHT, TREND_TOP, TREND_BOTTOM = 300, 150, 36, 16, 30, 30


def _trend_chart(data: dict[str, Any], dim: dict[str, Any]) -> dict[str, Any] | None:
    series = _series(data, dim["id"])
    if len(series) < 2:
        return None
    top = float(dim["max"]) or 1.0
    inner_w = TREND_W - TREND_LEFT - TREND_RIGHT
    inner_h = TREND_H - TREND_TOP - TREND_BOTTOM
    points = []
    for i, (point, value) in enumerate(series):
        x = TREND_LEFT + inner_w * i / (len(series) - 1)
        y = TREND_TOP + inner_h * (1 - min(max(value, 0.0), top) / top)
        label = len(series) <= 8 or i in (0, len(series) - 1)
        points.append({"x": px(x), "y": px(y), "value": score_text(value),
                       "id": point["id"], "current": point["current"], "label": label,
                       "title": f"attempt {point['id']} ({when_text(point['started_at'])}): "
                                f"{score_text(value)} / {dim['max']}"})
    return {"title": dim["title"], "width": TREND_W, "height": TREND_H, "points": points,
            "line": " ".join(f"{p['x']},{p['y']}" for p in points), "max": dim["max"],
            "left": TREND_LEFT, "right": TREND_W - TREND_RIGHT, "top": TREND_TOP,
            "bottom": TREND_TOP + inner_h, "axis_y": TREND_H - 10,
            "last": points[-1]["value"]}


def _review_html(data: dict[str, Any]) -> str:
    dims = data["rubric"]["dimensions"]
    trends = [chart for chart in (_trend_chart(data, d) for d in dims) if chart is not None]
    solution = markdown_html(data["solution_md"], demote=2) if data["solution_md"] else None
    return html_page(
        "review.html.j2", data=data, attempt=data["attempt"], steps=data["steps"],
        summary=data["summary"], rubric=data["rubric"],
        level=_level(data["rubric"]["level"], data["rubric"]["short_of"]),
        time_chart=time_chart(data["steps"]), rubric_chart=_rubric_chart(dims),
        trends=trends, solution=solution, marks=VERDICT_MARKS,
        named=[s for s in data["steps"] if s["misconception"]],
        diagnosed=[s for s in data["steps"] if s["diagnosis"]],
        flagged=[s for s in data["steps"] if s["flag"]], tampered=data["tampered"],
        kept_marks_differ=data["kept_marks_differ"],
        written=[s for s in data["steps"] if s["kind"] != "numeric" and s["answer"]],
    )


def sheet_html(key: AnswerKey, variant: int | None) -> str:
    """The candidate's sheet (keys.sheet_markdown) as one HTML file, with room to write the
    answers on paper. It holds no answer."""
    from trainer.views.sheets import givens_lines, prompt_of, situation_of

    drill = key.drill
    questions = [{"number": number, "id": step.id, "prompt": prompt_of(key, step.id).strip(),
                  "unit": step.unit or "", "text": step.kind == "text"}
                 for number, step in enumerate(drill.steps, 1)]
    return html_page("sheet.html.j2", title=key.title(variant), minutes=drill.target_minutes,
                 situation=markdown_html(situation_of(key), demote=2),
                 givens=givens_lines(key), questions=questions)


def key_html(key: AnswerKey, variant: int | None) -> str:
    """The interviewer's answer key (keys.key_markdown) as one HTML file: every reference, the
    wrong values that betray each mistake, and the worked solution."""
    from trainer.drills.solutions import worked_solution
    from trainer.views.keys import key_rows  # YAML and the diagnosis: only a key needs them
    from trainer.views.sheets import givens_lines

    return html_page("key.html.j2", title=key.title(variant), givens=givens_lines(key),
                     rows=key_rows(key), solution=markdown_html(worked_solution(key), demote=2))


# ---------------------------------------------------------------------------------------------
# A cohort (trainer/views/cohort.py): candidates side by side


