"""`kvdrill progress`: a candidate's own progress (store.progress.progress_data) as text for a
terminal, Markdown, JSON, or one self-contained HTML page of charts.

Text is laid out for the terminal's width (trainer/text_layout.py): a readiness line, the
skills (recall tomorrow, when due, the last answers as marks, the last mistake) in a table that
narrows or stacks, each drill as one row of sparklines (its score and its time against the
budget, a block per complete attempt), and each drill's rubric dimensions as sparklines packed
into lines that fit. The HTML page goes through the pages' sandboxed, autoescaping templates:
inline CSS, inline SVG charts drawn from numbers alone (recall by skill, each drill's
dimensions and level, its time against the budget) and a skills-by-week grid, nothing fetched.
"""

from __future__ import annotations

from typing import Any

from trainer.reading.sparkline import sparkline
from trainer.views.pages import (
    BAR_H,
    BAR_W,
    CHART_W,
    LABEL_W,
    REPORT_FORMATS,
    ROW_H,
    TOP,
    chart_axis,
    html_page,
    level_title,
    md_escape,
    one_line,
    px,
    render_report,
    score_text,
    seconds_text,
    when_text,
)

FORMATS = REPORT_FORMATS
TEXT_POINTS = 12  # the newest attempts a sparkline shows in the terminal
RATING_MARKS = {"Easy": "✓", "Good": "✓", "Hard": "~", "Again": "✗"}
MARKS_LEGEND = ("✓ right in time, ~ right but over time, ✗ missed: wrong, skipped or with a hint")
# What the recall figure is, said once for every format (store.progress.recall_then).
RECALL_MEANS = ("recall: the chance of a right answer tomorrow, 0–1, and after a miss no more "
                "than the share of the last answers right")
FIRST_DRILL = "llama31-8b-h100"


def render(data: dict[str, Any], fmt: str, width: int | None = None) -> str:
    return render_report(data, fmt, "progress", progress_text, progress_markdown, progress_html,
                         width)


# -- shared wording ---------------------------------------------------------------------------

def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def empty_text(data: dict[str, Any]) -> str:
    """What an empty store says: how to start (and how to finish what was started)."""
    unfinished = data["unfinished_attempts"]
    them = "it" if unfinished == 1 else "them"
    started = (f" You have {_plural(unfinished, 'unfinished attempt')}: kvdrill history "
               f"lists {them}, and kvdrill practice --resume ID finishes one."
               if unfinished else "")
    return ("No complete attempts of your own yet, so there is no progress to show."
            f"{started} Start with kvdrill list, then kvdrill practice DRILL (the first: "
            f"kvdrill practice {FIRST_DRILL}).")


def _level_title(level: str | None) -> str:
    return level_title(level, "not yet Solid")


def readiness_text(data: dict[str, Any]) -> str:
    ready = data["readiness"]
    solid = ready["solid_drills"]
    named = f" ({', '.join(one_line(d) for d in solid)})" if 0 < len(solid) <= 4 else ""
    line = f"Ready: Solid or better on {ready['solid']} of {ready['drills']} drills{named}"
    skills = {s["skill"]: s for s in data["skills"]}
    if ready["weakest"]:
        weakest = ", ".join(f"{one_line(name)} ({why_weak(skills[name])})"
                            for name in ready["weakest"])
        return f"{line}; weakest skills: {weakest}."
    if data["skills"]:
        return f"{line}; no skill is slipping (each right in time at its last answer)."
    return f"{line}."


def why_weak(skill: dict[str, Any]) -> str:
    if skill["last_rating"] == "Again":
        return "missed last time"
    if skill["last_rating"] == "Hard":
        return "over time last time"
    return f"recall tomorrow {skill['recall']:.2f}"


def due_text(skill: dict[str, Any]) -> str:
    days = skill["due_in_days"]
    if days is None:
        return "—"
    if days <= 0:
        return "now" if days > -1 else f"overdue {_plural(round(-days), 'day')}"
    return "in <1 day" if days < 1 else f"in {_plural(round(days), 'day')}"


def marks_text(ratings: list[str]) -> str:
    return "".join(RATING_MARKS.get(r, "?") for r in ratings)


def mistake_text(skill: dict[str, Any]) -> str:
    """"query-heads in llama31-8b-h100: used the query (attention) heads where …"."""
    if not skill["last_mistake"]:
        return ""
    where = f" in {one_line(skill['last_drill'])}" if skill["last_drill"] else ""
    what = f": {one_line(skill['last_mistake_text'])}" if skill["last_mistake_text"] else ""
    return f"{one_line(skill['last_mistake'])}{where}{what}"


def _ratio(point: dict[str, Any]) -> float:
    budget = point["budget_seconds"]
    return point["seconds"] / budget if budget else 0.0


def score_spark(drill: dict[str, Any], points: int = TEXT_POINTS) -> str:
    shown = drill["points"][-points:]
    if not shown:
        return "—"
    return f"{sparkline([p['share'] for p in shown], 1.0)} {shown[-1]['share']:.0%}"


def time_spark(drill: dict[str, Any], points: int = TEXT_POINTS) -> str:
    """Each attempt's time over its budget (█ at the budget, or the slowest when over it), and
    the newest as a share of the budget."""
    shown = drill["points"][-points:]
    if not shown:
        return "—"
    ratios = [_ratio(p) for p in shown]
    return f"{sparkline(ratios, max([1.0, *ratios]))} {ratios[-1]:.0%}"


def dimension_items(drill: dict[str, Any], points: int = TEXT_POINTS) -> list[str]:
    shown = drill["points"][-points:]
    items = []
    for dim, top in drill["maxima"].items():
        values = [float(p["scores"].get(dim, 0.0)) for p in shown]
        if values:
            items.append(f"{one_line(dim)} {sparkline(values, float(top) or 1.0)} "
                         f"{score_text(values[-1])}/{top}")
    return items


def _attempts_text(drill: dict[str, Any]) -> str:
    return str(drill["complete"])


def _summary_line(data: dict[str, Any]) -> str:
    unfinished = data["unfinished_attempts"]
    more = f" ({unfinished} unfinished)" if unfinished else ""
    return (f"Your progress: {_plural(data['complete_attempts'], 'complete attempt')}{more} "
            f"on {_plural(len(data['drills']), 'drill')}; "
            f"{_plural(len(data['skills']), 'skill')} seen.")


# -- text -------------------------------------------------------------------------------------

def progress_text(data: dict[str, Any], width: int | None = None) -> str:
    """For a terminal of `width` columns (None: a pipe or a file, a record per line)."""
    from trainer.text_layout import Column, pack, table, wrap

    if not data["drills"] and not data["skills"]:
        return wrap("\n".join([empty_text(data), *(f"Note: {one_line(note)}"
                                                  for note in _notes(data))]), width) + "\n"
    lines = [_summary_line(data), "", readiness_text(data)]
    if data["skills"]:
        lines += ["", f"Skills, weakest first ({RECALL_MEANS}):"]
        columns = [Column("Skill"), Column("Recall", ">", wrap=False), Column("Due"),
                   Column("Last answers", wrap=False), Column("Missed", ">", wrap=False)]
        rows = [[one_line(s["skill"]), f"{s['recall']:.2f}", due_text(s),
                 marks_text(s["last_answers"]), f"{s['missed']} of {s['answers']}"]
                for s in data["skills"]]
        lines += table(columns, rows, width).split("\n")
        lines.append(f"Last answers, oldest → newest: {MARKS_LEGEND}.")
        mistakes = [s for s in data["skills"] if s["last_mistake"]]
        if mistakes:
            lines += ["", "The last mistake named, per skill:"]
            for s in mistakes:
                lines += pack([f"{one_line(s['skill'])}: {mistake_text(s)}"], width, "  ",
                              "    ")
    if data["drills"]:
        longest = max(len(d["points"]) for d in data["drills"])
        newest = f", the newest {TEXT_POINTS}" if longest > TEXT_POINTS else ""
        lines += ["", f"Drills (a block per complete attempt, oldest → newest{newest}):"]
        columns = [Column("Drill"), Column("Attempts", ">", wrap=False),
                   Column("Score", wrap=False), Column("Time/budget", wrap=False),
                   Column("Level now")]
        rows = [[one_line(d["drill"]), _attempts_text(d), score_spark(d), time_spark(d),
                 _level_title(d["level"]) if d["points"] else "not scored"]
                for d in data["drills"]]
        lines += table(columns, rows, width).split("\n")
        lines += ["", "Rubric dimensions (▁ none to █ full marks; the newest score last):"]
        for drill in data["drills"]:
            items = dimension_items(drill)
            if not items:
                note = drill["note"] or "no scored attempt"
                items = [f"not scored today: {one_line(note)}"]
            lines += pack(items, width, f"  {one_line(drill['drill'])}: ", "    ")
    lines += [f"Note: {one_line(note)}" for note in _notes(data)]
    text = "\n".join(lines)
    return (wrap(text, width) if width is not None else text) + "\n"


def _notes(data: dict[str, Any]) -> list[str]:
    """What was wrong with stored times (store.progress: by attempt id), said once each."""
    notes = data.get("notes") or []
    return [str(note) for note in notes]


# -- Markdown ---------------------------------------------------------------------------------

def _md(text: Any) -> str:
    return md_escape(one_line(text))


def progress_markdown(data: dict[str, Any]) -> str:
    notes = [f"- note: {_md(note)}" for note in _notes(data)]
    if not data["drills"] and not data["skills"]:
        return "\n".join(["# Your progress", "", _md(empty_text(data)),
                          *(["", *notes] if notes else [])]) + "\n"
    lines = ["# Your progress", "", _md(_summary_line(data)), "",
             f"**{_md(readiness_text(data))}**"]
    if data["skills"]:
        lines += ["", "## Skills", "",
                  f"Weakest first; {_md(RECALL_MEANS)}. Last answers run oldest → newest: "
                  f"{_md(MARKS_LEGEND)}.", "",
                  "| skill | recall | due | last answers | missed | last mistake |",
                  "|---|---:|---|---|---:|---|"]
        for s in data["skills"]:
            lines.append(f"| {_md(s['skill'])} | {s['recall']:.2f} | {_md(due_text(s))} | "
                         f"{_md(marks_text(s['last_answers']))} | {s['missed']} of "
                         f"{s['answers']} | {_md(mistake_text(s))} |")
    if data["drills"]:
        lines += ["", "## Drills", "",
                  f"A block per complete attempt, oldest → newest (the newest {TEXT_POINTS}).",
                  "", "| drill | attempts | score | time / budget | level now |",
                  "|---|---:|---|---|---|"]
        for d in data["drills"]:
            level = _level_title(d["level"]) if d["points"] else "not scored"
            lines.append(f"| {_md(d['drill'])} | {_attempts_text(d)} | {_md(score_spark(d))} | "
                         f"{_md(time_spark(d))} | {_md(level)} |")
        lines += ["", "### Rubric dimensions", "",
                  "| drill | dimension | series | newest |", "|---|---|---|---:|"]
        for d in data["drills"]:
            shown = d["points"][-TEXT_POINTS:]
            for dim, top in d["maxima"].items():
                values = [float(p["scores"].get(dim, 0.0)) for p in shown]
                lines.append(f"| {_md(d['drill'])} | {_md(dim)} | "
                             f"{sparkline(values, float(top) or 1.0)} | "
                             f"{score_text(values[-1])}/{top} |")
    if notes:
        lines += ["", "## Notes", "", *notes]
    return "\n".join(lines) + "\n"


# -- HTML -------------------------------------------------------------------------------------

LINE_W, LINE_LEFT, LINE_RIGHT, LINE_TOP, LINE_INSET = 470, 44, 16, 14, 10
LINE_PLOT_H = 140  # the dimensions' plot; the level strip and the attempt labels below it
LINE_H = LINE_TOP + LINE_PLOT_H + 46
TIME_PLOT_H = 110
TIME_H = LINE_TOP + TIME_PLOT_H + 28
LEVEL_CLASSES = ("solid", "senior", "staff")


def _recall_chart(skills: list[dict[str, Any]]) -> dict[str, Any]:
    rows = []
    for i, s in enumerate(skills):
        y = TOP + i * ROW_H
        rows.append({"label": s["skill"], "y": px(y + (ROW_H - BAR_H) / 2),
                     "text_y": px(y + ROW_H / 2 + 4), "w": px(BAR_W * s["recall"]),
                     "kind": "overrun" if s["weak"] else "spent",
                     "value": f"{s['recall']:.2f} · due {due_text(s)}"})
    height = TOP + len(rows) * ROW_H + 8
    return {"width": CHART_W, "height": height, "rows": rows, "ticks": chart_axis(1.0, 4, ""),
            "bar_x": LABEL_W, "bar_w": BAR_W, "value_x": LABEL_W + BAR_W + 12,
            "label_x": LABEL_W - 10, "grid_bottom": height - 6, "bar_h": BAR_H}


def _x_positions(count: int) -> list[float]:
    """Where each attempt sits, inset from the axes by half the widest level mark."""
    left, inner = LINE_LEFT + LINE_INSET, LINE_W - LINE_LEFT - LINE_RIGHT - 2 * LINE_INSET
    if count == 1:
        return [left + inner / 2]
    return [left + inner * i / (count - 1) for i in range(count)]


def _labelled(i: int, count: int) -> bool:
    """Which attempts are named under the axis: all when few, else about eight of them."""
    step = max(1, -(-count // 8))
    return count <= 8 or i == count - 1 or (i % step == 0 and count - 1 - i >= step / 2)


def _point_name(point: dict[str, Any]) -> str:
    return f"attempt {point['attempt']} ({when_text(point['finished_at'] or point['started_at'])})"


def _dimension_chart(drill: dict[str, Any]) -> dict[str, Any]:
    points = drill["points"]
    xs = _x_positions(len(points))
    bottom = LINE_TOP + LINE_PLOT_H
    series = []
    for index, (dim, top) in enumerate(drill["maxima"].items()):
        top = float(top) or 1.0
        dots = []
        for x, point in zip(xs, points, strict=True):
            value = float(point["scores"].get(dim, 0.0))
            y = bottom - LINE_PLOT_H * min(max(value, 0.0), top) / top
            dots.append({"x": px(x), "y": px(y),
                         "title": f"{_point_name(point)}: {dim} {score_text(value)}/"
                                  f"{score_text(top)}"})
        series.append({"name": dim, "cls": f"s{index % 4}", "dots": dots,
                       "line": " ".join(f"{d['x']},{d['y']}" for d in dots)})
    step = (xs[1] - xs[0]) if len(xs) > 1 else 24.0
    size = max(3.0, min(16.0, step - 2))
    levels = []
    for i, (x, point) in enumerate(zip(xs, points, strict=True)):
        level = point["level"]
        levels.append({"x": px(x - size / 2), "w": px(size),
                       "cls": level if level in LEVEL_CLASSES else "none",
                       "title": f"{_point_name(point)}: {_level_title(level)}",
                       "label_x": px(x), "label": f"#{point['attempt']}"
                       if _labelled(i, len(points)) else None})
    maxima = {float(top) for top in drill["maxima"].values()}
    top_label = score_text(maxima.pop()) if len(maxima) == 1 else "max"
    return {"width": LINE_W, "height": LINE_H, "left": LINE_LEFT, "right": LINE_W - LINE_RIGHT,
            "top": LINE_TOP, "bottom": bottom, "mid": px(bottom - LINE_PLOT_H / 2),
            "series": series, "levels": levels, "top_label": top_label,
            "strip_y": bottom + 10, "strip_h": 10, "axis_y": bottom + 36}


def _time_chart(drill: dict[str, Any]) -> dict[str, Any]:
    points = drill["points"]
    xs = _x_positions(len(points))
    ratios = [_ratio(p) for p in points]
    top = max([1.25, *ratios])
    top = -(-top * 4 // 1) / 4  # up to a quarter of the budget
    bottom = LINE_TOP + TIME_PLOT_H

    def y_of(value: float) -> float:
        return bottom - TIME_PLOT_H * min(max(value, 0.0), top) / top

    dots = []
    for i, (x, point, ratio) in enumerate(zip(xs, points, ratios, strict=True)):
        budget = point["budget_seconds"]
        dots.append({"x": px(x), "y": px(y_of(ratio)), "over": ratio > 1,
                     "label": f"#{point['attempt']}" if _labelled(i, len(points)) else None,
                     "title": f"{_point_name(point)}: {seconds_text(point['seconds'])} of "
                              f"{budget} s ({ratio:.0%} of the budget)"})
    return {"width": LINE_W, "height": TIME_H, "left": LINE_LEFT, "right": LINE_W - LINE_RIGHT,
            "top": LINE_TOP, "bottom": bottom, "budget_y": px(y_of(1.0)),
            "axis_y": bottom + 18, "budget_label_y": px(y_of(1.0) + 4),
            "top_label": f"{top:.0%}", "dots": dots,
            "line": " ".join(f"{d['x']},{d['y']}" for d in dots),
            "last": f"{ratios[-1]:.0%}" if ratios else ""}


def _week_cell(cell: dict[str, int] | None) -> dict[str, Any]:
    if not cell or not cell["steps"]:
        return {"text": "", "cls": "empty", "title": "not practised"}
    share = cell["right"] / cell["steps"]
    grade = 4 if share == 1 else 3 if share >= 0.75 else 2 if share >= 0.5 else \
        1 if share > 0 else 0
    return {"text": f"{cell['right']}/{cell['steps']}", "cls": f"g{grade}",
            "title": f"{cell['right']} of {cell['steps']} steps right, "
                     f"{cell['steps'] - cell['right']} missed"}


def _week_label(monday: str) -> str:
    from datetime import date

    try:
        return date.fromisoformat(monday).strftime("%d %b").lstrip("0")
    except ValueError:
        return monday


def progress_html(data: dict[str, Any]) -> str:
    """One self-contained page: readiness cards, recall by skill, the skills-by-week grid, and
    per drill its dimensions and level across attempts and its time against the budget."""
    empty = not data["drills"] and not data["skills"]
    skills = {s["skill"]: s for s in data["skills"]}
    drills = []
    for d in data["drills"]:
        drills.append({
            "drill": d["drill"], "complete": d["complete"], "shown": d["shown"],
            "level": _level_title(d["level"]) if d["points"] else "not scored",
            "solid": d["solid"], "note": d["note"],
            "dimensions": _dimension_chart(d) if d["points"] else None,
            "time": _time_chart(d) if d["points"] else None,
            "score": f"{d['points'][-1]['share']:.0%}" if d["points"] else "—",
        })
    return html_page(
        "progress.html.j2", data=data, empty=empty,
        empty_text=empty_text(data) if empty else "",
        summary=_summary_line(data), readiness=readiness_text(data),
        weakest=[{"skill": name, "recall": f"{skills[name]['recall']:.2f}"}
                 for name in data["readiness"]["weakest"]],
        recall_chart=_recall_chart(data["skills"]) if data["skills"] else None,
        skills=[{**s, "due_text": due_text(s), "marks": [
            {"mark": RATING_MARKS.get(r, "?"), "rating": r} for r in s["last_answers"]],
            "recall_text": f"{s['recall']:.2f}"} for s in data["skills"]],
        weeks=[_week_label(w) for w in data["weeks"]],
        grid=[{"skill": s["skill"], "cells": [_week_cell(c) for c in s["by_week"]]}
              for s in data["skills"] if any(s["by_week"])],
        drills=drills, marks_legend=MARKS_LEGEND, recall_means=RECALL_MEANS,
        notes=_notes(data),
    )
