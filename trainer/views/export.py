"""`kvdrill export ID --format md`: a transcript (store.transcripts) as Markdown.

Everything in it that came from outside kvdrill (the answers as typed, a model folder's name in
the re-target, a drill's ids and texts, a stored note) is escaped as review's Markdown escapes
it (pages.md_escape): on one line, with Markdown's and HTML's special characters
backslash-escaped, so no value can start a heading, a list or a raw HTML element, and no
newline reaches a Markdown line."""

from __future__ import annotations

from typing import Any

from trainer.views.pages import level_title, md_escape


def _md(value: Any) -> str:
    return md_escape("" if value is None else str(value))


def _target_line(t: dict[str, Any]) -> list[str]:
    """The model and GPU a re-targeted attempt was practised on, as one line."""
    if not t.get("target"):
        return []
    from trainer.drills.variants import target_label
    from trainer.errors import KvdrillError

    try:
        return [f"- re-targeted at {_md(target_label(t['target']))}"]
    except KvdrillError:
        return ["- re-targeted (the stored target cannot be read)"]


def _number(value: Any, spec: str) -> str:
    try:
        return format(float(value), spec)
    except (TypeError, ValueError):
        return _md(value)


def transcript_markdown(t: dict[str, Any]) -> str:
    """A transcript as Markdown: the attempt, a table of its steps, then the rubric."""
    variant = "none (the drill as written)" if t["variant"] is None else _md(t["variant"])
    lines = [f"# Attempt {_md(t['id'])}: {_md(t['drill'])}", "",
             f"- started {_md(t['started_at'])}, {_md(t['status'])}, mode {_md(t['mode'])}",
             f"- variant {variant}", *_target_line(t),
             *([f"- note: {_md(t['note'])}"] if t.get("note") else []), "",
             "| step | answer | reference | verdict | mistake | seconds / budget | hints |",
             "|---|---|---|---|---|---|---|"]
    for s in t["steps"]:
        seconds = "" if s["seconds"] is None else \
            f"{_number(s['seconds'], '.0f')} / {_md(s['budget_seconds'])}"
        verdict = _md(s["verdict"]) + (" (carried forward)" if s["carried_forward"] else "")
        lines.append(f"| {_md(s['id'])} | {_md(s['answer'])} | {_md(s['reference'])} | "
                     f"{verdict} | {_md(s['misconception'])} | {seconds} | "
                     f"{_md(s['hints'])} |")
    if not t["rubric"]:
        return "\n".join(lines)
    lines += ["", "## Rubric", ""]
    for dim, d in t["rubric"]["dimensions"].items():
        evidence = "; ".join(_md(e) for e in d["evidence"])
        lines.append(f"- **{_md(dim)}** {_number(d['score'], 'g')}/{_md(d['max'])}: {evidence}")
    if t["rubric"]["level"]:
        lines.append(f"- sounds like: {_md(level_title(t['rubric']['level']))}")
    for flag in t["rubric"]["red_flags"]:
        lines.append(f"- red flag: {_md(flag['says'])}")
    return "\n".join(lines)
