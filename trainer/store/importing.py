"""`kvdrill import FILE...`: exported transcripts (`kvdrill export ID`) into the store, for an
interviewer who compares candidates (`kvdrill cohort`).

Each file is read and checked as `kvdrill review FILE` reads it (transcripts.from_file: bounded,
validated, re-marked from the raw answers with today's solver, tampering listed). Its attempt is
stored as it was (drill text and hash, variant, mode, status, times, every answer with its
seconds, hints and budget) with today's verdicts, and the file's name as the candidate. What the
file contradicts (tampering, and recorded verdicts today's re-mark does not give) is kept with it
as flags. A file whose content (drill, variant and each step's answer, seconds and hints) is
already in the store, imported or practised here, is refused as a duplicate; nothing else is
changed. Imported attempts are other people's: they do not feed this store's schedule (`next`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from trainer.errors import KvdrillError
from trainer.printable import printable
from trainer.records import record
from trainer.store.database import Store

MAX_CANDIDATE_CHARS = 60


class DuplicateImport(KvdrillError):
    """The file's attempt is already in the store."""


@record
class Imported:
    path: Path
    attempt_id: int
    candidate: str
    flags: list[dict[str, Any]]


def visited(step: dict[str, Any]) -> bool:
    """Whether a transcript's step was ever reached: an export lists every step of the drill,
    and one never reached has no answer, no seconds and no hints (and no row in a store)."""
    return not (step.get("answer") is None and step.get("seconds") is None
                and step.get("hints") is None)


def content_sha(drill: str, variant: int | None, steps: list[dict[str, Any]],
                target: dict[str, Any] | None = None) -> str:
    """What makes two transcripts the same attempt: the drill, the variant (and the model and
    GPU it was re-targeted at) and each visited step's answer as typed, with its seconds and
    hints (a re-export or a copy gives the same, whether the attempt was finished or not)."""
    content: list[Any] = [drill, variant, [[s["id"], s.get("answer"), s.get("seconds"),
                                            s.get("hints")] for s in steps if visited(s)]]
    if target is not None:
        content.append(target)
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode("utf-8",
                                                                     "replace")).hexdigest()


def candidate_of(path: Path) -> str:
    """The candidate a file names: its name without the extension, printable and short."""
    name = " ".join(printable(path.stem, keep_lines=False).split()) or "candidate"
    return name if len(name) <= MAX_CANDIDATE_CHARS else name[: MAX_CANDIDATE_CHARS - 1] + "…"


def flags_of(transcript: dict[str, Any]) -> list[dict[str, Any]]:
    """What the file contradicts: its tampering findings, then each recorded verdict that
    today's re-mark does not give."""
    flags = [{"step": t.get("step"), "field": t.get("field"), "says": t.get("says")}
             for t in transcript.get("tampered") or []]
    for step in transcript["steps"]:
        if step.get("remarked_differs"):
            flags.append({"step": step["id"], "field": "verdict",
                          "says": f"recorded {step['recorded_verdict']}, re-marked "
                                  f"{step['verdict']} from the answer as typed"})
    return flags


def _local_duplicate(store: Store, drill: str, variant: int | None, started_at: str,
                     given: list[dict[str, Any]], sha: str) -> int | None:
    """An attempt practised in this store with the same content (an export of it imported
    back): those of the drill that started at the same moment first (one indexed query), then
    those of the drill and variant with an answer of the same seconds (an export whose start
    was moved: the seconds of each answer make two real attempts' content all but never the
    same)."""
    found = _same_content(store, store.own_attempts_started_at(drill, started_at), sha)
    timed = next((step["seconds"] for step in given if step["seconds"] is not None), None)
    if found is None and timed is not None:
        found = _same_content(store, store.own_attempts_answered_in(drill, variant, timed),
                              sha)
    return found


def _same_content(store: Store, attempts: list[Any], sha: str) -> int | None:
    if not attempts:
        return None
    answers = store.latest_answers(a.id for a in attempts)
    for attempt in attempts:
        steps = [{"id": r.step_id, "answer": r.raw, "seconds": r.seconds, "hints": r.hints}
                 for r in answers[attempt.id]]
        if content_sha(attempt.drill_id, attempt.variant, steps, attempt.target) == sha:
            return int(attempt.id)
    return None


def import_file(store: Store, path: Path) -> Imported:
    """Take one exported transcript into the store; DuplicateImport when it is there already."""
    from trainer.store import transcript_schema, transcripts

    record = transcript_schema.load(path)
    transcript = transcripts.from_file(path, record)  # read and validated once
    given = [step.as_dict() for step in record.steps]
    sha = content_sha(record.drill, record.variant, given, record.target)
    local = _local_duplicate(store, record.drill, record.variant, record.started_at, given,
                             sha)
    if local is not None:
        raise DuplicateImport(f"{path}: already in the store as attempt {local} (same drill, "
                              "variant and answers); nothing imported")
    marked = {step["id"]: step for step in transcript["steps"]}
    answers = []
    for step in filter(visited, given):
        mark = marked.get(step["id"], {})
        answers.append({**step, "verdict": mark.get("verdict") or step.get("verdict")
                        or "unanswered", "misconception": mark.get("misconception"),
                        "carried_forward": bool(mark.get("carried_forward"))})
    flags = flags_of(transcript)
    candidate = candidate_of(path)
    meta = {key: getattr(record, key) for key in transcripts.ATTEMPT_FIELDS if key != "id"}
    meta["drill"] = record.drill
    attempt_id = store.import_attempt(meta, answers, sha, candidate,
                                      f"{path.name} (attempt {record.id} there)", flags)
    if attempt_id is None:
        raise DuplicateImport(f"{path}: already in the store as attempt "
                              f"{store.imported(sha)} (same drill, variant and answers); "
                              "nothing imported")
    return Imported(path, attempt_id, candidate, flags)
