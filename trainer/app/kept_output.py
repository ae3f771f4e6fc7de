"""What `show` and `solution` print, kept once made. Their text is a function of the drill file,
the solution templates, the presets and the code that lays them out, and of the command's own
options; it is kept by the digest of all of these (parsed_cache), so a second `show` reads a
few files and hashes them instead of building the drill's answer key. Anything that cannot be
read is left to the command itself, which then says what is wrong."""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from trainer.errors import KvdrillError
from trainer.files import parsed_cache
from trainer.files.bounded_io import MAX_DRILL_FILE_BYTES, read_bounded
from trainer.files.paths import data_dir, drill_path, package_digest


def kept_output(command: str, drill_id: str, options: tuple[object, ...],
                make: Callable[[], str]) -> str:
    """`make()`, or what it gave before for the same drill file, templates, code and options."""
    key = _key(command, drill_id, options)
    if key is not None:
        found, kept = parsed_cache.lookup(key)
        if found and isinstance(kept, str):
            return kept
    text = make()
    if key is not None:
        parsed_cache.keep(key, text)
    return text


def _key(command: str, drill_id: str, options: tuple[object, ...]) -> str | None:
    try:
        path = drill_path(drill_id)
        if path is None:
            return None
        drill = hashlib.sha256(read_bounded(path, MAX_DRILL_FILE_BYTES, "drill file"))
        templates = hashlib.sha256()
        for template in sorted(data_dir("solutions").iterdir()):
            if template.is_file():
                templates.update(template.name.encode() + b"\0")
                templates.update(read_bounded(template, 4 * MAX_DRILL_FILE_BYTES,
                                              "solution template") + b"\0")
    except (KvdrillError, OSError, ValueError):
        return None
    return (f"{command} output\n{package_digest()}\n{drill.hexdigest()}\n"
            f"{templates.hexdigest()}\n{options!r}")
