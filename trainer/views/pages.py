"""What the review, cohort, sheet and key pages share: the sandboxed, autoescaping Jinja
environment of templates/ (with the only script a page may run and the policy that says so),
Markdown as HTML, chart geometry, and the small formatters of times, scores and dates.
Markdown escaping for what a person typed lives here too, so every page escapes it one way."""

from __future__ import annotations

import base64
import math
import re
from collections.abc import Callable
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # Jinja is imported by the pages that need it: text and md start faster
    from jinja2.sandbox import ImmutableSandboxedEnvironment
    from markupsafe import Markup


from trainer.errors import UsageError
from trainer.files.sha256 import sha256
from trainer.printable import printable

# Runs once the page is laid out: the size of every chart, for the browser test (and for anyone
# checking that a chart did not collapse to nothing).
CHART_SCRIPT = (
    'window.addEventListener("load",function(){var s=[];'
    'document.querySelectorAll("svg.chart").forEach(function(c){'
    'var r=c.getBoundingClientRect();s.push(Math.round(r.width)+"\\u00d7"+Math.round(r.height));'
    '});document.body.dataset.charts=s.join(",");});'
)


# Only that script may run, even if something slipped past the escaping; nothing may be fetched.
CONTENT_SECURITY_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; script-src 'sha256-"
    + base64.b64encode(sha256(CHART_SCRIPT.encode()).digest()).decode() + "'"
)


TEMPLATES = Path(__file__).parent / "templates"


def one_line(text: Any, width: int | None = None) -> str:
    line = " ".join(printable("" if text is None else str(text)).split())
    if width is not None and len(line) > width:
        line = line[: width - 1] + "…"
    return line


def level_title(level: str | None, missing: str = "—") -> str:
    """A rubric level as every view shows it, one spelling everywhere: "Solid", "Strong
    hire" (the rubric's ids are lower-case and hyphenated; `missing` when there is none)."""
    return one_line(level).replace("-", " ").capitalize() if level else missing


def score_text(value: float) -> str:
    return f"{value:g}"


def seconds_text(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.1f} s" if value < 10 else f"{value:.0f} s"


MAX_SHOWN_PERCENT = 1e8  # 1,000,000× the reference: past it an error is said, not printed


def percent_text(value: float | None) -> str:
    if value is None:
        return ""
    if value == 0:
        return "0%"
    if value != value:  # NaN: no error to show
        return ""
    if abs(value) >= MAX_SHOWN_PERCENT:  # an absurd answer (1e30): bounded, not 30 digits
        return "more than 1,000,000×"  # only above: an error below is at most −100%
    shown = f"{value:+.1f}" if abs(value) < 10 else f"{value:+.0f}"
    return shown.replace("-", "−") + "%"


def when_text(stamp: str | None) -> str:
    if not stamp:
        return "—"
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return stamp
    if moment.tzinfo is not None and moment.utcoffset() == UTC.utcoffset(None):
        return moment.strftime("%Y-%m-%d %H:%M UTC")
    return moment.strftime("%Y-%m-%d %H:%M")


def time_scale(steps: list[dict[str, Any]]) -> float:
    return max([1.0] + [float(max(s["seconds"] or 0, s["budget_seconds"] or 0)) for s in steps])


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|#!])")


def md_escape(text: str | None) -> str:
    """A value inside Markdown (and a table cell): on one line, with Markdown's and HTML's
    special characters backslash-escaped, so an answer is shown exactly as typed."""
    return _MD_SPECIAL.sub(r"\\\1", one_line(text))


@cache
def environment() -> ImmutableSandboxedEnvironment:
    import jinja2
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters["printable"] = lambda text: printable(text, keep_lines=False)
    env.filters["printable_block"] = lambda text: printable(text, keep_lines=True)
    env.filters["when"] = when_text
    env.filters["seconds"] = seconds_text
    env.filters["percent"] = percent_text
    env.filters["score"] = score_text
    return env


def markdown_html(markdown: str, demote: int = 0) -> Markup:
    """CommonMark (+ tables) as HTML; raw HTML in the source is escaped, images are not
    loaded (they stay text), and headings move down `demote` levels to sit under the page's."""
    from markdown_it import MarkdownIt  # only HTML needs it: text and md start faster

    parser = MarkdownIt("commonmark", {"html": False}).enable("table").disable("image")
    tokens = parser.parse(markdown)
    for token in tokens:
        if token.type in ("heading_open", "heading_close"):
            token.tag = f"h{min(6, int(token.tag[1]) + demote)}"
    from markupsafe import Markup

    return Markup(parser.renderer.render(tokens, parser.options, {}))


def html_page(template: str, **context: Any) -> str:
    from markupsafe import Markup

    return environment().get_template(template).render(
        csp=CONTENT_SECURITY_POLICY, script=Markup(CHART_SCRIPT), **context)


def px(value: float) -> str:
    return f"{value:.1f}".rstrip("0").rstrip(".")


CHART_W, LABEL_W, BAR_W, ROW_H, BAR_H, TOP = 960, 210, 560, 26, 14, 30


def nice_scale(top: float) -> tuple[float, int]:
    """A round axis end at or above `top`, and how many equal ticks divide it (4 to 6)."""
    top = max(top, 1.0)
    magnitude = 10 ** math.floor(math.log10(top / 4))
    for factor in (1, 2, 2.5, 5, 10):
        step = factor * magnitude
        if top / step <= 6:
            count = max(4, math.ceil(top / step - 1e-9))
            return step * count, count
    return top, 4  # pragma: no cover - the loop always returns


def chart_axis(scale: float, count: int, unit: str) -> list[dict[str, str]]:
    ticks = []
    for i in range(count + 1):
        value = scale * i / count
        ticks.append({"x": px(LABEL_W + BAR_W * i / count), "label": f"{value:g}{unit}"})
    return ticks


def time_chart(steps: list[dict[str, Any]]) -> dict[str, Any]:
    scale, count = nice_scale(time_scale(steps))
    rows = []
    for i, s in enumerate(steps):
        y = TOP + i * ROW_H
        row: dict[str, Any] = {"label": s["id"], "y": px(y + (ROW_H - BAR_H) / 2),
                               "text_y": px(y + ROW_H / 2 + 4), "over": s["overtime"],
                               "budget": None, "spent": None, "overrun": None}
        seconds, budget = s["seconds"], s["budget_seconds"]
        if budget:
            row["budget"] = px(BAR_W * budget / scale)
        if seconds is not None:
            within = seconds if not budget else min(seconds, budget)
            row["spent"] = px(BAR_W * within / scale)
            if budget and seconds > budget:
                row["overrun_x"] = px(LABEL_W + BAR_W * budget / scale)
                row["overrun"] = px(BAR_W * (seconds - budget) / scale)
            row["value"] = f"{seconds_text(seconds)} of {budget} s" + (
                f", {seconds_text(seconds - budget)} over" if s["overtime"] and budget else "")
        else:
            row["value"] = "not answered"
        rows.append(row)
    height = TOP + len(rows) * ROW_H + 8
    return {"width": CHART_W, "height": height, "rows": rows,
            "ticks": chart_axis(scale, count, " s"),
            "bar_x": LABEL_W, "value_x": LABEL_W + BAR_W + 12, "label_x": LABEL_W - 10,
            "grid_bottom": height - 6, "bar_h": BAR_H}


REPORT_FORMATS = ("text", "md", "html", "json")


def render_report(data: dict[str, Any], fmt: str, what: str,
                  text: Callable[[dict[str, Any], int | None], str],
                  markdown: Callable[[dict[str, Any]], str],
                  html: Callable[[dict[str, Any]], str], width: int | None = None) -> str:
    """A report's data in the format asked for: text laid out for `width`, Markdown, one
    self-contained HTML page, or JSON."""
    if fmt == "json":
        from trainer.printable import json_text

        return json_text(data) + "\n"
    if fmt == "text":
        return text(data, width)
    if fmt == "md":
        return markdown(data)
    if fmt == "html":
        return html(data)
    raise UsageError(f"unknown {what} format {fmt!r}: use one of {', '.join(REPORT_FORMATS)}")
