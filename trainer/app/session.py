"""The drill loop. It takes `ask`, `say` and a clock as arguments, so the same loop runs in a
terminal, through a pipe, and in tests with scripted input and a fake clock.

Every answer is committed to the store the moment it is given; marks are always re-derived from
the latest raw answers, so revising an earlier step (`:back`) re-marks what depends on it.

In a terminal (`reask_unreadable`), nothing is recorded until an answer can be read: an
unreadable answer, an unknown `:command` or an empty Enter is asked again with the reason and an
example of a form that works, on the same running step clock; only `:skip` skips. Through a pipe
each line is one step's answer, and an unreadable one is recorded as invalid. A step visited again
(`:back`) keeps its earlier seconds and hints and adds the new ones; its earlier answers (a skip
included) stay in the store as earlier revisions."""

from __future__ import annotations

import difflib
import re
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trainer import SOLVER_VERSION
from trainer.drills.model import Step
from trainer.drills.placeholders import fill
from trainer.drills.reference import AnswerKey, show
from trainer.errors import AnswerParseError
from trainer.files.sha256 import sha256
from trainer.marking.checker import Mark, form_text, mark_sheet, unreadable_reason
from trainer.marking.grading import MAX_ANSWER_CHARS
from trainer.reading.exact import Fraction
from trainer.reading.reader import read_answer
from trainer.records import record, replace
from trainer.store.database import Store
from trainer.views.sheets import givens_lines, prompt_of, situation_of

COMMANDS_HELP = "? hint · :skip · :back · :givens · :help · :quit"
COMMANDS = (
    ("?", "a hint for this step (also :hint); each one is counted"),
    (":skip", "leave this step unanswered and go on"),
    (":back", "revise the previous answer (its time and hints add up)"),
    (":formula", "the formula this step uses, if the drill gives one"),
    (":givens", "the givens again"),
    (":help", "this list"),
    (":quit", "save and stop; kvdrill practice --resume {attempt} continues"),
)
COMMAND_NAMES = (":hint", ":h", ":skip", ":back", ":formula", ":givens", ":help", ":quit", ":q")
START_MESSAGE = "Press Enter to start the clock"
TEXT_EXAMPLE = "a few sentences (Esc then Enter submits)"
_BULLET = re.compile(r"\s*(?:[-*•]|\d+[.)])\s+")
_VERBATIM = ("|", "#", "```", ">")


_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(?:\|\s*:?-{3,}:?\s*)*\|?\s*$")


def plain_tables(text: str) -> str:
    """A Markdown table as a list, its |---| rule dropped: what a person reads on a terminal
    of any width, where the pipes and dashes are noise and padded columns overflow."""
    lines = text.split("\n")
    out: list[str] = []
    block: list[list[str]] = []

    def flush() -> None:
        # the header names the columns once; each row is a list item that wraps like prose
        if block:
            header, *rows = block
            out.append(" / ".join(header) + ":")
            out.extend(f"- {row[0]}: {', '.join(cell for cell in row[1:] if cell)}"
                       if len(row) > 1 else f"- {row[0]}" for row in rows)
            block.clear()

    for line in lines:
        if line.lstrip().startswith("|"):
            if not _TABLE_RULE.match(line):
                block.append([cell.strip() for cell in line.strip().strip("|").split("|")])
            continue
        flush()
        out.append(line)
    flush()
    return "\n".join(out)


def unwrap(text: str) -> str:
    """Join the hard-wrapped lines of each paragraph and list item of `text` into one line, so
    a terminal of any width can wrap them again. Tables, headings and indented lines stay."""
    lines: list[str] = []
    hang = -1  # the indent of a line that continues the last one; -1: none does
    for line in text.split("\n"):
        indent = len(line) - len(line.lstrip())
        bullet = _BULLET.match(line)
        verbatim = line.lstrip().startswith(_VERBATIM)
        if line.strip() and lines and not bullet and not verbatim and indent == hang:
            lines[-1] += " " + line.strip()
            continue
        lines.append(line.rstrip())
        if bullet:
            hang = bullet.end()
        else:
            hang = 0 if line.strip() and indent == 0 and not verbatim else -1
    return "\n".join(lines)


def wrap_lines(text: str, width: int) -> str:
    """Each line of `text` wrapped at `width` between words, continuing under its own indent
    (under the text of a list item, two further in for an indented line)."""
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        lead = line[: len(line) - len(line.lstrip())]
        bullet = _BULLET.match(line)
        hang = " " * bullet.end() if bullet else (lead + "  " if lead else "")
        out.extend(textwrap.wrap(line.strip(), width, initial_indent=lead,
                                 subsequent_indent=hang, break_long_words=False,
                                 break_on_hyphens=False) or [""])
    return "\n".join(out)


def help_text(attempt_id: int) -> str:
    width = max(len(name) for name, _ in COMMANDS)
    return "\n".join(["Commands (type one, then Enter):"] + [
        f"  {name.ljust(width)}  {what.format(attempt=attempt_id)}" for name, what in COMMANDS])


@record
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
    spent: float = 0.0  # seconds already on this step: earlier visits and earlier asks
    show_question: bool = True  # False when asked again just below a short note
    exam: bool = False  # no hints: the toolbar does not offer them
    draft: str = ""  # text to put back in the answer box (a sent answer that did not read)

    @property
    def label(self) -> str:
        """How the question is labelled: by its step id, as drill texts refer to steps."""
        return f"[{self.step.id}]"


class SendThenStop(str):
    """An answer the candidate typed and, on stopping (Ctrl-C), chose to send: it is taken as
    any answer, and the session then stops."""


Ask = Callable[[StepPrompt], str | None]  # None: no more input (end of a pipe)
Say = Callable[[str], None]
Clock = Callable[[], float]
Ready = Callable[[str], bool]  # shows the message, waits for Enter; False: the candidate quit


def drill_hash(path: Path) -> str:
    return sha256(_drill_bytes(path)).hexdigest()


def _drill_bytes(path: Path) -> bytes:
    """The drill file as practised, read within the loader's bound (it was loaded already; a
    file swapped since is refused rather than read whole)."""
    from trainer.drills.loader import MAX_FILE_BYTES
    from trainer.errors import DrillFileError
    from trainer.files.bounded_io import read_bounded

    return read_bounded(path, MAX_FILE_BYTES, "drill file", DrillFileError)


def params_json(givens: dict[str, Any]) -> dict[str, Any]:
    from trainer.capacity.presets import model_label

    return {k: str(v) if isinstance(v, Fraction) else model_label(v) for k, v in givens.items()}


class Session:
    def __init__(self, key: AnswerKey, store: Store, attempt_id: int, *, ask: Ask, say: Say,
                 clock: Clock, exam: bool = False, strict: bool = False,
                 reask_unreadable: bool = False, ready: Ready | None = None,
                 givens_per_step: bool = False,
                 intro: Callable[[str], bool] | None = None,
                 keep_empty: bool = True) -> None:
        """`reask_unreadable`: ask again (recording nothing) after an unreadable answer, an
        unknown `:command` or an empty Enter, as in a terminal; otherwise every line is one
        step's answer, as through a pipe. `ready`: called before the first step's clock starts
        (a terminal waits for Enter there, so reading the givens is not charged to a step).
        `givens_per_step`: each step has givens of its own (a --weak session), which :givens
        shows, and the introduction does not list the first step's as the drill's. `intro`:
        shows the introduction (a terminal pages one taller than the screen); False when the
        candidate stopped while reading it. Without `keep_empty`, an attempt stopped before
        any answer is deleted (`discarded`), not left as an empty incomplete attempt."""
        self.key = key
        self.keep_empty = keep_empty
        self.discarded = False
        self.drill = key.drill
        self.store = store
        self.attempt_id = attempt_id
        self.ask, self.say, self.clock = ask, say, clock
        self.exam, self.strict = exam, strict
        self.reask_unreadable, self.ready = reask_unreadable, ready
        self.givens_per_step = givens_per_step
        self.intro = intro
        self.stopped_reading = False
        self.answers: dict[str, str | None] = {}
        self.seconds: dict[str, float] = {}
        self.hints: dict[str, int] = {}
        self.unrecorded: dict[str, float] = {}  # seconds on a step left by :back unanswered
        for row in store.answers(attempt_id):
            self.answers[row.step_id] = row.raw
            self.seconds[row.step_id] = row.seconds
            self.hints[row.step_id] = row.hints
        # Steps skipped with the reference shown (practice mode): revisiting one earns nothing.
        self.shown: set[str] = set() if exam else {
            row.step_id for row in store.answers(attempt_id, latest_only=False)
            if row.raw is None or not row.raw.strip()}

    def revealed(self) -> frozenset[str]:
        """The steps answered after their skip showed the reference: no credit."""
        return frozenset(s for s in self.shown if (self.answers.get(s) or "").strip())

    def marks(self) -> dict[str, Mark]:
        return mark_sheet(self.key, self.answers, self.revealed())

    def first_open_step(self) -> int:
        for index, step in enumerate(self.drill.steps):
            if step.id not in self.answers:
                return index
        return len(self.drill.steps)

    def situation(self) -> str:
        """The title, the situation once and the givens once."""
        text = f"{self.key.title()}\n\n{plain_tables(unwrap(situation_of(self.key)))}"
        return text if self.givens_per_step else f"{text}\n\n{self.givens_text()}"

    def givens_text(self, step: Step | None = None) -> str:
        """The givens block alone; in a session whose steps have their own, `step`'s."""
        key = self.key
        if self.givens_per_step and step is not None:
            key = AnswerKey(self.drill, self.key.step_givens(step))
        return "Given:\n" + "\n".join(f"  {line}" for line in givens_lines(key))

    def introduce(self) -> None:
        mode = "exam: no feedback until the end · :skip · :back · :help · :quit" \
            if self.exam else COMMANDS_HELP
        text = f"{self.situation()}\n\nTarget {self.drill.target_minutes} min · {mode}"
        if self.intro is None:
            self.say(text)
        elif not self.intro(text):
            self.stopped_reading = True

    def run(self) -> bool:
        """Ask every open step; True when the drill was finished, False when input ended or
        the candidate quit (the attempt stays incomplete and can be resumed)."""
        index = self.first_open_step()
        steps = self.drill.steps
        if self.stopped_reading:
            return self._stopped()
        if index < len(steps) and self.ready is not None and not self.ready(START_MESSAGE):
            return self._stopped()
        while index < len(steps):
            outcome = self._ask_step(index)
            if outcome == "quit":
                return self._stopped()
            index = max(0, index - 1) if outcome == "back" else index + 1
        self.store.finish(self.attempt_id, "complete")
        return True

    def stopped(self) -> bool:
        """Stopped from outside (Ctrl-C through a pipe): said as a stop from inside is."""
        return self._stopped()

    def _stopped(self) -> bool:
        """Say what is saved (each answer was stored as it was given), and how to go on."""
        kept = len(self.answers)
        total = len(self.drill.steps)
        if not kept and not self.keep_empty and self.store.discard_unanswered(self.attempt_id):
            self.discarded = True
            self.say("Stopped: nothing was answered, so no attempt was saved.")
            return False
        saved = f"{kept} of {total} steps saved" if kept else "no step answered yet"
        self.say(f"Stopped: {saved}. Resume with: kvdrill practice --resume "
                 f"{self.attempt_id}")
        return False

    def _ask_step(self, index: int) -> str:
        """Ask one step until it is answered, skipped or left; one clock runs throughout, on
        top of the seconds of earlier visits."""
        step = self.drill.steps[index]
        recorded = self.seconds.get(step.id, 0.0)
        earlier = recorded + self.unrecorded.pop(step.id, 0.0)
        others = set(self.seconds) | set(self.unrecorded)
        prompt = StepPrompt(
            step, index + 1, len(self.drill.steps), prompt_of(self.key, step.id), step.seconds,
            sum(self.seconds.get(k, 0.0) + self.unrecorded.get(k, 0.0)
                for k in others if k != step.id),
            self.drill.budget_seconds, step.kind == "text", exam=self.exam,
        )
        if step.id in self.answers:
            before = self.answers[step.id]
            given = "skipped" if before is None or not before.strip() else \
                f"you gave {' '.join(before.split())[:40]!r}"
            self.say(f"Revising step {step.id} ({given}); its clock goes on from "
                     f"{earlier:.0f}s.")
        start = self.clock()

        def spent() -> float:
            return earlier + max(0.0, self.clock() - start)

        hints = self.hints.get(step.id, 0)
        show_question = True
        draft = ""
        while True:
            raw = self.ask(replace(prompt, spent=spent(), show_question=show_question,
                                   draft=draft))
            if raw is None:
                return "quit"
            stop_after = isinstance(raw, SendThenStop)
            draft = ""
            command = raw.strip().lower()
            show_question = command in (":help", ":givens")  # long: the question again
            if command in ("?", ":hint", ":h"):
                if self.exam:
                    self.say("No hints in exam mode.")
                elif hints < len(step.hints):
                    self.say(f"Hint: {fill(step.hints[hints], self.key.display_givens())}")
                    hints += 1
                elif not step.hints:
                    self.say("This step has no hints; :formula shows its formula, if any.")
                else:
                    self.say(f"No more hints: this step has {len(step.hints)}, all shown.")
                continue
            if command == ":formula":
                formula = step.formula or "No formula is given for this step."
                self.say(fill(formula, self.key.display_givens()))
                continue
            if command == ":help":
                self.say(help_text(self.attempt_id))
                continue
            if command == ":givens":
                self.say(self.givens_text(step))
                continue
            if command in (":quit", ":q"):
                return "quit"
            if command == ":back":
                if index == 0:
                    self.say("This is the first step.")
                    continue
                self.unrecorded[step.id] = spent() - recorded
                return "back"
            if command == ":skip":
                answer = None
                break
            if len(raw) > MAX_ANSWER_CHARS:
                too_long = (f"That answer is longer than {MAX_ANSWER_CHARS:,} characters, the "
                            "most an answer can hold; nothing recorded.")
                if self.reask_unreadable:
                    self.say(f"{too_long} Shorten it, or :skip.")
                    continue
                self.say(f"{too_long} The step is left unanswered.")
                answer = None
                break
            if self.reask_unreadable:
                why = self._unreadable(step, raw, command)
                if why:
                    self.say(why)
                    draft = raw if stop_after else ""  # not sent: back in the box
                    continue
            answer = str(raw)
            break
        seconds = spent()
        overtime = seconds > step.seconds
        if self.strict and overtime:
            self.say(f"Time ran out ({step.seconds}s): closed as unanswered (--strict).")
            answer = None
        self._record(step, answer, seconds, hints, overtime)
        return "quit" if stop_after else "next"

    def _unreadable(self, step: Step, raw: str, command: str) -> str:
        """Why `raw` cannot be taken as the step's answer (with a form that works), or ""."""
        if command.startswith(":") and "\n" not in command:
            close_to = difflib.get_close_matches(command, COMMAND_NAMES, n=1, cutoff=0.6)
            guess = f" (did you mean {close_to[0]}?)" if close_to else ""
            return (f"Unknown command {raw.strip()!r}{guess}; nothing recorded. "
                    f"Type :help for the list, or :skip to skip.")
        if not command:
            if step.kind == "text":
                return ("Nothing typed: write your answer (Esc then Enter submits), "
                        "or :skip to skip.")
            return f"Nothing typed: give {self._example(step)}, or :skip to skip."
        if step.kind == "text":
            return ""
        # Only whether this one answer reads: the reader alone, not a re-mark of the sheet.
        try:
            read = read_answer(raw, self.key.reference(step.id).unit)
        except AnswerParseError as error:
            reason = unreadable_reason(error).strip().rstrip(".") or \
                "this is not a number the reader knows"
        else:
            if read.bound and not step.accepts_bound:
                return (f"That is a bound ({raw.strip()!r}); this step asks for the value "
                        "itself: type one number, or :skip. Nothing recorded; asked again.")
            return ""
        if self.exam:
            reason = reason.split("; expected")[0]
            return f"Could not read that: {reason}. Asked again; nothing recorded."
        return (f"Could not read that: {reason}.\nTry {self._example(step)}, or :skip. "
                "Nothing recorded; asked again.")

    def _example(self, step: Step) -> str:
        """A form that works on this step, with a placeholder for the figure."""
        if step.kind == "text":
            return TEXT_EXAMPLE
        return form_text(step)

    def _record(self, step: Step, answer: str | None, seconds: float, hints: int,
                overtime: bool) -> None:
        self.answers[step.id] = answer
        self.seconds[step.id] = seconds
        self.hints[step.id] = hints
        mark = self.marks()[step.id]
        parsed = None if mark.parsed is None else f"{mark.parsed.numerator}/" \
            f"{mark.parsed.denominator}"
        self.store.record_answer(
            self.attempt_id, step.id, answer, parsed, mark.unit or None, mark.verdict,
            mark.sure_mistake, mark.carried_forward, hints, seconds, step.seconds, overtime,
        )
        if not self.exam:
            self.say(feedback_line(mark, seconds, step.seconds))
            if answer is None or not answer.strip():
                self.shown.add(step.id)


def feedback_line(mark: Mark, seconds: float, budget: int) -> str:
    time_note = f" ({seconds:.0f}s of {budget}s{', overtime' if seconds > budget else ''})"
    if mark.verdict == "answered":
        return "Noted; text answers are scored at the end." + time_note
    if mark.verdict == "unanswered":
        expected = f"; expected {show(mark.expected, mark.unit)}" if mark.expected else ""
        return f"Skipped{expected}." + time_note
    if mark.verdict == "correct":
        note = f" · {mark.note[0].lower()}{mark.note[1:].rstrip('.')}" if mark.note else ""
        return f"✓ {mark.shown}{note}" + time_note
    if mark.verdict == "invalid":
        return f"? {mark.feedback}" + time_note  # not marked: the reader could not read it
    if mark.verdict == "revealed":
        return f"⊘ {mark.feedback}" + time_note
    return f"✗ {mark.feedback}" + time_note


def new_attempt(store: Store, key: AnswerKey, path: Path, variant: int | None, *, exam: bool,
                strict: bool, target: dict[str, Any] | None = None) -> int:
    """A new attempt, keeping the drill file's text and hash (read once, so they agree), so
    the attempt can be shown after the file is moved, changed or deleted."""
    data = _drill_bytes(path)
    return store.create_attempt(
        key.drill.id, sha256(data).hexdigest(), variant, params_json(key.givens),
        SOLVER_VERSION, "exam" if exam else "practice", strict,
        drill_text=data.decode("utf-8", "replace"), target=target,
    )


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def summary(session: Session, width: int | None = None) -> str:
    """The end-of-drill table (answer, reference, verdict, time against budget), then the
    rubric's dimensions with evidence, the level and red flags. With `width` (a terminal's),
    the table narrows and wraps inside its cells (nothing is cut) and the rest is wrapped."""
    from trainer.marking.grading import VERDICT_MARKS, grade, score_text
    from trainer.text_layout import Column, table

    graded = grade(session.drill, session.key, session.answers, None, session.revealed())
    rows = []
    for step in session.drill.steps:
        mark = graded.marks[step.id]
        answer = (mark.answer or "").strip().replace("\n", " ")
        if step.kind == "text":
            answer = _clip(answer, 60)  # an essay is read in the review, not in this table
        reference = show(mark.expected, mark.unit) if mark.expected is not None else "(rubric)"
        verdict = f"{VERDICT_MARKS[mark.verdict]} {mark.verdict}"
        if mark.carried_forward:
            verdict += " (cf)"
        if mark.misconception:
            verdict += f" [{mark.misconception}]"
        spent = session.seconds.get(step.id)
        time_text = "" if spent is None else f"{spent:.0f}/{step.seconds}s" + (
            " over" if spent > step.seconds else "")
        rows.append([step.id, answer, reference, verdict, time_text])
    columns = [Column("step", wrap=False), Column("answer"), Column("reference"),
               Column("verdict", least=12), Column("time", wrap=False)]
    laid_out = table(columns, rows, width)
    text = "\n".join([laid_out, "", score_text(graded.score, width)])
    return text if width is None else wrap_lines(text, width)
