"""Issue 37, fifth round, `kvdrill explain`: --model and --gpu refused as calc refuses them, the
options bounded, a log's unreadable or conflicting figures said (never dropped in silence),
and a path that is no readable regular file is misuse (exit 2) here and in `import`."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
LOG = (Path(__file__).parent / "corpus" / "engine_logs_constructed" / "v1-llama31-8b.log")
NO_MODEL = "\n".join(line for line in LOG.read_text().splitlines()
                     if "model" not in line.split("]", 1)[-1][:40] or "loading" in line)
LLAMA_CONFIG = Path(__file__).parent / "corpus" / "configs" / "Llama-3.1-8B" / "config.json"


def _config(tmp_path: Path, **changes: Any) -> Path:
    data = json.loads(LLAMA_CONFIG.read_text())
    data.update(changes)
    path = tmp_path / "config.json"
    path.write_text(json.dumps(data))
    return path


def _notes(run: Run, text: str, *options: str) -> list[str]:
    out = json.loads(run("explain", "-", "--json", *options, input=text).output)
    notes: list[str] = out["notes"]
    return notes


# ---- F3: --model and --gpu ---------------------------------------------------------------

def test_explain_model_gives_the_config_readers_own_refusal(run: Run, tmp_path: Path) -> None:
    bad = _config(tmp_path, num_hidden_layers=10_000_000)
    calc = run("calc", "--model", str(bad), ok=False)
    result = run("explain", str(LOG), "--model", str(bad), ok=False)
    one_line_error(result, 2, "num_hidden_layers")
    assert result.stderr == calc.stderr


def test_explain_model_for_a_missing_path_says_no_such_file(run: Run, tmp_path: Path) -> None:
    missing = str(tmp_path / "nowhere" / "config.json")
    result = run("explain", "-", "--model", missing, input=NO_MODEL, ok=False)
    one_line_error(result, 2, missing, "no such file or folder")
    assert "preset '" not in result.stderr


def test_explain_model_fifo_is_refused_by_kind(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "config.json"
    os.mkfifo(fifo)
    one_line_error(run("explain", str(LOG), "--model", str(fifo), ok=False), 2, "FIFO")


def test_explain_empty_model_is_refused_as_calc_refuses_it(run: Run) -> None:
    result = run("explain", str(LOG), "--model", "", ok=False)
    one_line_error(result, 2, "--model names nothing")
    assert result.stderr == run("calc", "--model", "", ok=False).stderr


def test_explain_empty_gpu_is_refused(run: Run) -> None:
    one_line_error(run("explain", str(LOG), "--gpu", "", ok=False), 2, "--gpu names nothing")


def test_explain_model_with_bitsandbytes_weights_is_refused(run: Run, tmp_path: Path) -> None:
    bnb = _config(tmp_path, quantization_config={"quant_method": "bitsandbytes",
                                                 "load_in_4bit": True})
    result = run("explain", str(LOG), "--model", str(bnb), ok=False)
    one_line_error(result, 2, "bitsandbytes", "explain cannot size its weights")
    assert "--weights-gb" not in result.stderr


# ---- F11: the options bounded ----------------------------------------------------------

@pytest.mark.parametrize(("option", "value", "words"), [
    ("--block-size", "0", "at least 1 and at most 1,000,000"),
    ("--block-size", "99999999999", "at least 1 and at most 1,000,000"),
    ("--gpu-memory-utilization", "nan", "above 0 and at most 1"),
    ("--gpu-memory-utilization", "0", "above 0 and at most 1"),
    ("--kv-cache-dtype", "fp4", "'fp8'"),
    ("--kv-cache-dtype", "", "'auto'"),
])
def test_explain_option_out_of_range_is_refused(run: Run, option: str, value: str,
                                                words: str) -> None:
    one_line_error(run("explain", str(LOG), option, value, ok=False), 2, option, words)


# ---- F12: figures refused, and a second start-up ----------------------------------------

def test_a_negative_kv_memory_is_said_and_the_token_count_still_accounted(run: Run) -> None:
    text = LOG.read_text().replace("memory: 54.27 GiB", "memory: -55.79 GiB")
    out = json.loads(run("explain", "-", "--json", input=text).output)
    assert any(f["name"] == "kv_tokens" and f["logged"] == 444_576 for f in out["figures"])
    assert any("available KV cache memory '-55.79' refused (negative" in n
               for n in out["notes"])


def test_a_nan_concurrency_is_said_refused(run: Run) -> None:
    text = LOG.read_text().replace("13.57x", "nanx")
    assert any("maximum concurrency 'nan' refused (not a finite number)" in note
               for note in _notes(run, text))


def test_a_token_count_of_31_digits_is_said_refused(run: Run) -> None:
    text = LOG.read_text().replace("444,576 tokens", "1" + "0" * 30 + " tokens")
    assert any("token count" in note and "more than 10^15" in note
               for note in _notes(run, text))


def test_negative_weights_are_said_refused(run: Run) -> None:
    text = LOG.read_text().replace("took 14.9889 GiB", "took -14.99 GiB")
    assert any("weights' memory '-14.99' refused (negative" in note
               for note in _notes(run, text))


def test_a_log_whose_only_kv_line_is_refused_says_which(run: Run) -> None:
    text = "\n".join(line for line in LOG.read_text().splitlines()
                     if "KV cache size" not in line and "concurrency" not in line)
    text = text.replace("memory: 54.27 GiB", "memory: -1 GiB")
    result = run("explain", "-", input=text, ok=False)
    one_line_error(result, 2, "available KV cache memory '-1' refused")


def test_a_second_start_up_with_other_figures_is_said(run: Run) -> None:
    second = LOG.read_text().replace("54.27 GiB", "10.00 GiB").replace("444,576", "999,999")
    notes = _notes(run, LOG.read_text() + second)
    said = [note for note in notes if "a second start-up" in note]
    assert said and "999,999" in said[0] and "444,576" in said[0]


# ---- F18: a path that is no readable regular file is misuse ------------------------------

@pytest.mark.parametrize("kind", ["fifo", "folder", "device", "binary", "oversize"])
def test_explain_of_a_bad_log_path_exits_2(run: Run, tmp_path: Path, kind: str) -> None:
    path = tmp_path / "x.log"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "device":
        path = Path("/dev/zero")
    elif kind == "binary":
        path.write_bytes(b"\xff\xfe\x80" * 10)
    else:
        path.write_bytes(b"x" * (4 * 1024 * 1024 + 10))
    one_line_error(run("explain", str(path), ok=False), 2, str(path))


def test_import_of_a_fifo_exits_2(run: Run, tmp_path: Path) -> None:
    fifo = tmp_path / "t.json"
    os.mkfifo(fifo)
    one_line_error(run("import", str(fifo), ok=False), 2, "FIFO", "regular file")


def test_markdown_never_takes_markup_from_the_log(run: Run, tmp_path: Path) -> None:
    hostile = tmp_path / "hostile.log"
    hostile.write_text(LOG.read_text(encoding="utf-8").replace(
        "meta-llama/Llama-3.1-8B-Instruct", "<img src=x onerror=alert(1)>[a](javascript:1)/x"),
        encoding="utf-8")
    text = run("explain", str(hostile), "--model", "llama-3.1-70b", "--format", "md").output
    # only as \<img and \](…: text, never a tag or a link
    assert re.search(r"(?<!\\)<img", text) is None
    assert re.search(r"(?<!\\)\]\(javascript", text) is None
