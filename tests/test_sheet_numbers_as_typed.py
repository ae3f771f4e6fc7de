"""An answer sheet is marked on what was typed: YAML 1.1 would read `040` as 32 (octal), `0x60`
as 96 and `1:0:8` as 3608, and a candidate who wrote 040 layers did not write 32."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]


def marks(run: Run, tmp_path: Path, answers: str) -> dict[str, dict]:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("drill: llama31-8b-h100\n" + answers, encoding="utf-8")
    out = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--json", ok=False).output
    return {m["id"]: m for m in json.loads(out)["steps"]}


@pytest.mark.parametrize(("typed", "step"), [("040", "shape-layers"), ("010", "shape-kv-heads"),
                                             ("0x60", "sessions")])
def test_a_number_yaml_would_read_otherwise_is_not_marked_right(
        run: Run, tmp_path: Path, typed: str, step: str) -> None:
    mark = marks(run, tmp_path, f"{step}: {typed}\n")[step]
    assert mark["answer"] == typed
    assert mark["verdict"] != "correct"


def test_a_plain_number_is_still_read_as_typed(run: Run, tmp_path: Path) -> None:
    assert marks(run, tmp_path, "shape-layers: 32\n")["shape-layers"]["verdict"] == "correct"
