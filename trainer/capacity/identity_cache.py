"""Values kept per object and found by identity: a deployment asked for again (a key's steps, a
wrong path's kept deployment, a variant's re-built key) is found without hashing it field by
field, which costs more than most look-ups. The object is kept beside its value, so an id
reused by a new object after the old one is gone never finds the old value."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

V = TypeVar("V")


def by_identity(table: dict[int, tuple[Any, V]], key: object, make: Callable[[], V],
         bound: int | None = None) -> V:
    """`table`'s value for `key` (this very object), made by `make` when it has none; a
    table of `bound` objects is emptied before it takes another."""
    entry = table.get(id(key))
    if entry is None or entry[0] is not key:
        if bound is not None and len(table) >= bound:
            table.clear()
        entry = table[id(key)] = (key, make())
    return entry[1]
