"""The worked solution of a drill for its givens, kept once rendered. Rendering a template runs
Jinja and the solver over every figure (most of `solution`'s and `review`'s time); the text is
a function of the template files, the drill, its givens and the code that computes figures, so
it is kept by the hash of all of them and rendered again whenever any of them changes."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainer.drills.reference import AnswerKey
from trainer.errors import KvdrillError
from trainer.files import parsed_cache
from trainer.files.bounded_io import MAX_TEMPLATE_BYTES, read_bounded
from trainer.files.paths import data_dir, package_digest


def worked_solution(key: AnswerKey) -> str:
    """The worked solution as Markdown (render.render_solution), from the cache when kept."""
    try:
        givens = sorted((name, repr(value)) for name, value in key.givens.items())
        stamp: str | None = (f"worked solution\n{package_digest()}\n{templates_digest()}\n"
                             f"{key.drill!r}\n{givens!r}")
    except (KvdrillError, OSError):
        stamp = None  # rendering says what is wrong with the templates
    if stamp is not None:
        found, kept = parsed_cache.lookup(stamp)
        if found and isinstance(kept, str):
            return kept
    from trainer.drills.render import render_solution

    text = render_solution(key)
    if stamp is not None:
        parsed_cache.keep(stamp, text)
    return text


def templates_digest() -> str:
    """SHA-256 of every solution template's name and text (read bounded, as the renderer
    reads them): what any kept worked solution depends on besides the drill and the code.
    KvdrillError or OSError when one cannot be read."""
    paths = [path for path in sorted(data_dir("solutions").iterdir()) if path.is_file()]
    # Read once per process while no template's name, size or modification time changes: a
    # key of many variants asks for it once per variant.
    stamp = tuple((str(path), (st := path.stat()).st_size, st.st_mtime_ns) for path in paths)
    kept = _TEMPLATE_DIGESTS.get(stamp)
    if kept is not None:
        return kept
    digest = hashlib.sha256()
    for path in paths:
        digest.update(path.name.encode() + b"\0")
        digest.update(read_bounded(path, MAX_TEMPLATE_BYTES, "solution template") + b"\0")
    _TEMPLATE_DIGESTS.clear()
    _TEMPLATE_DIGESTS[stamp] = digest.hexdigest()
    return _TEMPLATE_DIGESTS[stamp]


_TEMPLATE_DIGESTS: dict[tuple[tuple[str, int, int], ...], str] = {}
