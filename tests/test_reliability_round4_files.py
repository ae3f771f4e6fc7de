"""Issue 37, files: `--out` onto a loop of symbolic links is refused in one line; a full disk
leaves no temporary file behind (caches, kept outputs, --out) and loses nothing already
written; a cache entry is used only for the text it was made from, so swapped or planted
entries are ignored and made again."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import Result
from one_line import one_line_error

from trainer.files import parsed_cache
from trainer.files.paths import cache_folder
from trainer.store.database import default_path

Run = Callable[..., Result]
DRILL = "llama31-8b-h100"
OTHER = "llama2-70b-mi300x"
WHOLE = "\n".join(["32", "8", "128", "2", "128 KiB", "52 GB", "396728", "96", "193", "12",
                   "44", "12", "cap context", "3", "tier it", "20", "measure"]) + "\n"




def _temporaries(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.name.endswith(".tmp"))


# ---- --out onto a loop of symbolic links ---------------------------------------------------

OUT_COMMANDS = [["progress"], ["export", "1"], ["review", "1"], ["cohort", DRILL],
                ["progress", "--format", "html"]]


@pytest.mark.parametrize("command", OUT_COMMANDS)
def test_out_onto_a_symlink_loop_is_refused_in_one_line(run: Run, tmp_path: Path,
                                                        command: list[str]) -> None:
    run("practice", DRILL, input=WHOLE)
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    one_line_error(run(*command, "--out", str(loop), ok=False), 2, str(loop),
                    "loop of symbolic links", "give --out a file name")


@pytest.mark.parametrize("command", [["progress"], ["export", "1"]])
def test_out_through_a_folder_that_loops_is_refused_in_one_line(run: Run, tmp_path: Path,
                                                               command: list[str]) -> None:
    run("practice", DRILL, input=WHOLE)
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    target = tmp_path / "a" / "report.txt"
    one_line_error(run(*command, "--out", str(target), ok=False), 2, "loop of symbolic links")


def test_out_through_a_symlink_to_a_file_still_writes(run: Run, tmp_path: Path) -> None:
    run("practice", DRILL, input=WHOLE)
    real = tmp_path / "real.json"
    link = tmp_path / "link.json"
    link.symlink_to(real)
    run("export", "1", "--out", str(link))
    assert json.loads(link.read_text(encoding="utf-8"))["id"] == 1


# ---- a full disk ----------------------------------------------------------------------------

@contextlib.contextmanager
def disk_full(keep: int | None = None) -> Iterator[None]:
    """While inside, every write of a file gets half its bytes (or `keep`) onto the disk, then
    ENOSPC: os.write, and pathlib's whole-file writes. (Its own MonkeyPatch: undoing it leaves
    the test's KVDRILL_HOME in place.)"""
    real_write, real_text, real_bytes = os.write, Path.write_text, Path.write_bytes

    def part(data: bytes) -> bytes:
        return bytes(data[: len(data) // 2 if keep is None else keep])

    def full() -> OSError:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    def write(fd: int, data: bytes) -> int:
        real_write(fd, part(data))
        raise full()

    def write_text(self: Path, data: str, *args: object, **kwargs: object) -> int:
        real_text(self, data[: len(data) // 2])
        raise full()

    def write_bytes(self: Path, data: bytes) -> int:
        real_bytes(self, part(data))
        raise full()

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(os, "write", write)
        patch.setattr(Path, "write_text", write_text)
        patch.setattr(Path, "write_bytes", write_bytes)
        yield


def test_a_cache_write_on_a_full_disk_leaves_no_temporary_file() -> None:
    with disk_full():
        parsed_cache.keep("some text", {"parsed": [1, 2, 3]})  # never an error
    assert _temporaries(cache_folder()) == []
    assert parsed_cache.lookup("some text") == (False, None)


def test_a_full_disk_keeps_the_entry_already_there() -> None:
    parsed_cache.keep("some text", {"parsed": 1})
    with disk_full(keep=3):
        parsed_cache.keep("some text", {"parsed": 2})
    assert parsed_cache.lookup("some text") == (True, {"parsed": 1})
    assert _temporaries(cache_folder()) == []


@pytest.mark.parametrize("command", [["show", DRILL], ["solution", DRILL],
                                     ["calc", "--model", "qwen3-8b", "--gpu", "h200"],
                                     ["review", "1"]])
def test_commands_on_a_full_disk_leave_no_temporary_cache_files(run: Run,
                                                                command: list[str]) -> None:
    run("practice", DRILL, input=WHOLE)
    for entry in (cache_folder() / "parsed").glob("*.json"):
        entry.unlink()  # every cache entry written again, onto the full disk
    with disk_full():
        result = run(*command, ok=False)
    assert result.exit_code == 0, result.output + result.stderr
    assert _temporaries(cache_folder() / "parsed") == []


def test_out_on_a_full_disk_fails_in_one_line_and_keeps_the_old_file(run: Run,
                                                                     tmp_path: Path) -> None:
    run("practice", DRILL, input=WHOLE)
    out = tmp_path / "report.json"
    out.write_text("what was there\n", encoding="utf-8")
    with disk_full():
        result = run("export", "1", "--out", str(out), ok=False)
    one_line_error(result, 1, f"cannot write {out}", "No space left on device")
    assert out.read_text(encoding="utf-8") == "what was there\n"
    assert _temporaries(tmp_path) == []


# ---- cache entries are for the text they were made from ------------------------------------
# Each command runs in its own process, as a user's do: in one process the presets and drills
# read once are kept in memory, and the cache on disk is not read again.

def kv(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run([sys.executable, "-c", "from trainer.app.cli import main; main()",
                             *args], input=stdin, text=True, capture_output=True, timeout=300,
                            env=dict(os.environ, NO_COLOR="1"))
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    return result


def _entries() -> list[Path]:
    return sorted((cache_folder() / "parsed").glob("*.json"))


def _rotate(paths: list[Path]) -> None:
    """Each entry's content moved under the next one's name (two: swapped)."""
    contents = [p.read_bytes() for p in paths]
    for path, content in zip(paths, contents[1:] + contents[:1], strict=True):
        path.write_bytes(content)


def _preset_entries() -> list[Path]:
    found = []
    for entry in _entries():
        data = json.loads(entry.read_text(encoding="utf-8"))["data"]
        if isinstance(data, dict) and ("llama-3.1-8b" in data or "h100" in data):
            found.append(entry)
    return found


@pytest.mark.parametrize("command", [["calc", "--model", "llama-3.1-8b", "--gpu", "h100"],
                                     ["show", DRILL], ["list"]])
def test_swapped_preset_cache_entries_are_made_again(command: list[str]) -> None:
    expected = kv(*command).stdout
    presets = _preset_entries()
    assert len(presets) == 2  # the models and the GPUs
    _rotate(presets)
    assert kv(*command).stdout == expected


def test_every_cache_entry_moved_under_another_name_changes_no_output() -> None:
    commands = [["calc", "--model", "qwen3-8b", "--gpu", "h200"], ["show", DRILL],
                ["solution", DRILL], ["show", OTHER]]
    expected = [kv(*c).stdout for c in commands]
    _rotate(_entries())
    assert [kv(*c).stdout for c in commands] == expected


def _validated(drill_id: str) -> Path:
    for entry in _entries():
        data = json.loads(entry.read_text(encoding="utf-8"))["data"]
        if isinstance(data, dict) and data.get("id") == drill_id and "steps" in data:
            return entry
    raise AssertionError(f"no kept validation of {drill_id}")


def test_swapped_validated_drill_entries_never_practise_the_other_drill() -> None:
    kv("show", DRILL)
    kv("show", OTHER)
    _rotate([_validated(DRILL), _validated(OTHER)])
    kv("practice", DRILL, stdin="32\n")
    conn = sqlite3.connect(default_path())
    stored = [row[0] for row in conn.execute("SELECT drill_id FROM attempts")]
    conn.close()
    assert stored == [DRILL]


def test_a_swapped_entry_is_ignored_then_kept_anew() -> None:
    parsed_cache.keep("text a", {"a": 1})
    parsed_cache.keep("text b", {"b": 2})
    _rotate(_entries())
    assert parsed_cache.lookup("text a") == (False, None)
    parsed_cache.keep("text a", {"a": 1})
    assert parsed_cache.lookup("text a") == (True, {"a": 1})


def test_a_planted_entry_with_nan_is_not_used() -> None:
    parsed_cache.keep("text", {"value": 1.5})
    entry = _entries()[0]
    kept = json.loads(entry.read_text(encoding="utf-8"))
    kept["data"], kept["digest"] = {"value": float("nan")}, ""  # what _digest gives NaN
    entry.write_text(json.dumps(kept), encoding="utf-8")
    assert parsed_cache.lookup("text") == (False, None)


def test_a_kept_catalog_entry_with_impossible_minutes_is_made_again(run: Run) -> None:
    from trainer.drills.catalog import cache_path

    before = run("list", "--json").output
    data = json.loads(cache_path().read_text(encoding="utf-8"))
    for entry in data["entries"].values():
        entry["minutes"] = -5
    cache_path().write_text(json.dumps(data), encoding="utf-8")
    assert run("list", "--json").output == before
