"""Issue 37: what the config reader says of a file it cannot use is in the user's terms, never
Python's ("use sys.set_int_max_str_digits()", "decode using utf-8-sig", "not NoneType"); a
byte-order mark, as editors on Windows write, is read past."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
CONFIG = Path(__file__).parent / "corpus" / "configs" / "Qwen3-8B" / "config.json"


def test_a_config_with_a_byte_order_mark_is_read(run: Run, tmp_path: Path) -> None:
    config = tmp_path / "config.json"
    config.write_bytes(b"\xef\xbb\xbf" + CONFIG.read_bytes())
    out = json.loads(run("calc", "--model", str(config), "--json").output)
    assert out["kv_bytes_per_token"] == 147_456  # 2 × 36 layers × 8 KV heads × 128 × 2 B


@pytest.mark.parametrize(("text", "said"), [
    ('{"num_hidden_layers": ' + "9" * 5000 + "}", "a number of thousands of digits"),
    ("null", "not null"),
    ("[1, 2]", "not a list"),
])
def test_a_config_it_cannot_use_is_refused_in_plain_words(
        run: Run, tmp_path: Path, text: str, said: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(text, encoding="utf-8")
    result = run("calc", "--model", str(config), ok=False)
    assert result.exit_code == 2
    assert said in result.stderr
    assert "sys." not in result.stderr and "NoneType" not in result.stderr
