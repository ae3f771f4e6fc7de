"""A serving engine's start-up log read for the figures that size its KV cache: vLLM's V0 and V1
engines and SGLang, across versions, with or without their line prefixes (`(EngineCore_0
pid=123) INFO 06-23 10:27:28 [gpu_worker.py:227]`, `[2025-01-01 10:00:00 TP0]`).

Pure text work: each line is matched against the messages the engines' logging code writes
(vllm/v1/worker/gpu_worker.py "Available KV cache memory", vllm/v1/core/kv_cache_utils.py
"GPU KV cache size" and "Maximum concurrency", vllm/worker/worker.py "Memory profiling
results", vllm/executor "# GPU blocks", sglang/srt/mem_cache/memory_pool.py "KV Cache is
allocated"); nothing in the log is evaluated. The first figure of a kind wins (tensor-parallel
workers repeat theirs), and every figure keeps the line it came from."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MAX_LOG_CHARS = 4 * 1024 * 1024  # a start-up log is kilobytes; a pasted day of serving is not
MAX_LINE_CHARS = 20_000

_NUMBER = r"(\d[\d,]{0,24}(?:\.\d{1,12})?)"
_LARGEST = 1e15  # no KV figure of a real deployment is near it (tokens, blocks, GiB)


@dataclass
class Figure:
    """One figure as the log printed it."""

    value: float
    unit: str  # GiB, GB, tokens, blocks, x, requests
    line: int  # 1-based line of the log
    text: str  # the message it came from, prefix removed


@dataclass
class EngineLog:
    engine: str | None = None  # vllm-v0, vllm-v1, sglang
    version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)  # model, tensor_parallel_size, ...
    figures: dict[str, Figure] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def figure(self, name: str) -> float | None:
        found = self.figures.get(name)
        return None if found is None else found.value


# The prefixes engines and launchers put before a message.
_PREFIX = re.compile(
    r"^\s*(?:\x1b\[[0-9;]*m)*(?:\((?:EngineCore\w*|VllmWorker\w*|RayWorkerWrapper|"
    r"Worker\w*|APIServer|\w+)\s+pid=\d+(?:,\s*ip=[\d.]+)?\)\s*)?"
    r"(?:(?:INFO|WARNING|WARN|DEBUG|ERROR)\s+\d\d-\d\d\s+\d\d:\d\d:\d\d(?:\.\d+)?\s+"
    r"\[[^\]]*\]\s*)?"
    r"(?:\[\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:\s+[A-Z]+\d*)*\]\s*)?"
)

# message → figure name; the first group is the number, a second its unit
_FIGURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("weights", re.compile(r"Model loading took " + _NUMBER + r"\s*(GiB|GB)")),
    ("weights", re.compile(r"Loading model weights took " + _NUMBER + r"\s*(GiB|GB)")),
    ("kv_cache_memory", re.compile(r"Available KV cache memory:\s*" + _NUMBER + r"\s*(GiB|GB)")),
    ("kv_tokens", re.compile(r"GPU KV cache size:\s*" + _NUMBER + r"\s*tokens")),
    ("gpu_blocks", re.compile(r"(?:#\s*|\b)(?:GPU|cuda)\s+blocks:\s*" + _NUMBER,
                              re.IGNORECASE)),
    # V0 from v0.7: "model weights take 10.45GiB; non_torch_memory takes 0.16GiB; PyTorch
    # activation peak memory takes 0.94GiB; the rest of the memory reserved for KV Cache is
    # 59.75GiB."
    ("weights", re.compile(r"model weights take\s*" + _NUMBER + r"\s*(GiB|GB)")),
    ("kv_cache_memory", re.compile(r"reserved for KV Cache is\s*" + _NUMBER + r"\s*(GiB|GB)")),
    # V0 before: "Memory profiling results: total_gpu_memory=… kv_cache_size=3.81GiB …"
    ("kv_cache_size_profiled", re.compile(r"Memory profiling results?:?.*\bkv_cache_size\s*=\s*"
                                          + _NUMBER + r"\s*(GiB|GB)")),
    ("kv_tokens_sglang", re.compile(r"KV Cache is allocated\.\s*#tokens:\s*" + _NUMBER)),
    ("kv_tokens_sglang", re.compile(r"max_total_num_tokens\s*=\s*" + _NUMBER)),
)
_CONCURRENCY = re.compile(r"Maximum concurrency for\s*" + _NUMBER + r"\s*tokens per request:\s*"
                          + _NUMBER + r"\s*x")
_SGLANG_SIZES = re.compile(r"K size:\s*" + _NUMBER + r"\s*GB,\s*V size:\s*" + _NUMBER + r"\s*GB")
_V1_START = re.compile(r"Initializing a V1 LLM engine \(v?([\w.+-]+)\)")
_V0_START = re.compile(r"Initializing an LLM engine \(v?([\w.+-]+)\)")
_VERSION = re.compile(r"vLLM API server version\s+v?([\w.+-]+)")
# key=value settings in a config line (model='...', tensor_parallel_size=2, ...)
_SETTING = re.compile(r"\b(model|model_path|tokenizer|tensor_parallel_size|tp_size|"
                      r"pipeline_parallel_size|pp_size|max_seq_len|max_model_len|"
                      r"context_length|kv_cache_dtype|quantization|dtype|block_size|page_size|"
                      r"gpu_memory_utilization|mem_fraction_static|served_model_name|"
                      r"enable_dp_attention)"
                      r"\s*[=:]\s*('[^']*'|\"[^\"]*\"|[\w./+-]+)")
_PRETRAINED = re.compile(r"\bpretrained=([\w./-]+)")
_NON_DEFAULT = re.compile(r"non-default args:\s*\{(.*)\}")
_PAIR = re.compile(r"'(\w+)':\s*('[^']*'|\"[^\"]*\"|-?[\d.]+(?:e-?\d+)?|True|False|None)")
_PADDING = re.compile(r"Add (\d+) padding layers?")
# SGLang's data-parallel attention names its ranks in the prefix: [… DP1 TP1]
_DP_RANK = re.compile(r"\[[^\]]*\bDP(\d+) TP\d+\]")
_CONTEXT_PARALLEL = re.compile(r"Multiplying the GPU KV cache size by the (?:cp|dcp)_world_size "
                               r"(\d+)")

_ALIASES = {"model_path": "model", "tp_size": "tensor_parallel_size",
            "pp_size": "pipeline_parallel_size", "max_seq_len": "max_model_len",
            "context_length": "max_model_len", "page_size": "block_size"}


def read_log(text: str) -> EngineLog:
    """The figures and settings a start-up log states; an empty EngineLog when it states none."""
    log = EngineLog()
    for number, raw in enumerate(text.splitlines()[:200_000], start=1):
        if "dp_attention" not in log.settings and (m := _DP_RANK.search(raw[:200])) \
                and m.group(1) != "0":
            log.settings["dp_attention"] = "1"
        line = _PREFIX.sub("", raw[:MAX_LINE_CHARS], count=1).strip()
        if not line:
            continue
        _read_line(log, number, line)
    if log.engine is None:
        if "kv_tokens_sglang" in log.figures:
            log.engine = "sglang"
        elif "gpu_blocks" in log.figures:
            log.engine = "vllm-v0"
        elif "kv_tokens" in log.figures or "kv_cache_memory" in log.figures:
            log.engine = "vllm-v1"
    return log


def _read_line(log: EngineLog, number: int, line: str) -> None:
    if (m := _V1_START.search(line)) is not None:
        log.engine, log.version = "vllm-v1", log.version or m.group(1)
    elif (m := _V0_START.search(line)) is not None:
        log.engine, log.version = log.engine or "vllm-v0", log.version or m.group(1)
    elif (m := _VERSION.search(line)) is not None:
        log.version = log.version or m.group(1)
    if "server_args=ServerArgs(" in line:
        log.engine = "sglang"
    if (m := _PRETRAINED.search(line)) is not None:
        _set(log, "model", m.group(1))
    if (m := _NON_DEFAULT.search(line)) is not None:
        for key, value in _PAIR.findall(m.group(1)):
            _set(log, key, value, overwrite=True)
    elif "config" in line.lower() or "ServerArgs(" in line or "args" in line.lower():
        for key, value in _SETTING.findall(line):
            _set(log, key, value)
    for name, pattern in _FIGURES:
        if name in log.figures:
            continue
        if (m := pattern.search(line)) is not None:
            unit = m.group(2) if m.lastindex and m.lastindex >= 2 else (
                "tokens" if "tokens" in name else "blocks")
            _keep(log, name, Figure(_number(m.group(1)), unit, number, line))
            if name == "weights" and "Loading model weights took" in line:
                log.engine = log.engine or "vllm-v0"
    if "max_concurrency" not in log.figures and (m := _CONCURRENCY.search(line)) is not None:
        _keep(log, "max_concurrency", Figure(_number(m.group(2)), "x", number, line))
        _keep(log, "concurrency_tokens", Figure(_number(m.group(1)), "tokens", number, line))
    if "sglang_kv_gb" not in log.figures and (m := _SGLANG_SIZES.search(line)) is not None:
        size = _number(m.group(1)) + _number(m.group(2))
        _keep(log, "sglang_kv_gb", Figure(size, "GB", number, line))
    if (m := _CONTEXT_PARALLEL.search(line)) is not None:
        log.settings.setdefault("context_parallel", m.group(1))
    if (m := _PADDING.search(line)) is not None:
        log.notes.append(f"line {number}: the engine added {m.group(1)} padding layers to "
                         "make its KV-cache groups equal")


def _set(log: EngineLog, key: str, value: str, overwrite: bool = False) -> None:
    key = _ALIASES.get(key, key)
    value = value.strip("'\"")
    if value in ("None", "", "auto") and key not in ("kv_cache_dtype", "dtype"):
        return
    if overwrite or key not in log.settings:
        log.settings[key] = value[:300]


def _keep(log: EngineLog, name: str, figure: Figure) -> None:
    if figure.value == figure.value:  # NaN: a figure beyond any deployment is no figure
        log.figures[name] = figure


def _number(text: str) -> float:
    value = float(text.replace(",", ""))
    return value if value <= _LARGEST else float("nan")
