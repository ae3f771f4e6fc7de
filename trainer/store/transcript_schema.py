"""The format of an exported transcript (`kvdrill export ID`), as `kvdrill review FILE` reads
it back: JSON parsed only after its nesting depth is checked on the raw text, then validated
field by field (strict types: no "5" for 5, no true for 1, no NaN or 1e308 seconds), and
checked for internal consistency with the drill it names, so that tampering beyond the verdicts
(seconds, hints, overtime, mode, status, the drill's hash, the variant's givens) is flagged.

Every refusal is one line, "malformed transcript: <field>: <why>"."""

from __future__ import annotations

import hashlib
import json
import math
import re
from datetime import datetime
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from trainer.drills.model import Drill
from trainer.errors import KvdrillError, UsageError
from trainer.files.bounded_io import read_bounded, read_text_bounded
from trainer.reading.exact import Fraction
from trainer.store import moments

MAX_TRANSCRIPT_BYTES = 2 * 1024 * 1024
MAX_JSON_DEPTH = 32
MAX_STEPS = 500
MAX_SECONDS = 7 * 24 * 3600  # a week on one step is not a drill
MAX_ANSWER_CHARS = 8000  # as grading.MAX_ANSWER_CHARS (not imported: grading is above us)

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKETS = re.compile(r"[\[\]{}]")

Seconds = Annotated[float, Field(ge=0, le=MAX_SECONDS, allow_inf_nan=False)]
Text = Annotated[str, Field(max_length=200)]


class _Strict(BaseModel):
    # Fields kvdrill itself adds on export (reference, feedback, rubric...) are re-derived on
    # review, so they are ignored here; the ones review takes from the file are typed strictly.
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class StepRecord(_Strict):
    id: Annotated[str, Field(min_length=1, max_length=64)]
    answer: Annotated[str, Field(max_length=MAX_ANSWER_CHARS)] | None = None
    verdict: Literal["correct", "wrong", "invalid", "unanswered", "answered", "revealed"] | None \
        = None
    revealed: bool = False  # answered after its reference was shown (a skip in practice)
    seconds: Seconds | None = None
    budget_seconds: Annotated[int, Field(ge=0, le=MAX_SECONDS)] | None = None
    overtime: bool | None = None
    hints: Annotated[int, Field(ge=0, le=1000)] | None = None


class TranscriptFile(_Strict):
    id: Annotated[int, Field(ge=1, le=2**63 - 1)]
    drill: Annotated[str, Field(min_length=1, max_length=200)]
    drill_hash: Annotated[str, Field(max_length=128)] | None = None
    variant: Annotated[int, Field(ge=0, le=2**63 - 1)] | None = None
    params: dict[str, int | float | str | None] | None = None
    solver_version: Text | int | None = None
    mode: Literal["practice", "exam", "grade"]
    strict: bool = False
    started_at: Text
    finished_at: Text | None = None
    status: Literal["incomplete", "complete"]
    steps: Annotated[list[StepRecord], Field(max_length=MAX_STEPS)]
    drill_text: Annotated[str, Field(max_length=256 * 1024)] | None = None
    # the model and GPU a drill was re-targeted at: checked by variants.target_parts on load
    target: dict[str, Any] | None = None


def malformed(path: Path, field: str, why: str) -> UsageError:
    return UsageError(f"{path}: malformed transcript: {field}: {why} "
                      "(export a fresh one with `kvdrill export ID`)")


def _depth_ok(text: str) -> bool:
    """Whether no array or object nests deeper than MAX_JSON_DEPTH, on the raw text (strings
    removed), so json never recurses into a 100k-deep document."""
    depth = 0
    for bracket in _BRACKETS.finditer(_STRINGS.sub('""', text)):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_JSON_DEPTH:
            return False
        if depth < 0:
            return True  # unbalanced: json.loads says where
    return True


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for key, value in pairs:
        if key in seen:
            raise ValueError(f"key {key!r} appears twice in one object")
        seen[key] = value
    return seen


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def _finite_float(text: str) -> float:
    """A JSON number with a fraction or exponent, refused when it is infinite once read (1e400
    is valid JSON and is inf in Python), as NaN and Infinity spelt out are."""
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text[:30]} is too large a number for a transcript's figure")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 30:
        raise ValueError(f"a number of {len(text):,} digits is not a transcript's figure")
    return int(text)


def _field(loc: tuple[int | str, ...], data: Any) -> str:
    parts: list[str] = []
    cursor = data
    for key in loc:
        if isinstance(key, int):
            step = cursor[key] if isinstance(cursor, list) and key < len(cursor) else None
            step_id = step.get("id") if isinstance(step, dict) else None
            parts.append(f"[{key}: {step_id}]" if isinstance(step_id, str) and len(step_id) < 65
                         else f"[{key}]")
        elif key in ("int", "float", "str", "bool", "none", "list", "dict") or "[" in key:
            continue  # pydantic's union member names
        else:
            parts.append(f".{key}" if parts else key)
        try:
            cursor = cursor[key]
        except (KeyError, IndexError, TypeError):
            cursor = None
    return "".join(parts) or "(top level)"


_KINDS = {"dict_type": "an object {...}", "int_type": "a whole number",
          "float_type": "a number", "string_type": "text in quotes", "bool_type": "true or false",
          "list_type": "a list [...]", "model_type": "an object {...}",
          "int_from_float": "a whole number", "finite_number": "a finite number"}
_BOUNDS = {"greater_than_equal": "at least", "less_than_equal": "at most",
           "greater_than": "more than", "less_than": "less than"}


def _plain(error: Any) -> str:
    """A validation error in a transcript's terms: what the field holds and what it should."""
    kind, context = error["type"], error.get("ctx") or {}
    given = error.get("input")
    shown = json.dumps(given)[:40] if isinstance(given, int | float | bool | str) or \
        given is None else type(given).__name__.replace("dict", "an object").replace(
            "list", "a list")
    if kind == "missing":
        return "required field is missing"
    if kind in _KINDS:
        return f"{shown} is not {_KINDS[kind]}"
    if kind in _BOUNDS:
        bound = next(iter(context.values()), "")
        return f"{shown} should be {_BOUNDS[kind]} {bound}"
    if kind in ("string_too_long", "too_long"):
        return "too long for a transcript's field"
    if kind in ("string_too_short", "too_short"):
        return "empty; it needs a value"
    if kind == "literal_error":
        return f"{shown} is not one of {context.get('expected', 'the allowed values')}"
    return str(error["msg"]).removeprefix("Input ").removeprefix("Value error, ")[:120]


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
    if not isinstance(data, dict):
        raise malformed(path, "(top level)", "a transcript is a JSON object")
    try:
        record = TranscriptFile.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        field = _field(tuple(first["loc"]), data)
        raise malformed(path, field, _plain(first)) from None
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
        record = record.model_copy(update=times)
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
