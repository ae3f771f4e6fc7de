"""Never lose a step to the reader: in a terminal an unreadable answer, an unknown command or an
empty Enter is asked again (nothing recorded, one step clock); only :skip skips; a step visited
again adds its seconds and hints to the earlier ones and keeps the skip as an earlier revision;
the clock starts on Enter after the givens. Through a pipe, one line per step, as before.

Everything runs through the Session with scripted input and a fake clock, or through
prompt_toolkit's pipe input; nothing races a subprocess or a real clock."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from typing import Any

from click.testing import Result

from trainer.app.session import (
    START_MESSAGE,
    Session,
    StepPrompt,
    new_attempt,
    unwrap,
    wrap_lines,
)
from trainer.drills.loader import drill_paths, find_drill
from trainer.drills.reference import AnswerKey
from trainer.marking.checker import mark_sheet
from trainer.store.database import Store

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
FIRST = "shape-layers"  # step 1: 32 layers, one hint
SECOND = "shape-kv-heads"


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Drive:
    """A session on DRILL with scripted lines (each takes `seconds_each` on the fake clock)."""

    def __init__(self, lines: list[str], seconds_each: float = 5.0, *, reask: bool = True,
                 exam: bool = False, ready: Callable[[str], bool] | None = None) -> None:
        drill, path = find_drill(DRILL)
        self.key = AnswerKey(drill)
        self.store = Store()
        self.attempt = new_attempt(self.store, self.key, path, None, exam=exam, strict=False)
        self.clock = FakeClock()
        self.said: list[str] = []
        self.prompts: list[StepPrompt] = []
        feed: Iterator[str] = iter(lines)

        def ask(prompt: StepPrompt) -> str | None:
            self.prompts.append(prompt)
            self.clock.now += seconds_each
            return next(feed, None)

        self.session = Session(self.key, self.store, self.attempt, ask=ask,
                               say=self.said.append, clock=self.clock, exam=exam,
                               reask_unreadable=reask, ready=ready)

    def go(self) -> Drive:
        self.session.run()
        return self

    def rows(self, step_id: str, latest_only: bool = True) -> list[Any]:
        return [r for r in self.store.answers(self.attempt, latest_only)
                if r.step_id == step_id]

    def text(self) -> str:
        return "\n".join(self.said)


# -- asked again, nothing recorded -------------------------------------------------------------


def test_an_unreadable_answer_is_asked_again_and_not_stored() -> None:
    run = Drive(["52 GBB", "32"]).go()
    assert [(r.raw, r.revision) for r in run.rows(FIRST, latest_only=False)] == [("32", 1)]


def test_an_unreadable_answer_is_told_the_reason_and_a_form_that_works() -> None:
    run = Drive(["asdf", "32"]).go()
    told = next(line for line in run.said if line.startswith("Could not read that"))
    assert "asdf" in told and "Try a number, or :skip" in told and \
        "nothing recorded" in told.lower()


def test_an_unknown_command_is_asked_again_with_a_guess() -> None:
    run = Drive([":skp", "32"]).go()
    assert [r.raw for r in run.rows(FIRST, latest_only=False)] == ["32"]
    assert "did you mean :skip?" in run.text()


def test_an_empty_enter_is_asked_again() -> None:
    run = Drive(["", "   ", "32"]).go()
    assert [r.raw for r in run.rows(FIRST, latest_only=False)] == ["32"]
    assert run.text().count("Nothing typed") == 2


def test_an_empty_text_answer_is_asked_again() -> None:
    drill, _ = find_drill(DRILL)
    index = next(i for i, s in enumerate(drill.steps) if s.kind == "text")
    run = Drive([":skip"] * index + ["\n  \n", "Cap max_model_len at 8k."]).go()
    text_step = drill.steps[index]
    assert [r.raw for r in run.rows(text_step.id, latest_only=False)] == [
        "Cap max_model_len at 8k."]
    assert "Esc then Enter submits" in run.text()


def test_only_skip_skips() -> None:
    run = Drive([":skp", "", "asdf", ":skip"]).go()
    rows = run.rows(FIRST, latest_only=False)
    assert [(r.raw, r.verdict) for r in rows] == [(None, "unanswered")]
    assert run.rows(SECOND) == []


def test_the_step_clock_runs_on_across_reasks() -> None:
    run = Drive(["asdf", "", ":skp", "32"], seconds_each=5.0).go()
    assert run.rows(FIRST)[0].seconds == 20.0
    assert [p.spent for p in run.prompts[:4]] == [0.0, 5.0, 10.0, 15.0]


def test_a_reask_does_not_print_the_question_again() -> None:
    run = Drive(["asdf", "32"]).go()
    assert [p.show_question for p in run.prompts[:3]] == [True, False, True]


def test_exam_mode_asks_again_with_the_reason_only() -> None:
    run = Drive(["asdf", "32"], exam=True).go()
    told = next(line for line in run.said if line.startswith("Could not read that"))
    assert "Try e.g." not in told and "expected" not in told
    assert [r.raw for r in run.rows(FIRST, latest_only=False)] == ["32"]


def test_help_lists_the_commands_and_records_nothing() -> None:
    run = Drive([":help", "32"]).go()
    for command in ("?", ":skip", ":back", ":formula", ":givens", ":help", ":quit"):
        assert re.search(rf"^  {re.escape(command)} ", run.text(), re.MULTILINE)
    assert [r.raw for r in run.rows(FIRST, latest_only=False)] == ["32"]


def test_givens_prints_only_the_givens() -> None:
    run = Drive([":givens", "32"]).go()
    shown = run.said[0]
    assert shown.startswith("Given:\n  model: Llama-3.1-8B\n")
    assert "capacity planning" not in shown and "KV bytes per token and sessions" not in shown


# -- one line per step through a pipe ----------------------------------------------------------


def test_without_reask_an_unreadable_line_is_recorded_invalid() -> None:
    run = Drive(["asdf", "8"], reask=False).go()
    assert [(r.raw, r.verdict) for r in run.rows(FIRST)] == [("asdf", "invalid")]
    assert run.rows(SECOND)[0].raw == "8"


def test_piped_practice_still_records_an_unreadable_line_as_invalid(run: Run) -> None:
    run("practice", DRILL, input="52 GBB\n:skp\n\n")
    steps = {s["id"]: s for s in json.loads(run("export", "1").output)["steps"]}
    assert steps[FIRST]["answer"] == "52 GBB" and steps[FIRST]["verdict"] == "invalid"
    assert steps[SECOND]["answer"] == ":skp" and steps[SECOND]["verdict"] == "invalid"
    assert steps["shape-head-dim"]["verdict"] == "unanswered"


def test_piped_practice_does_not_wait_for_enter(run: Run) -> None:
    result = run("practice", DRILL, input="32\n")
    assert START_MESSAGE not in result.output
    steps = {s["id"]: s for s in json.loads(run("export", "1").output)["steps"]}
    assert steps[FIRST]["answer"] == "32"


# -- :skip then :back ---------------------------------------------------------------------------


def test_skip_then_back_adds_the_new_seconds_to_the_earlier() -> None:
    run = Drive([":skip", ":back", "32"], seconds_each=5.0).go()
    assert run.rows(FIRST)[0].seconds == 10.0


def test_skip_then_back_keeps_the_skip_as_an_earlier_revision() -> None:
    run = Drive([":skip", ":back", "32"]).go()
    rows = run.rows(FIRST, latest_only=False)
    # The skip showed the reference, so the answer after it earns nothing (issue 22).
    assert [(r.revision, r.raw, r.verdict) for r in rows] == [
        (1, None, "unanswered"), (2, "32", "revealed")]


def test_export_shows_the_latest_answer_after_skip_and_back(run: Run) -> None:
    Drive([":skip", ":back", "32"]).go()
    steps = {s["id"]: s for s in json.loads(run("export", "1").output)["steps"]}
    assert steps[FIRST]["answer"] == "32" and steps[FIRST]["verdict"] == "revealed"
    assert steps[FIRST]["revealed"] is True and steps[FIRST]["seconds"] == 10.0


def test_the_time_on_a_step_left_by_back_counts_when_it_is_answered() -> None:
    run = Drive(["32", ":back", "32", "8"], seconds_each=5.0).go()
    assert run.rows(SECOND)[0].seconds == 10.0


def test_hints_add_up_across_revisits() -> None:
    run = Drive(["?", ":skip", ":back", "?", "32"]).go()
    assert run.rows(FIRST)[0].hints == 1  # the step has one hint: not given twice
    assert "No more hints: this step has 1, all shown." in run.said


def test_a_revisited_step_says_what_was_given_before() -> None:
    run = Drive([":skip", ":back", "32"], seconds_each=5.0).go()
    assert "Revising step shape-layers (skipped); its clock goes on from 5s." in run.said


def test_a_revisit_after_resume_adds_to_the_stored_seconds() -> None:
    first = Drive([":skip"], seconds_each=5.0).go()
    feed = iter([":back", "32"])
    clock = FakeClock()

    def ask(prompt: StepPrompt) -> str | None:
        clock.now += 5.0
        return next(feed, None)

    Session(first.key, first.store, first.attempt, ask=ask, say=lambda _: None, clock=clock,
            reask_unreadable=True).run()
    assert first.rows(FIRST)[0].seconds == 10.0


# -- the clock starts on Enter ---------------------------------------------------------------


def test_the_clock_starts_after_enter() -> None:
    clock_holder: list[FakeClock] = []

    def ready(message: str) -> bool:
        clock_holder[0].now += 100.0  # reading the givens
        return message == START_MESSAGE

    run = Drive(["32"], seconds_each=5.0, ready=ready)
    clock_holder.append(run.clock)
    run.go()
    assert run.rows(FIRST)[0].seconds == 5.0


def test_quitting_at_the_start_prompt_saves_without_asking() -> None:
    run = Drive(["32"], ready=lambda _: False)
    assert run.session.run() is False
    assert run.prompts == [] and run.store.answers(run.attempt) == []


# -- the terminal: prompt_toolkit's pipe input -------------------------------------------------


def _through_pipe(keys: str, make: Callable[..., Callable[..., Any]], *args: Any) -> Any:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        return make(input=pipe, output=DummyOutput())(*args)


def test_the_start_prompt_returns_on_enter() -> None:
    from trainer.app.tui import make_ready

    assert _through_pipe("\r", make_ready, START_MESSAGE) is True


def test_ctrl_d_at_the_start_prompt_quits() -> None:
    from trainer.app.tui import make_ready

    assert _through_pipe("\x04", make_ready, START_MESSAGE) is False


def test_an_empty_enter_in_a_text_step_is_submitted_to_be_asked_again() -> None:
    from trainer.app.tui import make_ask

    drill, _ = find_drill(DRILL)
    step = next(s for s in drill.steps if s.kind == "text")
    prompt = StepPrompt(step, 11, 15, "Policy?", 120, 0.0, 420, True)
    assert _through_pipe("\r", make_ask, prompt) == ""


def test_the_toolbar_counts_on_from_the_seconds_already_spent() -> None:
    from trainer.app.tui import toolbar

    drill, _ = find_drill(DRILL)
    prompt = StepPrompt(drill.steps[0], 1, 15, "q", 15, 0.0, 420, False, spent=10.0)
    text = "".join(t[1] for t in toolbar(prompt, 0.0, lambda: 2.0).__pt_formatted_text__())
    assert "step 0:03" in text


def test_the_toolbar_of_a_text_step_fits_80_columns_and_leaves_out_no_command() -> None:
    from trainer.app.tui import toolbar

    drill, _ = find_drill(DRILL)
    step = next(s for s in drill.steps if s.kind == "text")
    prompt = StepPrompt(step, 11, 15, "q", 120, 900.0, 420, True)
    text = "".join(t[1] for t in toolbar(prompt, 0.0, lambda: 700.0, width=80)
                   .__pt_formatted_text__())
    assert all(len(line) <= 80 for line in text.split("\n"))
    assert "Esc Enter submits" in text and ":back" in text and ":help" in text


# -- examples and wrapping -----------------------------------------------------------------------


def _numeric_steps() -> Iterator[tuple[AnswerKey, Any]]:
    for path in drill_paths():
        drill, _ = find_drill(path.stem)
        key = AnswerKey(drill)
        for step in drill.steps:
            if step.kind == "numeric":
                yield key, step


def test_an_unreadable_answer_is_told_the_form_with_no_figure_in_it() -> None:
    for key, step in _numeric_steps():
        feedback = mark_sheet(key, {step.id: "12 @ 3"})[step.id].feedback
        told = feedback.split("not marked. Type ", 1)[1]
        assert "<number>" in told or told == "a number", (key.drill.id, step.id, feedback)
        assert not any(char.isdigit() for char in told.replace("<number>", "")), told


def test_the_situation_is_rewrapped_between_words_at_80_columns() -> None:
    run = Drive([])
    situation = run.session.situation()
    wrapped = wrap_lines(situation, 78)
    assert all(len(line) <= 78 for line in wrapped.splitlines())
    assert wrapped.split() == situation.split()


def test_unwrap_joins_a_hard_wrapped_list_item_and_keeps_tables() -> None:
    text = "Intro that goes\non here.\n\n- item one\n  continued;\n- item two\n| a | b |\n| 1 | 2 |"
    assert unwrap(text) == ("Intro that goes on here.\n\n- item one continued;\n- item two\n"
                            "| a | b |\n| 1 | 2 |")


def _reask_example(step_id: str) -> str:
    drill, _ = find_drill(DRILL)
    index = next(i for i, s in enumerate(drill.steps) if s.id == step_id)
    run = Drive([":skip"] * index + ["zzz", ":quit"]).go()
    told = next(line for line in run.said if line.startswith("Could not read that"))
    return told.split("Try ", 1)[1].split(", or :skip")[0]


def test_a_byte_step_is_shown_a_number_with_a_byte_unit() -> None:
    assert _reask_example("shape-dtype-bytes") == \
        "a number with a byte unit, such as <number> KiB or <number> GB"


def test_the_example_names_the_unit_and_no_figure() -> None:
    assert _reask_example("kv-budget") == "a number with its unit, such as <number> GB"


def test_a_sessions_example_is_a_placeholder_not_a_near_miss_number() -> None:
    """Issue 38: "14 sequences" on a 193-session step (and 12 sessions at 32k beside it) read
    as a hint; a placeholder cannot."""
    told = _reask_example("followup-128k-sessions")
    assert told == "a number with its unit, such as <number> sequences"
    assert not any(ch.isdigit() for ch in told)


def test_a_reask_quotes_the_readers_reason_not_what_follows_it() -> None:
    drill, _ = find_drill(DRILL)
    index = next(i for i, s in enumerate(drill.steps) if s.id == "kv-budget")
    run = Drive([":skip"] * index + ["zzz", ":quit"]).go()
    told = next(line for line in run.said if line.startswith("Could not read that"))
    feedback = mark_sheet(run.key, {"kv-budget": "zzz"})["kv-budget"].feedback
    reason, _, rest = feedback.partition("; not marked")
    assert reason.rstrip(".") in told
    assert not rest.strip(". ") or rest.strip(". ") not in told


def test_the_summary_fits_80_columns() -> None:
    from trainer.app.session import summary

    run = Drive(["32", "32", "about 96 sessions, I think, give or take a few"]).go()
    assert all(len(line) <= 78 for line in summary(run.session, 78).splitlines())


def test_a_bound_where_a_value_is_asked_is_asked_again_and_not_stored() -> None:
    run = Drive(["under 160", "32"]).go()
    assert [r.raw for r in run.rows(FIRST, latest_only=False)] == ["32"]
    assert "asks for the value itself" in run.text()
