"""Issue 14: one voice across commands and a practice screen that looks finished — one output
rule (--format, --json its shorthand, --out - is standard output), preset names as people write
them, no insider words, colour and wrapping on the practice screen, levels that say what they
need, and calc's defaults, units and errors. Everything through the real CLI, the real solver
and the session with scripted input; colours through prompt_toolkit's own output."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from trainer.app.cli import cli
from trainer.app.session import Session, StepPrompt, new_attempt
from trainer.drills.loader import drill_paths, find_drill
from trainer.drills.reference import AnswerKey
from trainer.store.database import Store

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
DRILL_IDS = [path.stem for path in drill_paths()]
FIRST_TEN = ["32", "8", "128", "2", "131072 B", "52 GB", "396728", "96", "193", "12"]
INSIDER = re.compile(r"\bseeds?\b|\bseed's", re.IGNORECASE)


def commands() -> dict[str, click.Command]:
    assert isinstance(cli, click.Group)
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


# ---- 1. flags that agree ------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(set(commands()) - {"solution", "practice"}))
def test_every_command_names_its_output_with_format_and_json_for_short(name: str) -> None:
    options = {opt for p in commands()[name].params for opt in getattr(p, "opts", [])}
    assert {"--format", "--json"} <= options


@pytest.mark.parametrize("name", sorted(commands()))
def test_no_help_shows_a_raw_integer_range(run: Run, name: str) -> None:
    assert not re.search(r"\d<=x|x>=\d|9223372036854775807", run(name, "--help").output)


def test_json_is_short_for_format_json(run: Run) -> None:
    assert run("list", "--json").output == run("list", "--format", "json").output


def test_json_beside_another_format_is_misuse(run: Run) -> None:
    result = run("show", DRILL, "--json", "--format", "text", ok=False)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: --json is short for --format json")


def _one_attempt(run: Run) -> None:
    run("practice", DRILL, input="32\n8\n")


def test_review_prints_its_data_as_json(run: Run) -> None:
    _one_attempt(run)
    data = json.loads(run("review", "1", "--format", "json").output)
    assert data["drill"] == DRILL and data["steps"][0]["verdict"] == "correct"


@pytest.mark.parametrize("command", [("export", "1"), ("review", "1")])
def test_out_dash_is_standard_output(run: Run, command: tuple[str, ...]) -> None:
    _one_attempt(run)
    assert run(*command, "--out", "-").output == run(*command).output


def test_variants_out_dash_prints_the_sheets_and_keys(run: Run) -> None:
    printed = run("variants", "llama2-70b-mi300x", "--count", "1", "--out", "-").output
    assert "— variant " in printed and "Wrote" not in printed


def test_shell_completion_offers_drill_ids() -> None:
    env = {"_KVDRILL_COMPLETE": "bash_complete", "COMP_WORDS": "kvdrill practice llama31-8",
           "COMP_CWORD": "2"}
    result = CliRunner().invoke(cli, [], prog_name="kvdrill", env=env)
    assert result.output.split() == ["plain,llama31-8b-h100"]


def test_shell_completion_offers_gpu_presets() -> None:
    env = {"_KVDRILL_COMPLETE": "bash_complete", "COMP_WORDS": "kvdrill calc --gpu mi3",
           "COMP_CWORD": "3"}
    result = CliRunner().invoke(cli, [], prog_name="kvdrill", env=env)
    assert result.output.split() == ["plain,mi300x", "plain,mi325x"]


# ---- 2. names that agree ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["llama31-8b", "llama-3.1-8b", "llama3.1-8b",
                                  "Meta-Llama-3.1-8B", "meta-llama/Llama-3.1-8B"])
def test_calc_reads_a_model_name_as_people_write_it(calc_json: Callable[..., Any],
                                                    name: str) -> None:
    payload = calc_json("--preset", name, "--gpu", "h100")
    assert payload["model"] == "llama-3.1-8b" and payload["kv_bytes_per_token"] == 131_072


def test_list_presets_shows_the_canonical_name_with_its_other_spellings(run: Run) -> None:
    line = next(line for line in run("calc", "--list-presets").output.splitlines()
                if line.endswith("— Llama-3.1-8B (also llama3.1-8b, meta-llama-3.1-8b, "
                                 "llama-3.1-8b-instruct)"))
    assert line.split()[0] == "llama-3.1-8b" and "llama3.1-8b" in line


# ---- 3. no insider words ------------------------------------------------------------------


@pytest.mark.parametrize("drill", DRILL_IDS)
def test_no_solution_or_sheet_or_key_speaks_of_a_seed(run: Run, drill: str) -> None:
    shown = run("show", drill).output + run("solution", drill).output + \
        run("variants", drill, "--count", "1").output
    assert not INSIDER.findall(shown)


def test_calc_help_speaks_of_the_exercise_not_a_seed(run: Run) -> None:
    text = run("calc", "--help").output
    assert not INSIDER.findall(text) and "70B-on-MI300X exercise" in text


# ---- 4. the practice screen ---------------------------------------------------------------


def _vt100(term: str) -> tuple[Any, io.StringIO]:
    from prompt_toolkit.data_structures import Size
    from prompt_toolkit.output.vt100 import Vt100_Output

    buffer = io.StringIO()
    return Vt100_Output(buffer, lambda: Size(30, 80), term=term), buffer


@pytest.mark.parametrize("term", ["tmux-256color", "xterm-256color"])
def test_verdicts_and_overtime_are_coloured(term: str, monkeypatch: pytest.MonkeyPatch
                                            ) -> None:
    from trainer.app.tui import make_say

    monkeypatch.delenv("NO_COLOR", raising=False)
    output, buffer = _vt100(term)
    say = make_say(output, lambda: 78)
    say("✓ 32 (3s of 15s)")
    say("✗ read as 30: expected 32. (17s of 15s, overtime)")
    printed = buffer.getvalue()
    assert re.search(r"\x1b\[[0-9;]*\b32\b[0-9;]*m✓", printed)  # green
    assert re.search(r"\x1b\[[0-9;]*\b31\b[0-9;]*m✗", printed)  # red
    assert re.search(r"\x1b\[[0-9;]*\b31\b[0-9;]*movertime", printed)


def test_no_color_turns_the_colours_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from trainer.app.tui import make_say

    monkeypatch.setenv("NO_COLOR", "1")
    output, buffer = _vt100("xterm-256color")
    make_say(output, lambda: 78)("✗ read as 30: expected 32. (17s of 15s, overtime)")
    assert not re.search(r"\x1b\[3[0-7]m", buffer.getvalue())


@pytest.mark.parametrize("width", [80, 61, 40, 23])
def test_feedback_wraps_between_words_at_any_width(width: int) -> None:
    from trainer.app.tui import said_lines

    feedback = ("✗ read as 512 KiB: expected 128 KiB. That is query-heads: the cache holds the "
                "KV heads, not the query heads of attention; GQA shares each KV head.")
    lines = ["".join(text for _, text in line) for line in said_lines(feedback, width)]
    assert all(len(line) <= width for line in lines)
    assert " ".join(lines).split() == feedback.split()


def test_the_overtime_toolbar_is_styled_as_overtime() -> None:
    from trainer.app.tui import toolbar

    drill, _ = find_drill(DRILL)
    prompt = StepPrompt(drill.steps[0], 1, 15, "q", 15, 0.0, 780, False)
    assert [style for style, _ in toolbar(prompt, 0.0, lambda: 20.0)] == \
        ["class:bottom-toolbar.over"]


def test_exam_mode_toolbar_offers_no_hint() -> None:
    from trainer.app.tui import toolbar

    drill, _ = find_drill(DRILL)
    prompt = StepPrompt(drill.steps[0], 1, 15, "q", 15, 0.0, 780, False, exam=True)
    text = "".join(text for _, text in toolbar(prompt, 0.0, lambda: 1.0, width=200))
    assert "hint" not in text and ":skip" in text


def test_the_worked_solution_is_formatted_text_not_markdown() -> None:
    from trainer.drills.render import render_solution
    from trainer.views.terminal_text import plain, render

    drill, _ = find_drill(DRILL)
    text = plain(render(render_solution(AnswerKey(drill)), 78))
    assert "131,072 B (128 KiB)" in text
    assert not re.search(r"\*\*|^#+ |\|---", text, re.MULTILINE)
    assert all(len(line) <= 78 for line in text.splitlines() if not line.startswith("    "))


def test_the_worked_solution_is_shown_in_bold_and_headings(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    from trainer.app.tui import show_markdown

    monkeypatch.delenv("NO_COLOR", raising=False)
    output, buffer = _vt100("tmux-256color")
    show_markdown("## 1. The formula\n\nKV bytes = **131,072 B** per token.", output, 78)
    printed = buffer.getvalue()
    assert re.search(r"\x1b\[(?:[0-9]+;)*1(?:;[0-9]+)*m131,072", printed)  # bold
    assert "**" not in printed


class Drive:
    """A session on DRILL with scripted lines, recording what it said and asked."""

    def __init__(self, lines: list[str], *, exam: bool = False) -> None:
        drill, path = find_drill(DRILL)
        key = AnswerKey(drill)
        store = Store()
        attempt = new_attempt(store, key, path, None, exam=exam, strict=False)
        self.said: list[str] = []
        self.prompts: list[StepPrompt] = []
        feed: Iterator[str] = iter(lines)

        def ask(prompt: StepPrompt) -> str | None:
            self.prompts.append(prompt)
            return next(feed, None)

        self.session = Session(key, store, attempt, ask=ask, say=self.said.append,
                               clock=lambda: 0.0, exam=exam, reask_unreadable=True)
        self.session.run()


def test_givens_reprints_the_givens_block(home: Path) -> None:
    run = Drive([":givens"])
    assert run.said[-2] == run.session.givens_text() and run.said[-2].startswith("Given:")


def test_a_hint_does_not_reprint_the_question(home: Path) -> None:
    run = Drive(["?"])
    assert [p.show_question for p in run.prompts] == [True, False]


def test_a_step_with_no_hints_says_so_plainly(home: Path) -> None:
    steps = find_drill(DRILL)[0].steps
    bare = next(i for i, step in enumerate(steps) if not step.hints)
    run = Drive([":skip"] * bare + ["?"])  # skip to the first step with no hints
    assert run.prompts[-1].step.id == steps[bare].id and not run.prompts[-1].step.hints
    assert run.said[-2] == "This step has no hints; :formula shows its formula, if any."


def test_the_drill_clock_is_the_steps_budgets_summed(home: Path) -> None:
    run = Drive(["32"])
    drill = run.session.drill
    assert run.prompts[0].drill_budget == sum(step.seconds for step in drill.steps)


def test_a_piped_run_reads_as_a_transcript_with_each_question(run: Run) -> None:
    printed = run("practice", DRILL, input="32\n8\n128\n").output
    drill, _ = find_drill(DRILL)
    for step in drill.steps[:3]:
        question = " ".join(step.prompt.split())
        assert question[:60] in " ".join(printed.split())
    assert "shape-head-dim> 128" in printed


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    return tmp_path


def test_lint_refuses_a_target_the_budgets_do_not_sum_to(run: Run, tmp_path: Path) -> None:
    text = Path(find_drill(DRILL)[1]).read_text(encoding="utf-8")
    drill = tmp_path / f"{DRILL}.yaml"
    drill.write_text(re.sub(r"^target_minutes: \d+", "target_minutes: 7", text, flags=re.M),
                     encoding="utf-8")
    result = run("lint", str(drill), ok=False)
    seconds = sum(step.seconds for step in find_drill(DRILL)[0].steps)
    assert result.exit_code == 1 and seconds > 7 * 60
    assert f"target_minutes 7 disagrees with the steps' budgets, which sum to {seconds} s: " \
           f"write target_minutes: {-(-seconds // 60)}" in result.output


# ---- 5. scores that explain themselves ----------------------------------------------------


def test_a_missed_first_level_is_named_with_what_it_needs(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("shape-layers: 30\n", encoding="utf-8")
    text = run("grade", DRILL, "--answers", str(sheet), ok=False).output
    assert "Sounds like: not yet Solid: it needs Arithmetic 3/4 (this attempt 0)" in text


def test_history_marks_an_incomplete_attempt_and_leaves_it_out_of_trends(run: Run) -> None:
    run("practice", DRILL, input="32\n")
    text = run("history").output
    assert "incomplete" in text and "not scored" in text and "Trends" not in text


# ---- 6. calc ------------------------------------------------------------------------------


def test_deepseek_kv_dtype_default_says_why_it_is_not_the_weights_fp8(run: Run) -> None:
    line = next(line for line in run("calc", "--model", "deepseek-v3", "--gpu", "h200",
                                     "--gpus", "8").output.splitlines()
                if line.strip().startswith("kv_dtype"))
    assert "bf16" in line and "the weights are fp8" in line and "kv-cache-dtype auto" in line


def test_the_kv_lines_use_one_unit_family(run: Run) -> None:
    text = run("calc", "--model", "deepseek-v3", "--gpu", "h200", "--gpus", "8").output
    kv_lines = text.split("\n  weights")[0]
    assert "70.3 KB" in kv_lines and "562 KB" in kv_lines and "KiB" not in kv_lines


def test_kv_heads_that_gpus_cannot_share_get_a_clear_message(run: Run) -> None:
    result = run("calc", "--model", "llama2-70b", "--gpu", "h100", "--kv-heads", "3",
                 "--gpus", "2", ok=False)
    assert result.exit_code == 2
    # (Llama-2-70B's 64 query heads split over no multiple of 3: one GPU is what works)
    assert result.stderr == ("Error: 3 KV heads cannot be shared evenly by 2 GPUs: give "
                             "--gpus 1 (each GPU holds a share of the KV heads, or a copy of "
                             "one, and whole query heads)\n")


def test_weights_that_do_not_fit_are_misuse(run: Run) -> None:
    result = run("calc", "--model", "llama2-70b", "--gpu", "h100", ok=False)
    assert result.exit_code == 2 and "do not fit" in result.stderr


@pytest.mark.parametrize(("typed", "tokens"), [("4k", 4096), ("32k", 32768),
                                               ("128k", 131072), ("4096", 4096)])
def test_context_lengths_take_k_as_1024(calc_json: Callable[..., Any], typed: str,
                                        tokens: int) -> None:
    payload = calc_json("--preset", "llama31-8b", "--gpu", "h100", "--seq", typed)
    assert payload["assumptions"]["context"]["value"] == tokens
    assert payload["kv_bytes_per_sequence"] == 131_072 * tokens


def test_a_context_length_that_is_not_a_count_is_refused(run: Run) -> None:
    result = run("calc", "--preset", "llama31-8b", "--gpu", "h100", "--seq", "4.1k", ok=False)
    assert result.exit_code == 2
    assert "is not a token count (write e.g. 4096, 4k or 128k)" in result.stderr
