"""The reviewer's report (text, Markdown, HTML) and the interviewer's sheet and key as HTML:
mistakes named with their advice, tampered verdicts flagged, overrides beside the automatic
score, everything escaped, nothing fetched, the same bytes every time."""

from __future__ import annotations

import html
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills import variants
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution
from trainer.errors import UsageError
from trainer.store import kept_marks as progress
from trainer.store import transcripts
from trainer.store.database import Store
from trainer.views import keys, report

Run = Callable[..., Result]
FORMATS: tuple[report.Format, ...] = ("text", "md", "html")
QUERY_HEADS = "32\n32\n128\n"  # layers right, KV heads = the query heads, head_dim right


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    return tmp_path


def practise(run: Run, answers: str) -> int:
    """One attempt through the real piped practice command; returns its id."""
    run("practice", "llama31-8b-h100", input=answers)
    with Store() as store:
        return store.attempts()[0].id


def review(attempt_id: int, solution: bool = False) -> dict[str, Any]:
    with Store() as store:
        transcript = transcripts.transcript(store, attempt_id)
        trend = progress.Keeper(store).summaries(store.attempts("llama31-8b-h100"),
                                                 score_incomplete=True)
        overrides = store.overrides(attempt_id)
    solution_md = None
    if solution:
        drill, _ = find_drill(transcript["drill"])
        solution_md = render_solution(variants.answer_key(drill, transcript["variant"]))
    return report.review_data(transcript, overrides, "test store", trend, solution_md)


def step(data: dict[str, Any], step_id: str) -> dict[str, Any]:
    found: dict[str, Any] = next(s for s in data["steps"] if s["id"] == step_id)
    return found


def html_row(page: str, first_cell: str) -> str:
    """The <tr> of a table whose first cell is `first_cell`."""
    for row in re.findall(r"<tr[^>]*>.*?</tr>", page, flags=re.S):
        if re.match(rf"<tr[^>]*>\s*<td[^>]*>{re.escape(first_cell)}</td>", row):
            return str(row)
    raise AssertionError(f"no table row starts with {first_cell!r}")


def variant_key(drill_id: str) -> tuple[AnswerKey, int]:
    drill, _ = find_drill(drill_id)
    variant, givens = keys.pick_variants(drill, 1, seed=3)[0]
    return AnswerKey(drill, givens), variant


# ---------------------------------------------------------------------------------------------
# What a review shows


def test_the_review_data_names_the_mistake_its_advice_and_the_relative_error(
        home: Path, run: Run) -> None:
    data = review(practise(run, QUERY_HEADS))
    kv_heads = step(data, "shape-kv-heads")
    assert kv_heads["misconception"] == {
        "id": "query-heads", "mistake": WRONG_PATHS["query-heads"].mistake,
        "advice": WRONG_PATHS["query-heads"].advice}
    assert kv_heads["answer"] == "32" and kv_heads["reference"] == "8"
    assert kv_heads["relative_error_pct"] == 300
    assert step(data, "shape-layers")["relative_error_pct"] == 0
    assert step(data, "policy")["relative_error_pct"] is None
    assert data["summary"]["mistakes"] == 1


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_review_names_the_query_heads_mistake_and_its_advice(
        home: Path, run: Run, fmt: report.Format) -> None:
    page = report.render_review(review(practise(run, QUERY_HEADS)), fmt)
    escape = html.escape if fmt == "html" else str
    assert "query-heads" in page
    assert escape(WRONG_PATHS["query-heads"].advice) in page
    assert escape(WRONG_PATHS["query-heads"].mistake) in page


def test_the_text_review_draws_time_bars_and_a_sparkline_per_dimension(
        home: Path, run: Run) -> None:
    practise(run, "32\n")
    text = report.render_review(review(practise(run, QUERY_HEADS)), "text")
    assert re.search(r"^  shape-kv-heads +[█░▓]+ +[\d.]+ s / 15 s", text, flags=re.M)
    trend = text.split("Trend over 2 attempts")[1]
    for title in ("Arithmetic", "Assumptions", "Levers", "Operational close"):
        assert re.search(rf"^  {title} +[▁▂▃▄▅▆▇█]{{2}} ", trend, flags=re.M)


def test_the_html_review_draws_a_trend_chart_per_dimension_once_there_are_two_attempts(
        home: Path, run: Run) -> None:
    first = report.render_review(review(practise(run, "32\n")), "html")
    second = report.render_review(review(practise(run, QUERY_HEADS)), "html")
    assert first.count('<svg class="chart"') == 2  # time and rubric only
    assert second.count('<svg class="chart"') == 2 + 4


# ---------------------------------------------------------------------------------------------
# Safety: self-contained, escaped


def test_the_html_review_is_self_contained(home: Path, run: Run) -> None:
    page = report.render_review(review(practise(run, QUERY_HEADS), solution=True), "html")
    assert "Worked solution" in page
    for outside in ("http://", "https://", "<link", "src=", "@import", "url("):
        assert outside not in page
    assert page.count("<script") == 1  # the inline chart-size script, and nothing else


def test_a_typed_script_appears_escaped_never_raw(home: Path, run: Run) -> None:
    data = review(practise(run, "<script>alert(1)</script>\n"))
    page = report.render_review(data, "html")
    assert "<script>alert(1)" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in report.render_review(data, "md")


def test_raw_html_in_a_solution_is_escaped(home: Path, run: Run) -> None:
    data = review(practise(run, "32\n"))
    data["solution_md"] = ("# Solution\n\n<script>alert(2)</script>\n\n"
                           "<img src=x onerror=alert(3)>\n")
    page = report.render_review(data, "html")
    assert "<script>alert(2)" not in page and "<img" not in page
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in page


# ---------------------------------------------------------------------------------------------
# Re-marking and the reviewer's word


def test_a_transcript_whose_recorded_verdict_was_tampered_with_is_flagged(
        home: Path, run: Run) -> None:
    attempt_id = practise(run, QUERY_HEADS)
    assert not any(s["flag"] for s in review(attempt_id)["steps"])
    with sqlite3.connect(home / "kvdrill.sqlite3") as conn:
        conn.execute("UPDATE answers SET verdict = 'correct' WHERE step_id = 'shape-kv-heads'")
    data = review(attempt_id)
    kv_heads = step(data, "shape-kv-heads")
    assert kv_heads["flag"] is True
    assert (kv_heads["recorded_verdict"], kv_heads["verdict"]) == ("correct", "wrong")
    assert [s["id"] for s in data["steps"] if s["flag"]] == ["shape-kv-heads"]
    assert "shape-kv-heads: recorded correct, re-marked wrong" in report.render_review(data, "text")
    assert "| shape-kv-heads | correct | wrong |" in report.render_review(data, "md")
    assert "Recorded verdicts differ from today" in report.render_review(data, "html")


def test_an_override_is_shown_beside_the_automatic_score_with_its_note(
        home: Path, run: Run) -> None:
    attempt_id = practise(run, QUERY_HEADS)
    with Store() as store:
        store.set_override(attempt_id, "arithmetic", 3.5, "explained GQA aloud & fixed it")
    data = review(attempt_id)
    arithmetic = data["rubric"]["dimensions"][0]
    assert arithmetic["id"] == "arithmetic"
    assert arithmetic["score"] == 0.5
    assert arithmetic["override"] == {"score": 3.5, "note": "explained GQA aloud & fixed it"}
    text = report.render_review(data, "text")
    assert re.search(r"^  Arithmetic +0\.5/4 +reviewer 3\.5/4: explained GQA aloud & fixed it$",
                     text, flags=re.M)
    assert ("| Arithmetic | 0.5/4 | 3.5/4 | explained GQA aloud & fixed it |"
            in report.render_review(data, "md"))
    row = html_row(report.render_review(data, "html"), "Arithmetic")
    assert "0.5 / 4" in row and "3.5 / 4" in row
    assert "explained GQA aloud &amp; fixed it" in row


# ---------------------------------------------------------------------------------------------
# The interviewer's sheet and key


@pytest.mark.parametrize("drill_id", ["llama31-8b-h100", "llama2-70b-mi300x"])
def test_the_key_html_holds_every_reference_and_wrong_value(drill_id: str) -> None:
    key, variant = variant_key(drill_id)
    page = report.key_html(key, variant)
    for row in keys.key_rows(key):
        assert html.escape(row["reference"]) in page, row["id"]
        for wrong in row["wrong"]:
            assert html.escape(wrong["value"]) in page
    assert "Worked solution" in page


@pytest.mark.parametrize("drill_id", ["llama31-8b-h100", "llama2-70b-mi300x"])
def test_the_sheet_html_holds_none_of_the_references(drill_id: str) -> None:
    key, variant = variant_key(drill_id)
    page = report.sheet_html(key, variant)
    references = [row["reference"] for row in keys.key_rows(key)]
    with_unit = [ref for ref in references if not re.fullmatch(r"[\d,.]+", ref)]
    assert with_unit, "the drill has references with units"
    for reference in with_unit:
        assert html.escape(reference) not in page
    # A bare count ("8", "8,192") may occur in the question itself ("8,192 tokens of context"):
    # only where the Markdown sheet has it too.
    markdown = keys.sheet_markdown(key, variant)
    for reference in references:
        if reference not in markdown:
            assert reference not in page
    for step_ in key.drill.steps:
        assert html.escape(step_.id) in page


@pytest.mark.parametrize("page", ["sheet", "key"])
def test_the_sheet_and_key_html_are_self_contained(page: str) -> None:
    key, variant = variant_key("llama31-8b-h100")
    text = report.sheet_html(key, variant) if page == "sheet" else report.key_html(key, variant)
    for outside in ("http://", "https://", "<link", "src=", "@import", "url("):
        assert outside not in text
    assert "@media print" in text


# ---------------------------------------------------------------------------------------------
# Reproducible output, small parts


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_a_review_is_reproducible(home: Path, run: Run, fmt: report.Format) -> None:
    attempt_id = practise(run, QUERY_HEADS)
    first = report.render_review(review(attempt_id, solution=True), fmt).encode()
    assert report.render_review(review(attempt_id, solution=True), fmt).encode() == first


def test_rendering_a_sheet_and_key_is_reproducible() -> None:
    key, variant = variant_key("llama2-70b-mi300x")
    again, _ = variant_key("llama2-70b-mi300x")
    assert report.key_html(key, variant).encode() == report.key_html(again, variant).encode()
    assert report.sheet_html(key, variant).encode() == report.sheet_html(again, variant).encode()


def test_a_sparkline_runs_from_the_lowest_block_to_the_full_one() -> None:
    assert report.sparkline([0, 2, 4, 9, -1], 4) == "▁▅██▁"
    assert report.sparkline([], 4) == ""
    assert report.sparkline([1, 2], 0) == "▁▁"


def test_an_unknown_review_format_is_refused(home: Path, run: Run) -> None:
    data = review(practise(run, "32\n"))
    with pytest.raises(UsageError, match="unknown review format 'pdf'"):
        report.render_review(data, "pdf")  # type: ignore[arg-type]
