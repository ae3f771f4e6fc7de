"""The SHA-256 the kept files are keyed by: hashlib's digests, without loading OpenSSL."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from probes import imported_after

from trainer.files.sha256 import sha256


@pytest.mark.parametrize("data", [b"", b"abc", "héllo ✓".encode(), bytes(range(256)) * 4099])
def test_the_digest_is_hashlibs(data: bytes) -> None:
    assert sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()


def test_a_digest_fed_in_parts_is_the_whole_texts() -> None:
    fed = sha256(b"kv")
    fed.update(b"drill")
    assert fed.digest() == hashlib.sha256(b"kvdrill").digest()


@pytest.mark.parametrize("args", [["show", "llama31-8b-h100"], ["list"]])
def test_a_second_run_loads_no_openssl_hash(args: list[str], tmp_path: Path) -> None:
    imported_after(args, tmp_path, ())
    assert imported_after(args, tmp_path, ("hashlib", "_hashlib")) == []
