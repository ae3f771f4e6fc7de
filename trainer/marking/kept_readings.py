"""The word stems and rubric-phrase tokens one drill's marking worked out, kept in the cache
folder so the next run marking that drill reads them instead of working them out again.

Folding and stemming the rubric's and the wrong claims' phrases (some 1,500 for a drill) was
most of what a first `grade` of a right sheet cost after its imports; a word no kept entry
holds is stemmed as before. An entry is keyed by the drill, by kvdrill's own files (their
stamp) and by the stemmer's, so an upgrade of either makes it stale; what it holds is checked
for shape and a damaged one is ignored (parsed_cache checks its digest)."""

from __future__ import annotations

import importlib.util
import itertools
import os
from typing import Any

from trainer.files import parsed_cache
from trainer.files.paths import package_digest
from trainer.marking import prose

MAX_KEPT = 20_000  # entries of either kind in one drill's entry

# The drill whose readings are in use, its key, and what its entry held when it was read.
_scope: dict[str, Any] = {}


def use(drill_id: str) -> None:
    """Read what is kept for `drill_id` into prose's memory (once per process and drill); what
    marking the drill adds to it is kept by keep_new, or when another drill is used."""
    if _scope.get("drill") == drill_id:
        return
    keep_new()
    try:
        key = f"kept readings\n{drill_id}\n{package_digest()}\n{_stemmer_stamp()}"
    except OSError:
        _scope.clear()
        return
    found, data = parsed_cache.lookup(key)
    stems, phrases = _valid(data) if found else ({}, {})
    for word, stem in stems.items():
        prose.STEMS.setdefault(word, stem)
    for phrase, tokens in phrases.items():
        prose.PHRASES.setdefault(phrase, tokens)
    _scope.update(drill=drill_id, key=key, stems=stems, phrases=phrases,
                  sizes=(len(prose.STEMS), len(prose.PHRASES)))


def keep_new() -> None:
    """Keep the drill's entry with what this process added to it, if it added anything."""
    if not _scope or _scope["sizes"] == (len(prose.STEMS), len(prose.PHRASES)):
        return
    # what the drill's entry held and what was added since (the memory keeps its order)
    stems = {**_scope["stems"], **_added(prose.STEMS, _scope["sizes"][0])}
    phrases = {**_scope["phrases"], **_added(prose.PHRASES, _scope["sizes"][1])}
    if len(stems) <= MAX_KEPT and len(phrases) <= MAX_KEPT:
        parsed_cache.keep(_scope["key"], {"stems": stems,
                                          "phrases": {p: list(t) for p, t in phrases.items()}})
    _scope["sizes"] = (len(prose.STEMS), len(prose.PHRASES))


def _added(memory: dict[str, Any], size: int) -> dict[str, Any]:
    if len(memory) < size:  # started again since (MAX_REMEMBERED): all of it is new
        return memory
    # (from the end: the memory holds thousands, a marking adds a few)
    return dict(reversed(list(itertools.islice(reversed(memory.items()), len(memory) - size))))


def _valid(data: Any) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
    """The entry's stems and phrase tokens, or nothing when its shape is not theirs."""
    if not isinstance(data, dict):
        return {}, {}
    stems, phrases = data.get("stems"), data.get("phrases")
    if not (isinstance(stems, dict) and isinstance(phrases, dict)
            and all(isinstance(v, str) for v in stems.values())
            and all(isinstance(v, list) and all(isinstance(t, str) for t in v)
                    for v in phrases.values())):
        return {}, {}
    return stems, {phrase: tuple(tokens) for phrase, tokens in phrases.items()}


def _stemmer_stamp() -> str:
    """Where the stemmer's English rules are and their size and time: another version of
    snowballstemmer may stem a word otherwise."""
    spec = importlib.util.find_spec("snowballstemmer")
    if spec is None or spec.origin is None:
        return "no stemmer"
    rules = os.path.join(os.path.dirname(spec.origin), "english_stemmer.py")
    info = os.stat(rules)
    return f"{rules}\0{info.st_size}\0{info.st_mtime_ns}"
