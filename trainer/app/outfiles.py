"""Writing a command's output to a file: never over a database (the store, or any SQLite file),
never half-written (a temporary file beside it, then a rename), and every failure named with
the path."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterable
from pathlib import Path

from trainer.errors import KvdrillError, UsageError

SQLITE_HEADER = b"SQLite format 3\x00"


class OutputError(KvdrillError):
    """An output file could not be written (full disk, no permission, a missing folder)."""


def is_sqlite(path: Path) -> bool:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # a FIFO would block the read; it is no database either way
        with path.open("rb") as handle:
            return handle.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except (OSError, ValueError):
        return False


_COMPANIONS = ("-wal", "-shm", "-journal")


def _database_files(path: Path) -> list[Path]:
    """A database and the files SQLite keeps beside it (its write-ahead log holds answers not
    yet checkpointed into the main file)."""
    return [path, *(path.with_name(path.name + suffix) for suffix in _COMPANIONS)]


def _is_database_file(target: Path) -> bool:
    if target.is_file() and is_sqlite(target):
        return True
    for suffix in _COMPANIONS:
        if target.name.endswith(suffix):
            main = target.with_name(target.name[: -len(suffix)])
            if main.is_file() and is_sqlite(main):
                return True
    return False


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):  # a loop: nothing can be written there through it
        return path


def _loop_error(target: Path) -> UsageError:
    return UsageError(f"{target}: a loop of symbolic links (too many levels), not a file: give "
                      "--out a file name ('-' for standard output)")


def _refuse_a_symlink_loop(target: Path) -> None:
    """A path that goes round symbolic links (the file, or a folder on the way to it) names no
    file to write: refused in one line, as a folder or a pipe is."""
    try:
        os.stat(target)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _loop_error(target) from None
    except ValueError:  # a NUL byte: said below by the write itself
        return
    try:
        target.resolve()
    except RuntimeError:  # Python 3.11's resolve() says a loop so, even in a missing tail
        raise _loop_error(target) from None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise _loop_error(target) from None


def write_output(target: Path, text: str, protected: Iterable[Path] = ()) -> None:
    """Write `text` to `target`. A regular file is replaced atomically; a character device
    (/dev/null, /dev/stdout on a terminal) is written in place. Refused: a folder, a FIFO or
    socket (a write would wait for a reader), a protected database or any SQLite file, with
    the files SQLite keeps beside them."""
    _refuse_a_symlink_loop(target)
    if target.is_dir():
        raise UsageError(f"{target} is a folder: give --out a file name")
    if target.exists() and (stat.S_ISFIFO(target.stat().st_mode)
                            or stat.S_ISSOCK(target.stat().st_mode)):
        raise UsageError(f"{target} is a pipe or socket, not a file: give --out a file name "
                         "('-' for standard output)")
    try:
        resolved = target.resolve()
    except (OSError, RuntimeError):  # a loop made meanwhile (RuntimeError before Python 3.13)
        raise _loop_error(target) from None
    guarded = [_resolved(f) for p in protected for f in _database_files(p)]
    if resolved in guarded or _is_database_file(target):
        raise UsageError(f"{target} is a SQLite database or one of its files (your attempts "
                         "may live in it): give --out another file")
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
