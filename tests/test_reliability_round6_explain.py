"""Issue 37, sixth round, `kvdrill explain`: a log of two engines' start-ups is refused naming
both, a malformed number is refused by name (never read as its prefix), --json keeps standard
output JSON, a card smaller than the log's prints no negative memory, and a disagreement names
the setting the numbers point at."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
LOGS = Path(__file__).parent / "corpus" / "engine_logs"
VLLM = (LOGS / "vllm-v1_llama31-8b_v0171.log").read_text()
SGLANG = (LOGS / "sglang_qwen3-8b_tp1.log").read_text()
# The vLLM log's lines that size its cache, with no engine config line (no TP stated).
VLLM_BARE = "\n".join(line for line in VLLM.splitlines() if re.search(
    "non-default args|Available KV|GPU KV cache size|Maximum concurrency|Model loading", line))


def _explain(run: Run, text: str, *options: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(run("explain", "-", "--json", *options, input=text).output)
    return out


def _figure(out: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(f for f in out["figures"] if f["name"] == name)
    return found


def _said(out: dict[str, Any], *needles: str) -> str:
    notes = [note for note in out["notes"] if all(needle in note for needle in needles)]
    assert len(notes) == 1, out["notes"]
    return notes[0]


# ---- G4: two engines' start-ups in one log ---------------------------------------------

def test_explain_sglang_then_vllm_is_refused_naming_both_engines_and_lines(run: Run) -> None:
    result = run("explain", "-", "--gpu", "h100", input=SGLANG + VLLM, ok=False)
    one_line_error(result, 2, "two engines", "SGLang's (from line 2)", "vLLM's (from line 9)",
                   "explain each engine's lines on their own")
    assert "does not name its model" not in result.stderr


def test_explain_vllm_then_sglang_is_refused_even_with_a_model(run: Run) -> None:
    result = run("explain", "-", "--model", "qwen3-8b", input=VLLM + SGLANG, ok=False)
    one_line_error(result, 2, "vLLM's (from line 1)", "SGLang's (from line 13)")


# ---- G6: a malformed number refused by name, never read as its prefix -------------------

def test_explain_block_size_written_as_a_power_is_refused_not_read_as_10(run: Run) -> None:
    log = VLLM.replace("'max_model_len': 32768}", "'max_model_len': 32768, 'block_size': 10**100}")
    out = _explain(run, log)
    assert out["settings"]["block_size"] == 16
    _said(out, "block_size: the log's '10**100' is no setting", "ignored")


def test_explain_block_size_with_an_underscore_is_refused_not_read_as_3(run: Run) -> None:
    log = VLLM.replace("'max_model_len': 32768}", "'max_model_len': 32768, 'block_size': 3_2}")
    out = _explain(run, log)
    assert out["settings"]["block_size"] == 16
    _said(out, "block_size: the log's '3_2' is no setting")


def test_explain_tensor_parallel_in_exponent_form_is_refused_by_name(run: Run) -> None:
    out = _explain(run, VLLM.replace("tensor_parallel_size=1,", "tensor_parallel_size=1e2,"))
    assert out["settings"]["from"]["tensor_parallel_size"] == "default"
    _said(out, "tensor_parallel_size: the log's '1e2' is no setting")


def test_explain_tensor_parallel_with_an_underscore_is_not_read_as_32(run: Run) -> None:
    out = _explain(run, VLLM.replace("tensor_parallel_size=1,", "tensor_parallel_size=3_2,"))
    assert out["settings"]["tensor_parallel_size"] == 1
    _said(out, "tensor_parallel_size: the log's '3_2' is no setting")


def test_explain_a_nan_utilisation_in_the_arguments_is_refused_by_name(run: Run) -> None:
    log = VLLM.replace("'max_model_len': 32768}",
                       "'max_model_len': 32768, 'gpu_memory_utilization': nan}")
    out = _explain(run, log)
    assert out["settings"]["gpu_memory_utilization"] is None
    _said(out, "gpu_memory_utilization: the log's 'nan' is no setting")


def test_explain_a_400_digit_token_count_is_refused_by_name(run: Run) -> None:
    out = _explain(run, VLLM.replace("457,024 tokens", "9" * 400 + " tokens"))
    assert _figure(out, "kv_tokens")["logged"] is None
    _said(out, "line 8: the KV cache's token count", "more than 10^15")


def test_explain_a_400_digit_concurrency_is_refused_by_name(run: Run) -> None:
    out = _explain(run, VLLM.replace("13.95x", "9" * 400 + "x"))
    assert _figure(out, "max_concurrency")["logged"] is None
    _said(out, "line 9: the maximum concurrency", "refused")


def test_explain_a_memory_written_with_a_decimal_comma_is_refused(run: Run) -> None:
    out = _explain(run, VLLM.replace("55.79 GiB", "55,79 GiB"))
    assert _figure(out, "kv_cache_memory")["logged"] is None
    _said(out, "the available KV cache memory '55,79' refused")


def test_explain_sglang_token_count_1e309_is_refused_not_read_as_1(run: Run) -> None:
    log = SGLANG.replace("#tokens: 404890", "#tokens: 1e309")
    out = _explain(run, log, "--model", "qwen3-8b")
    assert _figure(out, "kv_tokens")["logged"] == 404_890  # max_total_num_tokens, line 8
    _said(out, "line 2: SGLang's KV token count '1e309' refused", "not a finite number")


def test_explain_sglang_kv_size_nan_is_refused_by_name(run: Run) -> None:
    out = _explain(run, SGLANG.replace("K size: 27.80 GB", "K size: nan GB"), "--model",
                   "qwen3-8b")
    assert "refused" in _figure(out, "kv_tokens")["how"]
    _said(out, "line 2: SGLang's K and V sizes 'nan' refused")


def test_explain_negative_sglang_kv_size_is_refused_by_name(run: Run) -> None:
    out = _explain(run, SGLANG.replace("K size: 27.80 GB", "K size: -27.80 GB"), "--model",
                   "qwen3-8b")
    _said(out, "SGLang's K and V sizes '-27.80' refused", "negative")


# ---- G14: --json keeps standard output JSON ---------------------------------------------

def test_explain_json_with_practice_is_refused_before_any_output(run: Run) -> None:
    result = run("explain", str(LOGS / "vllm-v1_llama31-8b_v0171.log"), "--gpu", "h100",
                 "--practice", "--json", input="128 KiB\n", ok=False)
    one_line_error(result, 2, "--practice starts a practice session", "drop --json")
    assert result.stdout == ""


# ---- G15: a card smaller than the log's ---------------------------------------------------

def test_explain_gpu_smaller_than_the_log_prints_no_negative_overhead(run: Run) -> None:
    out = _explain(run, VLLM, "--gpu", "l4")
    row = _figure(out, "activation_and_overhead")
    assert row["expected"] is None and "-" not in row["how"].replace(" − ", "")
    _said(out, "NVIDIA L4 cannot be this log's card", "70.78 GiB", "h100")
    text = run("explain", "-", "--gpu", "l4", input=VLLM).output
    assert not re.search(r"(?<![\w.])-\d", text), text  # Llama-3.1 is a name, not a figure


def test_explain_utilisation_too_low_for_the_log_is_said_not_negative(run: Run) -> None:
    out = _explain(run, VLLM, "--gpu", "h100", "--gpu-memory-utilization", "0.85")
    assert _figure(out, "activation_and_overhead")["expected"] is None
    _said(out, "at utilisation 0.85 gives 67.70 GiB", "at least 0.89")


# ---- G18: the disagreement explained by the numbers ----------------------------------------

def test_explain_half_the_tokens_at_tp2_names_tp_not_bf16(run: Run) -> None:
    out = _explain(run, VLLM_BARE, "--gpu", "h100", "-tp", "2")
    note = _said(out, "0.50× the expected")
    assert "TP 1 rather than 2" in note and "weights per GPU say the same" in note
    assert "bf16" not in note


def test_explain_never_names_the_kv_dtype_already_assumed(run: Run) -> None:
    # twice the tokens with fp8 KV stated: fp8 is no explanation, and the weights rule out TP 2
    log = VLLM.replace("kv_cache_dtype=auto", "kv_cache_dtype=fp8").replace(
        "457,024 tokens", "1,828,096 tokens")
    note = _said(_explain(run, log), "the logged tokens are")
    assert "fp8" not in note and "TP" not in note and "no single setting" in note
