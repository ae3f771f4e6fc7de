"""The worked solution of a drill for its givens, kept once rendered. Rendering a template runs
Jinja and the solver over every figure (most of `solution`'s and `review`'s time); the text is
a function of the template files, the drill, its givens and the code that computes figures, so
it is kept by the hash of all of them and rendered again whenever any of them changes. A key's
rows of wrong values and slips (views.keys) are kept the same way (`kept_for_key`)."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar, cast

if TYPE_CHECKING:
    from trainer.drills.reference import AnswerKey
from trainer.capacity.identity_cache import by_identity
from trainer.errors import KvdrillError
from trainer.files import parsed_cache
from trainer.files.bounded_io import MAX_TEMPLATE_BYTES, read_bounded
from trainer.files.paths import data_dir, package_digest

T = TypeVar("T")


def worked_solution(key: AnswerKey) -> str:
    """The worked solution as Markdown (render.render_solution), from the cache when kept."""
    def render() -> str:
        from trainer.drills.render import render_solution

        return render_solution(key)

    try:
        templates = templates_digest()
    except (KvdrillError, OSError):
        return render()  # rendering says what is wrong with the templates
    text: str = kept_for_key(key, "worked solution", render, str, templates)
    return text


def kept_for_key(key: AnswerKey, what: str, make: Callable[[], T], kind: type,
                 *depends: str) -> T:
    """`make()` for the key, kept by what it is made from (the code, the drill, its givens,
    and `depends`, such as the templates' digest) and made again when any of them changes;
    a kept value not of `kind` is made again too."""
    try:
        givens = sorted((name, repr(value)) for name, value in key.givens.items())
        stamp: str | None = "\n".join((what, package_digest(), *depends,
                                       by_identity(_DRILL_REPRS, key.drill,
                                                   lambda: repr(key.drill), bound=64),
                                       repr(givens)))
    except (KvdrillError, OSError):
        stamp = None
    if stamp is not None:
        found, kept = parsed_cache.lookup(stamp)
        if found and isinstance(kept, kind):
            return cast(T, kept)
    made = make()
    if stamp is not None:
        parsed_cache.keep(stamp, made)
    return made


# A drill's repr, made once per drill object (a drill is frozen once loaded): a key of many
# variants stamps every kept row and solution with it, and it runs to many kilobytes.
_DRILL_REPRS: dict[int, tuple[object, str]] = {}


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
