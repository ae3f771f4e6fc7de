"""A serving engine's start-up log read for the figures that size its KV cache: vLLM's V0 and V1
engines and SGLang, across versions, with or without their line prefixes (`(EngineCore_0
pid=123) INFO 06-23 10:27:28 [gpu_worker.py:227]`, `[2025-01-01 10:00:00 TP0]`).

Pure text work: each line is matched against the messages the engines' logging code writes
(vllm/v1/worker/gpu_worker.py "Available KV cache memory", vllm/v1/core/kv_cache_utils.py
"GPU KV cache size" and "Maximum concurrency", vllm/worker/worker.py "Memory profiling
results", vllm/executor "# GPU blocks", sglang/srt/mem_cache/memory_pool.py "KV Cache is
allocated"); nothing in the log is evaluated. The first figure of a kind wins (tensor-parallel
workers repeat theirs), except the memory each worker has for its cache, where the smallest
wins, as the engine sizes every worker's cache to the least; every figure keeps the line it
came from."""

from __future__ import annotations

import re

from trainer.records import field, record

MAX_LOG_CHARS = 4 * 1024 * 1024  # a start-up log is kilobytes; a pasted day of serving is not
MAX_LINE_CHARS = 20_000

# A number as the engines print one (457,024; 55.79); never a prefix of a longer token (1e309,
# 3_2, 10**100, 55,79), which the loose patterns below catch and refuse.
_NUMBER = (r"([0-9]{1,15}(?:,[0-9]{3}){0,5}(?:\.[0-9]{1,12})?)"
           r"(?![0-9_*]|[.,][0-9]|[eE][-+]?[0-9])")
_LARGEST = 1e15  # no KV figure of a real deployment is near it (tokens, blocks, GiB)


@record(frozen=False)
class Figure:
    """One figure as the log printed it."""

    value: float
    unit: str  # GiB, GB, tokens, blocks, x, requests
    line: int  # 1-based line of the log
    text: str  # the message it came from, prefix removed


@record(frozen=False)
class EngineLog:
    engine: str | None = None  # vllm-v0, vllm-v1, sglang
    version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)  # model, tensor_parallel_size, ...
    figures: dict[str, Figure] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    engine_stated: bool = False  # a start-up line or banner names the engine, not a guess
    refused: dict[str, str] = field(default_factory=dict)  # figure → why its line was not read
    later_start: int | None = None  # the line a second start-up begins on, once sized
    later_figures: dict[str, Figure] = field(default_factory=dict)  # that start-up's figures
    repeats: dict[str, list[Figure]] = field(default_factory=dict)  # once-a-start, again
    engine_lines: dict[str, int] = field(default_factory=dict)  # vLLM, SGLang → first line
    mixed: str | None = None  # why a log of two engines' start-ups is not accounted for

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
    # V1's loggers.py: "vllm cache_config_info with initialization after num_gpu_blocks is: N"
    ("gpu_blocks", re.compile(r"num_gpu_blocks is:\s*" + _NUMBER)),
    # the start-up check's errors: V1 "…larger than the available KV cache memory (3.18 GiB).
    # Based on the available memory, the estimated maximum model length is 34736."; V0 and
    # early V1 "…is larger than the maximum number of tokens that can be stored in KV cache
    # (23648)"
    ("kv_cache_memory", re.compile(r"the available KV cache memory \(" + _NUMBER
                                   + r"\s*(GiB|GB)\)", re.IGNORECASE)),
    ("estimated_max_len", re.compile(r"estimated maximum model length is\s*" + _NUMBER)),
    ("kv_tokens", re.compile(r"maximum number of tokens that can be stored in KV cache\s*\("
                             + _NUMBER + r"\)")),
    # newer SGLang: "The available memory for KV cache is 17.67 GB" (GiB in fact)
    ("sglang_available_gb", re.compile(r"available memory for KV cache is\s*" + _NUMBER
                                       + r"\s*(GB|GiB)")),
    ("kv_tokens_sglang", re.compile(r"KV Cache is allocated\.\s*#tokens:\s*" + _NUMBER)),
    ("kv_tokens_sglang", re.compile(r"max_total_num_tokens\s*=\s*" + _NUMBER)),
)
# The same messages with any number in them: a line that matches one of these and not its
# figure's own pattern holds a figure kvdrill refuses (negative, NaN, too many digits), said.
_ANY_NUMBER = r"([-+]?[\w.,*+-]{0,20000}[\w*])"
_LOOSE: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern.pattern.replace(_NUMBER, _ANY_NUMBER), pattern.flags))
    for name, pattern in _FIGURES)
# The same messages with a unit kvdrill does not read (55.79 TiB): the line is named, not
# passed over as if the log gave no such figure.
_OTHER_UNIT = tuple(
    (name, re.compile(pattern.pattern.replace(r"\s*(GiB|GB)", r"\s*([A-Za-z]\w{0,20})"),
                      pattern.flags) if r"\s*(GiB|GB)" in pattern.pattern else None)
    for name, pattern in _FIGURES)
# Figures the engines count in whole tokens or blocks: a fraction is no count.
_COUNTS = {"kv_tokens", "gpu_blocks", "estimated_max_len", "kv_tokens_sglang",
           "concurrency_tokens"}
# What each figure is, in a note's words.
FIGURE_WORDS = {
    "weights": "the weights' memory", "kv_cache_memory": "the available KV cache memory",
    "kv_tokens": "the KV cache's token count", "gpu_blocks": "the GPU block count",
    "kv_cache_size_profiled": "the profiled KV cache size",
    "estimated_max_len": "the estimated maximum model length",
    "sglang_available_gb": "SGLang's available KV memory",
    "kv_tokens_sglang": "SGLang's KV token count", "max_concurrency": "the maximum concurrency",
    "concurrency_tokens": "the request length of the concurrency line",
    "sglang_kv_gb": "SGLang's K and V sizes",
}
# Figures each worker prints for itself: vLLM sizes every worker's cache to the smallest.
_SMALLEST = {"kv_cache_memory", "kv_cache_size_profiled"}
# Figures an engine prints once a start-up: a different one later is another engine's.
_ONCE = {"kv_tokens", "gpu_blocks", "kv_tokens_sglang"}
_CONCURRENCY = re.compile(r"Maximum concurrency for\s*" + _NUMBER + r"\s*tokens per request:\s*"
                          + _NUMBER + r"\s*x")
_CONCURRENCY_LOOSE = re.compile(r"Maximum concurrency for\s*" + _ANY_NUMBER
                                + r"\s*tokens per request:\s*" + _ANY_NUMBER + r"\s*x")
_SGLANG_SIZES = re.compile(r"K size:\s*" + _NUMBER + r"\s*GB,\s*V size:\s*" + _NUMBER + r"\s*GB")
_SGLANG_MLA_SIZE = re.compile(r"#tokens:\s*[\d,]+,\s*KV size:\s*" + _NUMBER + r"\s*GB")
_SGLANG_SIZE_PATTERNS = tuple(
    (strict, re.compile(strict.pattern.replace(_NUMBER, _ANY_NUMBER)))
    for strict in (_SGLANG_SIZES, _SGLANG_MLA_SIZE))
_SGLANG_SWA_POOL = re.compile(r"sliding window memory pool\.\s*full_layer_tokens=(\d{1,12}),\s*"
                              r"swa_layer_tokens=(\d{1,12})")
_BATCHED = re.compile(r"max_num_batched_tokens['\"]?\s*[=:]\s*(\d{1,9})\b")
_HYBRID_OFF = re.compile(r"Hybrid KV cache manager is disabled|disable_hybrid_kv_cache_manager"
                         r"['\"]?\s*[=:]\s*True")
_V1_START = re.compile(r"Initializing a V1 LLM engine \(v?([\w.+-]+)\)")
_V0_START = re.compile(r"Initializing an LLM engine \(v?([\w.+-]+)\)")
_VERSION = re.compile(r"vLLM API server version\s+v?([\w.+-]+)")
# A value that begins as a number is read whole (10**100, 3_2, 1e2), to be refused whole.
_WHOLE_TOKEN = r"[0-9.][^\s,()\[\]{}'\"]*"
# key=value settings in a config line (model='...', tensor_parallel_size=2, ...)
_SETTING = re.compile(r"\b(model|model_path|tokenizer|tensor_parallel_size|tp_size|"
                      r"pipeline_parallel_size|pp_size|max_seq_len|max_model_len|"
                      r"context_length|kv_cache_dtype|quantization|dtype|block_size|page_size|"
                      r"gpu_memory_utilization|mem_fraction_static|served_model_name|"
                      r"enable_dp_attention)"
                      r"\s*[=:]\s*('[^']*'|\"[^\"]*\"|" + _WHOLE_TOKEN + r"|[\w./+-]+)")
# The sizes kvdrill reads, taken whatever their value (nan, inf), to be refused by name.
_SIZE_PAIR = re.compile(r"'(tensor_parallel_size|pipeline_parallel_size|block_size|"
                        r"max_model_len|gpu_memory_utilization)':\s*([^\s,{}\[\]()'\"]+)")
_PRETRAINED = re.compile(r"\bpretrained=([\w./-]+)")
_NON_DEFAULT = re.compile(r"non-default args:\s*\{(.*)\}")
_PAIR = re.compile(r"'(\w+)':\s*('[^']*'|\"[^\"]*\"|-?" + _WHOLE_TOKEN + r"|True|False|None)")
# vllm/platforms/cuda.py: "Forcing kv cache block size to 64 for FlashMLA backend."
_FORCED_BLOCK = re.compile(r"[Ff]orcing kv cache block size to (\d{1,5})\b")
_PP_PARTITION = re.compile(r"VLLM_PP_LAYER_PARTITION=['\"]?(\d{1,5}(?:,\d{1,5}){1,63})")
_PADDING = re.compile(r"Add (\d+) padding layers?")
# SGLang's data-parallel attention names its ranks in the prefix: [… DP1 TP1]
_DP_RANK = re.compile(r"\[[^\]]*\bDP(\d+) TP\d+\]")
_CONTEXT_PARALLEL = re.compile(r"Multiplying the GPU KV cache size by the (?:cp|dcp)_world_size "
                               r"(\d+)")

# Lines only one engine prints: its start-up and its KV-cache sizing.
_ENGINE_SIGNS = (
    ("SGLang", re.compile(r"server_args=ServerArgs\(|KV Cache is allocated\.|"
                          r"max_total_num_tokens\s*=|available memory for KV cache is")),
    ("vLLM", re.compile(r"Initializing an? (?:V1 )?LLM engine \(|vLLM API server version|"
                        r"█\s+version\s|GPU KV cache size:|Available KV cache memory:|"
                        r"#\s*GPU blocks:|num_gpu_blocks is:|Maximum concurrency for")),
)

# Lines only one vLLM engine prints (V1 v0.7 printed "# GPU blocks" too, V0 its CPU blocks).
_VLLM_SIGNS = (
    ("vLLM V0", re.compile(r"Initializing an LLM engine \(|Memory profiling results|"
                           r"reserved for KV Cache is|CPU blocks:")),
    ("vLLM V1", re.compile(r"Initializing a V1 LLM engine \(|GPU KV cache size:|"
                           r"Available KV cache memory:")),
)

# The file in a vLLM line's prefix ([gpu_worker.py:227]): V1's engine core and worker, or V0's.
_SOURCE_FILE = re.compile(r"[\[\s](gpu_worker|gpu_model_runner|kv_cache_utils|core|"
                          r"worker|model_runner|executor_base|distributed_gpu_executor|"
                          r"llm_engine)\.py:\d+\]")
_V1_SOURCES = {"gpu_worker": "vllm-v1", "gpu_model_runner": "vllm-v1",
               "kv_cache_utils": "vllm-v1", "core": "vllm-v1"}
_BANNER_VERSION = re.compile(r"█\s+version\s+v?(\d+\.\d+[\w.+-]*)")
_ALIASES = {"model_path": "model", "tp_size": "tensor_parallel_size",
            "pp_size": "pipeline_parallel_size", "max_seq_len": "max_model_len",
            "context_length": "max_model_len", "page_size": "block_size"}


def read_log(text: str) -> EngineLog:
    """The figures and settings a start-up log states; an empty EngineLog when it states none."""
    log = EngineLog()
    hints: set[str] = set()
    vllm_lines: dict[str, int] = {}  # vLLM V0, vLLM V1 → first line
    for number, raw in enumerate(text.splitlines()[:200_000], start=1):
        if (m := _SOURCE_FILE.search(raw[:400])) is not None:
            hints.add(_V1_SOURCES.get(m.group(1), "vllm-v0"))
        if "VLLM_USE_V1=1" in raw[:2000]:
            hints.add("vllm-v1")
        if "dp_attention" not in log.settings and (m := _DP_RANK.search(raw[:200])) \
                and m.group(1) != "0":
            log.settings["dp_attention"] = "1"
        line = _PREFIX.sub("", raw[:MAX_LINE_CHARS], count=1).strip()
        if not line:
            continue
        _read_line(log, number, line)
        for engine, signs in _ENGINE_SIGNS:
            if engine not in log.engine_lines and signs.search(line) is not None:
                log.engine_lines[engine] = number
        for engine, signs in _VLLM_SIGNS:
            if engine not in vllm_lines and signs.search(line) is not None:
                vllm_lines[engine] = number
    _note_repeats(log)
    if len(log.engine_lines) > 1:
        # one engine's figures cannot be checked against another's start-up, and which one
        # the reader meant is not in the log
        log.mixed = (f"the log holds two engines' start-ups, {_shown_lines(log.engine_lines)}: "
                     "kvdrill accounts for one start-up at a time; explain each engine's lines "
                     "on their own")
    elif len(vllm_lines) > 1:
        # V0 and V1 size their caches differently: neither's figures check the other's
        log.mixed = (f"the log holds two start-ups, {_shown_lines(vllm_lines)}: kvdrill "
                     "accounts for one start-up at a time; explain each start-up's lines on "
                     "their own")
    if not log.engine_stated and hints and log.engine != "sglang":
        # the engine's own source files in the prefixes say which vLLM printed the lines
        log.engine = "vllm-v1" if "vllm-v1" in hints else "vllm-v0"
    if log.engine is None:
        if "kv_tokens_sglang" in log.figures:
            log.engine = "sglang"
        elif "gpu_blocks" in log.figures:
            log.engine = "vllm-v0"
        elif "kv_tokens" in log.figures or "kv_cache_memory" in log.figures:
            log.engine = "vllm-v1"
    return log


def _shown_lines(first_lines: dict[str, int]) -> str:
    return " and ".join(f"{engine}'s (from line {number})" for engine, number
                        in sorted(first_lines.items(), key=lambda item: item[1]))


def _note_repeats(log: EngineLog) -> None:
    """A figure an engine prints once a start-up (each worker once, in vLLM V1) logged more
    often than the workers explain, with another value and no start-up line between: another
    engine's or a later run's, said rather than silently dropped."""
    workers = 1
    for name in ("tensor_parallel_size", "pipeline_parallel_size"):
        text = log.settings.get(name, "1")
        workers *= int(text) if text.isdigit() and 0 < int(text) <= 4096 else 1
    for name, again in log.repeats.items():
        first = log.figures[name]
        beyond = [figure for figure in again[workers - 1:] if figure.value != first.value]
        if beyond:
            log.notes.append(
                f"line {beyond[0].line}: {FIGURE_WORDS[name]} is logged again as "
                f"{beyond[0].value:,g} (line {first.line}: {first.value:,g}), more often than "
                f"{workers} worker{'s' if workers > 1 else ''} print it, with no start-up line "
                "between — another engine or a later run; only the first is accounted for: "
                "explain the other's lines on their own to check them")


def _starts(line: str) -> bool:
    """A line an engine prints once as it starts: its banner, its arguments, its config."""
    return any(p.search(line) for p in (_V1_START, _V0_START, _VERSION, _BANNER_VERSION,
                                        _NON_DEFAULT)) or "server_args=ServerArgs(" in line


def _read_line(log: EngineLog, number: int, line: str) -> None:
    if log.later_start is None and _sized(log) and _starts(line):
        log.later_start = number  # a second start-up: the first is the one accounted for
    if log.later_start is not None:
        _read_later(log, number, line)
        return
    if (m := _V1_START.search(line)) is not None:
        log.engine, log.version = "vllm-v1", log.version or m.group(1)
        log.engine_stated = True
    elif (m := _V0_START.search(line)) is not None:
        log.engine, log.version = log.engine or "vllm-v0", log.version or m.group(1)
        log.engine_stated = True
    elif (m := _VERSION.search(line) or _BANNER_VERSION.search(line)) is not None:
        log.version = log.version or m.group(1)
    if "server_args=ServerArgs(" in line:
        log.engine, log.engine_stated = "sglang", True
    if (m := _PRETRAINED.search(line)) is not None:
        _set(log, "model", m.group(1))
    if (m := _NON_DEFAULT.search(line)) is not None:
        for key, value in _PAIR.findall(m.group(1)) + _SIZE_PAIR.findall(m.group(1)):
            _set(log, key, value, overwrite=True)
    elif "config" in line.lower() or "ServerArgs(" in line or "args" in line.lower():
        for key, value in _SETTING.findall(line):
            _set(log, key, value)
    for (name, pattern), (_, loose), (_, other_unit) in zip(_FIGURES, _LOOSE, _OTHER_UNIT,
                                                            strict=True):
        if name in log.figures and (name not in _SMALLEST or _sized(log)):
            if name in _ONCE and (m := pattern.search(line)) is not None and \
                    _number(m.group(1)) == _number(m.group(1)):
                log.repeats.setdefault(name, []).append(
                    Figure(_number(m.group(1)), "", number, line))
            continue  # the first start-up's figure: a later one may be another run
        m = pattern.search(line)
        if m is not None and name in _COUNTS and not _number(m.group(1)).is_integer() and \
                _number(m.group(1)) == _number(m.group(1)):
            if name not in log.figures:
                _refuse(log, name, number, m.group(1), "not a whole number: the engine "
                        "counts whole tokens and blocks")
            continue
        if m is None or _number(m.group(1)) != _number(m.group(1)):
            if (bad := m or loose.search(line)) is not None and name not in log.figures:
                _refuse(log, name, number, bad.group(1))
            elif other_unit is not None and name not in log.figures and \
                    (other := other_unit.search(line)) is not None:
                _refuse(log, name, number, f"{other.group(1)} {other.group(2)}",
                        f"unit {other.group(2)}, not GiB")
            continue
        if name in log.figures and _number(m.group(1)) >= log.figures[name].value:
            continue  # tensor-parallel workers: the engine sizes every cache to the least
        unit = m.group(2) if m.lastindex and m.lastindex >= 2 else (
            "tokens" if "tokens" in name else "blocks")
        _keep(log, name, Figure(_number(m.group(1)), unit, number, line))
        if name == "weights" and "Loading model weights took" in line:
            log.engine = log.engine or "vllm-v0"
    if "max_concurrency" not in log.figures:
        _read_concurrency(log, number, line)
    if "sglang_kv_gb" not in log.figures:
        _read_sglang_sizes(log, number, line)
    if "sglang_full_tokens" not in log.figures and \
            (m := _SGLANG_SWA_POOL.search(line)) is not None:
        _keep(log, "sglang_full_tokens", Figure(_number(m.group(1)), "tokens", number, line))
        _keep(log, "sglang_swa_tokens", Figure(_number(m.group(2)), "tokens", number, line))
    if (m := _BATCHED.search(line)) is not None:
        log.settings.setdefault("max_num_batched_tokens", m.group(1))
    if _HYBRID_OFF.search(line) is not None:
        log.settings["hybrid_kv_cache_manager"] = "off"
    if "No available memory for the cache blocks" in line:
        log.notes.append(f"line {number}: the engine found no memory left for the KV cache "
                         "(weights and activations took the card at this utilisation)")
    if (m := _CONTEXT_PARALLEL.search(line)) is not None:
        log.settings.setdefault("context_parallel", m.group(1))
    if (m := _FORCED_BLOCK.search(line)) is not None:
        log.settings["block_size"] = m.group(1)  # the engine overrode what was asked
    if (m := _PP_PARTITION.search(line)) is not None:
        log.settings.setdefault("pp_layer_partition", m.group(1))
    if (m := _PADDING.search(line)) is not None:
        log.settings.setdefault("padding_layers", m.group(1))
        log.notes.append(f"line {number}: the engine added {m.group(1)} padding layers to "
                         "make its KV-cache groups equal")


def _read_concurrency(log: EngineLog, number: int, line: str) -> None:
    m = _CONCURRENCY.search(line)
    if m is not None and all(_number(g) == _number(g) for g in m.groups()) and \
            _number(m.group(1)).is_integer():
        _keep(log, "max_concurrency", Figure(_number(m.group(2)), "x", number, line))
        _keep(log, "concurrency_tokens", Figure(_number(m.group(1)), "tokens", number, line))
        return
    if (bad := m or _CONCURRENCY_LOOSE.search(line)) is not None:
        length, ratio = bad.group(1), bad.group(2)
        if not _well_formed(ratio):
            _refuse(log, "max_concurrency", number, ratio)
        elif not _well_formed(length):
            _refuse(log, "concurrency_tokens", number, length)
        else:
            _refuse(log, "concurrency_tokens", number, length, "not a whole number: the "
                    "engine counts whole tokens and blocks")


def _read_sglang_sizes(log: EngineLog, number: int, line: str) -> None:
    """SGLang's K and V sizes (or an MLA pool's one KV size), or the number refused."""
    for strict, loose in _SGLANG_SIZE_PATTERNS:
        m = strict.search(line)
        if m is not None and all(_number(g) == _number(g) for g in m.groups()):
            size = sum(_number(g) for g in m.groups())
            _keep(log, "sglang_kv_gb", Figure(size, "GB", number, line))
            return
        if (bad := m or loose.search(line)) is not None:
            _refuse(log, "sglang_kv_gb", number, next(
                (g for g in bad.groups() if not _well_formed(g)), bad.group(1)))
            return


def _read_later(log: EngineLog, number: int, line: str) -> None:
    """A line of a second start-up in the same log: its figures are kept apart, to say where
    they differ from the first's (which are the ones accounted for)."""
    for name, pattern in _FIGURES:
        if name not in log.later_figures and (m := pattern.search(line)) is not None and \
                _number(m.group(1)) == _number(m.group(1)):
            unit = m.group(2) if m.lastindex and m.lastindex >= 2 else ""
            log.later_figures[name] = Figure(_number(m.group(1)), unit, number, line)
    m = _CONCURRENCY.search(line)
    if "max_concurrency" not in log.later_figures and m is not None and \
            _number(m.group(2)) == _number(m.group(2)):
        log.later_figures["max_concurrency"] = Figure(_number(m.group(2)), "x", number, line)


def later_start_note(log: EngineLog) -> str | None:
    """What a log with a second start-up is told: the first start-up is accounted for, and
    which figures the later one logs differently."""
    if log.later_start is None:
        return None
    differ = [f"{FIGURE_WORDS.get(name, name)} {_shown(later)} (line {later.line}; the "
              f"first start-up's {_shown(log.figures[name])}, line {log.figures[name].line})"
              for name, later in log.later_figures.items()
              if name in log.figures and later.value != log.figures[name].value]
    if not differ:
        return None
    return (f"line {log.later_start}: a second start-up begins, with other figures — "
            + "; ".join(differ[:4]) + ". Only the first start-up is accounted for: explain "
            "the later one on its own (its lines alone) to check it")


def _shown(figure: Figure) -> str:
    unit = figure.unit if figure.unit in ("GiB", "GB", "x") else ""
    return f"{figure.value:,g}" + (f" {unit}" if unit and unit != "x" else unit)


def _refuse(log: EngineLog, name: str, number: int, text: str, why: str | None = None) -> None:
    """A figure's line whose number kvdrill will not use: said, by line and why."""
    if name in log.refused:
        return
    shown = text if len(text) <= 30 else text[:29] + "…"
    log.refused[name] = (f"line {number}: {FIGURE_WORDS.get(name, name)} {shown!r} refused "
                         f"({why or _why(text)}): left out, the other figures are accounted "
                         "for")


def _well_formed(text: str) -> bool:
    """A number written as the engines write one (457,024; 13.95), in range."""
    return re.fullmatch(_NUMBER, text) is not None and _number_or_none(text) is not None


def _why(text: str) -> str:
    value = _number_or_none(text, bounded=False)
    if value is None and re.fullmatch(r"[0-9,]+(?:\.[0-9]+)?", text):
        return "more than 10^15: no deployment is near it"
    if value is None:
        return "not a number"
    if value != value or value in (float("inf"), float("-inf")):
        return "not a finite number"
    if value < 0:
        return "negative: no amount the engine sizes is below zero"
    if value > _LARGEST:
        return "more than 10^15: no deployment is near it"
    return "not written as the engine writes a number"


def _number_or_none(text: str, bounded: bool = True) -> float | None:
    """A number as the log wrote it, or None when it is none (or, bounded, out of range)."""
    try:
        value = float(text.replace(",", "")) if len(text) <= 60 else None
    except ValueError:
        return None
    if value is None or (bounded and not 0 <= value <= _LARGEST):
        return None
    return value


def _sized(log: EngineLog) -> bool:
    """The engine has printed its cache size: memory lines after it belong to a later run."""
    return any(name in log.figures for name in ("kv_tokens", "gpu_blocks", "kv_tokens_sglang"))


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
