"""The HTML files in a real browser: headless Chromium loads a review, a variant key, a cohort
and a candidate's progress with no console error, every chart is drawn with a size, and
screenshots of the review and of the progress page are kept in artifacts/ for a person to look
at."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from trainer.app.cli import cli
from trainer.app.session import Session, StepPrompt, new_attempt
from trainer.drills import variants
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.drills.render import render_solution
from trainer.printable import json_text
from trainer.store import importing, transcripts
from trainer.store import kept_marks as progress
from trainer.store.database import Store
from trainer.views import cohort, keys, report

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_SECONDS = 60
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0", "--virtual-time-budget=2000"]
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        pytest.skip("Chromium is not installed; .ci/run installs it (apt-get install chromium)")
    return found


def _attempt(store: Store, answers: list[str], seconds: list[float],
             drill_id: str = "llama31-8b-h100") -> int:
    """One attempt through the drill loop, with a fake clock so the times are not all 0."""
    drill, path = find_drill(drill_id)
    key = AnswerKey(drill)
    attempt_id = new_attempt(store, key, path, None, exam=False, strict=False)
    feed = iter(zip(answers, seconds, strict=True))
    now = [0.0]

    def ask(prompt: StepPrompt) -> str | None:
        answer = next(feed, None)
        if answer is None:
            return None
        now[0] += answer[1]
        return answer[0]

    Session(key, store, attempt_id, ask=ask, say=lambda _: None, clock=lambda: now[0]).run()
    return attempt_id


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """A review (two attempts, a named mistake, an overtime, an override) and a variant key."""
    folder = tmp_path_factory.mktemp("pages")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("KVDRILL_HOME", str(folder / "home"))
        with Store() as store:
            _attempt(store, ["32", "8", "128"], [9, 12, 14])
            attempt_id = _attempt(store, ["32", "32", "128", "2 B", "512 KiB", "52 GB"],
                                  [11, 30, 8, 6, 50, 75])
            store.set_override(attempt_id, "assumptions", 2, "stated bf16 and the 0.9 cap aloud")
            transcript = transcripts.transcript(store, attempt_id)
            trend = progress.Keeper(store).summaries(store.attempts(), score_incomplete=True)
            overrides = store.overrides(attempt_id)
        drill, _ = find_drill("llama31-8b-h100")
        solution = render_solution(variants.answer_key(drill, None))
        data = report.review_data(transcript, overrides, "browser test", trend, solution)
        review = folder / "review.html"
        review.write_text(report.render_review(data, "html"), encoding="utf-8")
        variant, givens = keys.pick_variants(drill, 1, seed=0)[0]
        key = folder / "key.html"
        key.write_text(report.key_html(AnswerKey(drill, givens), variant),
                       encoding="utf-8")
        yield {"review": review, "key": key, "cohort": _cohort_page(folder, patch),
               "progress": _progress_page(folder, patch)}


def _cohort_page(folder: Path, patch: pytest.MonkeyPatch) -> Path:
    """Two candidates' transcripts exported from their store, one tampered (its overtime
    contradicts its seconds), imported into an interviewer's, compared as HTML."""
    files = []
    patch.setenv("KVDRILL_HOME", str(folder / "candidates"))
    with Store() as store:
        for name, answers in (("ana", ["32", "32", "128", "2 B", "512 KiB", "52 GB"]),
                              ("ben", ["32", "8", "128", "2 B", "128 KiB", "72 GB"])):
            attempt_id = _attempt(store, answers, [9, 12, 14, 6, 50, 75])
            store.finish(attempt_id)
            path = folder / f"{name}.json"
            path.write_text(json_text(transcripts.transcript(store, attempt_id)),
                            encoding="utf-8")
            files.append(path)
    data = json.loads(files[1].read_text(encoding="utf-8"))
    data["steps"][0]["seconds"] = 99.0
    files[1].write_text(json.dumps(data), encoding="utf-8")
    patch.setenv("KVDRILL_HOME", str(folder / "interviewer"))
    with Store() as store:
        for path in files:
            importing.import_file(store, path)
        page = folder / "cohort.html"
        page.write_text(cohort.render(cohort.cohort_data(store, "llama31-8b-h100"), "html"),
                        encoding="utf-8")
    return page


def _progress_page(folder: Path, patch: pytest.MonkeyPatch) -> Path:
    """A candidate who practised two drills over several attempts, getting better and faster
    (one attempt over its budget), and wrote `kvdrill progress --format html`."""
    patch.setenv("KVDRILL_HOME", str(folder / "progress"))
    sheets = ROOT / "tests" / "sheets"
    with Store() as store:
        for drill_id, tries in (("llama31-8b-h100", [
                ({"shape-kv-heads": "32", "bytes-per-token": "512 KiB", "kv-budget": "72 GB",
                  "policy": "no idea", "followup-128k-policy": "no idea"}, 2.5),
                ({"sessions-32k": "40"}, 1.4), ({}, 0.9), ({}, 0.6)]),
                                ("llama2-70b-mi300x", [
                ({"2a-bytes-per-token": "2.5 MiB", "2b-bytes-per-token": "2.5 MiB",
                  "2c-ratio": "1", "2c-why": "no idea"}, 1.1), ({}, 0.7)])):
            sheet = yaml.safe_load((sheets / f"{drill_id}-correct.yaml").read_text("utf-8"))
            budgets = {step.id: step.seconds for step in find_drill(drill_id)[0].steps}
            for changes, pace in tries:
                answers = {str(k): " ".join(str(v).split()) for k, v in sheet.items()}
                answers.update(changes)
                store.finish(_attempt(store, list(answers.values()),
                                      [budgets[step] * pace / 2 for step in answers],
                                      drill_id))
    page = folder / "progress.html"
    result = CliRunner().invoke(cli, ["progress", "--format", "html", "--out", str(page)])
    assert result.exit_code == 0, result.output
    return page


def _chromium(binary: str, page: Path, profile: Path, *extra: str
              ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [binary, *FLAGS, f"--user-data-dir={profile}", *extra, page.as_uri()],
        capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False,
    )


def _page_errors(stderr: str, url: str) -> list[str]:
    """Console messages and uncaught exceptions of the page (Chromium's own complaints about
    D-Bus and the like are not the page's)."""
    return [line for line in stderr.splitlines()
            if any(mark in line for mark in ("CONSOLE", "Uncaught", ":ERROR:"))
            and (url in line or "Uncaught" in line)]


def _chart_sizes(dom: str) -> list[tuple[int, int]]:
    match = re.search(r'<body[^>]*\sdata-charts="([^"]*)"', dom)
    assert match, "the page's script did not record the chart sizes"
    sizes = []
    for item in filter(None, match.group(1).split(",")):
        width, height = item.split("×")
        sizes.append((int(width), int(height)))
    return sizes


def test_the_review_loads_without_console_errors_and_every_chart_has_a_size(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    result = _chromium(chromium, pages["review"], tmp_path / "profile", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["review"].as_uri()) == []
    sizes = _chart_sizes(result.stdout)
    html = pages["review"].read_text(encoding="utf-8")
    assert len(sizes) == html.count('<svg class="chart"') == 2 + 4  # time, rubric, 4 trends
    assert all(width > 0 and height > 0 for width, height in sizes), sizes


def test_the_variant_key_loads_without_console_errors(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    result = _chromium(chromium, pages["key"], tmp_path / "profile", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["key"].as_uri()) == []
    assert _chart_sizes(result.stdout) == []  # the script ran; a key has no charts
    assert "Reference answers" in result.stdout


def test_the_cohort_loads_without_console_errors_and_both_charts_have_a_size(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    result = _chromium(chromium, pages["cohort"], tmp_path / "profile", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["cohort"].as_uri()) == []
    sizes = _chart_sizes(result.stdout)
    assert len(sizes) == 2  # the rubric side by side, time against budget
    assert all(width > 0 and height > 0 for width, height in sizes), sizes
    assert "What the imported transcripts contradict" in result.stdout


def test_a_screenshot_of_the_review_is_a_png(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "review.png"
    shot.unlink(missing_ok=True)
    result = _chromium(chromium, pages["review"], tmp_path / "profile",
                       f"--screenshot={shot}", "--window-size=1200,1600")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["review"].as_uri()) == []
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 1600)


def test_the_progress_page_loads_without_console_errors_and_every_chart_has_a_size(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    result = _chromium(chromium, pages["progress"], tmp_path / "profile", "--dump-dom")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["progress"].as_uri()) == []
    sizes = _chart_sizes(result.stdout)
    assert len(sizes) == 1 + 2 * 2  # recall by skill; per drill its rubric and its time
    assert all(width > 200 and height > 100 for width, height in sizes), sizes
    assert "Ready: Solid or better on 2 of 20 drills" in result.stdout
    assert "Skills by week" in result.stdout


def test_a_screenshot_of_the_progress_page_is_a_png(
        chromium: str, pages: dict[str, Path], tmp_path: Path) -> None:
    artifacts = ROOT / "artifacts"
    artifacts.mkdir(exist_ok=True)
    shot = artifacts / "progress.png"
    shot.unlink(missing_ok=True)
    result = _chromium(chromium, pages["progress"], tmp_path / "profile",
                       f"--screenshot={shot}", "--window-size=1200,2400")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _page_errors(result.stderr, pages["progress"].as_uri()) == []
    data = shot.read_bytes()
    assert data.startswith(PNG_SIGNATURE) and len(data) > 10_000
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert (width, height) == (1200, 2400)
