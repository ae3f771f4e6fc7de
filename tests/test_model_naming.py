"""Every input that names a model resolves one way, said aloud: a bare name is a preset (a file
of that name in the working folder does not shadow it), owner/name is a folder or a Hugging Face
id, anything path-like that does not exist is refused by name, a blank is refused."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import Result

CONFIGS = Path(__file__).parent / "corpus" / "configs"
Run = Callable[..., Result]


@pytest.fixture
def in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_a_file_named_like_a_preset_does_not_shadow_it(run: Run, in_tmp: Path) -> None:
    (in_tmp / "qwen3-8b").write_text('{"num_hidden_layers": 99}')
    out = json.loads(run("calc", "--model", "qwen3-8b", "--json").output)
    assert out["assumptions"]["layers"]["value"] == 36


def test_dot_slash_reads_the_file_of_a_presets_name(run: Run, in_tmp: Path) -> None:
    (in_tmp / "qwen3-8b").write_text('{"num_hidden_layers": 99}')
    result = run("calc", "--model", "./qwen3-8b", ok=False)
    assert result.exit_code == 2
    assert "./qwen3-8b: no hidden_size" in result.stderr


def test_a_bare_folder_name_that_is_no_preset_is_read(run: Run, in_tmp: Path) -> None:
    folder = in_tmp / "my-model"
    folder.mkdir()
    (folder / "config.json").write_text((CONFIGS / "Llama-3.1-8B" / "config.json").read_text())
    out = json.loads(run("calc", "--model", "my-model", "--json").output)
    assert out["kv_bytes_per_token"] == 131_072


def test_a_missing_home_folder_is_refused_not_taken_for_a_preset(run: Run, in_tmp: Path) -> None:
    result = run("calc", "--model", "~/no-such-models/Qwen3-32B", ok=False)
    assert result.exit_code == 2
    assert "no such file or folder" in result.stderr
    assert "preset is named without a path" in result.stderr


@pytest.mark.parametrize("path", ["models/Qwen3-32B", "checkpoints/llama-3.1-8b"])
def test_a_missing_relative_folder_is_refused_not_taken_for_a_preset(
        run: Run, in_tmp: Path, path: str) -> None:
    result = run("calc", "--model", path, ok=False)
    assert result.exit_code == 2
    assert f"{path}: no such file or folder" in result.stderr


def test_a_hub_id_of_a_preset_still_names_it(run: Run, in_tmp: Path) -> None:
    out = json.loads(run("calc", "--model", "Qwen/Qwen3-32B", "--json").output)
    assert out["model"] == "qwen3-32b"


@pytest.mark.skipif(os.geteuid() == 0, reason="root enters every folder")
def test_a_folder_that_cannot_be_entered_says_so(run: Run, in_tmp: Path) -> None:
    folder = in_tmp / "locked"
    folder.mkdir()
    folder.chmod(0)
    try:
        result = run("calc", "--model", "./locked", ok=False)
    finally:
        folder.chmod(0o700)
    assert result.exit_code == 2
    assert "cannot enter" in result.stderr


@pytest.mark.parametrize("command", [["calc"], ["show", "llama31-8b-h100"],
                                     ["solution", "llama31-8b-h100"]])
def test_an_empty_model_is_refused(run: Run, command: list[str]) -> None:
    result = run(*command, "--model", "", ok=False)
    assert result.exit_code == 2
    assert "--model names nothing" in result.stderr


def test_an_empty_gpu_is_refused(run: Run) -> None:
    result = run("show", "llama31-8b-h100", "--gpu", "", ok=False)
    assert result.exit_code == 2
    assert "--gpu names nothing" in result.stderr
