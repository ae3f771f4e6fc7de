"""`kvdrill explain LOG` reads an engine's start-up log and accounts for its KV-cache figures.
These logs are constructed line by line in the formats vLLM's and SGLang's logging code write
(tests/corpus/engine_logs_constructed); the real logs of public threads are in
tests/test_explain_real_logs.py."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import Result

from trainer.reading.engine_log import read_log

Run = Callable[..., Result]
CONSTRUCTED = Path(__file__).parent / "corpus" / "engine_logs_constructed"

V0_LOG = """\
INFO 10-01 12:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: \
model='Qwen/Qwen2.5-7B-Instruct', tokenizer='Qwen/Qwen2.5-7B-Instruct', dtype=torch.bfloat16, \
max_seq_len=32768, tensor_parallel_size=2, pipeline_parallel_size=1, quantization=None, \
kv_cache_dtype=auto
INFO 10-01 12:00:20 model_runner.py:1067] Loading model weights took 7.1216 GB
INFO 10-01 12:00:25 distributed_gpu_executor.py:57] # GPU blocks: 61000, # CPU blocks: 9362
"""

SGLANG_LOG = """\
[2025-02-01 09:00:00] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-8B-Instruct', \
tp_size=1, kv_cache_dtype='auto', context_length=None)
[2025-02-01 09:00:30 TP0] KV Cache is allocated. #tokens: 400000, K size: 24.41 GB, V size: 24.41 GB
"""


def explain(run: Run, *args: str, stdin: str | None = None) -> dict[str, Any]:
    result = run("explain", *args, "--json", input=stdin)
    payload: dict[str, Any] = json.loads(result.output)
    return payload


def figure(payload: dict[str, Any], name: str) -> dict[str, Any]:
    found: dict[str, Any] = next(f for f in payload["figures"] if f["name"] == name)
    return found


def test_v1_tokens_follow_from_the_logged_kv_memory(run: Run) -> None:
    # 54.27 GiB ÷ (16 tokens × 4,096 B) ÷ 32 layers = 27,786 blocks → 444,576 tokens
    out = explain(run, str(CONSTRUCTED / "v1-llama31-8b.log"))
    assert figure(out, "kv_tokens")["expected"] == 444_576
    assert figure(out, "kv_tokens")["agrees"] is True


def test_v1_concurrency_is_blocks_over_a_requests_blocks(run: Run) -> None:
    # 27,786 blocks ÷ 2,048 blocks a 32,768-token request = 13.57
    out = explain(run, str(CONSTRUCTED / "v1-llama31-8b.log"))
    assert figure(out, "max_concurrency")["expected"] == pytest.approx(13.567, abs=0.001)


def test_v0_blocks_become_tokens(run: Run) -> None:
    out = explain(run, "-", stdin=V0_LOG)
    assert figure(out, "kv_tokens")["expected"] == 61_000 * 16


def test_v0_settings_come_from_its_config_line(run: Run) -> None:
    out = explain(run, "-", stdin=V0_LOG)
    assert out["settings"]["tensor_parallel_size"] == 2
    assert out["settings"]["from"]["tensor_parallel_size"] == "log"


def test_sglang_tokens_are_checked_against_its_kv_sizes(run: Run) -> None:
    # SGLang prints GB but means GiB: 48.82 GiB ÷ 131,072 B a token = 399,933 against 400,000
    out = explain(run, "-", stdin=SGLANG_LOG)
    assert figure(out, "kv_tokens")["agrees"] is True


def test_a_log_option_conflict_is_said_and_the_log_wins(run: Run) -> None:
    out = explain(run, "-", "--tensor-parallel-size", "4", stdin=V0_LOG)
    assert out["settings"]["tensor_parallel_size"] == 2
    assert any("the log says 2, the option 4" in note for note in out["notes"])


def test_a_quantised_release_reads_as_its_base_models_shape(run: Run) -> None:
    log = V0_LOG.replace("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct-AWQ")
    assert explain(run, "-", stdin=log)["model"] == "qwen2.5-7b"


def test_an_fp8_kv_log_halves_the_bytes_per_token(run: Run) -> None:
    log = (CONSTRUCTED / "v1-llama31-8b.log").read_text().replace("kv_cache_dtype=auto",
                                                                   "kv_cache_dtype=fp8")
    out = explain(run, "-", stdin=log)
    assert figure(out, "kv_bytes_per_token_per_gpu")["expected"] == 65_536


def test_a_disagreement_names_the_setting_that_explains_it(run: Run) -> None:
    # the tokens an fp8 cache would give, logged while the config line says auto
    log = (CONSTRUCTED / "v1-llama31-8b.log").read_text().replace("444,576", "889,152")
    out = explain(run, "-", stdin=log)
    assert figure(out, "kv_tokens")["agrees"] is False
    assert any("fp8 KV (1 byte, not 2) would explain it" in note for note in out["notes"])


def test_a_log_with_no_kv_line_is_one_line_naming_what_to_add(run: Run) -> None:
    result = run("explain", "-", "--model", "llama-3.1-8b", input="hello\n", ok=False)
    assert result.exit_code == 2
    assert "no KV-cache line" in result.stderr and result.stderr.count("\n") == 1


def test_a_log_naming_an_unknown_model_asks_for_model(run: Run) -> None:
    log = V0_LOG.replace("Qwen/Qwen2.5-7B-Instruct", "acme/WidgetLM-3B")
    result = run("explain", "-", input=log, ok=False)
    assert result.exit_code == 2
    assert "give --model" in result.stderr


def test_a_hybrid_model_is_refused_by_name(run: Run) -> None:
    result = run("explain", "-", "--model", "jamba-1.5-mini", input=V0_LOG.replace(
        "Qwen/Qwen2.5-7B-Instruct", "ai21labs/AI21-Jamba-1.5-Mini"), ok=False)
    assert result.exit_code == 2
    assert "recurrent state" in result.stderr


def test_prefixes_of_engine_processes_are_read_through() -> None:
    log = read_log("(EngineCore_0 pid=4242) INFO 06-23 10:27:40 [gpu_worker.py:227] "
                   "Available KV cache memory: 12.5 GiB\n")
    assert log.figure("kv_cache_memory") == 12.5


def test_the_first_workers_figure_is_kept() -> None:
    log = read_log("(VllmWorker rank=0 pid=1) INFO Available KV cache memory: 10.0 GiB\n"
                   "(VllmWorker rank=1 pid=2) INFO Available KV cache memory: 11.0 GiB\n")
    assert log.figure("kv_cache_memory") == 10.0


def test_markdown_gives_the_figures_as_a_table(run: Run) -> None:
    log = V0_LOG.replace("Qwen/Qwen2.5-7B-Instruct", "Qwen/Qwen2.5-7B-Instruct") + \
        "WARNING | <img onerror=x> Add 3 padding layers\n"
    text = run("explain", "-", "--format", "md", input=log).output
    assert "| kv_tokens |" in text


HOSTILE_LINES = (
    "Available KV cache memory: {n} GiB", "GPU KV cache size: {n} tokens",
    "Maximum concurrency for {n} tokens per request: {n}x", "GPU blocks: {n}",
    "# GPU blocks: {n}, # CPU blocks: {n}", "Model loading took {n} GiB",
    "KV Cache is allocated. #tokens: {n}, K size: {n} GB, V size: {n} GB",
    "Initializing a V1 LLM engine (v{n}) with config: model='{m}', tensor_parallel_size={n}, "
    "pipeline_parallel_size={n}, kv_cache_dtype=fp8, max_seq_len={n}",
    "Memory profiling results: total_gpu_memory={n}GiB kv_cache_size={n}GiB",
    "[2025 DP{n} TP0] avail mem={n} GB", "Multiplying the GPU KV cache size by the "
    "dcp_world_size {n}.",
)
HOSTILE_NUMBERS = ("0", "1", "0.0", "16", "1,000", "99999999999999", "-1", "1e9", "0,0")


@pytest.mark.parametrize("seed", range(40))
def test_a_log_of_impossible_figures_is_refused_or_explained_never_a_crash(
        run: Run, seed: int) -> None:
    import random

    chance = random.Random(seed)
    log = "\n".join(chance.choice(HOSTILE_LINES).format(
        n=chance.choice(HOSTILE_NUMBERS),
        m=chance.choice(["openai/gpt-oss-20b", "meta-llama/Llama-3.1-8B", "x/../../y", ""]))
        for _ in range(chance.randint(1, 8)))
    model = chance.choice(["llama-3.1-8b", "gpt-oss-20b", "deepseek-v3", "gemma-3-27b"])
    result = run("explain", "-", "--model", model, "-pp", str(chance.randint(1, 5)),
                 input=log, ok=False)
    assert result.exit_code in (0, 2)
    assert "internal error" not in result.output
