"""`kvdrill cohort DRILL`: the attempts of one drill side by side, for an interviewer.

Each attempt (a candidate's imported transcript, or one practised here) is re-marked from its
raw answers (transcripts.transcript), so every column is marked by today's solver. Per
candidate: the rubric's dimensions and the level, the time spent against the steps' budgets,
how many steps ran over, and what the import flagged. Per step: who was right, which mistake
each wrong answer matched, who ran over. The steps that separate candidates most are those
where the credit (right 1, carried forward half, else 0) varies most between them.

`cohort_data` gathers plain JSON-able values; `render` lays them out as text, Markdown, JSON or
one self-contained HTML file (cohort_html, through the pages' autoescaped templates).
"""

from __future__ import annotations

import math
from typing import Any

from trainer.errors import KvdrillError
from trainer.store.database import Store
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
    time_chart,
)

MAX_CANDIDATES = 50  # the newest; a cohort wider than this is not read side by side
SEPARATING = 3  # steps listed as separating candidates most
CELL_MARKS = {"correct": "✓", "wrong": "✗", "invalid": "?", "unanswered": "·", "answered": "✎",
              "revealed": "⊘"}
FORMATS = REPORT_FORMATS
OWN_SOURCE = "practised in this store"


def _credit(step: dict[str, Any]) -> float | None:
    if step.get("kind") != "numeric":
        return None
    if step["verdict"] == "correct":
        return 1.0
    return 0.5 if step.get("carried_forward") else 0.0


def _candidate(attempt_id: int, transcript: dict[str, Any], imported: Any) -> dict[str, Any]:
    rubric = transcript.get("rubric")
    steps = transcript["steps"]
    timed = [s for s in steps if s.get("seconds") is not None]
    numeric = [s for s in steps if s.get("kind") == "numeric"]
    return {
        "attempt": attempt_id,
        "name": imported.candidate if imported is not None else f"attempt {attempt_id}",
        "source": imported.source if imported is not None else OWN_SOURCE,
        "variant": transcript.get("variant"),
        # the model and GPU the drill was re-targeted at, in words (None: as written)
        "retargeted": _retargeted(transcript.get("target")),
        "status": transcript.get("status"),
        "started_at": transcript.get("started_at"),
        "note": transcript.get("note"),
        "dimensions": {} if not rubric else {
            dim: {"score": float(d["score"]), "max": d["max"]}
            for dim, d in rubric["dimensions"].items()},
        "level": rubric.get("level") if rubric else None,
        "correct": sum(1 for s in numeric if s["verdict"] == "correct"),
        "numeric": len(numeric),
        "seconds": round(sum(float(s["seconds"]) for s in timed), 3),
        "budget_seconds": sum(int(s.get("budget_seconds") or 0) for s in steps),
        "overtime": sum(1 for s in steps if s.get("overtime")),
        "flags": list(imported.flags) if imported is not None else [],
    }


def _retargeted(target: Any) -> str | None:
    from trainer.views.report import retargeted_label

    return retargeted_label(target)


def _cell(step: dict[str, Any]) -> dict[str, Any]:
    return {"verdict": step["verdict"], "mistake": step.get("misconception"),
            "carried_forward": bool(step.get("carried_forward")),
            "overtime": bool(step.get("overtime")), "seconds": step.get("seconds"),
            "budget_seconds": step.get("budget_seconds"), "answer": step.get("answer")}


def _separation(credits: list[float]) -> float:
    """The spread of the credit between candidates: its population standard deviation."""
    if len(credits) < 2:
        return 0.0
    mean = sum(credits) / len(credits)
    return math.sqrt(sum((c - mean) ** 2 for c in credits) / len(credits))


def _chosen(store: Store, drill_id: str, variant: int | None, own: bool
            ) -> tuple[list[Any], str, int]:
    """The attempts a cohort holds, newest first (at most MAX_CANDIDATES), what they are, and
    how many of your own were left out. A cohort compares candidates: the imported attempts of
    the drill (of `variant`, when given), with your own put in beside them only when `own`;
    with none imported, your own attempts are the cohort (a candidate's own tries)."""
    from trainer.store.kept_marks import chunked

    imported: list[Any] = []
    mine: list[Any] = []
    own_count = 0
    for batch in chunked((a for a in store.iter_attempts(drill_id)
                          if variant is None or a.variant == variant), 500):
        taken_in = store.imports(a.id for a in batch)
        for attempt in batch:
            if attempt.id in taken_in:
                imported.append(attempt)
            else:
                own_count += 1
                mine.append(attempt)
        del imported[MAX_CANDIDATES:], mine[MAX_CANDIDATES:]
    if not imported:
        return mine, "own", 0
    if not own:
        return imported, "imported", own_count
    both = sorted(imported + mine, key=lambda a: a.id, reverse=True)[:MAX_CANDIDATES]
    return both, "imported and own", 0


def cohort_data(store: Store, drill_id: str, variant: int | None = None,
                own: bool = False) -> dict[str, Any]:
    """The attempts of `drill_id` (of `variant` only, when given), the newest MAX_CANDIDATES,
    oldest first, re-marked, side by side: the imported candidates' (and your own beside them
    with `own`), or your own when none was imported (_chosen)."""
    from trainer.store import transcripts
    from trainer.store.database import DAMAGED, DamagedAttempt

    attempts, holds, left_out = _chosen(store, drill_id, variant, own)
    if not attempts:
        which = f" of variant {variant}" if variant is not None else ""
        raise KvdrillError(f"no attempts of {drill_id}{which} in the store: kvdrill import "
                           "FILE takes candidates' transcripts in")
    attempts.reverse()
    imports = store.imports(a.id for a in attempts)
    candidates, marked = [], []
    for attempt in attempts:
        try:
            transcript = transcripts.transcript(store, attempt.id, unmarked_ok=True)
        except DamagedAttempt as damaged:  # left out, said by the command
            DAMAGED.setdefault(attempt.id, damaged.why)
            continue
        candidates.append(_candidate(attempt.id, transcript, imports.get(attempt.id)))
        marked.append({s["id"]: s for s in transcript["steps"]})
    if not candidates:
        raise KvdrillError(f"every attempt of {drill_id} the cohort would hold is damaged "
                           f"({DAMAGED[attempts[0].id]}): kvdrill import FILE takes candidates' "
                           "transcripts in")
    names = [c["name"] for c in candidates]
    for candidate in candidates:  # two files of one name: tell them apart by attempt
        if names.count(candidate["name"]) > 1:
            candidate["name"] = f"{candidate['name']} #{candidate['attempt']}"
    step_ids = list(dict.fromkeys(step_id for steps in marked for step_id in steps))
    steps = []
    for step_id in step_ids:
        cells = [_cell(m[step_id]) if step_id in m else None for m in marked]
        kinds = {m[step_id].get("kind") for m in marked if step_id in m}
        credits = [c for c in (_credit(m[step_id]) for m in marked if step_id in m)
                   if c is not None]
        steps.append({"id": step_id, "kind": "numeric" if "numeric" in kinds else "text",
                      "cells": cells, "separation": round(_separation(credits), 6),
                      "right": [candidates[i]["name"] for i, c in enumerate(cells)
                                if c and c["verdict"] == "correct"],
                      "mistakes": {candidates[i]["name"]: c["mistake"]
                                   for i, c in enumerate(cells) if c and c["mistake"]},
                      "over": [candidates[i]["name"] for i, c in enumerate(cells)
                               if c and c["overtime"]]})
    ranked = sorted((s for s in steps if s["separation"] > 0),
                    key=lambda s: (-s["separation"], -len(set(s["mistakes"].values())),
                                   step_ids.index(s["id"])))
    dimensions = list(dict.fromkeys(d for c in candidates for d in c["dimensions"]))
    variants = sorted({c["variant"] for c in candidates}, key=lambda v: (v is not None, v or 0))
    return {"drill": drill_id, "variant": variant, "variants": variants,
            # whose attempts: "imported" (candidates'), "own" (practised here, none imported)
            # or "imported and own" (--own); and how many of your own were left out
            "holds": holds, "own_left_out": left_out,
            "candidates": candidates, "dimensions": dimensions, "steps": steps,
            "separating": [s["id"] for s in ranked[:SEPARATING]]}


def render(data: dict[str, Any], fmt: str, width: int | None = None) -> str:
    return render_report(data, fmt, "cohort", cohort_text, cohort_markdown, cohort_html, width)


# -- shared wording ---------------------------------------------------------------------------

def _score(value: float) -> str:
    return f"{value:g}"


def _seconds(value: float) -> str:
    return f"{value:.0f} s"


def cell_text(cell: dict[str, Any] | None) -> str:
    """One candidate's step in a few characters: ✓, ✗ query-heads, ·, with (over) when it ran
    over its budget."""
    if cell is None:
        return "—"
    text = CELL_MARKS.get(cell["verdict"], "?")
    if cell["carried_forward"]:
        text += " cf"
    if cell["mistake"]:
        text += f" {cell['mistake']}"
    if cell["overtime"]:
        text += " (over)"
    return text


def separation_text(step: dict[str, Any]) -> str:
    right = ", ".join(step["right"]) or "nobody"
    wrong = "; ".join(f"{name}: {mistake}" for name, mistake in step["mistakes"].items())
    over = ", ".join(step["over"])
    return (f"right: {right}" + (f"; mistakes: {wrong}" if wrong else "")
            + (f"; over budget: {over}" if over else ""))


def _title(dimension: str) -> str:
    return dimension.replace("-", " ").capitalize()


def _variants_text(data: dict[str, Any]) -> str:
    if data["variant"] is not None:
        return f"variant {data['variant']}"
    if data["variants"] == [None]:
        return "the drill's own givens"
    shown = ", ".join(_variant_name(v) for v in data["variants"])
    return f"variant{'s' if len(data['variants']) != 1 else ''}: {shown}"


def _variant_name(variant: int | None) -> str:
    return "drill's own" if variant is None else str(variant)


def holds_text(data: dict[str, Any]) -> str:
    """"3 imported attempts (variant 952452)", "4 attempts of your own, none imported (...)",
    "2 attempts: 1 imported, 1 of your own (...)"."""
    def count(n: int, what: str = "attempt") -> str:
        return f"{n} {what}{'s' if n != 1 else ''}"

    candidates = data["candidates"]
    mine = sum(1 for c in candidates if c["source"] == OWN_SOURCE)
    holds = data.get("holds")
    if holds == "imported":
        said = count(len(candidates), "imported attempt")
    elif holds == "own":
        said = f"{count(len(candidates))} of your own, none imported"
    else:
        said = f"{count(len(candidates))}: {len(candidates) - mine} imported, {mine} of your own"
    targets = sorted({c.get("retargeted") or "the drill's own model and card"
                      for c in candidates})
    if targets == ["the drill's own model and card"]:
        return f"{said} ({_variants_text(data)})"
    # re-targeted attempts are worked on other numbers: say which, and a mix as a mix
    on = targets[0] if len(targets) == 1 else f"a mix of {len(targets)} targets: " + \
        "; ".join(targets)
    variants = _variants_text(data).replace("the drill's own givens", "the drill's givens")
    return f"{said} ({variants}, on {on})"


def left_out_text(data: dict[str, Any]) -> str | None:
    count = data.get("own_left_out") or 0
    if not count:
        return None
    return (f"Your own attempt{'s' if count != 1 else ''} of this drill ({count}) "
            f"{'are' if count != 1 else 'is'} left out: --own puts "
            f"{'them' if count != 1 else 'it'} in beside the candidates.")


def _variant_cell(data: dict[str, Any], candidate: dict[str, Any]) -> str:
    """A candidate's variant, shown only when the cohort mixes variants or targets."""
    if _mixes_targets(data):
        return _variant_and_target(candidate)
    return _variant_name(candidate["variant"]) if len(data["variants"]) > 1 else ""


def _mixes_targets(data: dict[str, Any]) -> bool:
    return len({c.get("retargeted") for c in data["candidates"]}) > 1


def _variant_and_target(candidate: dict[str, Any]) -> str:
    """"drill's own, Qwen3-8B on NVIDIA H200 SXM 141GB": which numbers a candidate answered,
    in a cohort whose candidates were marked against different targets."""
    target = candidate.get("retargeted") or "own model and card"
    return f"{_variant_name(candidate['variant'])}, {target}"


def _flag_lines(data: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["name"], f"{f.get('step') or 'attempt'}: {f.get('field')}: {f.get('says')}")
            for c in data["candidates"] for f in c["flags"]]


# -- text -------------------------------------------------------------------------------------

def cohort_text(data: dict[str, Any], width: int | None = None) -> str:
    """The cohort for a terminal of `width` columns (None: a row per line): the candidates'
    table narrows, wraps or stacks; the step grid goes in blocks of candidates that fit."""
    from trainer.text_layout import Column, Table, column_blocks

    candidates = data["candidates"]
    lines = [f"Cohort of {data['drill']}: {holds_text(data)}"]
    left_out = left_out_text(data)
    lines += [left_out, ""] if left_out else [""]
    head = ["candidate", "attempt", "variant", *(_title(d) for d in data["dimensions"]),
            "level", "right", "time / budget", "over", "flags"]
    rows = []
    for c in candidates:
        dims = [f"{_score(c['dimensions'][d]['score'])}/{c['dimensions'][d]['max']}"
                if d in c["dimensions"] else "—" for d in data["dimensions"]]
        rows.append([one_line(c["name"]), str(c["attempt"]), _variant_cell(data, c), *dims,
                     one_line(_level(c["level"])), f"{c['correct']}/{c['numeric']}",
                     f"{_seconds(c['seconds'])} / {c['budget_seconds']} s", str(c["overtime"]),
                     f"⚑ {len(c['flags'])}" if c["flags"] else ""])
    columns = [Column(head[0]), Column(head[1], ">", wrap=False),
               Column(head[2], ">", wrap=False), *(Column(h) for h in head[3:])]
    wide = Table(columns, width).fit(rows, drop_empty=True)
    if not wide.stacked:
        lines += wide.lines(rows, drop_empty=True)
    else:  # too many measures for the width: a measure per row, a candidate per column
        turned = [Column(""), *(Column(row[0]) for row in rows)]
        lines += column_blocks(turned, [[name, *(row[i] for row in rows)]
                                        for i, name in enumerate(head) if i > 0
                                        and any(row[i] for row in rows)], width)
    lines += ["", "Steps (✓ right, ✗ wrong with the mistake matched, cf carried forward, "
              "· unanswered, (over) over budget):"]
    columns = [Column("step", wrap=False), *(Column(one_line(c["name"])) for c in candidates)]
    rows = [[step["id"], *(cell_text(cell) for cell in step["cells"])]
            for step in data["steps"]]
    lines += column_blocks(columns, rows, width)
    if data["separating"]:
        lines += ["", "Steps that separate candidates most:"]
        by_id = {s["id"]: s for s in data["steps"]}
        for step_id in data["separating"]:
            lines.append(f"  {step_id}: {one_line(separation_text(by_id[step_id]))}")
    flags = _flag_lines(data)
    if flags:
        lines += ["", "⚑ Flagged: what an imported transcript contradicts (kvdrill review ID):"]
        lines += [f"  {one_line(name)}: {one_line(text)}" for name, text in flags]
    notes = [(c["name"], c["note"]) for c in candidates if c["note"]]
    if notes:
        lines += ["", "Notes:"] + [f"  {one_line(n)}: {one_line(t)}" for n, t in notes]
    return "\n".join(lines) + "\n"


# -- Markdown ---------------------------------------------------------------------------------

def _md(text: Any) -> str:
    return md_escape(one_line(text))


def cohort_markdown(data: dict[str, Any]) -> str:
    candidates = data["candidates"]
    dims = data["dimensions"]
    left_out = left_out_text(data)
    lines = [f"# Cohort of {_md(data['drill'])}", "", f"{_md(holds_text(data))}."
             + (f" {_md(left_out)}" if left_out else ""), "",
             "## Candidates", "",
             "| candidate | attempt | variant | " + " | ".join(_title(d) for d in dims)
             + " | level | right | time / budget | over | flags |",
             "|---|---|---|" + "---|" * len(dims) + "---|---|---|---|---|"]
    for c in candidates:
        scores = " | ".join(f"{_score(c['dimensions'][d]['score'])}/{c['dimensions'][d]['max']}"
                            if d in c["dimensions"] else "—" for d in dims)
        shown = _variant_and_target(c) if _mixes_targets(data) else _variant_name(c["variant"])
        lines.append(f"| {_md(c['name'])} | {c['attempt']} | {_md(shown)}"
                     f" | {scores} | "
                     f"{_md(_level(c['level']))} | {c['correct']}/{c['numeric']} | "
                     f"{_seconds(c['seconds'])} / {c['budget_seconds']} s | {c['overtime']} | "
                     f"{'⚑ ' + str(len(c['flags'])) if c['flags'] else ''} |")
    lines += ["", "## Steps", "",
              "| step | " + " | ".join(_md(c["name"]) for c in candidates) + " |",
              "|---|" + "---|" * len(candidates)]
    for step in data["steps"]:
        lines.append(f"| {_md(step['id'])} | "
                     + " | ".join(_md(cell_text(cell)) for cell in step["cells"]) + " |")
    if data["separating"]:
        lines += ["", "## Steps that separate candidates most", ""]
        by_id = {s["id"]: s for s in data["steps"]}
        lines += [f"- **{_md(step_id)}**: {_md(separation_text(by_id[step_id]))}"
                  for step_id in data["separating"]]
    flags = _flag_lines(data)
    if flags:
        lines += ["", "## ⚑ Flagged", ""]
        lines += [f"- **{_md(name)}**: {_md(text)}" for name, text in flags]
    return "\n".join(lines) + "\n"


# -- HTML -------------------------------------------------------------------------------------

def _cohort_rubric_chart(data: dict[str, Any]) -> dict[str, Any]:
    """Per dimension, one bar per candidate, out of the dimension's maximum."""
    candidates = data["candidates"]
    maxima = [c["dimensions"][d]["max"] for c in candidates for d in data["dimensions"]
              if d in c["dimensions"]]
    scale = float(max([1, *maxima]))
    rows = []
    y = TOP
    for dim in data["dimensions"]:
        for index, c in enumerate(candidates):
            d = c["dimensions"].get(dim)
            score, top = (d["score"], d["max"]) if d else (0.0, 0)
            rows.append({
                "label": f"{_title(dim)}: {c['name']}" if index == 0 else c["name"],
                "sub": index > 0, "kind": "auto", "y": px(y + (ROW_H - BAR_H) / 2),
                "text_y": px(y + ROW_H / 2 + 4), "max_w": px(BAR_W * top / scale),
                "w": px(BAR_W * min(max(score, 0.0), float(top)) / scale),
                "value": f"{score_text(score)} / {top}" if d else "not scored",
            })
            y += ROW_H
        y += 8
    height = y + 4
    count = int(scale) if scale <= 10 else 5
    return {"width": CHART_W, "height": height, "rows": rows, "ticks": chart_axis(scale, count, ""),
            "bar_x": LABEL_W, "value_x": LABEL_W + BAR_W + 12, "label_x": LABEL_W - 10,
            "grid_bottom": height - 4, "bar_h": BAR_H}


def cohort_html(data: dict[str, Any]) -> str:
    """A cohort (cohort.cohort_data) as one self-contained HTML file: the candidates' rubric
    dimensions and times as charts, the step grid, the steps that separate them and the flags."""
    candidates = data["candidates"]
    time_rows = [{"id": c["name"], "seconds": c["seconds"], "budget_seconds":
                  c["budget_seconds"], "overtime": c["seconds"] > c["budget_seconds"]}
                 for c in candidates]
    by_id = {s["id"]: s for s in data["steps"]}
    return html_page(
        "cohort.html.j2", data=data, candidates=candidates, titles={
            d: _title(d) for d in data["dimensions"]},
        rubric_chart=_cohort_rubric_chart(data), time_chart=time_chart(time_rows),
        separating=[{"id": i, "text": separation_text(by_id[i])} for i in data["separating"]],
        cells=[{"id": s["id"], "cells": [{"text": cell_text(c), "verdict": c["verdict"]
                                          if c else "none", "over": bool(c and c["overtime"])}
                                         for c in s["cells"]]} for s in data["steps"]],
        flags=[{"name": c["name"], "step": f.get("step"), "field": f.get("field"),
                "says": f.get("says")} for c in candidates for f in c["flags"]],
        variants=", ".join(_variant_name(v) for v in data["variants"]),
        holds=holds_text(data), left_out=left_out_text(data),
        variant_of={c["name"]: _variant_and_target(c) if _mixes_targets(data)
                    else _variant_name(c["variant"]) for c in candidates},
        levels={c["name"]: _level(c["level"]) for c in candidates},
    )


def _level(level: str | None) -> str:
    """A level as progress and review name it: "Solid", "Strong hire"."""
    return level_title(level)

