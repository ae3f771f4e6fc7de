"""Regular expressions compiled on first use rather than when their module is imported.

The answer reader and the text scorer hold about a hundred patterns; Python compiles each in
Python code (the spoken-number one alone takes several milliseconds), and a command that reads
a sheet of plain numbers uses a third of them. `lazy(source, flags)` stands in for
`re.compile(source, flags)` at module level: the pattern is compiled the first time one of its
methods or attributes is used, then kept."""

from __future__ import annotations

import re
from typing import Any, cast


class _LazyPattern:
    __slots__ = ("_compiled", "_flags", "_source")

    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def _pattern(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        return self._compiled

    @property
    def pattern(self) -> str:
        return self._source

    def __getattr__(self, name: str) -> Any:  # flags, groups, groupindex
        return getattr(self._pattern(), name)

    def __repr__(self) -> str:
        return f"lazy({self._source!r})"


def _delegate(name: str) -> Any:
    def method(self: _LazyPattern, *args: Any, **kwargs: Any) -> Any:
        return getattr(self._pattern(), name)(*args, **kwargs)

    method.__name__ = name
    return method


# the methods the code calls, without __getattr__'s failed lookup first
for _name in ("match", "fullmatch", "search", "sub", "subn", "split", "finditer", "findall"):
    setattr(_LazyPattern, _name, _delegate(_name))


def lazy(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled when first used."""
    return cast("re.Pattern[str]", _LazyPattern(source, int(flags)))
