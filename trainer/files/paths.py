"""Where things live: the drills, rubrics and solutions read, and the folder of caches derived
from them. Small functions, importing nothing heavy."""

from __future__ import annotations

import os
import re
import sys
from functools import cache
from pathlib import Path

from trainer.errors import DataNotFound


def data_dir(kind: str) -> Path:
    """The folder of drills, rubrics or solutions: $KVDRILL_DATA/<kind>, else the copy shipped
    in the wheel, else the checkout's top-level folder. When none exists, the error names
    every path tried."""
    tried: list[Path] = []
    override = os.environ.get("KVDRILL_DATA")
    if override:
        tried.append(Path(override) / kind)
    package = Path(__file__).resolve().parent.parent
    tried += [package / "_data" / kind, package.parent / kind]
    for path in tried:
        if path.is_dir():
            return path
    raise DataNotFound(
        f"no {kind} folder found; tried {', '.join(map(str, tried))}: "
        "set KVDRILL_DATA to the folder that holds drills/, rubrics/ and solutions/"
    )


def drill_paths() -> list[Path]:
    """Every drill file, in file-name order."""
    return sorted(data_dir("drills").glob("*.yaml"))


# A drill id as the drill schema allows it: what a shipped drill file may be named.
DRILL_ID = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")


def drill_path(drill_id: str) -> Path | None:
    """The file a DRILL argument names, without reading it: a path to a .yaml file that is
    there (a FIFO or folder too: the reader refuses it by name), else the shipped drill of that
    id; None when there is neither."""
    candidate = Path(drill_id)
    if candidate.suffix in (".yaml", ".yml") and _exists(candidate):
        return candidate
    path = data_dir("drills") / f"{drill_id}.yaml"
    return path if DRILL_ID.fullmatch(drill_id) and _exists(path) else None


def _exists(path: Path) -> bool:
    """Whether anything is at `path`; a name too long or otherwise unusable is not there."""
    try:
        path.stat()
    except (OSError, ValueError):
        return False
    return True


def cache_folder() -> Path:
    """Where derived caches (the drill list, parsed files) are kept: $KVDRILL_HOME, else the
    platform's user cache folder."""
    home = os.environ.get("KVDRILL_HOME")
    if home:
        return Path(home).expanduser()
    if sys.platform.startswith("linux"):
        # platformdirs' rule for Linux (the XDG cache folder), without its import: importing
        # it costs a third of `kvdrill list`, which only needs this one path.
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = Path(xdg) if xdg and Path(xdg).is_absolute() else Path.home() / ".cache"
        return base / "kvdrill"
    import platformdirs

    return platformdirs.user_cache_path("kvdrill")


@cache
def package_digest() -> str:
    """A stamp of kvdrill's version and of every source and data file of the package (their
    names, sizes and modification times; not the drills shipped in _data, which are keyed by
    their own text): what a kept derived result depends on besides its input, so an upgrade or
    any edited module makes it stale. Stats, not contents: reading the whole package would cost
    more than the results kept save."""
    from trainer import __version__
    from trainer.files.sha256 import sha256

    package = Path(__file__).resolve().parent.parent
    digest = sha256(__version__.encode())
    folders = [str(package)]
    while folders:
        with os.scandir(folders.pop()) as entries:
            for entry in sorted(entries, key=lambda e: e.name):
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in ("__pycache__", "_data"):
                        folders.append(entry.path)
                elif entry.name.endswith((".py", ".yaml", ".j2")):
                    try:
                        info = entry.stat()
                    except OSError:
                        continue
                    digest.update(f"{entry.path}\0{info.st_size}\0{info.st_mtime_ns}\0"
                                  .encode("utf-8", "surrogatepass"))
    return digest.hexdigest()
