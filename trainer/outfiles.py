"""Writing a command's output to a file: never over a database (the store, or any SQLite file),
never half-written (a temporary file beside it, then a rename), and every failure named with
the path."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterable
from pathlib import Path

from trainer.errors import KvdrillError, UsageError

SQLITE_HEADER = b"SQLite format 3\x00"


class OutputError(KvdrillError):
    """An output file could not be written (full disk, no permission, a missing folder)."""


def is_sqlite(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False


def write_output(target: Path, text: str, protected: Iterable[Path] = ()) -> None:
    """Write `text` to `target`. A regular file is replaced atomically; a device (/dev/null,
    /dev/stdout) is written in place. Refused: a folder, a protected path, any SQLite file."""
    if target.is_dir():
        raise UsageError(f"{target} is a folder: give --out a file name")
    resolved = target.resolve()
    if any(resolved == p.resolve() for p in protected) or (target.is_file() and is_sqlite(target)):
        raise UsageError(f"{target} is a SQLite database (your attempts may live in it): "
                         "give --out another file")
    data = text.encode("utf-8")
    try:
        if target.exists() and not target.is_file():
            with target.open("wb") as handle:  # a device or a pipe: no rename over it
                handle.write(data)
            return
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        try:
            temporary.write_bytes(data)
            os.replace(temporary, target)
        finally:
            with contextlib.suppress(OSError):
                temporary.unlink()
    except OSError as error:
        raise OutputError(f"cannot write {target}: {error.strerror or error}") from None
