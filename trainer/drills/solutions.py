"""The worked solution of a drill for its givens, kept once rendered. Rendering a template runs
Jinja and the solver over every figure (most of `solution`'s and `review`'s time); the text is
a function of the template files, the drill, its givens and the code that computes figures, so
it is kept by the hash of all of them and rendered again whenever any of them changes."""

from __future__ import annotations

import hashlib

from trainer.drills.reference import AnswerKey
from trainer.files import parsed_cache
from trainer.files.paths import data_dir, package_digest


def worked_solution(key: AnswerKey) -> str:
    """The worked solution as Markdown (render.render_solution), from the cache when kept."""
    stamp = _stamp(key)
    found, kept = parsed_cache.lookup(stamp)
    if found and isinstance(kept, str):
        return kept
    from trainer.drills.render import render_solution

    text = render_solution(key)
    parsed_cache.keep(stamp, text)
    return text


def _stamp(key: AnswerKey) -> str:
    templates = hashlib.sha256()
    for path in sorted(data_dir("solutions").iterdir()):
        try:
            if path.is_file():
                templates.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
        except OSError:
            templates.update(path.name.encode() + b"\0unreadable\0")
    givens = sorted((name, repr(value)) for name, value in key.givens.items())
    return (f"worked solution\n{package_digest()}\n{templates.hexdigest()}\n"
            f"{key.drill!r}\n{givens!r}")
