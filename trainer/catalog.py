"""The drill list (id, title, minutes, tags) for `kvdrill list`, cached by each file's size and
modification time, so listing does not parse and validate every drill on every run. A missing,
stale or unreadable cache is rebuilt from the files; a cache that cannot be written is skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from trainer.datadirs import drill_paths

CACHE_VERSION = 1


def cache_path() -> Path:
    home = os.environ.get("KVDRILL_HOME")
    if home:
        return Path(home).expanduser() / "catalog.json"
    import platformdirs

    return platformdirs.user_cache_path("kvdrill") / "catalog.json"


def _read_cache(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != CACHE_VERSION:
        return {}
    entries = data.get("entries")
    return entries if isinstance(entries, dict) else {}


def _write_cache(path: Path, entries: dict[str, Any]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"version": CACHE_VERSION, "entries": entries}),
                             encoding="utf-8")
        os.replace(temporary, path)
    except OSError:
        pass  # a read-only home only costs speed


def drill_list() -> list[dict[str, Any]]:
    """Every drill's id, title, minutes and tags, in file-name order."""
    path = cache_path()
    cached = _read_cache(path)
    fresh: dict[str, Any] = {}
    result = []
    for drill_path in drill_paths():
        stat = drill_path.stat()
        key = str(drill_path.resolve())
        entry = cached.get(key)
        stamp = [stat.st_mtime_ns, stat.st_size]
        if not isinstance(entry, dict) or entry.get("stamp") != stamp:
            from trainer.loader import load_drill_file

            drill = load_drill_file(drill_path)
            entry = {"stamp": stamp, "id": drill.id, "title": drill.title,
                     "minutes": drill.target_minutes, "tags": list(drill.tags)}
        fresh[key] = entry
        result.append({k: entry[k] for k in ("id", "title", "minutes", "tags")})
    if fresh != cached:
        _write_cache(path, fresh)
    return result
