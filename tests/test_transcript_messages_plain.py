"""Issue 37, leftovers of the fifth round: a malformed transcript, sheet or stored model is
refused in the file's own terms — what the field holds and what it should — never in the
schema library's words ("Input should be a valid dictionary")."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
BASE = {"id": 1, "drill": "littles-law-capacity", "mode": "practice",
        "started_at": "2026-12-01T10:00:00+00:00", "status": "complete",
        "steps": [{"id": "a", "answer": "5"}]}


@pytest.mark.parametrize(("field", "value", "said"), [
    ("target", 5, "target: 5 is not an object"),
    ("mode", "quiz", "mode: \"quiz\" is not one of 'practice', 'exam' or 'grade'"),
    ("id", 0, "id: 0 should be at least 1"),
    ("strict", "yes", "strict: \"yes\" is not true or false"),
    ("variant", True, "variant: true is not a whole number"),
    ("solver_version", 1.5, "solver_version: 1.5 is not text or a whole number"),
    ("params", {"context": [1]}, "params.context: a list is not a number or text"),
    ("steps", [{"id": "a", "seconds": -1}], "steps[0: a].seconds: -1 should be at least 0"),
])
def test_a_malformed_field_is_named_with_what_it_holds(run: Run, tmp_path: Path, field: str,
                                                       value: Any, said: str) -> None:
    path = tmp_path / "t.json"
    path.write_text(json.dumps({**BASE, field: value}))
    result = run("review", str(path), ok=False)
    one_line_error(result, 2, said)
    assert "Input should" not in result.stderr


def test_a_stored_models_negative_count_is_out_of_range_not_unwhole(run: Run,
                                                                    tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    target = {"model": {"config": {"layers": 32, "head_dim": -128}}, "gpu": "h100"}
    path.write_text(json.dumps({**BASE, "target": target}))
    one_line_error(run("review", str(path), ok=False), 2,
                   "head_dim: -128 is outside what a model can have")


def test_a_sheets_variant_of_true_is_said_as_written(run: Run, tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.yaml"
    sheet.write_text("variant: true\n")
    one_line_error(run("grade", "littles-law-capacity", "--answers", str(sheet), ok=False), 2,
                   "variant: true is not a variant number")


def test_importing_transcripts_does_not_load_pydantic(run: Run, tmp_path: Path) -> None:
    # The file's fields are checked by hand: pydantic's import cost more than the rest of an
    # import of three transcripts.
    from probes import imported_after

    first, second = tmp_path / "first.json", tmp_path / "second.json"
    first.write_text(json.dumps(BASE))
    second.write_text(json.dumps({**BASE, "started_at": "2026-12-01T11:00:00+00:00"}))
    home = tmp_path / "home"
    imported_after(["import", str(first)], home, ())  # the drill and rubric validated and kept
    assert imported_after(["import", str(second)], home, ("pydantic",)) == []
