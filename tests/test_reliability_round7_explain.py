"""Issue 37, seventh round, `kvdrill explain`: a malformed figure (a fractional count, a unit
kvdrill does not read, a comma in the concurrency) is refused by name; a log of a vLLM V0 and a
vLLM V1 start-up is refused naming both; --practice keeps a document format's standard output
the document; an empty LOG says what LOG takes."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
LOGS = Path(__file__).parent / "corpus" / "engine_logs"
VLLM = (LOGS / "vllm-v1_llama31-8b_v0171.log").read_text()
VLLM_V0 = (LOGS / "vllm-v0_llama31-8b_rtx3090_len20k.log").read_text()


def _explain(run: Run, text: str, *options: str) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(run("explain", "-", "--json", *options, input=text).output)
    return out


def _said(out: dict[str, Any], *needles: str) -> str:
    notes = [note for note in out["notes"] if all(needle in note for needle in needles)]
    assert len(notes) == 1, out["notes"]
    return notes[0]


def _logged(out: dict[str, Any], name: str) -> Any:
    return next(f for f in out["figures"] if f["name"] == name)["logged"]


# ---- H7: malformed figures refused by name ----------------------------------------------

def test_explain_fractional_token_count_is_refused_not_read_as_its_whole_part(run: Run) -> None:
    out = _explain(run, VLLM.replace("457,024 tokens", "457,024.5 tokens"))
    assert _logged(out, "kv_tokens") is None
    _said(out, "line 8", "'457,024.5' refused", "not a whole number")


def test_explain_memory_in_a_unit_kvdrill_does_not_read_is_named(run: Run) -> None:
    out = _explain(run, VLLM.replace("55.79 GiB", "55.79 TiB"))
    _said(out, "line 7", "the available KV cache memory '55.79 TiB' refused", "unit TiB")
    assert not any("gives no available KV memory" in note for note in out["notes"])


def test_explain_malformed_concurrency_is_named_not_the_request_length(run: Run) -> None:
    out = _explain(run, VLLM.replace("13.95x", "13,95x"))
    _said(out, "line 9", "the maximum concurrency '13,95' refused")
    assert not any("'32,768'" in note for note in out["notes"])


# ---- H11: a vLLM V0 and a vLLM V1 start-up in one log ------------------------------------

def test_explain_v0_then_v1_is_refused_naming_both_start_ups(run: Run) -> None:
    result = run("explain", "-", "--gpu", "h100", input=VLLM_V0 + VLLM, ok=False)
    one_line_error(result, 2, "two start-ups", "vLLM V0's (from line 2)",
                   "vLLM V1's (from line 8)", "on their own")
    assert "does not name its model" not in result.stderr


def test_explain_v1_then_v0_is_refused_even_with_a_model(run: Run) -> None:
    result = run("explain", "-", "--model", "llama-3.1-8b", input=VLLM + VLLM_V0, ok=False)
    one_line_error(result, 2, "vLLM V1's (from line 4)", "vLLM V0's (from line 13)")


# ---- H14: --practice with a document format ----------------------------------------------

def test_explain_markdown_with_practice_is_refused_in_one_line(run: Run) -> None:
    result = run("explain", "-", "--gpu", "h100", "--format", "md", "--practice",
                 input=VLLM, ok=False)
    one_line_error(result, 2, "--practice", "--format md")
    assert "Attempt" not in result.output and "Target" not in result.output


# ---- H8: an empty LOG -------------------------------------------------------------------

def test_explain_empty_log_path_says_what_log_takes(run: Run) -> None:
    result = run("explain", "", "--gpu", "h100", ok=False)
    one_line_error(result, 2, "give the log's path, or - for standard input")
    assert "standard output" not in result.stderr
