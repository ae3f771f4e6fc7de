"""The practice loop with scripted input and a fake clock, the piped command, and the timed
prompt through prompt_toolkit's pipe input."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result

from trainer.app.session import Session, StepPrompt, new_attempt
from trainer.drills.loader import find_drill
from trainer.drills.reference import AnswerKey
from trainer.store.database import Store

Run = Callable[..., Result]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KVDRILL_HOME", str(tmp_path))
    return tmp_path


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def scripted(lines: list[str], clock: FakeClock, seconds_each: float) -> Callable[..., str | None]:
    feed: Iterator[str] = iter(lines)

    def ask(prompt: StepPrompt) -> str | None:
        clock.now += seconds_each
        return next(feed, None)

    return ask


def start(home: Path, lines: list[str], seconds_each: float = 5.0, **flags: bool
          ) -> tuple[Session, Store]:
    drill, path = find_drill("llama31-8b-h100")
    key = AnswerKey(drill)
    store = Store()
    attempt = new_attempt(store, key, path, None, exam=flags.get("exam", False),
                          strict=flags.get("strict", False))
    clock = FakeClock()
    said: list[str] = []
    session = Session(key, store, attempt, ask=scripted(lines, clock, seconds_each),
                      say=said.append, clock=clock, **flags)
    session.said = said  # type: ignore[attr-defined]
    return session, store


def test_each_answer_is_stored_with_its_seconds(home: Path) -> None:
    session, store = start(home, ["32", "8"], seconds_each=7.0)
    session.run()
    rows = store.answers(session.attempt_id)
    assert [(r.step_id, r.raw, r.seconds) for r in rows] == [
        ("shape-layers", "32", 7.0), ("shape-kv-heads", "8", 7.0)]


def test_end_of_input_leaves_the_attempt_incomplete(home: Path) -> None:
    session, store = start(home, ["32"])
    assert session.run() is False
    assert store.attempt(session.attempt_id).status == "incomplete"


def test_a_step_past_its_budget_is_recorded_as_overtime(home: Path) -> None:
    session, store = start(home, ["32"], seconds_each=40.0)
    session.run()
    row = store.answers(session.attempt_id)[0]
    assert row.overtime and row.verdict == "correct"


def test_strict_mode_closes_an_overtime_step_as_unanswered(home: Path) -> None:
    session, store = start(home, ["32"], seconds_each=40.0, strict=True)
    session.run()
    row = store.answers(session.attempt_id)[0]
    assert row.raw is None and row.verdict == "unanswered"


def test_a_hint_is_shown_and_counted(home: Path) -> None:
    session, store = start(home, ["?", "32"])
    session.run()
    assert store.answers(session.attempt_id)[0].hints == 1
    assert any(line.startswith("Hint: ") for line in session.said)  # type: ignore[attr-defined]


def test_exam_mode_gives_no_feedback_and_no_hints(home: Path) -> None:
    session, _ = start(home, ["?", "31"], exam=True)
    session.run()
    said = session.said  # type: ignore[attr-defined]
    assert "No hints in exam mode." in said
    assert not any(line.startswith(("✓", "✗")) for line in said)


def test_feedback_names_the_mistake_at_once(home: Path) -> None:
    session, _ = start(home, ["32", "32"])
    session.run()
    assert any("query" in line for line in session.said)  # type: ignore[attr-defined]


def test_back_revises_the_previous_answer(home: Path) -> None:
    session, store = start(home, ["32", "32", ":back", "8", "128"])
    session.run()
    latest = {r.step_id: r for r in store.answers(session.attempt_id)}
    assert latest["shape-kv-heads"].raw == "8" and latest["shape-kv-heads"].revision == 2
    assert latest["shape-head-dim"].raw == "128"


def test_skip_records_an_unanswered_step(home: Path) -> None:
    session, store = start(home, [":skip"])
    session.run()
    assert store.answers(session.attempt_id)[0].verdict == "unanswered"


def test_resume_continues_at_the_first_open_step(home: Path) -> None:
    session, store = start(home, ["32", "8"])
    session.run()
    again = Session(session.key, store, session.attempt_id, ask=lambda p: None, say=print,
                    clock=FakeClock())
    assert again.first_open_step() == 2
    assert again.seconds["shape-layers"] == 5.0


def test_piped_practice_saves_and_exports_raw_answers_verdicts_and_seconds(
    run: Run, home: Path
) -> None:
    result = run("practice", "llama31-8b-h100", input="32\n32\n128\n")
    assert "Attempt 1 saved" in result.output
    exported = json.loads(run("export", "1").output)
    steps = {s["id"]: s for s in exported["steps"]}
    assert steps["shape-kv-heads"]["answer"] == "32"
    assert steps["shape-kv-heads"]["verdict"] == "wrong"
    assert steps["shape-kv-heads"]["misconception"] == "query-heads"
    assert steps["shape-head-dim"]["seconds"] >= 0
    assert steps["sessions"]["answer"] is None


def test_history_lists_the_attempt(run: Run, home: Path) -> None:
    run("practice", "llama31-8b-h100", input="32\n")
    rows = json.loads(run("history", "--json").output)
    assert rows[0]["drill"] == "llama31-8b-h100" and rows[0]["status"] == "incomplete"
    assert rows[0]["answered"] == 1


def test_the_timed_prompt_reads_an_answer_through_pipe_input() -> None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from trainer.app.tui import make_ask

    drill, _ = find_drill("llama31-8b-h100")
    step = drill.steps[0]
    prompt = StepPrompt(step, 1, 15, "How many layers?", 15, 0.0, 420, False)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("32\r")
        assert make_ask(input=pipe, output=DummyOutput())(prompt) == "32"


def test_the_toolbar_turns_to_overtime_after_the_budget() -> None:
    from trainer.app.tui import toolbar

    drill, _ = find_drill("llama31-8b-h100")
    prompt = StepPrompt(drill.steps[0], 1, 15, "q", 15, 0.0, 420, False)
    text = "".join(t[1] for t in toolbar(prompt, 0.0, lambda: 20.0).__pt_formatted_text__())
    assert "overtime 0:05" in text


def _ask_text_step(keys: str) -> str | None:
    from prompt_toolkit.application import create_app_session
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from trainer.app.tui import make_ask

    drill, _ = find_drill("llama31-8b-h100")
    step = next(s for s in drill.steps if s.kind == "text")
    prompt = StepPrompt(step, 11, 15, "Policy?", 120, 0.0, 420, True)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text(keys)
        return make_ask(input=pipe, output=DummyOutput())(prompt)


def test_a_text_step_takes_several_lines_until_escape_enter() -> None:
    assert _ask_text_step("cap max_model_len\rturn on fp8 kv\x1b\r") == \
        "cap max_model_len\nturn on fp8 kv"


def test_a_command_in_a_text_step_is_submitted_by_enter() -> None:
    assert _ask_text_step(":skip\r") == ":skip"
