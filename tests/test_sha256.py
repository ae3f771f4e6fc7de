"""The SHA-256 the kept files are keyed by: hashlib's digests, without loading OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys
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


def test_without_cpythons_own_module_it_falls_back_to_hashlib() -> None:
    code = ("import sys\n"
            "sys.modules['_sha2'] = None\n"
            "sys.modules['_sha256'] = None\n"
            "import hashlib\n"
            "from trainer.files.sha256 import sha256\n"
            "assert sha256(b'kv').hexdigest() == hashlib.sha256(b'kv').hexdigest()\n"
            "print(sha256 is hashlib.sha256)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=False)
    assert done.stdout.strip() == "True", done.stderr
