"""Opening the store's SQLite file safely: its header checked before SQLite touches it, a
read-only look before anything is written, WAL switched on under contention, and every sqlite3
or OS failure turned into one StoreError line naming the file and the fix."""

from __future__ import annotations

import errno
import os
import sqlite3
import stat
import time
from contextlib import suppress
from pathlib import Path

from trainer.errors import StoreError
from trainer.store.schema import check_ours, damaged_error

BUSY_TIMEOUT_MS = 10_000


SQLITE_MAGIC = b"SQLite format 3\x00"


def one_line(text: str) -> str:
    return " ".join(text.split())


def store_error(path: Path, exc: BaseException) -> StoreError:
    """The one-line StoreError for a sqlite3 or OS failure on `path`."""
    text = one_line(str(exc))
    if isinstance(exc, OSError):
        detail = one_line(exc.strerror or text)
        if exc.filename:
            detail = f"{exc.filename}: {detail}"
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return StoreError(f"cannot write {path}: the disk is full; free some space and retry")
        return StoreError(
            f"cannot write {path} (read-only?): {detail}; make it and its folder writable, "
            "or set KVDRILL_HOME to another folder"
        )
    name = str(getattr(exc, "sqlite_errorname", ""))
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return StoreError(f"cannot write {path}: the disk is full; free some space and retry")
    if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "malformed" in text:
        return damaged_error(path, text)
    if name.startswith(("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH")):
        return StoreError(
            f"cannot write {path} (read-only?): {text}; make it and its folder writable, "
            "or set KVDRILL_HOME to another folder"
        )
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")):
        return StoreError(
            f"{path} stayed locked by another program for {BUSY_TIMEOUT_MS // 1000} s: "
            "close other kvdrill sessions and retry"
        )
    if name.startswith("SQLITE_IOERR") and _disk_full(path):
        # a full disk in WAL mode is often reported as an I/O error, not SQLITE_FULL
        return StoreError(f"cannot write {path}: the disk is full; free some space and retry")
    if name.startswith("SQLITE_IOERR"):
        return StoreError(
            f"cannot read or write {path} ({text}); check the disk, or set KVDRILL_HOME to "
            "another folder"
        )
    if isinstance(exc, sqlite3.IntegrityError):
        return StoreError(f"{path} refused a row ({text}); this is a kvdrill bug: report it")
    return StoreError(
        f"database error on {path} ({text}); if it persists, move the file away or set "
        "KVDRILL_HOME to another folder"
    )


def _disk_full(path: Path) -> bool:
    """Whether the disk holding `path` has (next to) no room left."""
    import shutil

    try:
        return shutil.disk_usage(path.parent).free < 1024 * 1024
    except (OSError, ValueError):
        return False


def read_store_error(path: Path, exc: BaseException) -> StoreError:
    """store_error for a read-only open: a permission problem is about reading, not writing."""
    error = store_error(path, exc)
    if str(error).startswith(f"cannot write {path} (read-only?)"):
        detail = one_line(str(exc))
        if isinstance(exc, OSError):
            detail = one_line(exc.strerror or detail)
        return StoreError(f"cannot read {path}: {detail}; make it readable or set "
                          "KVDRILL_HOME to another folder")
    return error


def enable_wal(conn: sqlite3.Connection) -> str:
    """Switch to WAL; return the journal mode in force. The switch needs an exclusive lock and
    SQLite does not wait for it (no busy handler), so retry while another process creating the
    same file holds it, up to the busy timeout."""
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    while True:
        try:
            return str(conn.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as exc:
            busy = str(getattr(exc, "sqlite_errorname", "")).startswith("SQLITE_BUSY")
            if not busy or time.monotonic() >= deadline:
                raise
            time.sleep(0.01)


def check_header(path: Path) -> None:
    """Refuse an existing file that is not SQLite at all, before SQLite ever touches it: first
    anything but a regular file (a FIFO would make every open wait for a writer)."""
    if not stat.S_ISREG(os.stat(path).st_mode):
        raise StoreError(f"{path} is not a regular file (a pipe, device or socket is in the "
                         "way); move it away or set KVDRILL_HOME to another folder")
    with path.open("rb") as file:
        header = file.read(100)
    if header and (len(header) < 100 or not header.startswith(SQLITE_MAGIC)):
        raise damaged_error(path, "no SQLite header")


def read_only_uri(path: Path, immutable: bool = False) -> str:
    return f"{path.resolve().as_uri()}?mode=ro" + ("&immutable=1" if immutable else "")


def inspect_read_only(path: Path) -> None:
    """Check an existing file through a read-only connection, which cannot modify it (SQLite
    may create empty -wal/-shm companions; for a refused file they are removed again)."""
    companions = [path.with_name(path.name + suffix) for suffix in ("-wal", "-shm")]
    existed = [companion.exists() for companion in companions]
    try:
        conn = sqlite3.connect(read_only_uri(path), uri=True, timeout=BUSY_TIMEOUT_MS / 1000)
    except sqlite3.Error:
        return  # the read-write open below reports it
    try:
        check_ours(path, conn)
    except StoreError:
        conn.close()
        remove_new_companions(companions, existed)
        raise
    except sqlite3.Error as exc:
        name = str(getattr(exc, "sqlite_errorname", ""))
        if name.startswith(("SQLITE_NOTADB", "SQLITE_CORRUPT")) or "malformed" in str(exc):
            conn.close()
            remove_new_companions(companions, existed)
            raise damaged_error(path, one_line(str(exc))) from exc
        # Anything else (a hot journal a read-only connection may not roll back, a locked
        # file…) is left to the read-write connection, which checks again before writing.
    finally:
        conn.close()


def remove_new_companions(companions: list[Path], existed: list[bool]) -> None:
    """Delete the -wal/-shm files our read-only look created next to a refused file, if the
    -wal is still empty (nothing can be lost)."""
    wal = companions[0]
    with suppress(OSError):
        if existed[0] or wal.stat().st_size != 0:
            return
    for companion, was_there in zip(companions, existed, strict=True):
        if not was_there:
            with suppress(OSError):
                companion.unlink()
