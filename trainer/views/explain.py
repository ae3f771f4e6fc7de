"""What `kvdrill explain` prints: each figure of an engine's start-up log beside what the
capacity model expects, as a text table, Markdown, or one JSON object."""

from __future__ import annotations

from typing import Any

from trainer.capacity.engine_account import Row, Settings
from trainer.views.pages import md_escape


def _shown(value: float | None, unit: str) -> str:
    if value is None:
        return "—"
    if unit in ("tokens", "blocks", "B"):
        return f"{value:,.0f}"
    if unit == "requests":
        return f"{value:,.2f}"
    return f"{value:,.2f}"


def _verdict(row: Row) -> str:
    return {True: "yes", False: "NO", None: ""}[row.agrees]


def explain_json(model: str, gpu: str | None, settings: Settings, rows: list[Row],
                 notes: list[str], engine: str | None, version: str | None) -> dict[str, Any]:
    return {
        "model": model, "gpu": gpu, "engine": engine, "version": version,
        "settings": {"tensor_parallel_size": settings.tensor_parallel,
                     "pipeline_parallel_size": settings.pipeline_parallel,
                     "kv_cache_dtype": settings.kv_dtype, "block_size": settings.block_size,
                     "max_model_len": settings.max_model_len,
                     "gpu_memory_utilization": settings.utilization,
                     "from": dict(settings.sources)},
        "figures": [{"name": r.name, "logged": r.logged, "expected": r.expected,
                     "unit": r.unit, "agrees": r.agrees, "how": r.how} for r in rows],
        "notes": list(notes),
    }


def explain_text(title: str, rows: list[Row], notes: list[str], width: int | None) -> str:
    from trainer.text_layout import Column, Table

    table = Table([Column("figure", wrap=False), Column("logged", ">", wrap=False),
                   Column("expected", ">", wrap=False), Column("agrees", wrap=False),
                   Column("how", least=24)], None if width is None else width - 2)
    lines = [title, ""]
    lines += ["  " + line for line in table.lines(
        [[r.name, _shown(r.logged, r.unit), _shown(r.expected, r.unit), _verdict(r), r.how]
         for r in rows])]
    if notes:
        lines += ["", "Notes:"] + [f"  - {note}" for note in notes]
    return "\n".join(lines)


def explain_markdown(title: str, rows: list[Row], notes: list[str]) -> str:
    def cell(text: str) -> str:
        # a log's text is outside text: Markdown's and HTML's characters escaped, one line
        return md_escape(text)

    lines = [f"# {cell(title)}", "", "| figure | logged | expected | agrees | how |",
             "|---|---:|---:|---|---|"]
    lines += [f"| {r.name} | {_shown(r.logged, r.unit)} | {_shown(r.expected, r.unit)} | "
              f"{_verdict(r)} | {cell(r.how)} |" for r in rows]
    if notes:
        lines += ["", *[f"- {cell(note)}" for note in notes]]
    return "\n".join(lines) + "\n"
