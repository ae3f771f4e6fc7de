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
from dataclasses import dataclass
from typing import Any

from trainer.capacity.presets import GpuPreset, ModelPreset
from trainer.errors import UnknownName
from trainer.reading.engine_log import EngineLog

GIB = 2**30
# Within this share a logged figure agrees with one computed from the log's own rounded
# memory figure (printed to 0.01 GiB) or from a block count.
AGREES = 0.01
KV_DTYPE_BYTES = {"auto": None, "bfloat16": 2, "bf16": 2, "float16": 2, "fp16": 2, "half": 2,
                  "fp8": 1, "fp8_e4m3": 1, "fp8_e5m2": 1, "fp8_inc": 1, "fp8_ds_mla": 1,
                  "float32": 4, "fp32": 4, "int8": 1}
# Hugging Face names of quantised or renamed releases keep the base model's geometry.
_RELEASE_SUFFIX = re.compile(
    r"[-_.](?:fp8(?:[-_]dynamic)?|fp8[-_]e4m3|awq|gptq(?:[-_]int[48])?|int[48]|w[48]a(?:8|16)"
    r"|quantized(?:\.w[48]a(?:8|16))?|bnb[-_]4bit|4bit|8bit|instruct|chat|it|base|hf|"
    r"mlx|gguf|dynamic|\d{4})$", re.IGNORECASE)


_QUANTIZED = re.compile(r"fp8|awq|gptq|int4|int8|w4a16|w8a8|w4a8|bnb|quantized|mxfp4|nvfp4|"
                        r"compressed|marlin|gguf", re.IGNORECASE)


@dataclass(frozen=True)
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


@dataclass(frozen=True)
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
    """The preset a Hugging Face name is a release of: `…-FP8`, `…-AWQ`, `…-Instruct` keep
    their base's geometry (KV does not change with the weights' quantisation). UnknownName
    when none matches, from the last name tried."""
    tail = name.strip().rstrip("/").rsplit("/", 1)[-1]
    owner = name.strip().rsplit("/", 1)[0] + "/" if "/" in name.strip() else ""
    error: Exception | None = None
    for _ in range(6):
        try:
            preset: ModelPreset = find(owner + tail)
            return preset
        except UnknownName as failed:  # kept for the last try
            error = failed
        shorter = _RELEASE_SUFFIX.sub("", tail)
        if shorter == tail:
            break
        tail = shorter
    assert error is not None
    raise error


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
            if value is not None and not _sane(name, value):
                conflicts.append(f"{name}: the log's {stated!r} is no setting an engine runs "
                                 "with; ignored")
                value = None
        if value is not None:
            sources[name] = "log"
            if option is not None and parse(str(option)) != value:
                conflicts.append(f"{name}: the log says {value}, the option {option}; the log's "
                                 "is used")
            return value
        if option is not None:
            sources[name] = "option"
            return parse(str(option))
        sources[name] = "default"
        return default

    # V1's MLA backends (FlashMLA) page by 64; V0 and every other attention by 16
    default_block = 64 if model.attention == "mla" and log.engine != "vllm-v0" else 16
    kv = pick("kv_cache_dtype", options.get("kv_cache_dtype"), "auto", str)
    tp = pick("tensor_parallel_size", options.get("tensor_parallel_size"), 1, int)
    pp = pick("pipeline_parallel_size", options.get("pipeline_parallel_size"), 1, int)
    block = pick("block_size", options.get("block_size"), default_block, int)
    length = pick("max_model_len", options.get("max_model_len"), None, int)
    utilization = pick("gpu_memory_utilization", options.get("gpu_memory_utilization"), None,
                       float)
    names = " ".join(str(v) for v in (log.settings.get("model"), options.get("model_name"),
                                      log.settings.get("quantization")) if v)
    quantized = bool(_QUANTIZED.search(names))
    return Settings(max(1, tp), max(1, pp), kv.lower(), max(1, block), length, utilization,
                    sources, tuple(conflicts), quantized)


_BOUNDS = {"tensor_parallel_size": 4096, "pipeline_parallel_size": 4096, "block_size": 1 << 20,
           "max_model_len": 1 << 31, "gpu_memory_utilization": 1}


def _sane(name: str, value: Any) -> bool:
    if isinstance(value, str):
        return len(value) <= 40
    most = _BOUNDS.get(name)
    return most is None or 0 < value <= most


def with_conflict(settings: Settings, conflict: str) -> Settings:
    from dataclasses import replace

    return replace(settings, conflicts=(*settings.conflicts, conflict))


def _kv_bytes(settings: Settings, model: ModelPreset) -> int:
    stated = KV_DTYPE_BYTES.get(settings.kv_dtype)
    if stated is not None:
        return stated
    return 2  # auto: the model's 16-bit compute dtype (quantised weights compute in bf16)


def _layer_groups(model: ModelPreset, stage_layers: int) -> tuple[int, int, str]:
    """(groups, layers per group, how) of vLLM V1's KV-cache grouping for one stage."""
    layers = model.attention_layers or model.layers
    windowed = model.windowed_layers if model.window is not None else 0
    if stage_layers < layers:  # a pipeline stage holds its share of each kind
        windowed = min(stage_layers, math.ceil(windowed * stage_layers / layers))
    full = stage_layers - windowed
    if not windowed or not full:
        return 1, stage_layers, "one KV-cache group of every layer"
    size = min(windowed, full)
    groups = math.ceil(windowed / size) + math.ceil(full / size)
    padding = groups * size - stage_layers
    how = (f"{groups} KV-cache groups of {size} layers ({full} full, {windowed} windowed"
           + (f", {padding} padding" if padding else "") + ")")
    return groups, size, how


def account(log: EngineLog, model: ModelPreset, gpu: GpuPreset | None,
            settings: Settings) -> tuple[list[Row], list[str]]:
    """The rows of the accounting and the notes (assumptions, conflicts, what is not said)."""
    notes = list(settings.conflicts)
    if model.attention_layers is not None and model.state_elements:
        raise ValueError(f"{model.name} keeps a recurrent state beside its KV cache: vLLM "
                         "pads its pages to the state's size, which a log alone does not show, "
                         "so kvdrill does not account for this log")
    tp, pp, block = settings.tensor_parallel, settings.pipeline_parallel, settings.block_size
    dtype_bytes = _kv_bytes(settings, model)
    layers = model.attention_layers or model.layers
    stage_layers = math.ceil(layers / pp)
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
    groups, group_layers, group_how = _layer_groups(model, stage_layers)
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
    elif log.figure("gpu_blocks") is not None:
        blocks = log.figure("gpu_blocks")
        assert blocks is not None
        expected_tokens = int(blocks) * block
        rows.append(Row("kv_tokens", None, expected_tokens, "tokens",
                        f"{int(blocks):,} GPU blocks × {block} tokens (V0 logs blocks)"))
        rows.append(Row("kv_cache_memory", None, blocks * page * group_layers / GIB, "GiB",
                        f"{int(blocks):,} blocks × {page:,} B × {group_layers} layers"))
    elif log.figure("kv_tokens_sglang") is not None:
        tokens = log.figure("kv_tokens_sglang")
        assert tokens is not None
        expected = None
        stated = log.figure("sglang_kv_gb")
        if stated is not None:  # SGLang prints GB but divides by 2^30
            expected = float(int(stated * GIB // (per_layer * stage_layers)))
        rows.append(Row("kv_tokens", tokens, expected, "tokens",
                        "SGLang's K and V sizes (printed GB, computed in GiB) ÷ the bytes a "
                        "token needs on a GPU" if stated is not None
                        else "SGLang's count; no K/V size line to check"))
    else:
        raise ValueError("the log has no KV-cache line (Available KV cache memory, GPU KV cache "
                         "size, # GPU blocks, or SGLang's KV Cache is allocated): paste the "
                         "engine's start-up through its KV-cache sizing")
    _concurrency(log, rows, expected_tokens, expected_blocks, groups, block, model, settings,
                 notes)
    _memory(log, rows, gpu, settings, notes, model)
    if settings.sources.get("block_size") == "default":
        notes.append(f"block size {block}: the engine's default"
                     + (" for MLA backends" if model.attention == "mla" else "")
                     + "; give --block-size if it was set")
    if settings.sources.get("kv_cache_dtype") == "default":
        notes.append("KV dtype: the model's (auto); give --kv-cache-dtype fp8 if it was set")
    notes.extend(log.notes)
    _explain_disagreement(rows, model, settings, per_layer, stage_layers, notes)
    return rows, notes


def _concurrency(log: EngineLog, rows: list[Row], tokens: int | None, blocks: int | None,
                 groups: int, block: int, model: ModelPreset, settings: Settings,
                 notes: list[str]) -> None:
    logged = log.figure("max_concurrency")
    length = log.figure("concurrency_tokens") or settings.max_model_len
    if logged is None and length is None:
        return
    if length is None or tokens is None:
        rows.append(Row("max_concurrency", logged, None, "requests",
                        "needs the request length and the token count"))
        return
    if groups > 1:
        rows.append(Row("max_concurrency", logged, None, "requests",
                        "windowed layers hold only their window: not tokens ÷ length, and "
                        "vLLM's own count depends on max_num_batched_tokens; not checked"))
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


def _memory(log: EngineLog, rows: list[Row], gpu: GpuPreset | None, settings: Settings,
            notes: list[str], model: ModelPreset) -> None:
    weights = log.figure("weights")
    if weights is not None:
        unit = log.figures["weights"].unit
        how = "as loaded" + (" (V0 prints GB; the figure is GiB)"
                             if unit == "GB" and log.engine == "vllm-v0" else "")
        expected = None
        if not settings.quantized and model.weights_dtype in ("bf16", "fp16") and \
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
    rows.append(Row("activation_and_overhead", None, rest, "GiB",
                    how + ": what the activation peak, CUDA graphs and non-torch memory took"))
    if settings.utilization is None:
        notes.append("utilisation 0.9 (vLLM's default up to v0.19; 0.92 later): give "
                     "--gpu-memory-utilization if it was set")
    if rest < 0:
        notes.append(f"the card's memory at utilisation {utilization:g} is less than weights "
                     "plus KV: the card, its memory figure or the utilisation differ from "
                     "those assumed")


def _explain_disagreement(rows: list[Row], model: ModelPreset, settings: Settings,
                          per_layer: int, stage_layers: int, notes: list[str]) -> None:
    """Where the tokens disagree, the one input that gives the logged figure."""
    row = next((r for r in rows if r.name == "kv_tokens"), None)
    if row is None or row.agrees is not False or not row.logged or not row.expected:
        return
    ratio = row.logged / row.expected
    candidates = {
        "fp8 KV (1 byte, not 2)": 2.0, "bf16 KV rather than fp8": 0.5,
        "tensor parallel twice as wide": 2.0, "tensor parallel half as wide": 0.5,
    }
    for what, factor in candidates.items():
        if abs(ratio - factor) <= AGREES * factor:
            notes.append(f"the logged tokens are {ratio:.2f}× the expected: {what} would "
                         "explain it; check the log's kv_cache_dtype and tensor_parallel_size")
            return
    notes.append(f"the logged tokens are {ratio:.3f}× the expected, and no single setting "
                 "explains it: check the model (a different release?) and the block size")
