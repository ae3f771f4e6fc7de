"""The one way a file the user names is read: a regular file only (a FIFO, a device, a
directory or a socket is refused before it is opened for reading, so nothing blocks or streams
forever), and at most `cap` bytes, counted as they are read (st_size is not trusted: /proc files
and growing files lie about it)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from trainer.errors import KvdrillError

CHUNK = 64 * 1024

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)

# A drill, rubric or answer-sheet file: far above any real one, far below trouble.
MAX_DRILL_FILE_BYTES = 256 * 1024
MAX_TEMPLATE_BYTES = 256 * 1024  # a solution template


def article(what: str) -> str:
    """ "an answer sheet", "a drill file"."""
    return f"{'an' if what[:1] in 'aeiou' else 'a'} {what}"


def _kind(mode: int) -> str:
    for test, name in _KINDS:
        if test(mode):
            return name
    return "not a regular file"


def read_bounded(path: Path, cap: int, what: str,
                 error: type[KvdrillError] = KvdrillError) -> bytes:
    """The bytes of `path`, a regular file of at most `cap` bytes; else `error` naming the file
    and `what` it was meant to be ("drill file", "answer sheet", "transcript")."""
    try:
        mode = os.stat(path).st_mode
    except OSError as problem:
        raise error(f"{path}: cannot read the {what}: {problem.strerror or problem}") from None
    except ValueError:  # a NUL byte in the path
        raise error(f"{path!r}: not a usable path for the {what}") from None
    if not stat.S_ISREG(mode):
        raise error(f"{path}: is {_kind(mode)}, not a file: give the {what} as a regular file")
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) \
        | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError as problem:
        raise error(f"{path}: cannot read the {what}: {problem.strerror or problem}") from None
    try:
        opened = os.fstat(fd)  # the file opened, not the one stat() saw (a swap between)
        if not stat.S_ISREG(opened.st_mode):
            raise error(f"{path}: is {_kind(opened.st_mode)}, not a file: give the {what} as "
                        "a regular file")
        if opened.st_size > cap:  # said before reading; a file that lies is caught below
            raise error(f"{path}: {opened.st_size:,} bytes is too large for {article(what)} "
                        f"(at most {cap:,})")
        chunks: list[bytes] = []
        size = 0
        while size <= cap:
            chunk = os.read(fd, min(CHUNK, cap + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as problem:
        raise error(f"{path}: cannot read the {what}: {problem.strerror or problem}") from None
    finally:
        os.close(fd)
    if size > cap:
        raise error(f"{path}: more than {cap:,} bytes is too large for {article(what)} "
                    f"(at most {cap:,})")
    return b"".join(chunks)


def read_text_bounded(path: Path, cap: int, what: str,
                      error: type[KvdrillError] = KvdrillError,
                      advice: str | None = None) -> str:
    """`read_bounded`, decoded as UTF-8; text that is not UTF-8 is `error` with `advice`
    (default: save the file as UTF-8)."""
    raw = read_bounded(path, cap, what, error)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as problem:
        raise error(f"{path}: not UTF-8 text (byte {problem.start}): "
                    f"{advice or f'save the {what} as UTF-8'}") from None
