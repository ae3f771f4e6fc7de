"""What `show`, `solution` and `grade` print, kept once made. Their text is a function of the
drill file, the solution templates (a worked solution), the rubric files and the answer sheet
(a grade), the presets and the code that lays them out, and of the command's own options; it is
kept by the digest of all of these (parsed_cache), so a second `show` reads a few files and
hashes them instead of building the drill's answer key. Anything that cannot be read is left to
the command itself, which then says what is wrong."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from trainer.errors import KvdrillError
from trainer.files import parsed_cache
from trainer.files.bounded_io import MAX_DRILL_FILE_BYTES, read_bounded
from trainer.files.paths import data_dir, drill_path, package_digest
from trainer.files.sha256 import sha256


def kept_output(command: str, drill_id: str, options: tuple[object, ...],
                make: Callable[[], str], *, templates: bool = False,
                inputs: tuple[Path, ...] = ()) -> str:
    """`make()`, or what it gave before for the same drill file, code and options (and the
    solution templates, with `templates`: only a worked solution reads them; and the text of
    each file of `inputs`, such as the rubrics and the answer sheet a grade reads)."""
    key = _key(command, drill_id, options, templates, inputs)
    if key is not None:
        found, kept = parsed_cache.lookup(key)
        if found and isinstance(kept, str):
            return kept
    text = make()
    if key is not None:
        parsed_cache.keep(key, text)
    return text


def rubric_paths() -> tuple[Path, ...]:
    """Every rubric file: what a grade's scores read besides the drill."""
    return tuple(sorted(data_dir("rubrics").glob("*.yaml")))


def _key(command: str, drill_id: str, options: tuple[object, ...],
         templates: bool, inputs: tuple[Path, ...]) -> str | None:
    try:
        path = drill_path(drill_id)
        if path is None:
            return None
        drill = sha256(read_bounded(path, MAX_DRILL_FILE_BYTES, "drill file"))
        for source in inputs:
            drill.update(str(source).encode("utf-8", "surrogatepass") + b"\0")
            drill.update(read_bounded(source, MAX_DRILL_FILE_BYTES, "input file") + b"\0")
        solutions = ""
        if templates:
            from trainer.drills.solutions import templates_digest

            solutions = templates_digest()
    except (KvdrillError, OSError, ValueError):
        return None
    return (f"{command} output\n{package_digest()}\n{drill.hexdigest()}\n"
            f"{solutions}\n{options!r}")
