"""The format of an exported transcript (`kvdrill export ID`), as `kvdrill review FILE` reads
it back: JSON parsed only after its nesting depth is checked on the raw text, then validated
field by field (strict types: no "5" for 5, no true for 1, no NaN or 1e308 seconds), and
checked for internal consistency with the drill it names, so that tampering beyond the verdicts
(seconds, hints, overtime, mode, status, the drill's hash, the variant's givens) is flagged.

Every refusal is one line, "malformed transcript: <field>: <why>". The fields are checked here
by hand rather than by a pydantic model: importing pydantic and building the models cost more
than everything else `kvdrill import` of three transcripts does, and a dozen strict fields
need no library."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from trainer.drills.model import Drill
from trainer.errors import KvdrillError, UsageError
from trainer.files.bounded_io import read_bounded, read_text_bounded
from trainer.reading.exact import Fraction
from trainer.records import field_names, record, replace
from trainer.store import moments

MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024
MAX_JSON_DEPTH = 32
MAX_STEPS = 500
MAX_SECONDS = 7 * 24 * 3600  # a week on one step is not a drill
MAX_ANSWER_CHARS = 8000  # as grading.MAX_ANSWER_CHARS (not imported: grading is above us)
MAX_ID = 2**63 - 1  # SQLite's largest integer

# A JSON string, written so the engine runs through it without trying an alternative at every
# character (seven times faster on an 80 kB transcript than "(?:[^"\\]|\\.)*")
_STRINGS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")

VERDICTS = ("correct", "wrong", "invalid", "unanswered", "answered", "revealed")
MODES = ("practice", "exam", "grade")
STATUSES = ("incomplete", "complete")


@record
class StepRecord:
    id: str
    answer: str | None = None
    verdict: str | None = None  # one of VERDICTS
    revealed: bool = False  # answered after its reference was shown (a skip in practice)
    seconds: float | None = None
    budget_seconds: int | None = None
    overtime: bool | None = None
    hints: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in field_names(self)}


@record
class TranscriptFile:
    id: int
    drill: str
    mode: str  # one of MODES
    started_at: str
    status: str  # one of STATUSES
    steps: list[StepRecord]
    drill_hash: str | None = None
    variant: int | None = None
    params: dict[str, int | float | str | None] | None = None
    solver_version: str | int | None = None
    strict: bool = False
    finished_at: str | None = None
    drill_text: str | None = None
    # the model and GPU a drill was re-targeted at: checked by variants.target_parts on load
    target: dict[str, Any] | None = None


# The fields review takes from a file, each strictly typed (no "5" for 5, no true for 1), in
# the order a file's first fault is looked for; fields kvdrill itself adds on export
# (reference, feedback, rubric...) are re-derived on review, so they are ignored here.
class _Fault(Exception):
    def __init__(self, where: tuple[int | str, ...], why: str) -> None:
        super().__init__(why)
        self.where = where
        self.why = why


def _shown(value: Any) -> str:
    if isinstance(value, int | float | bool | str) or value is None:
        return json.dumps(value)[:40]
    return "an object" if isinstance(value, dict) else "a list" if isinstance(value, list) \
        else type(value).__name__


def _text(most: int, least: int = 0) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, str):
            raise _Fault((), f"{_shown(value)} is not text in quotes")
        if len(value) < least:
            raise _Fault((), "empty; it needs a value")
        if len(value) > most:
            raise _Fault((), f"{len(value):,} characters, more than the {most:,} it may hold")
        return value
    return check


def _within(value: Any, least: float, most: float) -> None:
    if value < least:
        raise _Fault((), f"{_shown(value)} should be at least {least}")
    if value > most:
        raise _Fault((), f"{_shown(value)} should be at most {most}")


def _whole(least: int, most: int) -> Callable[[Any], Any]:
    def check(value: Any) -> Any:
        if not isinstance(value, int) or isinstance(value, bool):
            raise _Fault((), f"{_shown(value)} is not a whole number")
        _within(value, least, most)
        return value
    return check


def _seconds(value: Any) -> Any:
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise _Fault((), f"{_shown(value)} is not a number")
    if not math.isfinite(value):
        raise _Fault((), f"{_shown(value)} is not a finite number")
    _within(value, 0, MAX_SECONDS)
    return float(value)


def _flag(value: Any) -> Any:
    if not isinstance(value, bool):
        raise _Fault((), f"{_shown(value)} is not true or false")
    return value


def _one_of(allowed: tuple[str, ...]) -> Callable[[Any], Any]:
    said = ", ".join(f"'{name}'" for name in allowed[:-1]) + f" or '{allowed[-1]}'"

    def check(value: Any) -> Any:
        if value not in allowed or not isinstance(value, str):
            raise _Fault((), f"{_shown(value)} is not one of {said}")
        return value
    return check


def _recorded_givens(value: Any) -> Any:
    if not isinstance(value, dict):
        raise _Fault((), f"{_shown(value)} is not an object {{...}}")
    for name, given in value.items():
        if given is not None and (not isinstance(given, int | float | str)
                                  or isinstance(given, bool)):
            raise _Fault((name,), f"{_shown(given)} is not a number or text")
    return value


def _solver_version(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if not isinstance(value, str):
        raise _Fault((), f"{_shown(value)} is not text or a whole number")
    return _text(200)(value)


def _an_object(value: Any) -> Any:
    if not isinstance(value, dict):
        raise _Fault((), f"{_shown(value)} is not an object {{...}}")
    return value


_REQUIRED = object()
Checks = tuple[tuple[str, Any, Callable[[Any], Any]], ...]
_STEP: Checks = (
    ("id", _REQUIRED, _text(64, 1)),
    ("answer", None, _text(MAX_ANSWER_CHARS)),
    ("verdict", None, _one_of(VERDICTS)),
    ("revealed", False, _flag),
    ("seconds", None, _seconds),
    ("budget_seconds", None, _whole(0, MAX_SECONDS)),
    ("overtime", None, _flag),
    ("hints", None, _whole(0, 1000)),
)


def _steps(value: Any) -> Any:
    if not isinstance(value, list):
        raise _Fault((), f"{_shown(value)} is not a list [...]")
    if len(value) > MAX_STEPS:
        raise _Fault((), f"{len(value):,} steps, more than the {MAX_STEPS:,} a transcript may "
                         "hold")
    steps = []
    for index, step in enumerate(value):
        try:
            steps.append(StepRecord(**_checked(step, _STEP)))
        except _Fault as fault:
            raise _Fault((index, *fault.where), fault.why) from None
    return steps


_TRANSCRIPT: Checks = (
    ("id", _REQUIRED, _whole(1, MAX_ID)),
    ("drill", _REQUIRED, _text(200, 1)),
    ("drill_hash", None, _text(128)),
    ("variant", None, _whole(0, MAX_ID)),
    ("params", None, _recorded_givens),
    ("solver_version", None, _solver_version),
    ("mode", _REQUIRED, _one_of(MODES)),
    ("strict", False, _flag),
    ("started_at", _REQUIRED, _text(200)),
    ("finished_at", None, _text(200)),
    ("status", _REQUIRED, _one_of(STATUSES)),
    ("steps", _REQUIRED, _steps),
    ("drill_text", None, _text(256 * 1024)),
    ("target", None, _an_object),
)


def _checked(data: Any, checks: Checks) -> dict[str, Any]:
    """The fields `checks` name, each checked (None allowed where its default is None); the
    first fault found raised with where it is."""
    if not isinstance(data, dict):
        raise _Fault((), f"{_shown(data)} is not an object {{...}}")
    found: dict[str, Any] = {}
    for name, default, check in checks:
        if name not in data:
            if default is _REQUIRED:
                raise _Fault((name,), "required field is missing")
            continue
        value = data[name]
        if value is None and default is None:
            found[name] = None
            continue
        try:
            found[name] = check(value)
        except _Fault as fault:
            raise _Fault((name, *fault.where), fault.why) from None
    return found


def malformed(path: Path, field: str, why: str) -> UsageError:
    return UsageError(f"{path}: malformed transcript: {field}: {why} "
                      "(export a fresh one with `kvdrill export ID`)")


def _depth_ok(text: str) -> bool:
    """Whether no array or object nests deeper than MAX_JSON_DEPTH, on the raw text (strings
    removed), so json never recurses into a 100k-deep document."""
    depth = 0
    for bracket in _NOT_BRACKETS.sub("", _STRINGS.sub('""', text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            return False
        if depth < 0:
            return True  # unbalanced: json.loads says where
    return True


class _Unreadable:
    """A value JSON allows but a transcript cannot hold (NaN, 1e400, a 5,000-digit number),
    kept in its place while parsing so the refusal can say where it stands."""

    def __init__(self, why: str) -> None:
        self.why = why


class _Duplicated(dict[str, Any]):
    """An object with a key given twice: its first values, and which key."""

    twice = ""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            duplicated = _Duplicated(seen)
            duplicated.twice = key
            return duplicated
        seen[key] = value
    return seen


def _refuse_constant(name: str) -> _Unreadable:
    return _Unreadable(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float | _Unreadable:
    """A JSON number with a fraction or exponent, refused when it is infinite once read (1e400
    is valid JSON and is inf in Python), as NaN and Infinity spelt out are."""
    value = float(text)
    if not math.isfinite(value):
        return _Unreadable(f"{text[:30]} is too large a number for a transcript's figure")
    return value


def _bounded_int(text: str) -> int | _Unreadable:
    if len(text.lstrip("-")) > 30:
        return _Unreadable(f"a number of {len(text):,} digits is not a transcript's figure")
    return int(text)


def _first_unreadable(data: Any, where: tuple[int | str, ...] = ()
                      ) -> tuple[tuple[int | str, ...], str] | None:
    """Where the first value a transcript cannot hold stands, and why: a number JSON allows
    but no figure is, a key given twice, or text with a lone surrogate (valid JSON, "\\ud800",
    that no file or database can store)."""
    if isinstance(data, _Unreadable):
        return where, data.why
    if isinstance(data, str):
        return (where, f"holds a lone surrogate ({_surrogate(data)}), not text") \
            if _surrogate(data) else None
    if isinstance(data, list):
        for index, item in enumerate(data):
            if (found := _first_unreadable(item, (*where, index))) is not None:
                return found
    if isinstance(data, dict):
        if isinstance(data, _Duplicated):
            return (*where, data.twice), "given twice in one object"
        for key, value in data.items():
            if _surrogate(key):
                return where, f"a key holds a lone surrogate ({_surrogate(key)})"
            if (found := _first_unreadable(value, (*where, key))) is not None:
                return found
    return None


def _surrogate(text: str) -> str:
    """The first lone surrogate in `text`, escaped ("\\ud800"), or ""."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        return f"\\u{ord(text[error.start]):04x}"
    return ""


def _field(loc: tuple[int | str, ...], data: Any) -> str:
    parts: list[str] = []
    cursor = data
    for key in loc:
        if isinstance(key, int):
            step = cursor[key] if isinstance(cursor, list) and key < len(cursor) else None
            step_id = step.get("id") if isinstance(step, dict) else None
            parts.append(f"[{key}: {step_id}]" if isinstance(step_id, str) and len(step_id) < 65
                         else f"[{key}]")
        else:
            parts.append(f".{key}" if parts else key)
        try:
            cursor = cursor[key]
        except (KeyError, IndexError, TypeError):
            cursor = None
    return "".join(parts) or "(top level)"


def load(path: Path) -> TranscriptFile:
    """The transcript in `path`, or a UsageError saying which field is malformed."""
    text = read_text_bounded(path, MAX_TRANSCRIPT_BYTES, "transcript", UsageError,
                             "not a transcript; use `kvdrill export ID`")
    if not _depth_ok(text):
        raise malformed(path, "(top level)", f"nested more than {MAX_JSON_DEPTH} levels deep")
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates,
                          parse_constant=_refuse_constant, parse_int=_bounded_int,
                          parse_float=_finite_float)
    except json.JSONDecodeError as error:
        raise UsageError(f"{path}:{error.lineno}: not a JSON transcript ({error.msg}): use "
                         "`kvdrill export ID`") from None
    except (ValueError, RecursionError) as error:
        raise malformed(path, "(top level)", str(error)[:120]) from None
    if (unreadable := _first_unreadable(data)) is not None:
        where, why = unreadable
        raise malformed(path, _field(where, data), why)
    if not isinstance(data, dict):
        raise malformed(path, "(top level)", "a transcript is a JSON object")
    try:
        record = TranscriptFile(**_checked(data, _TRANSCRIPT))
    except _Fault as fault:
        raise malformed(path, _field(fault.where, data), fault.why) from None
    seen: set[str] = set()
    for index, step in enumerate(record.steps):
        if step.id in seen:
            raise malformed(path, f"steps[{index}: {step.id}].id", "this step appears twice")
        seen.add(step.id)
    times: dict[str, str] = {}
    for name in ("started_at", "finished_at"):
        value = getattr(record, name)
        if value is not None:
            try:
                datetime.fromisoformat(value)
            except ValueError:
                raise malformed(path, name, "not an ISO date and time") from None
            moment = moments.utc_text(value)
            if moment is None:
                raise malformed(path, name, f"{value} is not a date and time a practice can "
                                f"have: give one from {moments.EARLIEST.year} to "
                                f"{moments.LATEST.year - 1}")
            times[name] = moment  # in UTC: one with no time zone is read as UTC
    if any(times[name] != getattr(record, name) for name in times):
        record = replace(record, started_at=times.get("started_at", record.started_at),
                         finished_at=times.get("finished_at", record.finished_at))
    if record.target is not None:
        from trainer.drills.variants import target_parts

        try:
            target_parts(record.target)
        except KvdrillError as error:
            raise malformed(path, "target", str(error).removeprefix("target: ")) from None
    return record


def _hash_finding(recorded: str | None, drill_path: Path | None,
                  drill_text: str | None) -> str | None:
    """Why the recorded drill_hash is suspect, or None: it must be the hash of the drill file
    of that id as it is now (read bounded); a stored copy that matches only itself cannot be
    verified, so it is named too."""
    from trainer.drills.loader import MAX_FILE_BYTES

    current = None
    if drill_path is not None:
        try:
            current = hashlib.sha256(
                read_bounded(drill_path, MAX_FILE_BYTES, "drill file")).hexdigest()
        except KvdrillError:
            current = None
    if current is not None and recorded == current:
        return None
    copy = None if drill_text is None else \
        hashlib.sha256(drill_text.encode("utf-8", "surrogatepass")).hexdigest()
    if copy is not None and recorded == copy:
        return ("the transcript's own copy of the drill is not the drill file as it is now: "
                "the drill changed since, or the copy was edited")
    return "the recorded hash matches no copy of the drill: the drill changed, or it was edited"


def _params(givens: dict[str, Any]) -> dict[str, Any]:
    from trainer.capacity.presets import model_label

    return {k: str(v) if isinstance(v, Fraction) else model_label(v) for k, v in givens.items()}


def tampering(record: TranscriptFile, drill: Drill, drill_path: Path | None,
              givens: dict[str, Any]) -> list[dict[str, Any]]:
    """What in the file disagrees with itself or with the drill it names: one entry per
    finding, {"step": id or None, "field": ..., "says": ...}. The verdicts are checked by the
    re-mark itself (remarked_differs)."""
    found: list[dict[str, Any]] = []

    def flag(step: str | None, field: str, says: str) -> None:
        found.append({"step": step, "field": field, "says": says})

    suspect = _hash_finding(record.drill_hash, drill_path, record.drill_text)
    if suspect is not None:
        flag(None, "drill_hash", suspect)
    if record.drill_text is not None and record.drill_hash is not None and hashlib.sha256(
            record.drill_text.encode("utf-8", "surrogatepass")).hexdigest() != record.drill_hash:
        flag(None, "drill_text", "the transcript's copy of the drill is not the drill its hash "
             "names: the copy was edited")
    if record.params is not None and record.params != _params(givens):
        flag(None, "params", "the recorded givens are not the variant's givens")
    if record.status == "complete" and record.finished_at is None:
        flag(None, "status", "complete, but with no finish time")
    if record.finished_at is not None \
            and _when(record.finished_at) < _when(record.started_at):
        flag(None, "finished_at", "finished before it started")
    steps = {step.id: step for step in drill.steps}
    for row in record.steps:
        step = steps.get(row.id)
        if step is None:
            flag(row.id, "id", f"no step {row.id!r} in drill {drill.id}")
            continue
        if row.budget_seconds is not None and row.budget_seconds != step.seconds:
            flag(row.id, "budget_seconds", f"budget {row.budget_seconds}s recorded; the "
                 f"step's budget is {step.seconds}s")
        if row.seconds is not None and row.overtime is not None:
            budget = row.budget_seconds if row.budget_seconds is not None else step.seconds
            if row.overtime != (row.seconds > budget):
                flag(row.id, "overtime", f"overtime {str(row.overtime).lower()} with "
                     f"{row.seconds:g}s of {budget}s")
        if row.hints is not None:
            if record.mode == "exam" and row.hints:
                flag(row.id, "hints", f"{row.hints} hints recorded in exam mode, which gives "
                     "none")
            elif row.hints > len(step.hints):
                flag(row.id, "hints", f"{row.hints} hints recorded; the step has "
                     f"{len(step.hints)}")
        if record.strict and row.overtime and row.answer is not None:
            flag(row.id, "answer", "an answer recorded after the time ran out in --strict "
                 "mode, which closes the step")
    return found


def _when(stamp: str) -> datetime:
    """A time of a loaded transcript (checked and in UTC by load)."""
    return moments.utc(stamp) or moments.EARLIEST
