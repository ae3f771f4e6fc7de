"""Every figure of a serving engine's start-up log accounted for: what the log says, what the
capacity model expects from the model, the card and the settings, whether they agree within the
engine's rounding, and where they do not, the one input that would explain it.

vLLM V1 (vllm/v1/core/kv_cache_utils.py): layers are put into KV-cache groups of one page size
(one group when every layer is full attention; windowed layers in groups as many layers as the
smallest kind, padded); num_blocks = available memory // page // layers per group, where a
page is block_size × 2 × KV heads per GPU × head_dim × dtype bytes (an MLA latent: block_size ×
(kv_lora_rank + qk_rope_head_dim) × bytes, whole on every rank); "GPU KV cache size" =
num_blocks // groups × block_size; "Maximum concurrency for T tokens" = that ÷ T for full
attention. vLLM V0: tokens = GPU blocks × block_size. Pipeline stages hold the layers of their
stage (the largest stage sizes the job); tensor-parallel workers hold max(1, KV heads ÷ TP).
Hybrid (Mamba, linear attention) models pad their pages in ways a log alone does not show:
they are said, not guessed."""

from __future__ import annotations

import math
import re
from typing import Any

from trainer.capacity.presets import GpuPreset, ModelPreset
from trainer.reading.engine_log import EngineLog, later_start_note
from trainer.records import record

GIB = 2**30
# Within this share a logged figure agrees with one computed from the log's own rounded
# memory figure (printed to 0.01 GiB) or from a block count.
AGREES = 0.01
KV_DTYPE_BYTES = {"auto": None, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2,
                  "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1,
                  "float32": 4, "fp32": 4, "int8": 1}
_QUANTIZED = re.compile(r"fp8|awq|gptq|int4|int8|w4a16|w8a8|w4a8|bnb|bitsandbytes|quantized|"
                        r"mxfp4|nvfp4|"
                        r"compressed|marlin|gguf", re.IGNORECASE)


@record
class Settings:
    tensor_parallel: int
    pipeline_parallel: int
    kv_dtype: str
    block_size: int
    max_model_len: int | None
    utilization: float | None
    sources: dict[str, str]  # setting -> "log", "option", "default"
    conflicts: tuple[str, ...] = ()
    quantized: bool = False  # the weights are a quantised release (its name or the log says)
    weights_differ: str | None = None  # why the preset's weight size is not this release's


@record
class Row:
    name: str
    logged: float | None
    expected: float | None
    unit: str
    how: str

    @property
    def agrees(self) -> bool | None:
        if self.logged is None or self.expected is None:
            return None
        if self.expected == 0:
            return self.logged == 0
        return abs(self.logged - self.expected) <= AGREES * abs(self.expected)


def base_model(name: str, find: Any) -> ModelPreset:
    """The preset a Hugging Face name is a release of (release_names): `…-FP8`, `…-AWQ`,
    `…-Instruct` keep their base's geometry; a fine-tune or distill only through its checked
    entry. UnknownName, saying what to give instead, when none is certain."""
    from trainer.capacity.release_names import resolve

    preset, _release = resolve(name, find)
    return preset


def settings_of(log: EngineLog, options: dict[str, Any], model: ModelPreset) -> Settings:
    """The parallel and cache settings: what the log states wins over an option; a conflict
    is said."""
    sources: dict[str, str] = {}
    conflicts: list[str] = []

    def pick(name: str, option: Any, default: Any, parse: Any) -> Any:
        stated = log.settings.get(name)
        value = None
        if stated is not None:
            try:
                value = parse(stated)
            except ValueError:
                value = None
            if value is None or not _sane(name, value):
                shown = stated if len(stated) <= 30 else stated[:29] + "…"
                conflicts.append(f"{name}: the log's {shown!r} is no setting an engine runs "
                                 "with; ignored")
                value = None
        if isinstance(option, str):
            option = parse(option)  # the options' own types come from click
        if value is not None:
            sources[name] = "log"
            if option is not None and option != value:
                conflicts.append(f"{name}: the log says {value}, the option {option}; the log's "
                                 "is used")
            return value
        if option is not None:
            sources[name] = "option"
            return option
        sources[name] = "default"
        return default

    # V1's MLA backends (FlashMLA) page by 64; V0 and every other attention by 16
    default_block = 64 if model.attention == "mla" and log.engine != "vllm-v0" else 16
    if log.engine == "sglang":
        default_block = 1  # SGLang's page_size on GPUs (128 on Ascend NPUs, where it is said)
    kv = pick("kv_cache_dtype", options.get("kv_cache_dtype"), "auto", str)
    tp = pick("tensor_parallel_size", options.get("tensor_parallel_size"), 1, _whole)
    pp = pick("pipeline_parallel_size", options.get("pipeline_parallel_size"), 1, _whole)
    block = pick("block_size", options.get("block_size"), default_block, _whole)
    length = pick("max_model_len", options.get("max_model_len"), None, _whole)
    utilization = pick("gpu_memory_utilization", options.get("gpu_memory_utilization"), None,
                       _decimal)
    names = " ".join(str(v) for v in (log.settings.get("model"), options.get("model_name"),
                                      log.settings.get("quantization")) if v)
    quantized = bool(_QUANTIZED.search(names))
    return Settings(max(1, tp), max(1, pp), kv.lower(), max(1, block), length, utilization,
                    sources, tuple(conflicts), quantized)


def _whole(text: str) -> int:
    """A whole number as an engine's arguments print one; ValueError for anything else (int()
    would take 3_2 as 32)."""
    if re.fullmatch(r"[0-9]{1,12}", text) is None:
        raise ValueError(text)
    return int(text)


def _decimal(text: str) -> float:
    """A plain decimal (0.9, 1, .85); ValueError for nan, inf, 9e-1 or 0_9."""
    if re.fullmatch(r"[0-9]{1,6}(?:\.[0-9]{0,12})?|\.[0-9]{1,12}", text) is None:
        raise ValueError(text)
    return float(text)


_BOUNDS = {"tensor_parallel_size": 4096, "pipeline_parallel_size": 4096, "block_size": 1 << 20,
           "max_model_len": 1 << 31, "gpu_memory_utilization": 1}


def _sane(name: str, value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= 40
    most = _BOUNDS.get(name)
    return most is None or 0 < value <= most


def with_conflict(settings: Settings, conflict: str) -> Settings:
    from trainer.records import replace

    return replace(settings, conflicts=(*settings.conflicts, conflict))


def with_weights_differ(settings: Settings, why: str) -> Settings:
    from trainer.records import replace

    return replace(settings, weights_differ=why)


def _kv_bytes(settings: Settings, model: ModelPreset) -> int:
    if settings.kv_dtype not in KV_DTYPE_BYTES:
        shown = settings.kv_dtype if len(settings.kv_dtype) <= 30 else \
            settings.kv_dtype[:29] + "…"
        raise ValueError(f"the log's KV cache dtype {shown!r} is not one kvdrill sizes (auto, "
                         "16-bit, fp8, int8, fp32), so the bytes of a token cannot be checked: "
                         "give a log of a run with one of those")
    stated = KV_DTYPE_BYTES.get(settings.kv_dtype)
    if stated is not None:
        return stated
    return 2  # auto: the model's 16-bit compute dtype (quantised weights compute in bf16)


def _version(text: str | None) -> tuple[int, ...] | None:
    if not text:
        return None
    parts = re.match(r"(\d{1,3})\.(\d{1,3})(?:\.(\d{1,3}))?", text)
    if parts is None:
        return None
    return tuple(int(p) for p in parts.groups() if p is not None)


# vLLM's hybrid KV-cache manager (one group per layer kind, vllm PR 17996) shipped in 0.9.1;
# before it, and in V0, every layer holds every token.
_HYBRID_SINCE = (0, 9, 1)


def _one_group_why(log: EngineLog) -> str | None:
    """Why the engine put every layer in one KV-cache group, when it did."""
    if log.engine == "vllm-v0":
        return "V0 gives every layer the whole context"
    if log.engine == "sglang":
        return "SGLang's pool as sized here holds every layer"
    if log.settings.get("hybrid_kv_cache_manager") == "off":
        return "the log says the hybrid KV-cache manager is off, so every layer holds every token"
    version = _version(log.version)
    if log.engine == "vllm-v1" and version is not None and version < _HYBRID_SINCE:
        return (f"vLLM {log.version} predates the hybrid KV-cache manager (0.9.1): every layer "
                "holds every token")
    return None


def _layer_groups(model: ModelPreset, stage_layers: int,
                  log: EngineLog | None = None) -> tuple[int, int, str]:
    """(groups, layers per group, how) of vLLM V1's KV-cache grouping for one stage."""
    layers = model.attention_layers or model.layers
    windowed = model.windowed_layers if model.window is not None else 0
    if stage_layers < layers:  # a pipeline stage holds its share of each kind
        windowed = min(stage_layers, math.ceil(windowed * stage_layers / layers))
    full = stage_layers - windowed
    if not windowed or not full:
        return 1, stage_layers, "one KV-cache group of every layer"
    why = _one_group_why(log) if log is not None else None
    if why is not None:
        return 1, stage_layers, f"one KV-cache group of every layer ({why})"
    size = min(windowed, full)
    groups = math.ceil(windowed / size) + math.ceil(full / size)
    padding = groups * size - stage_layers
    version = _version(log.version) if log is not None else None
    if padding and log is not None and "padding_layers" not in log.settings and \
            version is not None and version < (0, 10):
        # the hybrid manager shipped in 0.9.1 or 0.9.2; where it grouped this model it warned
        # "Add N padding layers", and this log has no such line
        return 1, stage_layers, (f"one KV-cache group of every layer (vLLM {log.version} "
                                 "with no padding-layer warning: the hybrid KV-cache manager "
                                 "did not group these layers)")
    how = (f"{groups} KV-cache groups of {size} layers ({full} full, {windowed} windowed"
           + (f", {padding} padding" if padding else "") + ")")
    return groups, size, how


def _partition(log: EngineLog, layers: int, pp: int, notes: list[str]) -> list[int]:
    """The stages' layer counts from VLLM_PP_LAYER_PARTITION, when the log gives it and it
    adds up; [] otherwise."""
    text = log.settings.get("pp_layer_partition")
    if not text or pp < 2:
        return []
    parts = [int(p) for p in text.split(",")[:64]]
    if len(parts) != pp or sum(parts) != layers:
        notes.append(f"VLLM_PP_LAYER_PARTITION={text} does not split {layers} layers into {pp} "
                     "stages: the even split is used")
        return []
    notes.append(f"pipeline stages of {text} layers (VLLM_PP_LAYER_PARTITION): the largest, "
                 f"{max(parts)}, sizes the cache")
    return parts


def _cross_attention(model: ModelPreset) -> bool:
    """An mllama-style model: layers that attend to the image and hold no per-token KV."""
    text = " ".join((*model.config_notes, model.note or "", model.source))
    return "cross_attention_layers" in text or "cross-attention layers" in text


def account(log: EngineLog, model: ModelPreset, gpu: GpuPreset | None,
            settings: Settings) -> tuple[list[Row], list[str]]:
    """The rows of the accounting and the notes (assumptions, conflicts, what is not said)."""
    if log.mixed is not None:
        raise ValueError(log.mixed)
    notes = list(settings.conflicts)
    if model.attention_layers is not None and model.state_elements:
        raise ValueError(f"{model.name} keeps a recurrent state beside its KV cache: vLLM "
                         "pads its pages to the state's size, which a log alone does not show, "
                         "so kvdrill does not account for this log")
    tp, pp, block = settings.tensor_parallel, settings.pipeline_parallel, settings.block_size
    dtype_bytes = _kv_bytes(settings, model)
    layers = model.attention_layers or model.layers
    if log.engine == "vllm-v0" and _cross_attention(model) and model.layers > layers:
        notes.append(f"V0 gives each of {model.name}'s {model.layers} layers a paged cache, "
                     f"its {model.layers - layers} cross-attention layers included")
        layers = model.layers
    stage_layers = math.ceil(layers / pp)
    partition = _partition(log, layers, pp, notes)
    if partition:
        stage_layers = max(partition)
    if model.attention == "mla":
        per_layer = (model.mla_latent + model.mla_rope) * dtype_bytes
        per_layer_how = (f"({model.mla_latent} latent + {model.mla_rope} rope) × "
                         f"{dtype_bytes} B, whole on every rank")
        if log.engine == "vllm-v0" and per_layer % 256:
            # V0's MLA backends pad each token's entry to a multiple of 256 bytes
            per_layer += -per_layer % 256
            per_layer_how += f", padded to {per_layer:,} B (V0 MLA)"
    else:
        dp_attention = log.settings.get("dp_attention") in ("1", "True", "true")
        heads = model.kv_heads if dp_attention else max(1, model.kv_heads // tp)
        per_layer = 2 * heads * model.head_dim * dtype_bytes
        split = f"{model.kv_heads} KV heads ÷ TP {tp}" if tp > 1 else f"{heads} KV heads"
        if dp_attention:
            split = f"{heads} KV heads (data-parallel attention: a rank holds whole sequences)"
        elif tp > model.kv_heads:
            split += " (replicated: 1 a GPU)"
        per_layer_how = f"2 × {split} × {model.head_dim} head_dim × {dtype_bytes} B"
    groups, group_layers, group_how = _layer_groups(model, stage_layers, log)
    # decode context parallel: each rank holds every n-th token, and vLLM multiplies its count
    context_parallel = int(log.settings.get("context_parallel", "1") or 1)
    if not 1 <= context_parallel <= 4096:
        notes.append(f"a context-parallel size of {context_parallel} is no setting: taken as 1")
        context_parallel = 1
    page = block * per_layer
    rows: list[Row] = []
    logged_memory = log.figures.get("kv_cache_memory")
    memory_gib = logged_memory.value if logged_memory is not None else None
    if memory_gib is None and "kv_cache_size_profiled" in log.figures:
        memory_gib = log.figures["kv_cache_size_profiled"].value
    rows.append(Row("kv_bytes_per_token_per_gpu", None, per_layer * stage_layers, "B",
                    f"{stage_layers} layers on a GPU"
                    + (f" (the largest of {pp} pipeline stages)" if pp > 1 else "")
                    + f" × {per_layer_how}"))
    expected_tokens: int | None = None
    expected_blocks: int | None = None
    if memory_gib is not None:
        available = memory_gib * GIB
        expected_blocks = int(available // page // group_layers)
        expected_tokens = expected_blocks // groups * block * context_parallel
        rows.append(Row("kv_cache_memory", memory_gib, None, "GiB",
                        "per GPU, as the log states it: what the token count is computed from"))
        if log.engine == "vllm-v0" or "gpu_blocks" in log.figures:
            rows.append(Row("gpu_blocks", log.figure("gpu_blocks"), expected_blocks, "blocks",
                            f"{memory_gib:g} GiB ÷ ({block} tokens × {per_layer:,} B a "
                            f"layer-token) ÷ {group_layers} layers"))
        how = (f"{memory_gib:g} GiB ÷ {page:,} B a page ({block} tokens × {per_layer:,} B) ÷ "
               f"{group_layers} layers = {expected_blocks:,} blocks"
               + (f" ÷ {groups} groups" if groups > 1 else "") + f" × {block} tokens"
               + (f" × {context_parallel} context-parallel ranks" if context_parallel > 1
                  else "") + "; " + group_how)
        logged_tokens = log.figure("kv_tokens")
        if logged_tokens is None and log.figure("gpu_blocks") is not None:
            logged_tokens = log.figure("gpu_blocks") * block  # type: ignore[operator]
        rows.append(Row("kv_tokens", logged_tokens, expected_tokens, "tokens", how))
    elif log.figure("kv_tokens") is not None:
        # a V1 log that prints the token count but not the memory it came from (0.8-0.9
        # printed "Available KV cache memory" only at debug level)
        counted = int(log.figure("kv_tokens") or 0)
        context_blocks = counted // context_parallel // block
        expected_blocks = context_blocks * groups
        implied = expected_blocks * page * group_layers / GIB
        rows.append(Row("kv_tokens", counted, None, "tokens",
                        "no available-memory line to compute it from; it implies "
                        f"{implied:.2f} GiB of KV a GPU ({context_blocks:,} blocks"
                        + (f" × {groups} groups" if groups > 1 else "")
                        + f" × {page:,} B × {group_layers} layers); " + group_how))
        rows.append(Row("kv_cache_memory", None, implied, "GiB",
                        "what the logged token count needs on a GPU (the log does not say)"))
        if log.figure("gpu_blocks") is not None:
            rows.append(Row("gpu_blocks", log.figure("gpu_blocks"), expected_blocks, "blocks",
                            f"{counted:,} tokens ÷ {block}"
                            + (f" × {groups} groups" if groups > 1 else "")))
            expected_blocks = int(log.figure("gpu_blocks") or expected_blocks)
        expected_tokens = counted
        notes.append(("the log's available KV memory was refused (below)" if
                      "kv_cache_memory" in log.refused else "the log gives no available KV "
                      "memory") + ", so the token count is not checked against the card: "
                     "kvdrill says what memory it implies")
    elif log.figure("gpu_blocks") is not None:
        blocks = log.figure("gpu_blocks")
        assert blocks is not None
        expected_blocks = int(blocks)
        expected_tokens = int(blocks) // groups * block
        rows.append(Row("kv_tokens", None, expected_tokens, "tokens",
                        f"{int(blocks):,} GPU blocks"
                        + (f" ÷ {groups} groups" if groups > 1 else "")
                        + f" × {block} tokens (the log gives blocks, no memory figure)"))
        rows.append(Row("kv_cache_memory", None, blocks * page * group_layers / GIB, "GiB",
                        f"{int(blocks):,} blocks × {page:,} B × {group_layers} layers"))
    elif log.figure("kv_tokens_sglang") is not None:
        tokens = log.figure("kv_tokens_sglang")
        assert tokens is not None
        expected: float | None = None
        stated = log.figure("sglang_kv_gb")
        how = ("SGLang's K and V sizes (printed GB, computed in GiB) ÷ the bytes a token needs "
               "on a GPU" if stated is not None else "SGLang's count; "
               + ("its K/V size line was refused (see the notes)" if "sglang_kv_gb" in log.refused
                  else "no K/V size line to check"))
        full_pool, swa_pool = log.figure("sglang_full_tokens"), log.figure("sglang_swa_tokens")
        free = log.figure("sglang_available_gb")
        if free is not None and groups == 1 and full_pool is None:
            cell = per_layer * stage_layers
            expected = float(int(free * GIB // cell) // block * block)
            how = (f"SGLang's available memory {free:g} GiB (printed GB) ÷ {cell:,} B a "
                   f"token on a GPU, rounded down to its page of {block}")
        elif stated is not None and full_pool is not None and swa_pool is not None:
            expected, how = _sglang_swa(model, stage_layers, per_layer, stated, tokens,
                                        full_pool, swa_pool)
        elif stated is not None:  # SGLang prints GB but divides by 2^30
            expected = float(int(stated * GIB // (per_layer * stage_layers)))
        rows.append(Row("kv_tokens", tokens, expected, "tokens", how))
    elif log.refused:
        first = next(iter(log.refused.values())).split(": left out")[0]
        raise ValueError(f"no KV-cache figure kvdrill can use: {first}; give a log whose "
                         "KV-cache lines hold the numbers the engine printed")
    else:
        raise ValueError("the log has no KV-cache line (Available KV cache memory, GPU KV cache "
                         "size, # GPU blocks, num_gpu_blocks, or SGLang's KV Cache is "
                         "allocated): paste the engine's start-up through its KV-cache sizing")
    if log.figure("estimated_max_len") is not None and memory_gib is not None:
        _estimated_length(log, rows, model, memory_gib, block, per_layer, layers, stage_layers,
                          groups, pp)
    _concurrency(log, rows, expected_tokens, expected_blocks, groups, block, model, settings,
                 notes, stage_layers)
    if groups > 1:
        _tokens_from_concurrency(log, rows, notes)
    _memory(log, rows, gpu, settings, notes, model)
    if settings.sources.get("block_size") == "default":
        notes.append(f"block size {block}: the engine's default"
                     + (" for MLA backends" if model.attention == "mla" else "")
                     + "; give --block-size if it was set")
    if settings.sources.get("kv_cache_dtype") == "default":
        notes.append("KV dtype: the model's (auto); give --kv-cache-dtype fp8 if it was set")
    notes.extend(log.notes)
    notes.extend(log.refused.values())
    if (later := later_start_note(log)) is not None:
        notes.append(later)
    _explain_disagreement(rows, model, settings, log, notes)
    return rows, notes


def _sglang_swa(model: ModelPreset, stage_layers: int, per_layer: int, stated: float,
                tokens: float, full_pool: float, swa_pool: float) -> tuple[float | None, str]:
    """SGLang's sliding-window pool: full layers hold full_layer_tokens, windowed ones
    swa_layer_tokens, in one K and V allocation. The count the log gives is checked as what
    the K and V sizes leave for its pool once the other pool is taken out."""
    layers = model.attention_layers or model.layers
    windowed = model.windowed_layers if model.window is not None else 0
    if stage_layers < layers:
        windowed = min(stage_layers, math.ceil(windowed * stage_layers / layers))
    full = stage_layers - windowed
    if not windowed or not full:
        return None, ("SGLang's sliding-window pool, but the model has no windowed and full "
                      "layers to split it between: not checked")
    total = stated * GIB
    if tokens == swa_pool:
        found = (total - full_pool * full * per_layer) // (windowed * per_layer)
        other = f"{int(full_pool):,} full-layer tokens × {full} full layers"
        mine = f"{windowed} windowed layers"
    elif tokens == full_pool:
        found = (total - swa_pool * windowed * per_layer) // (full * per_layer)
        other = f"{int(swa_pool):,} windowed-layer tokens × {windowed} windowed layers"
        mine = f"{full} full layers"
    else:
        return None, "SGLang's sliding-window pool: the count is neither pool's; not checked"
    return float(int(found)), (f"SGLang's sliding-window pool: K and V sizes (GiB) less "
                               f"{other}, ÷ ({mine} × {per_layer:,} B)")


def _estimated_length(log: EngineLog, rows: list[Row], model: ModelPreset, memory_gib: float,
                      block: int, per_layer: int, layers: int, stage_layers: int, groups: int,
                      pp: int) -> None:
    """V1's start-up error: the longest request the available memory holds."""
    logged = log.figure("estimated_max_len")
    if groups > 1:
        rows.append(Row("estimated_max_len", logged, None, "tokens",
                        "windowed layers hold only their window: vLLM's search over lengths "
                        "is not checked here"))
        return
    # vLLM's check searches for the longest length whose blocks fit: blocks × block tokens
    counted = layers if pp > 1 else stage_layers
    blocks = int(memory_gib * GIB // (block * per_layer * counted))
    how = (f"{memory_gib:g} GiB ÷ ({block} tokens × {per_layer:,} B × {counted} layers) = "
           f"{blocks:,} blocks × {block}")
    if pp > 1:
        how += (f"; vLLM's start-up check counts all {layers} layers, not a stage's "
                f"{stage_layers} (vllm issue 34076): the stage would hold "
                f"{int(memory_gib * GIB // (block * per_layer * stage_layers)) * block:,}")
    rows.append(Row("estimated_max_len", logged, float(blocks * block), "tokens", how))


def _concurrency(log: EngineLog, rows: list[Row], tokens: int | None, blocks: int | None,
                 groups: int, block: int, model: ModelPreset, settings: Settings,
                 notes: list[str], stage_layers: int) -> None:
    logged = log.figure("max_concurrency")
    length = log.figure("concurrency_tokens") or settings.max_model_len
    if logged is None and length is None:
        return
    if length is None or tokens is None:
        rows.append(Row("max_concurrency", logged, None, "requests",
                        "needs the request length and the token count"))
        return
    if groups > 1:
        _windowed_concurrency(log, rows, logged, int(length), blocks, block, model,
                              stage_layers)
        return
    per_request = math.ceil(length / block)
    if per_request < 1:
        rows.append(Row("max_concurrency", logged, None, "requests",
                        "the request length the log gives is no length"))
        return
    expected = (blocks if blocks is not None else tokens // block) / per_request
    rows.append(Row("max_concurrency", logged, expected, "requests",
                    f"{(blocks if blocks is not None else tokens // block):,} blocks ÷ "
                    f"ceil({int(length):,} ÷ {block}) blocks a request"))


def _tokens_from_concurrency(log: EngineLog, rows: list[Row], notes: list[str]) -> None:
    """Later vLLM prints "GPU KV cache size" as int(max_concurrency × max_model_len) (its
    _report_kv_cache_config), not num_blocks // groups × block_size. For a windowed model the
    two differ; the log shows which it printed when its token count is its concurrency times
    its length (the concurrency is printed to 0.01)."""
    tokens, concurrency = log.figure("kv_tokens"), log.figure("max_concurrency")
    length = log.figure("concurrency_tokens")
    if tokens is None or concurrency is None or not length:
        return
    if abs(tokens - concurrency * length) > 0.006 * length + 1:
        return
    index = next((i for i, r in enumerate(rows) if r.name == "kv_tokens"), None)
    row = next((r for r in rows if r.name == "max_concurrency"), None)
    if index is None or rows[index].agrees is True:
        return
    expected = None if row is None or row.expected is None else float(int(row.expected * length))
    how = ("this vLLM prints the token count as max_concurrency × max_model_len (its "
           "_report_kv_cache_config), not blocks ÷ groups × block_size: "
           + (f"{row.expected:.4f} × {int(length):,}" if expected is not None and row
              is not None else "the concurrency needs max_num_batched_tokens, which the log "
              "does not give"))
    rows[index] = Row("kv_tokens", rows[index].logged, expected, "tokens", how)
    notes.append("the logged token count is the concurrency times the length: the engine's "
                 "later rule for models with windowed layers")


def _windowed_concurrency(log: EngineLog, rows: list[Row], logged: float | None, length: int,
                          blocks: int | None, block: int, model: ModelPreset,
                          stage_layers: int) -> None:
    """vLLM V1's get_max_concurrency_for_kv_cache_config: num_blocks ÷ the blocks one request
    needs across the groups, where a full group needs cdiv(length, block) and a windowed one
    cdiv(min(window − 1 + max_num_batched_tokens, length), block) + 1 (a chunked-local one,
    cdiv(min(chunk + max_num_batched_tokens, length), block))."""
    layers = model.attention_layers or model.layers
    windowed = model.windowed_layers
    if stage_layers < layers:
        windowed = min(stage_layers, math.ceil(windowed * stage_layers / layers))
    full = stage_layers - windowed
    size = min(windowed, full)
    window = int(model.window or 0)
    if blocks is None or size < 1 or window < 1:
        rows.append(Row("max_concurrency", logged, None, "requests",
                        "windowed layers hold only their window; needs the block count"))
        return
    windowed_groups, full_groups = math.ceil(windowed / size), math.ceil(full / size)
    chunked = "chunk" in " ".join((model.source, model.note or "", *model.config_notes))

    def per_request(batched: int) -> int:
        if chunked:
            local = math.ceil(min(window + batched, length) / block)
        else:
            local = math.ceil(min(window - 1 + batched, length) / block) + 1
        return full_groups * math.ceil(length / block) + windowed_groups * local

    kind = "chunk" if chunked else "window"
    stated = log.settings.get("max_num_batched_tokens")
    batched = int(stated) if stated and stated.isdigit() and 0 < int(stated) < 1 << 31 else None
    if batched is None:
        options = ", ".join(f"{b:,} gives {blocks / per_request(b):.2f}" for b in (2048, 8192))
        rows.append(Row("max_concurrency", logged, None, "requests",
                        f"windowed layers hold their {kind} ({window:,}) plus a step's "
                        "tokens, so it depends on max_num_batched_tokens, which the log does "
                        f"not give: {options}"))
        return
    need = per_request(batched)
    rows.append(Row("max_concurrency", logged, blocks / need, "requests",
                    f"{blocks:,} blocks ÷ {need:,} a request: {full_groups} full group"
                    f"{'s' if full_groups > 1 else ''} × ceil({length:,} ÷ {block}) + "
                    f"{windowed_groups} windowed × "
                    + (f"ceil(min({window:,} + {batched:,}, {length:,}) ÷ {block})" if chunked
                       else f"(ceil(min({window:,} − 1 + {batched:,}, {length:,}) ÷ {block}) "
                       "+ 1)")
                    + " (max_num_batched_tokens from the log)"))


def _memory(log: EngineLog, rows: list[Row], gpu: GpuPreset | None, settings: Settings,
            notes: list[str], model: ModelPreset) -> None:
    weights = log.figure("weights")
    if weights is not None:
        unit = log.figures["weights"].unit
        how = "as loaded" + (" (V0 prints GB; the figure is GiB)"
                             if unit == "GB" and log.engine == "vllm-v0" else "")
        expected = None
        if settings.weights_differ:
            how += f"; not checked: {settings.weights_differ}"
        elif not settings.quantized and model.weights_dtype in ("bf16", "fp16") and \
                settings.pipeline_parallel == 1:
            expected = float(model.params) * 2 / settings.tensor_parallel / GIB
            how = (f"{float(model.params) / 1e9:.2f}B params × 2 B"
                   + (f" ÷ TP {settings.tensor_parallel}" if settings.tensor_parallel > 1
                      else "") + f", per GPU ({how})")
        rows.append(Row("weights", weights, expected, "GiB", how))
    memory = log.figure("kv_cache_memory")
    if gpu is None or gpu.reported_mib is None or weights is None or memory is None:
        return
    utilization = settings.utilization if settings.utilization is not None else 0.9
    total = float(gpu.reported_mib) * 2**20 / GIB
    rest = total * utilization - weights - memory
    how = (f"{gpu.name}: {total:.2f} GiB reported × utilisation {utilization:g} − weights "
           f"{weights:g} GiB − KV {memory:g} GiB")
    if rest < 0:
        # no amount of memory is below zero: the card, its utilisation or a figure is not
        # the log's, said by its figures rather than printed as a negative amount
        rows.append(Row("activation_and_overhead", None, None, "GiB",
                        how + " leaves less than nothing: not computed (see the notes)"))
        notes.append(_card_too_small(gpu, total, utilization, weights, memory))
    else:
        rows.append(Row("activation_and_overhead", None, rest, "GiB",
                        how + ": what the activation peak, CUDA graphs and non-torch memory "
                        "took"))
    if settings.utilization is None:
        notes.append("utilisation 0.9 (vLLM's default up to v0.19; 0.92 later): give "
                     "--gpu-memory-utilization if it was set")


def _card_too_small(gpu: GpuPreset, total: float, utilization: float, weights: float,
                    memory: float) -> str:
    """What a log whose weights and KV outgrow the card given is told: the figures, and the
    presets (by reported memory) that would hold them."""
    from trainer.capacity.presets import gpus

    needed = (weights + memory) / utilization
    holding = sorted((g for g in gpus().values() if g.reported_mib is not None
                      and float(g.reported_mib) * 2**20 / GIB >= needed),
                     key=lambda g: float(g.reported_mib or 0))
    hint = ("such as " + ", ".join(g.id for g in holding[:3]) if holding else
            "larger than any preset kvdrill knows")
    share = (f"{weights:g} GiB of weights + {memory:g} GiB of KV = {weights + memory:.2f} GiB "
             "a GPU")
    if total < weights + memory:
        return (f"{gpu.name} cannot be this log's card: it reports {total:.2f} GiB and the "
                f"log holds {share}; at utilisation {utilization:g} the card needs at least "
                f"{needed:.2f} GiB ({hint}): give the --gpu it ran on")
    least = math.ceil((weights + memory) / total * 100) / 100
    return (f"{gpu.name} at utilisation {utilization:g} gives {total * utilization:.2f} GiB, "
            f"less than the log's {share}: give --gpu-memory-utilization as it was set (at "
            f"least {least:.2f}), or the --gpu it ran on ({hint})")


def _explain_disagreement(rows: list[Row], model: ModelPreset, settings: Settings,
                          log: EngineLog, notes: list[str]) -> None:
    """Where the tokens disagree, the one input that gives the logged figure: a KV dtype other
    than the one assumed, or a tensor-parallel size that splits the KV heads otherwise (the
    weights per GPU, where checked, say which); both named when nothing tells them apart."""
    row = next((r for r in rows if r.name == "kv_tokens"), None)
    if row is None or row.agrees is not False or not row.logged or not row.expected:
        return
    ratio = row.logged / row.expected
    fitting = [c for c in _candidates(model, settings, log)
               if abs(ratio - c.factor) <= AGREES * c.factor]
    weights = next((r for r in rows if r.name == "weights"), None)
    if weights is not None and weights.logged and weights.expected:
        per_tp = weights.expected * settings.tensor_parallel
        if weights.agrees:  # the weights per GPU are those of the TP assumed
            fitting = [c for c in fitting if not c.tensor_parallel]
        elif shown := [c for c in fitting if c.tensor_parallel and abs(
                weights.logged - per_tp / c.tensor_parallel) <= AGREES * weights.logged]:
            notes.append(f"the logged tokens are {ratio:.2f}× the expected: {shown[0].what} "
                         "would explain it, and the weights per GPU say the same; check the "
                         "log's tensor_parallel_size")
            return
    if fitting:
        checks = " and ".join(dict.fromkeys(c.setting for c in fitting))
        notes.append(f"the logged tokens are {ratio:.2f}× the expected: "
                     + " or ".join(c.what for c in fitting)
                     + f" would explain it; check the log's {checks}")
        return
    if 0.95 <= ratio < 1 and settings.tensor_parallel > 1:
        notes.append(f"the logged tokens are {ratio:.3f}× the expected: vLLM sizes every "
                     "worker's cache to the smallest, and the log's memory figure may be one "
                     "worker's; another with "
                     f"{(1 - ratio) * 100:.1f}% less free memory (a connector's buffers, "
                     "another process) would explain it")
        return
    notes.append(f"the logged tokens are {ratio:.3f}× the expected, and no single setting "
                 "explains it: check the model (a different release?) and the block size")


@record
class _Candidate:
    what: str
    factor: float  # the logged ÷ expected tokens it gives
    setting: str
    tensor_parallel: int | None = None  # the TP it assumes, for a TP candidate


def _candidates(model: ModelPreset, settings: Settings, log: EngineLog) -> list[_Candidate]:
    """Each single change that would move the token count: the other KV dtypes, and TP twice
    or half as wide where that changes the KV heads a GPU holds (not MLA's latent, whole on
    every rank, nor data-parallel attention's whole heads)."""
    dtype_bytes = _kv_bytes(settings, model)
    found = [_Candidate(f"{name} KV ({size} byte{'s' if size > 1 else ''}, not {dtype_bytes})",
                        dtype_bytes / size, "kv_cache_dtype")
             for name, size in (("fp8", 1), ("bf16", 2)) if size != dtype_bytes]
    if model.attention == "mla" or log.settings.get("dp_attention") in ("1", "True", "true"):
        return found
    tp = settings.tensor_parallel
    heads = max(1, model.kv_heads // tp)
    for other in (tp * 2, tp // 2 if tp % 2 == 0 else 0):
        if other >= 1 and (factor := heads / max(1, model.kv_heads // other)) != 1:
            found.append(_Candidate(f"TP {other} rather than {tp}", factor,
                                    "tensor_parallel_size", other))
    return found
