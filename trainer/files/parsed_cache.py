"""Parsed drill and rubric files (and other derived results) kept as JSON, keyed by the SHA-256
of their text, so a command that loads a drill (review, practice, grade) does not scan and parse
the same YAML three times on every run. An entry is written only for text that passed every
screen of the loader, and only when its data survives JSON unchanged.

An entry is used only for the text it was made from: it carries that text's digest (the one in
its file name) beside the digest of its data, so an entry copied, swapped or planted under
another entry's name is for another text, and is a miss like a missing, unreadable, foreign or
damaged one (its data no longer matches the digest kept beside it; NaN or Infinity in it). A
miss is made again and written anew over it. Nothing here is ever an error: a cache that cannot
be read or written only costs speed, and a write that fails (a full disk included) leaves no
temporary file behind."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from pathlib import Path
from typing import Any

from trainer.errors import KvdrillError
from trainer.files.bounded_io import read_bounded
from trainer.files.paths import cache_folder
from trainer.files.sha256 import sha256

FORMAT = "3"  # bump when the loader's screens, YAML reading or the entry's shape change
MAX_ENTRY_BYTES = 4 * 1024 * 1024


def _folder() -> Path:
    return cache_folder() / "parsed"


def _key_digest(text: str) -> str:
    return sha256(f"{FORMAT}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _entry(text: str) -> Path:
    return _folder() / f"{_key_digest(text)}.json"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows")


def lookup(text: str) -> tuple[bool, Any]:
    """(True, data) when the text's parse is kept, else (False, None)."""
    try:
        key = _key_digest(text)
        path = _folder() / f"{key}.json"
        # a regular file only (a FIFO planted there would block the read for ever), bounded
        raw = read_bounded(path, MAX_ENTRY_BYTES, "kept entry")
        entry = json.loads(raw, parse_constant=_no_constant)
    except (OSError, ValueError, RecursionError, KvdrillError):
        return False, None
    if not isinstance(entry, dict) or entry.get("format") != FORMAT or "data" not in entry:
        return False, None
    if entry.get("key") != key:
        return False, None  # another text's entry (swapped, copied or planted): made again
    digest = _digest(entry["data"])
    if not digest or entry.get("digest") != digest:
        return False, None  # damaged or edited by hand: parsed again, and kept anew
    return True, entry["data"]


def _digest(data: Any) -> str:
    try:
        canonical = json.dumps(data, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        return ""
    return sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def keep(text: str, data: Any) -> None:
    """Keep the parse of `text` if JSON gives it back unchanged (no dates, no non-string
    keys, no NaN or Infinity)."""
    try:
        key = _key_digest(text)
        encoded = json.dumps({"format": FORMAT, "key": key, "digest": _digest(data),
                              "data": data}, allow_nan=False)
        if json.loads(encoded)["data"] != data or len(encoded) > MAX_ENTRY_BYTES:
            return
        path = _folder() / f"{key}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        write_whole(path, encoded.encode("utf-8", "surrogatepass"))
    except (OSError, TypeError, ValueError, RecursionError):
        pass


def write_whole(path: Path, data: bytes) -> None:
    """Write `data` to `path` whole: into a temporary file beside it, then renamed over it. On
    any failure (a full disk, a quota, a folder made read-only meanwhile) the temporary file is
    removed and the error raised; `path` is then as it was."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC
                     | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0), 0o644)
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
