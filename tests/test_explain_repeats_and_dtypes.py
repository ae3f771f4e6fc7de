"""Issue 37, leftovers of the fifth round: a log whose KV dtype kvdrill does not size is
refused by name (not sized as 16-bit in silence), and a KV-cache size logged again by another
engine with no banner between is said, while the per-worker copies of one start-up are not."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import Result
from one_line import one_line_error

Run = Callable[..., Result]
LOG = (Path(__file__).parent / "corpus" / "engine_logs_constructed" /
       "v1-llama31-8b.log").read_text()
SECOND_ENGINE = ("(EngineCore_0 pid=456) INFO 06-23 11:02:10 [gpu_worker.py:227] Available KV "
                 "cache memory: 20.10 GiB\n(EngineCore_0 pid=456) INFO 06-23 11:02:10 "
                 "[kv_cache_utils.py:715] GPU KV cache size: 164,640 tokens\n")
TP8_LOG = (Path(__file__).parent / "corpus" / "engine_logs" /
           "vllm-v1_qwen3-32b_tp8_fp8kv.log").read_text(errors="replace")


def _notes(run: Run, text: str) -> list[str]:
    result = run("explain", "-", "--json", input=text)
    assert result.exit_code == 0, result.output
    notes: list[str] = json.loads(result.output)["notes"]
    return notes


def test_a_kv_dtype_kvdrill_does_not_size_is_refused_by_name(run: Run) -> None:
    log = LOG.replace("'gpu_memory_utilization': 0.9}",
                      "'gpu_memory_utilization': 0.9, 'kv_cache_dtype': 'fp4_e2m1'}")
    one_line_error(run("explain", "-", input=log, ok=False), 2,
                   "'fp4_e2m1' is not one kvdrill sizes")


def test_a_second_engines_size_without_a_banner_is_said(run: Run) -> None:
    notes = _notes(run, LOG + SECOND_ENGINE)
    said = [note for note in notes if "logged again as 164,640" in note]
    assert said and "only the first is accounted for" in said[0]


def test_the_same_size_logged_twice_is_not_a_second_engine(run: Run) -> None:
    repeated = LOG + LOG.splitlines(keepends=True)[5]
    assert not any("logged again" in note for note in _notes(run, repeated))


def test_each_tensor_parallel_workers_own_size_line_is_not_a_second_engine(run: Run) -> None:
    assert not any("logged again" in note for note in _notes(run, TP8_LOG))
