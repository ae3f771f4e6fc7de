"""Stored attempts and exported files as transcripts: always re-marked from the raw answers with
the current solver, so any transcript can be re-derived, and a recorded verdict that disagrees
with today's re-mark is flagged. Also the history's trend lines.

Which drill an attempt is marked against: the drill file of its id when that file is still the
one practised (same SHA-256); else the copy of the drill's text kept with the attempt; else (an
attempt older than that copy) the changed file, with a note. An attempt whose drill can be had
none of these ways is still listed and exported, with its recorded verdicts and a note; only
re-marking it (review, --resume) is an error, and a clear one."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trainer.errors import DrillFileError, KvdrillError, UnknownName, UsageError
from trainer.files import parsed_cache
from trainer.files.bounded_io import MAX_DRILL_FILE_BYTES, read_bounded
from trainer.files.paths import data_dir, package_digest
from trainer.store.database import AttemptRow, Store

if TYPE_CHECKING:  # the drill and the marking code are imported when an attempt is re-marked
    from trainer.drills.model import Drill


ATTEMPT_FIELDS = ("id", "drill", "drill_hash", "variant", "params", "solver_version", "mode",
                  "strict", "started_at", "finished_at", "status", "drill_text", "target")
PLAIN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,99}")


class DrillUnavailable(KvdrillError):
    """An attempt's drill cannot be found or read, so the attempt cannot be re-marked."""


def attempt_meta(attempt: AttemptRow) -> dict[str, Any]:
    """A stored attempt's fields as a transcript names them."""
    return {"id": attempt.id, "drill": attempt.drill_id, "drill_hash": attempt.drill_hash,
            "variant": attempt.variant, "params": attempt.params,
            "solver_version": attempt.solver_version, "mode": attempt.mode,
            "strict": attempt.strict, "started_at": attempt.started_at,
            "finished_at": attempt.finished_at, "status": attempt.status,
            "drill_text": attempt.drill_text, "target": attempt.target}


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


_FILE_HASHES: dict[tuple[str, int, int], str] = {}
_FROM_TEXT: dict[str, Drill] = {}


def _file_hash(path: Path) -> str:
    stat = path.stat()
    stamp = (str(path.resolve()), stat.st_mtime_ns, stat.st_size)
    if stamp not in _FILE_HASHES:
        data = read_bounded(path, MAX_DRILL_FILE_BYTES, "drill file", DrillFileError)
        _FILE_HASHES[stamp] = _sha256(data)
    return _FILE_HASHES[stamp]


def _drill_from_text(drill_id: str, text: str) -> Drill:
    """A drill from its stored text, through the loader's checks for any drill file."""
    digest = _sha256(text.encode("utf-8", "surrogatepass"))
    if digest not in _FROM_TEXT:
        import tempfile

        from trainer.drills.loader import load_drill_file

        with tempfile.TemporaryDirectory(prefix="kvdrill-stored-") as folder:
            name = drill_id if PLAIN_ID.fullmatch(drill_id) else "drill"
            path = Path(folder) / f"{name}.yaml"
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
            try:
                _FROM_TEXT[digest] = load_drill_file(path)
            except DrillFileError as error:
                raise DrillFileError(str(error).replace(str(path), "the stored copy")) from None
    return _FROM_TEXT[digest]


def drill_for(meta: dict[str, Any], check_target: bool = True) -> tuple[Drill, str | None]:
    """The drill to mark an attempt (or transcript) against, and a note when it is not the
    drill file of that id exactly as practised. DrillUnavailable when there is none, or (with
    `check_target`) when the model and GPU the attempt was re-targeted at cannot carry it."""
    drill, note = _drill_for(meta)
    if check_target and meta.get("target") is not None:
        problem = target_problem(drill, meta.get("variant"), meta["target"])
        if problem is not None:
            raise DrillUnavailable(f"its stored target cannot be used: {problem}")
    return drill, note


def target_problem(drill: Drill, variant: Any, target: Any) -> str | None:
    """Why a stored re-target (untrusted: a store or a transcript) cannot carry the drill, in
    one sentence; None when it can. What the variant itself gets wrong is left to whoever
    draws it."""
    from trainer.drills import variants

    try:
        givens = dict(drill.givens) if variant is None else variants.draw(drill, variant)
    except KvdrillError:
        return None
    try:
        variants.retarget(drill, givens, target)
    except KvdrillError as error:
        return str(error)
    return None


def _drill_for(meta: dict[str, Any]) -> tuple[Drill, str | None]:
    from trainer.drills.loader import find_drill

    drill_id, want, text = meta.get("drill"), meta.get("drill_hash"), meta.get("drill_text")
    if not isinstance(drill_id, str):
        raise DrillUnavailable("the attempt names no drill")
    current: tuple[Drill, Path] | None = None
    why = "not a drill id"
    if PLAIN_ID.fullmatch(drill_id):
        try:
            current = find_drill(drill_id)
            if current[0].id != drill_id:
                why, current = f"{current[1].name} is now drill {current[0].id!r}", None
        except UnknownName:
            why = "it is not in the drills folder"
        except KvdrillError as error:
            why = str(error)
        except OSError as error:
            why = error.strerror or str(error)
    if current is not None:
        try:
            if _file_hash(current[1]) == want:
                return current[0], None
        except OSError:
            pass
    if isinstance(text, str) and (not isinstance(want, str)
                                  or _sha256(text.encode("utf-8", "surrogatepass")) == want):
        try:
            stored = _drill_from_text(drill_id, text)
        except (KvdrillError, OSError) as error:
            why = f"its stored copy cannot be read: {error}"
        else:
            if stored.id == drill_id:
                where = "is not in the drills folder" if current is None else "has changed"
                return stored, (f"drill {drill_id!r} {where}; marked against the copy kept "
                                "with the attempt")
            why = f"its stored copy is drill {stored.id!r}"
    if current is not None:
        return current[0], (f"{current[1].name} has changed since this attempt; marked "
                            "against the current file")
    raise DrillUnavailable(f"drill {drill_id!r} cannot be found ({why.rstrip('.')}): "
                           "`kvdrill list` shows the drills this install has")


def _unmarked(meta: dict[str, Any], rows: list[dict[str, Any]], note: str) -> dict[str, Any]:
    """A transcript that could not be re-marked: the answers and verdicts as recorded."""
    steps = [{"id": row["id"], "kind": None, "answer": row.get("answer"),
              "verdict": row.get("verdict"), "expected": None, "reference": None,
              "parsed": None, "shown": None, "recorded_verdict": row.get("verdict"),
              "remarked_differs": False, "misconception": None, "misconceptions": [],
              "carried_forward": False, "diagnosis": None, "seconds": row.get("seconds"),
              "budget_seconds": row.get("budget_seconds"), "overtime": row.get("overtime"),
              "hints": row.get("hints"), "feedback": None} for row in rows]
    return {**{k: meta.get(k) for k in ATTEMPT_FIELDS}, "note": note, "steps": steps,
            "rubric": None}


def _rows(store: Store, attempt_id: int) -> list[dict[str, Any]]:
    revealed = set() if store.attempt(attempt_id).mode == "exam" else \
        store.revealed_steps(attempt_id)
    return [{"id": r.step_id, "answer": r.raw, "verdict": r.verdict, "seconds": r.seconds,
             "budget_seconds": r.budget_seconds, "overtime": r.overtime, "hints": r.hints,
             "revealed": r.step_id in revealed}
            for r in store.answers(attempt_id)]


def build(meta: dict[str, Any], rows: list[dict[str, Any]],
          unmarked_ok: bool = False) -> dict[str, Any]:
    """A transcript: the attempt, every step re-marked from its raw answer, the rubric, and a
    `note` when the drill it was marked against is not the file practised. With unmarked_ok,
    an attempt that cannot be re-marked gives its recorded answers and a note instead of
    DrillUnavailable."""
    try:
        return _marked(meta, rows)
    except KvdrillError as error:
        if isinstance(error, DrillUnavailable):
            reason = str(error)
        elif isinstance(error, UsageError | DrillFileError):
            reason = f"drill {meta.get('drill')!r} cannot be used ({error})"
        else:
            raise
        if not unmarked_ok:
            raise DrillUnavailable(
                f"attempt {meta.get('id')} cannot be re-marked: {reason}") from None
        return _unmarked(meta, rows, f"not re-marked: {reason}")


def _sources(meta: dict[str, Any]) -> str | None:
    """What re-marking an attempt reads besides its answers, as digests read without parsing
    anything: the drill file its id names now, the copy kept with it, every rubric file. None
    when one of them cannot be read (it is then re-marked, and nothing is kept)."""
    text = meta.get("drill_text")
    found: dict[str, Any] = {
        "attempt": {k: meta.get(k) for k in ("drill", "drill_hash", "variant", "target")},
        "stored": _sha256(text.encode("utf-8", "surrogatepass")) if isinstance(text, str)
        else None,
    }
    try:
        drill_id = meta.get("drill")
        shipped = (data_dir("drills") / f"{drill_id}.yaml"
                   if isinstance(drill_id, str) and PLAIN_ID.fullmatch(drill_id) else None)
        found["current"] = _file_hash(shipped) if shipped is not None and shipped.exists() \
            else None
        found["rubrics"] = {path.name: _file_hash(path)
                            for path in sorted(data_dir("rubrics").glob("*.yaml"))}
    except (KvdrillError, OSError, ValueError):
        return None
    return json.dumps(found, sort_keys=True)


def _marked(meta: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The attempt re-marked (_remarked), kept by the digest of everything re-marking reads and
    of the code that marks: the same answers to the same drill by the same code are marked the
    same, so a kept result is today's re-mark, made once."""
    sources = _sources(meta)
    key = None if sources is None else (
        f"re-marked attempt\n{package_digest()}\n{sources}\n"
        f"{json.dumps({k: meta.get(k) for k in ATTEMPT_FIELDS}, sort_keys=True, default=str)}\n"
        f"{json.dumps(rows, sort_keys=True, default=str)}")
    if key is not None:
        found, kept = parsed_cache.lookup(key)
        if found and isinstance(kept, dict):
            return kept
    result = _remarked(meta, rows)
    if key is not None:
        parsed_cache.keep(key, result)
    return result


def _remarked(meta: dict[str, Any], rows: list[dict[str, Any]]) -> dict[str, Any]:
    from trainer.drills.reference import show
    from trainer.drills.variants import answer_key
    from trainer.marking.grading import (
        diagnosis_json,
        grade,
        in_step_unit,
        parsed_json,
        score_json,
    )

    drill, note = drill_for(meta)
    key = answer_key(drill, meta["variant"], meta.get("target"))
    by_step = {row["id"]: row for row in rows}
    graded = grade(drill, key, {k: v.get("answer") for k, v in by_step.items()},
                   meta["variant"], frozenset(k for k, v in by_step.items() if v.get("revealed")))
    steps = []
    for mark in graded.marks.values():
        row = by_step.get(mark.step_id, {})
        recorded = row.get("verdict")
        steps.append({
            "id": mark.step_id,
            "kind": mark.kind,
            "answer": row.get("answer"),
            "verdict": mark.verdict,
            "expected": None if mark.expected is None
            else {"value": in_step_unit(mark.expected, mark.unit), "unit": mark.unit},
            "reference": None if mark.expected is None else show(mark.expected, mark.unit),
            "parsed": parsed_json(mark),
            "shown": mark.shown,
            "recorded_verdict": recorded,
            "remarked_differs": recorded is not None and recorded != mark.verdict,
            "misconception": mark.misconception,
            "misconceptions": list(mark.misconceptions),
            "carried_forward": mark.carried_forward,
            "diagnosis": diagnosis_json(mark),
            "seconds": row.get("seconds"),
            "budget_seconds": row.get("budget_seconds"),
            "overtime": row.get("overtime"),
            "hints": row.get("hints"),
            "revealed": bool(row.get("revealed")),
            "feedback": mark.feedback,
        })
    return {**{k: meta.get(k) for k in ATTEMPT_FIELDS}, "note": note, "steps": steps,
            "rubric": score_json(graded.score)}


def transcript(store: Store, attempt_id: int, unmarked_ok: bool = False) -> dict[str, Any]:
    """A stored attempt, re-marked (see build)."""
    try:
        return build(attempt_meta(store.attempt(attempt_id)), _rows(store, attempt_id),
                     unmarked_ok)
    except DrillUnavailable as error:
        raise DrillUnavailable(f"{error}; kvdrill export {attempt_id} shows its answers as "
                               "recorded") from None


def from_file(path: Path, record: Any = None) -> dict[str, Any]:
    """An exported JSON transcript, re-marked; its own verdicts become the recorded ones. The
    file is read bounded and validated (transcript_schema); anything in it that disagrees with
    itself or with the drill (seconds and overtime, hints, budgets, the drill's hash, the
    variant's givens) is listed under "tampered", and each such step carries the fields."""
    from trainer.drills.loader import find_drill
    from trainer.drills.variants import answer_key
    from trainer.store import transcript_schema

    if record is None:  # `record`: the file as transcript_schema.load read it, when it was
        record = transcript_schema.load(path)
    meta = {k: getattr(record, k, None) for k in ATTEMPT_FIELDS}
    rows = [step.as_dict() for step in record.steps]
    if record.target is not None:  # a target the drill cannot be re-targeted at: malformed
        problem = target_problem(drill_for(meta, check_target=False)[0], record.variant,
                                 record.target)
        if problem is not None:
            raise transcript_schema.malformed(path, "target", problem.removeprefix("target: "))
    result = build(meta, rows)
    drill, _ = drill_for(meta)
    try:
        drill_path: Path | None = find_drill(record.drill)[1]
    except (KvdrillError, OSError):
        drill_path = None
    givens = answer_key(drill, record.variant, record.target).givens
    findings = transcript_schema.tampering(record, drill, drill_path, givens)
    for step in result["steps"]:
        step["tampered"] = [f["field"] for f in findings if f["step"] == step["id"]]
    result["tampered"] = findings
    return result


def solution_markdown(transcript: dict[str, Any]) -> str | None:
    """The worked solution for the drill the transcript was marked against; None when its
    solution template cannot be had (the review shows everything else). Kept, like the
    re-marked transcript, by the digest of everything it is made from."""
    from trainer.drills.solutions import templates_digest

    sources = _sources(transcript)
    try:
        templates = templates_digest()
    except (KvdrillError, OSError, ValueError):
        sources, templates = None, ""
    key = None if sources is None else (
        f"review's worked solution\n{package_digest()}\n{sources}\n"
        f"{templates}\n{transcript.get('variant')!r}\n"
        f"{json.dumps(transcript.get('target'), sort_keys=True)}")
    if key is not None:
        found, kept = parsed_cache.lookup(key)
        if found and (kept is None or isinstance(kept, str)):
            return kept
    from trainer.drills.solutions import worked_solution
    from trainer.drills.variants import answer_key

    text: str | None
    try:
        drill, _ = drill_for(transcript)
        text = worked_solution(answer_key(drill, transcript["variant"],
                                          transcript.get("target")))
    except (DrillUnavailable, DrillFileError, UsageError):
        text = None
    if key is not None:
        parsed_cache.keep(key, text)
    return text


def parse_overrides(settings: Iterable[str], store: Store,
                    attempt_id: int) -> list[tuple[str, float]]:
    """`levers=2` → ("levers", 2.0), checked against the drill's rubric."""
    from trainer.drills.loader import load_rubric

    attempt = store.attempt(attempt_id)
    try:
        rubric = load_rubric(drill_for(attempt_meta(attempt))[0].rubric)
    except (DrillUnavailable, DrillFileError, UsageError) as error:
        raise DrillUnavailable(f"attempt {attempt_id} cannot be re-marked: {error}") from None
    dimensions = {d.id: d for d in rubric.dimensions}
    parsed = []
    for setting in settings:
        name, _, value = setting.partition("=")
        dimension = dimensions.get(name.strip())
        if dimension is None:
            raise UsageError(f"--set {setting}: no dimension {name!r}: use one of "
                             f"{', '.join(dimensions)}")
        if dimension.scored_from == "numeric":
            raise UsageError(f"--set {setting}: {name} is scored from the numbers; override a "
                             "text dimension")
        try:
            score = float(value)
        except ValueError:
            raise UsageError(f"--set {setting}: the score must be a number") from None
        if not 0 <= score <= dimension.max:
            raise UsageError(f"--set {setting}: the score must be between 0 and {dimension.max}")
        parsed.append((dimension.id, score))
    return parsed
