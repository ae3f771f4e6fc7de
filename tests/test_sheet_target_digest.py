"""Issue 37: a sheet made for a model read from a config.json is graded against that config or
refused. Two folders can share a name (MyModel) and hold different configs; the sheet carries
a digest of every figure its model was read with, so the same label never hides another model."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

Run = Callable[..., Result]
CONFIG = Path(__file__).parent / "corpus" / "configs" / "Qwen3-8B" / "config.json"


def folder(root: Path, layers: int | None = None) -> Path:
    config = json.loads(CONFIG.read_text(encoding="utf-8"))
    if layers is not None:
        config["num_hidden_layers"] = layers
    made = root / "MyModel"
    made.mkdir(parents=True)
    (made / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return made


def key_sheet(run: Run, tmp_path: Path, model: Path) -> Path:
    out = tmp_path / "out"
    run("variants", "llama31-8b-h100", "--model", str(model), "--gpu", "h200", "--count", "1",
        "--seed", "3", "--out", str(out))
    return next(out.glob("*-answers.yaml"))


def test_a_sheet_is_refused_at_another_config_of_the_same_name(run: Run, tmp_path: Path) -> None:
    sheet = key_sheet(run, tmp_path, folder(tmp_path / "a"))
    other = folder(tmp_path / "b", layers=40)
    result = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--model", str(other),
                 "--gpu", "h200", ok=False)
    assert result.exit_code == 2
    assert "another model of that name" in result.stderr


def test_a_sheet_grades_at_its_own_config_however_its_path_is_written(
        run: Run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = folder(tmp_path / "a")
    sheet = key_sheet(run, tmp_path, model)
    monkeypatch.chdir(model.parent)
    run("grade", "llama31-8b-h100", "--answers", str(sheet), "--model", "./MyModel",
        "--gpu", "h200")


def test_a_digest_kvdrill_did_not_write_is_refused_as_such(run: Run, tmp_path: Path) -> None:
    model = folder(tmp_path / "a")
    sheet = key_sheet(run, tmp_path, model)
    sheet.write_text(sheet.read_text(encoding="utf-8").replace(
        "target_digest: ", "target_digest: [1, 2] #"), encoding="utf-8")
    result = run("grade", "llama31-8b-h100", "--answers", str(sheet), "--model", str(model),
                 "--gpu", "h200", ok=False)
    assert result.exit_code == 2
    assert "is not one kvdrill wrote" in result.stderr
