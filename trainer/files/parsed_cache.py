"""Parsed drill and rubric files kept as JSON, keyed by the SHA-256 of their text, so a command
that loads a drill (review, practice, grade) does not scan and parse the same YAML three times
on every run. An entry is written only for text that passed every screen of the loader, and
only when its data survives JSON unchanged; a missing, unreadable, foreign or damaged entry
(its data no longer matches the digest kept beside it) is a miss, and is written anew.
Nothing here is ever an error: a cache that cannot be read or written only costs speed."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from trainer.files.paths import cache_folder

FORMAT = "2"  # bump when the loader's screens or YAML reading change
MAX_ENTRY_BYTES = 4 * 1024 * 1024


def _folder() -> Path:
    return cache_folder() / "parsed"


def _entry(text: str) -> Path:
    digest = hashlib.sha256(f"{FORMAT}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()
    return _folder() / f"{digest}.json"


def lookup(text: str) -> tuple[bool, Any]:
    """(True, data) when the text's parse is kept, else (False, None)."""
    try:
        path = _entry(text)
        with path.open("rb") as file:
            raw = file.read(MAX_ENTRY_BYTES + 1)
        if len(raw) > MAX_ENTRY_BYTES:
            return False, None
        entry = json.loads(raw)
    except (OSError, ValueError, RecursionError):
        return False, None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or "data" not in entry:
        return False, None
    if entry.get("digest") != _digest(entry["data"]):
        return False, None  # damaged or edited by hand: parsed again, and kept anew
    return True, entry["data"]


def _digest(data: Any) -> str:
    try:
        canonical = json.dumps(data, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return ""
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def keep(text: str, data: Any) -> None:
    """Keep the parse of `text` if JSON gives it back unchanged (no dates, no non-string
    keys)."""
    try:
        encoded = json.dumps({"format": FORMAT, "digest": _digest(data), "data": data},
                             allow_nan=False)
        if json.loads(encoded)["data"] != data or len(encoded) > MAX_ENTRY_BYTES:
            return
        path = _entry(text)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(encoded, encoding="utf-8")
        os.replace(temporary, path)
    except (OSError, TypeError, ValueError, RecursionError):
        pass
