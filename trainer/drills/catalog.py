"""The drill list (id, title, minutes, tags) for `kvdrill list`, and which drills can be
practised (for `kvdrill next`), cached by each drill file's and its rubric's size and
modification time, so neither command parses and validates every drill on every run. A
missing, stale or unreadable cache is rebuilt from the files; a cache that cannot be written is
skipped; a drill that cannot be loaded is listed as such."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from trainer.errors import KvdrillError
from trainer.files.bounded_io import MAX_DRILL_FILE_BYTES, read_bounded
from trainer.files.paths import cache_folder, drill_paths

CACHE_VERSION = 3
PUBLIC = ("id", "title", "minutes", "tags")
MAX_MINUTES = 180  # what a drill file may say (schema), and so all a kept entry may
MAX_TITLE = 300
MAX_CATALOG_BYTES = 4 * 1024 * 1024


def cache_path() -> Path:
    return cache_folder() / "catalog.json"


def _read_cache(path: Path) -> dict[str, Any]:
    try:  # a regular file only, bounded: a FIFO put there must not block `list`
        data = json.loads(read_bounded(path, MAX_CATALOG_BYTES, "drill catalogue"))
    except (OSError, ValueError, RecursionError, KvdrillError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _write_cache(path: Path, entries: dict[str, Any]) -> None:
    from trainer.files.parsed_cache import write_whole

    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # whole or not at all: no temporary file left behind on a full disk
        write_whole(path, json.dumps({"version": CACHE_VERSION, "entries": entries})
                    .encode("utf-8"))
    except OSError:
        pass  # a read-only home only costs speed


def drill_list() -> list[dict[str, Any]]:
    """Every drill's id, title, minutes and tags, in file-name order."""
    return [{k: entry[k] for k in PUBLIC} for _, entry in _entries()]


def usable_drill_ids() -> list[str]:
    """The drills that load with their rubric and give an answer key, named as their files
    are: `next` never recommends a broken drill (`kvdrill lint` says what is wrong)."""
    return [entry["id"] for path, entry in _entries()
            if entry.get("usable") and entry["id"] == path.stem]


def drill_hashes() -> dict[str, tuple[str, str]]:
    """drill id → (SHA-256 of its drill file, SHA-256 of its rubric file), for the drills that
    load: what a kept mark of an attempt of that drill depends on."""
    return {entry["id"]: (entry["sha256"], entry["rubric_sha256"])
            for path, entry in _entries()
            if entry.get("usable") and entry["id"] == path.stem and entry.get("sha256")}


def _sha256(path: Path) -> str:
    import hashlib

    try:
        return hashlib.sha256(read_bounded(path, MAX_DRILL_FILE_BYTES, "drill file")).hexdigest()
    except (OSError, KvdrillError):
        return ""


def _stamp(path: Path) -> list[int]:
    try:
        stat = path.stat()
    except OSError:
        return []
    return [stat.st_mtime_ns, stat.st_size]


def _entries() -> list[tuple[Path, dict[str, Any]]]:
    path = cache_path()
    cached = _read_cache(path)
    fresh: dict[str, Any] = {}
    result = []
    for drill_path in drill_paths():
        key = str(drill_path.resolve())
        kept = cached.get(key)
        stamp = _stamp(drill_path)
        entry: dict[str, Any] = kept if _well_formed(kept) and isinstance(kept, dict) else {}
        if not entry or entry.get("stamp") != stamp or \
                _stamp(Path(entry.get("rubric_path", ""))) != entry.get("rubric_stamp"):
            entry = _entry(drill_path, stamp)
        fresh[key] = entry
        result.append((drill_path, entry))
    if fresh != cached:
        _write_cache(path, fresh)
    return result


def _well_formed(entry: Any) -> bool:
    """Whether a cached entry has every field, each of its type: a damaged cache is derived
    data, so an entry that is not is made again from the files, never shown."""
    if not isinstance(entry, dict):
        return False
    text = ("id", "title") + (("rubric_path", "sha256", "rubric_sha256")
                              if "rubric_path" in entry else ())
    return (all(isinstance(entry.get(name), str) for name in text)
            and isinstance(entry.get("minutes"), int) and not isinstance(entry["minutes"], bool)
            and 0 <= entry["minutes"] <= MAX_MINUTES
            and entry["title"].isprintable() and len(entry["title"]) <= MAX_TITLE
            and isinstance(entry.get("usable"), bool)
            and isinstance(entry.get("tags"), list)
            and all(isinstance(tag, str) for tag in entry["tags"]))


def _entry(drill_path: Path, stamp: list[int]) -> dict[str, Any]:
    from trainer.drills.loader import load_drill_file, load_rubric
    from trainer.drills.variants import answer_key
    from trainer.errors import KvdrillError
    from trainer.files.paths import data_dir

    try:
        drill = load_drill_file(drill_path)
    except (KvdrillError, OSError, ValueError, ArithmeticError) as error:
        reason = str(error).splitlines()[0][:120] if str(error) else type(error).__name__
        return {"stamp": stamp, "id": drill_path.stem, "title": f"(cannot be loaded: {reason})",
                "minutes": 0, "tags": [], "usable": False}
    rubric_path = data_dir("rubrics") / f"{drill.rubric}.yaml"
    title = drill.title
    try:
        load_rubric(drill.rubric)
        title = answer_key(drill, None).title()
        usable = True
    except (KvdrillError, OSError, ValueError, ArithmeticError):
        usable = False
    return {"stamp": stamp, "id": drill.id, "title": title,
            "minutes": drill.target_minutes, "tags": list(drill.tags), "usable": usable,
            "rubric_path": str(rubric_path), "rubric_stamp": _stamp(rubric_path),
            "sha256": _sha256(drill_path), "rubric_sha256": _sha256(rubric_path)}
