"""SHA-256, as the cache keys and session digests use it, without loading OpenSSL.

`hashlib` binds OpenSSL when imported, some 2.3 ms of CPU on this machine (a quarter of a bare
interpreter's start, paid by every command that reads a kept file); CPython's own
implementation (`_sha256`, `_sha2` from 3.12) gives the same digests of the short texts hashed
here, and `hashlib`'s is the fallback where neither is built."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Protocol


class Hash(Protocol):
    def update(self, data: bytes, /) -> None: ...
    def digest(self) -> bytes: ...
    def hexdigest(self) -> str: ...


sha256: Callable[..., Hash]
for _name in ("_sha2", "_sha256"):
    try:
        sha256 = importlib.import_module(_name).sha256
        break
    except (ImportError, AttributeError):
        continue
else:  # a Python built without its own SHA-2 module
    import hashlib

    sha256 = hashlib.sha256
