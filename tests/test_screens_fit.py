"""Issue 25: every screen fits the terminal it is printed on. Each command runs on a pseudo-
terminal of 80 (and 60) columns against a store with practice, exam and imported attempts, and
the test reads the screen as a person does (pyte emulates the terminal): no line the program
writes is wider than the screen, no word is broken across lines, tables show a header row, and
the worked solution shows no Markdown markers."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from screen import (
    broken_words,
    kvdrill_command,
    printed_lines,
    printed_of,
    screen_lines,
    screen_of,
    terminal_output,
)

WIDTHS = (80, 60)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A store with a practice attempt, an exam and an imported transcript."""
    folder = tmp_path_factory.mktemp("screens")
    env = {"KVDRILL_HOME": str(folder / "home"), "NO_COLOR": "1"}
    command = kvdrill_command()

    def run(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        import os

        return subprocess.run([*command, *args], input=stdin, capture_output=True, text=True,
                              env={**os.environ, **env}, timeout=300, check=False)

    run("practice", "llama31-8b-h100", stdin="32\n8\n128\n2 B\n128 KiB\n= 52 GB\n")
    run("practice", "--exam", "llama2-70b-mi300x", stdin="320 KiB\n44 GB\n")
    run("practice", "chunked-prefill-tpot", stdin="14.5 ms\n14.9 ms\nabout 320 tokens\n")
    exported = folder / "t.json"
    run("export", "1", "--out", str(exported))
    other = {**env, "KVDRILL_HOME": str(folder / "other")}
    import os

    subprocess.run([*command, "import", str(exported)], env={**os.environ, **other},
                   capture_output=True, timeout=300, check=False)
    transcript = json.loads(exported.read_text(encoding="utf-8"))
    transcript["candidate"] = "ada"
    ada = folder / "ada.json"
    ada.write_text(json.dumps(transcript), encoding="utf-8")
    run("import", str(ada))
    return env


COMMANDS = [
    ["list"],
    ["history"],
    ["next"],
    ["progress"],
    ["review", "1"],
    ["review", "2"],
    ["cohort", "llama31-8b-h100"],
    ["calc", "--model", "llama-3.1-8b", "--gpu", "h100"],
    ["calc", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8", "--dp-attention"],
    ["show", "llama2-70b-mi300x"],
    ["show", "swap-or-recompute", "--variant", "434213"],
    ["solution", "deepseek-v3-mla-h200"],
    ["lint", "drills/llama31-8b-h100.yaml"],
    ["grade", "llama31-8b-h100", "--answers", "tests/sheets/llama31-8b-h100-correct.yaml"],
    ["--help"],
]


def _name(args: list[str]) -> str:
    return " ".join(args)[:40]


# Each command at each width runs once on this worker, for both tests that read its screen
# (the width and the broken words): the output of one run is the same terminal's either way.
_OUTPUTS: dict[tuple[tuple[str, ...], int, str], str] = {}


def _output(args: list[str], columns: int, home: dict[str, str]) -> str:
    key = (tuple(args), columns, home["KVDRILL_HOME"])
    if key not in _OUTPUTS:
        _OUTPUTS[key] = terminal_output(args, columns, home)
    return _OUTPUTS[key]


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("args", COMMANDS, ids=_name)
def test_no_line_is_wider_than_the_terminal(args: list[str], columns: int,
                                            home: dict[str, str]) -> None:
    lines = printed_of(_output(args, columns, home))
    wide = [line for line in lines if len(line) > columns]
    assert wide == [], f"{len(wide)} lines wider than {columns}: {wide[:2]}"


@pytest.mark.parametrize("columns", WIDTHS)
@pytest.mark.parametrize("args", COMMANDS, ids=_name)
def test_no_word_is_broken_across_lines(args: list[str], columns: int,
                                        home: dict[str, str]) -> None:
    output = _output(args, columns, home)
    assert broken_words(screen_of(output, columns), printed_of(output)) == []


def test_history_has_a_header_row(home: dict[str, str]) -> None:
    lines = screen_lines(["history"], 80, home)
    assert re.match(r"\s*ID\s+Started \(UTC\)\s+Drill\s+Variant\s+Status\s+Scores", lines[0])
    assert set(lines[1].replace(" ", "")) == {"─"}


def test_history_names_every_field_when_stacked(home: dict[str, str]) -> None:
    text = "\n".join(screen_lines(["history"], 50, home))
    for field in ("Started (UTC):", "Drill:", "Status:"):
        assert field in text


def test_history_piped_keeps_a_record_per_line_under_its_header(home: dict[str, str]) -> None:
    import os

    piped = subprocess.run([*kvdrill_command(), "history"], capture_output=True, text=True,
                           env={**os.environ, **home}, timeout=300, check=True).stdout
    lines = piped.splitlines()
    assert lines[0].split()[:3] == ["ID", "Started", "(UTC)"]
    assert sum(1 for line in lines if re.match(r"\s*\d+\s+\d{4}-\d\d-\d\d", line)) >= 3


def test_the_solution_on_a_terminal_shows_no_markdown(home: dict[str, str]) -> None:
    text = "\n".join(screen_lines(["solution", "llama31-8b-h100"], 80, home))
    assert "**" not in text and not re.search(r"^#", text, re.M)
    assert not re.search(r"^\|.*\|$", text, re.M)  # Markdown table rows
    assert "KV bytes per token and sessions per card" in text


def test_the_solution_into_a_pipe_is_markdown(home: dict[str, str]) -> None:
    import os

    piped = subprocess.run([*kvdrill_command(), "solution", "llama31-8b-h100"],
                           capture_output=True, text=True, env={**os.environ, **home},
                           timeout=300, check=True).stdout
    assert piped.startswith("# KV bytes per token") and "**" in piped


def test_the_review_on_a_terminal_lays_out_its_worked_solution(home: dict[str, str]) -> None:
    text = "\n".join(screen_lines(["review", "1"], 80, home))
    solution = text.split("Worked solution:", 1)[1]
    assert "**" not in solution and not re.search(r"^#", solution, re.M)


def test_the_review_table_has_its_header_and_every_step(home: dict[str, str]) -> None:
    lines = screen_lines(["review", "1"], 80, home)
    header = next(i for i, line in enumerate(lines) if line.startswith("step "))
    assert {"answer", "reference", "verdict"} <= set(lines[header].split())
    listed = " ".join(lines[header:header + 40])
    for step in ("shape-layers", "kv-budget", "followup-70b-tp-sessions"):
        assert step in listed


def test_a_wide_list_keeps_each_drill_on_its_row(home: dict[str, str]) -> None:
    lines = screen_lines(["list"], 80, home)
    assert lines[0].split() == ["Drill", "Min", "Title", "[tags]"]
    assert any(line.startswith("llama31-8b-h100 ") for line in lines)


def test_lint_names_a_shipped_file_without_its_install_path(home: dict[str, str]) -> None:
    lines = screen_lines(["lint", "drills/llama31-8b-h100.yaml"], 80, home)
    assert lines[0] == "ok   drills/llama31-8b-h100.yaml"


def test_the_cohort_grid_splits_into_blocks_that_fit(home: dict[str, str]) -> None:
    lines = screen_lines(["cohort", "llama31-8b-h100"], 60, home)
    headers = [line for line in lines if line.startswith("step ")]
    assert headers, "the step grid has a header row"
    assert all(len(line) <= 60 for line in lines)


@pytest.mark.parametrize("path", sorted(Path("drills").glob("*.yaml"))[:6],
                         ids=lambda p: p.stem)
def test_every_drill_sheet_fits_60_columns(path: Path, home: dict[str, str]) -> None:
    lines = printed_lines(["show", path.stem], 60, home)
    assert [line for line in lines if len(line) > 60] == []
