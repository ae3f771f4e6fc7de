"""The drill loop. It takes `ask`, `say` and a clock as arguments, so the same loop runs in a
terminal, through a pipe, and in tests with scripted input and a fake clock.

Every answer is committed to the store the moment it is given; marks are always re-derived from
the latest raw answers, so revising an earlier step (`:back`) re-marks what depends on it."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

from trainer.checker import Mark, mark_sheet
from trainer.model import Step
from trainer.reference import AnswerKey, show
from trainer.render import fill
from trainer.sheets import givens_lines, prompt_of, situation_of
from trainer.solver import SOLVER_VERSION
from trainer.store import Store

COMMANDS_HELP = "commands: ? hint · :skip · :back · :formula · :quit (saves)"


@dataclass(frozen=True)
class StepPrompt:
    """What the asker needs to show one step: the question and its clocks."""

    step: Step
    number: int
    total: int
    text: str
    budget: int
    drill_elapsed: float  # seconds spent on earlier steps
    drill_budget: int
    multiline: bool


Ask = Callable[[StepPrompt], str | None]  # None: no more input (end of a pipe)
Say = Callable[[str], None]
Clock = Callable[[], float]


def drill_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def params_json(givens: dict[str, Any]) -> dict[str, Any]:
    return {k: str(v) if isinstance(v, Fraction) else v for k, v in givens.items()}


class Session:
    def __init__(self, key: AnswerKey, store: Store, attempt_id: int, *, ask: Ask, say: Say,
                 clock: Clock, exam: bool = False, strict: bool = False) -> None:
        self.key = key
        self.drill = key.drill
        self.store = store
        self.attempt_id = attempt_id
        self.ask, self.say, self.clock = ask, say, clock
        self.exam, self.strict = exam, strict
        self.answers: dict[str, str | None] = {}
        self.seconds: dict[str, float] = {}
        for row in store.answers(attempt_id):
            self.answers[row.step_id] = row.raw
            self.seconds[row.step_id] = row.seconds

    def marks(self) -> dict[str, Mark]:
        return mark_sheet(self.key, self.answers)

    def first_open_step(self) -> int:
        for index, step in enumerate(self.drill.steps):
            if step.id not in self.answers:
                return index
        return len(self.drill.steps)

    def introduce(self) -> None:
        self.say(f"{self.drill.title}\n\n{situation_of(self.key)}\n")
        self.say("Given:\n" + "\n".join(f"  {line}" for line in givens_lines(self.key)))
        mode = "exam mode: no feedback until the end" if self.exam else COMMANDS_HELP
        self.say(f"\nTarget {self.drill.target_minutes} min · {mode}\n")

    def run(self) -> bool:
        """Ask every open step; True when the drill was finished, False when input ended or
        the candidate quit (the attempt stays incomplete and can be resumed)."""
        index = self.first_open_step()
        steps = self.drill.steps
        while index < len(steps):
            outcome = self._ask_step(index)
            if outcome == "quit":
                self.say(f"Saved. Resume with: kvdrill practice --resume {self.attempt_id}")
                return False
            index = max(0, index - 1) if outcome == "back" else index + 1
        self.store.finish(self.attempt_id, "complete")
        return True

    def _ask_step(self, index: int) -> str:
        step = self.drill.steps[index]
        prompt = StepPrompt(
            step, index + 1, len(self.drill.steps), prompt_of(self.key, step.id), step.seconds,
            sum(v for k, v in self.seconds.items() if k != step.id),
            self.drill.target_minutes * 60, step.kind == "text",
        )
        start = self.clock()
        hints = 0
        while True:
            raw = self.ask(prompt)
            if raw is None:
                return "quit"
            command = raw.strip().lower()
            if command in ("?", ":hint", ":h"):
                if self.exam:
                    self.say("No hints in exam mode.")
                elif hints < len(step.hints):
                    self.say(f"Hint: {fill(step.hints[hints], self.key.display_givens())}")
                    hints += 1
                else:
                    self.say("No more hints for this step.")
                continue
            if command == ":formula":
                formula = step.formula or "No formula is given for this step."
                self.say(fill(formula, self.key.display_givens()))
                continue
            if command in (":quit", ":q"):
                return "quit"
            if command == ":back":
                if index == 0:
                    self.say("This is the first step.")
                    continue
                return "back"
            answer = None if command == ":skip" else raw
            break
        seconds = self.clock() - start
        overtime = seconds > step.seconds
        if self.strict and overtime:
            self.say(f"Time ran out ({step.seconds}s): closed as unanswered (--strict).")
            answer = None
        self._record(step, answer, seconds, hints, overtime)
        return "next"

    def _record(self, step: Step, answer: str | None, seconds: float, hints: int,
                overtime: bool) -> None:
        self.answers[step.id] = answer
        self.seconds[step.id] = seconds
        mark = self.marks()[step.id]
        parsed = None if mark.parsed is None else f"{mark.parsed.numerator}/" \
            f"{mark.parsed.denominator}"
        self.store.record_answer(
            self.attempt_id, step.id, answer, parsed, mark.unit or None, mark.verdict,
            mark.misconception, mark.carried_forward, hints, seconds, step.seconds, overtime,
        )
        if not self.exam:
            self.say(feedback_line(mark, seconds, step.seconds))


def feedback_line(mark: Mark, seconds: float, budget: int) -> str:
    time_note = f" ({seconds:.0f}s of {budget}s{', overtime' if seconds > budget else ''})"
    if mark.verdict == "answered":
        return "Noted; text answers are scored at the end." + time_note
    if mark.verdict == "unanswered":
        expected = f"; expected {show(mark.expected, mark.unit)}" if mark.expected else ""
        return f"Skipped{expected}." + time_note
    if mark.verdict == "correct":
        return f"✓ {mark.shown}" + time_note
    return f"✗ {mark.feedback}" + time_note


def new_attempt(store: Store, key: AnswerKey, path: Path, variant: int | None, *, exam: bool,
                strict: bool) -> int:
    return store.create_attempt(
        key.drill.id, drill_hash(path), variant, params_json(key.givens), SOLVER_VERSION,
        "exam" if exam else "practice", strict,
    )


def summary(session: Session) -> str:
    """The end-of-drill table (answer, reference, verdict, time against budget), then the
    rubric's dimensions with evidence, the level and red flags."""
    from trainer.grading import VERDICT_MARKS, grade, score_text

    graded = grade(session.drill, session.key, session.answers, None)
    rows = [("step", "answer", "reference", "verdict", "time")]
    for step in session.drill.steps:
        mark = graded.marks[step.id]
        answer = (mark.answer or "").strip().replace("\n", " ")
        answer = answer if len(answer) <= 28 else answer[:27] + "…"
        reference = show(mark.expected, mark.unit) if mark.expected is not None else "(rubric)"
        verdict = f"{VERDICT_MARKS[mark.verdict]} {mark.verdict}"
        if mark.carried_forward:
            verdict += " (cf)"
        if mark.misconception:
            verdict += f" [{mark.misconception}]"
        spent = session.seconds.get(step.id)
        time_text = "" if spent is None else f"{spent:.0f}/{step.seconds}s" + (
            " over" if spent > step.seconds else "")
        rows.append((step.id, answer, reference, verdict, time_text))
    widths = [max(len(row[i]) for row in rows) for i in range(4)]
    lines = ["  ".join(cell.ljust(width) for cell, width in zip(row[:4], widths, strict=True))
             + "  " + row[4] for row in rows]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join([*lines, "", score_text(graded.score)])
