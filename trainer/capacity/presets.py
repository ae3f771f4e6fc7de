"""Model and GPU presets (presets/*.yaml, each figure with its source), and the one place where
a preset, explicit values and defaults are merged into a Deployment, remembering where each
value came from."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any, TypeVar

from trainer.capacity.deployment import Deployment
from trainer.capacity.identity_cache import by_identity
from trainer.capacity.serving_formulas import INPUTS as SERVING_INPUTS
from trainer.capacity.serving_formulas import draft_from_catalogue
from trainer.errors import InvalidInput, UnknownName
from trainer.reading.exact import Fraction
from trainer.reading.numbers import format_number
from trainer.records import record

PRESET_DIR = Path(__file__).parent / "presets"

DEFAULT_CONTEXT = 4096


@record
class ModelPreset:
    id: str
    name: str
    aliases: tuple[str, ...]
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    head_dim: int
    params: Fraction
    weights_dtype: str
    max_context: int
    source: str
    weights_gb: Fraction | None = None
    weights_source: str | None = None
    active_params: Fraction | None = None
    attention: str = "gqa"
    mla_latent: int = 0
    mla_rope: int = 0
    window: int | None = None
    windowed_layers: int = 0
    experts: int | None = None
    experts_per_token: int | None = None
    shared_experts: int = 0  # experts every token goes through beside its routed ones
    # the layers whose MLP is experts, where not every layer's is (GLM-4.5-Air's first is dense)
    moe_layers: int | None = None
    # the active count its publisher prints, where it counts otherwise (GPT-OSS: no embedding)
    published_active_params: Fraction | None = None
    attention_params: Fraction | None = None  # attention projections: what DP attention copies
    checkpoints: Mapping[str, Mapping[str, Any]] | None = None  # released dtype -> size, source
    note: str | None = None
    attention_layers: int | None = None  # hybrid models: the layers with a KV cache
    state_elements: int | None = None  # hybrid models: state values per recurrent layer
    recurrent_layers: int | None = None  # hybrid models: layers with a state, if not the rest
    vocab: int | None = None  # sizes the embedding table and LM head (prefill FLOP count)
    tied_embeddings: bool = False
    tables_dtype: str | None = None  # embedding and LM head, when not in the weights' dtype
    published_params: Fraction | None = None  # the count its makers publish, for checking
    # A model read from a config.json (not a shipped preset): the file, how each field was
    # read, and why its weights cannot be sized when they cannot.
    config_path: str | None = None
    config_notes: tuple[str, ...] = ()
    config_assumed: tuple[tuple[str, str], ...] = ()  # fields a config left to a default
    weights_unknown: str | None = None
    # A vision tower vLLM loads with the model that `params` leaves out (an estimate)
    uncounted_vision_params: Fraction | None = None
    # A vision tower (and projector) that `params` counts: memory, but never read by a text
    # token's decode step (Gemma-3-4B's SigLIP, 0.42B of its 4.30B)
    vision_params: Fraction | None = None
    # The trained length YaRN stretches (original_max_position_embeddings), where it is not
    # max_context: Qwen3's 32,768 under its 40,960 max_position_embeddings
    rope_original_positions: int | None = None
    # Absolute positions learned as an embedding (OPT): no RoPE scaling stretches them
    learned_positions: bool = False
    # Its `window` is an attention chunk (Llama-4's attention_chunk_size): a layer holds the
    # tokens since its chunk began, at most the chunk, as a window of that size at most does
    chunked_attention: bool = False

    @property
    def from_config(self) -> bool:
        return self.config_path is not None


@record
class GpuPreset:
    id: str
    name: str
    aliases: tuple[str, ...]
    hbm_gb: Fraction
    bandwidth_tbs: Fraction
    source: str
    bf16_tflops: Fraction | None = None
    fp8_tflops: Fraction | None = None
    reported_mib: Fraction | None = None  # the total the driver reports, MiB
    reported_source: str | None = None
    # True where reported_mib is CUDA's own total (what vLLM multiplies), not nvidia-smi's
    reported_by_cuda: bool = False
    note: str | None = None
    # Devices software sees on one card (MI250X: two GCDs, each its own GPU of half the memory
    # and bandwidth): kvdrill sizes a card as one device, so a card of more is not re-targeted.
    devices: int = 1

    @property
    def reported_gb(self) -> Fraction | None:
        return None if self.reported_mib is None else self.reported_mib * 2**20 / 10**9

    @property
    def default_max_num_seqs(self) -> int:
        """vLLM V1's default cap on the sequences one engine runs at once on this card:
        1,024 where the card has at least 70 GiB and is not an A100, else 256
        (EngineArgs.get_batch_defaults)."""
        gib = self.reported_mib / 1024 if self.reported_mib is not None else \
            self.hbm_gb * 10**9 / 2**30
        return 1024 if gib >= 70 and "A100" not in self.name else 256

    @property
    def default_block_size(self) -> int:
        """vLLM's default KV block, in tokens, on this card: 128 on Intel Gaudi (the HPU
        backend: "On HPU devices, block size defaults to 128", vLLM PR #11259), else 16."""
        return 128 if self.name.startswith("Intel Gaudi") else 16


    @property
    def mla_block_size(self) -> int | None:
        """The KV block, in tokens, vLLM's MLA backend forces on this card: FlashMLA's 64 on
        Hopper (H100, H200), CUTLASS MLA's 128 on Blackwell (B200); None where the MLA backend
        keeps the default block."""
        if any(name in self.name for name in ("H100", "H200")):
            return 64
        return 128 if "B200" in self.name else None


_EXACT_FIELDS = {
    "params", "weights_gb", "active_params", "hbm_gb", "bandwidth_tbs", "bf16_tflops",
    "fp8_tflops", "reported_mib", "attention_params", "published_params",
    "uncounted_vision_params", "vision_params", "published_active_params",
}


def _exact(value: Any) -> Any:
    # YAML floats are read through their decimal text, so 3.35 stays exactly 335/100.
    return None if value is None else Fraction(str(value))


def _build(cls: type[Any], preset_id: str, raw: Mapping[str, Any]) -> Any:
    fields = {
        key: _exact(value) if key in _EXACT_FIELDS else value for key, value in raw.items()
    }
    fields["aliases"] = tuple(fields.get("aliases") or ())
    return cls(id=preset_id, **fields)


def _read_preset_file(path: Path, kept: bool = True) -> Any:
    """A shipped preset file's data, parsed once and kept (parsed_cache) while it is
    unchanged; `kept` False: parsed afresh, whatever is kept."""
    from trainer.files import parsed_cache

    text = path.read_text(encoding="utf-8")
    found, data = parsed_cache.lookup(text) if kept else (False, None)
    if not found:
        import yaml

        data = yaml.safe_load(text)
        parsed_cache.keep(text, data)
    return data


P = TypeVar("P", "ModelPreset", "GpuPreset")


def _presets(cls: type[P], path: Path) -> dict[str, P]:
    """The presets of a shipped file; a kept parse of another shape (edited in the cache) is
    parsed afresh and kept anew, never an error."""
    def built(raw: Any) -> dict[str, P]:
        return {key: _build(cls, key, value) for key, value in raw.items()}

    try:
        return built(_read_preset_file(path))
    except (AttributeError, TypeError, ValueError, KeyError):
        return built(_read_preset_file(path, kept=False))


@cache
def models() -> dict[str, ModelPreset]:
    return _presets(ModelPreset, PRESET_DIR / "models.yaml")


@cache
def gpus() -> dict[str, GpuPreset]:
    return _presets(GpuPreset, PRESET_DIR / "gpus.yaml")


_SEPARATORS = re.compile(r"[\s._-]+")


def name_key(name: str) -> str:
    """A preset name as people write it, reduced to what tells presets apart: no Hugging Face
    organisation, no "meta-" prefix, no case, dots, dashes, underscores or spaces. So
    llama31-8b, llama-3.1-8b, llama3.1-8b, Meta-Llama-3.1-8B and meta-llama/Llama-3.1-8B are
    one key."""
    key = name.strip().lower().rsplit("/", 1)[-1]
    key = key.removeprefix("meta-") if key.startswith("meta-llama") else key
    return _SEPARATORS.sub("", key)


# Each table's presets by every name key they answer to (the first preset, in the table's
# order, that has a key wins, as a search in that order would find it), kept with the table.
_NAME_INDEXES: dict[int, tuple[Mapping[str, Any], dict[str, Any]]] = {}


def _name_index(table: Mapping[str, Any]) -> dict[str, Any]:
    def index() -> dict[str, Any]:
        made: dict[str, Any] = {}
        for preset in table.values():
            for key in (name_key(preset.id), *(name_key(alias) for alias in preset.aliases)):
                made.setdefault(key, preset)
        return made

    return by_identity(_NAME_INDEXES, table, index)


def _find(kind: str, name: str, table: Mapping[str, Any]) -> Any:
    found = _name_index(table).get(name_key(name))
    if found is not None:
        return found
    by_name = {preset.id: preset.id for preset in table.values()}
    by_name.update({alias: preset.id for preset in table.values() for alias in preset.aliases})
    import difflib  # only for the hint of a name no preset has

    close = difflib.get_close_matches(name.strip().lower(), by_name, n=6, cutoff=0.5)
    near = list(dict.fromkeys(by_name[name] for name in close))[:3]
    hint = f"did you mean {', '.join(near)}?" if near else f"known: {', '.join(table)}"
    raise UnknownName(f"unknown {kind} preset {name!r}: {hint} (kvdrill calc --list-presets)")


def find_model(name: str) -> ModelPreset:
    preset: ModelPreset = _find("model", name, models())
    return preset


def looks_like_path(text: str) -> bool:
    """A model named by a path rather than a preset: a slash (either way), a .json ending, or
    a leading ~ or ."""
    stripped = text.strip()
    return ("/" in stripped or "\\" in stripped or stripped.lower().endswith(".json")
            or stripped.startswith(("~", ".")))


def _hub_id(text: str) -> bool:
    """owner/name, as a Hugging Face id is written: one slash, nothing that marks a path."""
    return text.count("/") == 1 and "\\" not in text and not text.startswith(("~", ".", "/")) \
        and not text.lower().endswith(".json")


def resolve_model(name: str | ModelPreset) -> ModelPreset:
    """The one rule for naming a model, said aloud when it fails:

    - a bare name (no slash) is a preset; a file or folder of that name in the working folder
      does not shadow it (write ./name for that), and is read only when no preset has the name;
    - owner/name is a local folder when one exists, else, when the owner publishes models
      (PUBLISHERS), a Hugging Face id of a preset (meta-llama/Llama-3.1-8B);
    - anything else that looks like a path (~, ./, /, two slashes, .json) is a file or folder,
      refused by name when it does not exist or cannot be read.

    Only local files are read; nothing is downloaded."""
    if isinstance(name, ModelPreset):
        return name
    import os
    from pathlib import Path

    text = name.strip()
    if not text:
        raise UnknownName("--model names nothing: give a preset (kvdrill calc --list-presets), "
                          "a config.json or a folder that holds one")
    try:
        path = Path(os.path.expanduser(text))
        exists = path.exists() or path.is_symlink()
    except (OSError, ValueError):
        exists = False
    if not looks_like_path(text):
        try:
            return find_model(text)
        except UnknownName:
            if exists:
                return model_from_config(path, text)
            raise
    if exists:
        return model_from_config(path, text)
    if _hub_id(text) and text.split("/", 1)[0].lower() in PUBLISHERS:
        try:
            return find_model(text)
        except UnknownName:
            pass
    from trainer.capacity.model_config import ConfigError

    raise ConfigError(f"{text}: no such file or folder: give a config.json or a folder that "
                      "holds one (a preset is named without a path, e.g. qwen3-32b, or by its "
                      "publisher's Hugging Face id, e.g. Qwen/Qwen3-32B; kvdrill calc "
                      "--list-presets)")


# The Hugging Face owners whose ids name a preset's model (Qwen/Qwen3-32B): owner/name with any
# other owner is a path (models/Qwen3-32B, checkpoints/llama-3.1-8b), refused when it is not
# there rather than read as the preset it ends with.
PUBLISHERS = frozenset({
    "meta-llama", "qwen", "google", "mistralai", "deepseek-ai", "moonshotai", "openai",
    "microsoft", "nvidia", "ai21labs", "facebook", "tiiuae", "ibm-granite", "liquidai",
    "unsloth", "redhatai", "neuralmagic", "nm-testing", "hugging-quants", "casperhansen",
})


def model_from_config(path: Any, shown: str) -> ModelPreset:
    """A model preset made of a local config.json (or the one in a folder)."""
    import os

    from trainer.capacity import model_config

    try:
        is_dir = path.is_dir()
    except OSError:
        is_dir = False
    if is_dir and not os.access(path, os.R_OK | os.X_OK):
        raise model_config.ConfigError(f"{shown}: a folder kvdrill cannot enter (permission "
                                       "denied): give a folder you can read, or the "
                                       "config.json itself")
    file = model_config.config_path(path)
    if file is not path and not file.exists():
        raise model_config.ConfigError(f"{shown}: a folder with no config.json in it: give the "
                                       "folder of a model, or the config.json itself")
    read = model_config.read_config(
        file, shown if file is path else f"{shown.rstrip('/')}/config.json")
    return preset_of_config(read)


def preset_of_config(read: Any) -> ModelPreset:
    """A ConfigModel (model_config) as a ModelPreset."""
    from trainer.capacity.model_config import slug

    f = dict(read.fields)
    name = str(f.pop("name"))
    weights_gb = f.pop("weights_gb")
    return ModelPreset(
        id=slug(name), name=name, aliases=(), source=f"config.json at {read.where}",
        params=Fraction(f.pop("params")), weights_dtype=str(f.pop("weights_dtype")),
        max_context=int(f.pop("max_context") or 0),
        weights_gb=None if weights_gb is None else Fraction(weights_gb),
        weights_source=None if weights_gb is None else f"{read.where}: quantization_config",
        active_params=None if f["active_params"] is None else Fraction(f.pop("active_params")),
        attention_params=Fraction(f.pop("attention_params")),
        config_path=read.where, config_notes=tuple(read.notes), config_assumed=read.assumed,
        uncounted_vision_params=Fraction(read.params.uncounted_vision)
        if read.params.uncounted_vision else None,
        vision_params=Fraction(read.params.vision) if read.params.vision else None,
        **{key: value for key, value in f.items() if key != "active_params"},
    )


def model_of(value: Any) -> ModelPreset:
    """The model a drill's givens name: a preset id, or a model read from a config.json."""
    if isinstance(value, ModelPreset):
        return value
    return find_model(str(value))


def same_shape(model: ModelPreset, other: ModelPreset) -> bool:
    """The same decoder as measured: attention shape, parameters (Mixtral-8x7B has
    Llama-3.1-8B's attention and six times its weights), experts and windows."""
    def shape(m: ModelPreset) -> tuple[Any, ...]:
        return (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim, m.attention, m.experts,
                m.window, m.attention_layers)

    return shape(model) == shape(other) and \
        abs(model.params - other.params) <= other.params / 100


def same_weights(model: ModelPreset, other: ModelPreset) -> bool:
    """The same decoder weight for weight (Meta-Llama-3-8B and Llama-3.1-8B): the same shape,
    parameters, vocabulary and release dtype; only the positions served may differ."""
    return same_shape(model, other) and model.params == other.params and \
        model.vocab == other.vocab and model.weights_dtype == other.weights_dtype


def published_active(model: ModelPreset) -> Fraction | None:
    """The active-parameter count the model's publisher gives: the preset's, or, for a model
    read from a config.json, that of the catalogue's release with the same weights (read from
    its config, GPT-OSS-20B is still the "3.61B" OpenAI quotes, not a count of kvdrill's)."""
    if model.published_active_params or not model.from_config:
        return model.published_active_params
    return next((other.published_active_params for other in models().values()
                 if other.published_active_params and same_weights(model, other)), None)


def find_gpu(name: str) -> GpuPreset:
    preset: GpuPreset = _find("GPU", name, gpus())
    return preset


@record
class Setting:
    """One input of a deployment and where it came from.

    `source` is "preset", "config" (a config.json), "option", "drill", "variant" or
    "default"; `detail` says which preset or file, or why the default is what it is."""

    name: str
    value: Any
    source: str
    detail: str = ""


MODEL_FIELDS = (
    "layers", "heads", "kv_heads", "head_dim", "hidden", "params", "weights_gb",
    "active_params", "attention", "mla_latent", "mla_rope", "window", "windowed_layers",
    "experts", "experts_per_token", "attention_params", "attention_layers",
    "recurrent_layers", "state_elements", "vocab", "tied_embeddings", "tables_dtype",
    "vision_params",
)
# The source of a card figure that stands in where no card was given (calc sizing a model alone).
NO_CARD = "no card"
# Which GPU memory figure sizes the card: the marketed decimal GB (the seeds' and the
# interview card's convention) or the total the driver reports (what vLLM multiplies).
MEMORY_FIGURES = ("marketed", "reported")
GPU_FIELDS = {"hbm_gb": "hbm_gb", "bandwidth_tbs": "bandwidth_tbs", "tflops": "bf16_tflops"}
SERVING_DEFAULTS: dict[str, Any] = {
    "gpus": 1,
    "utilization": Fraction(1),
    "reserve_gb": Fraction(0),
    "context": DEFAULT_CONTEXT,
    "block_size": 1,
    "batch": None,
    "prompt_tokens": None,
    "prefix_tokens": None,
    "measured_step_ms": None,
    "dp_attention": None,
    "reads_embedding": None,
    "reply_seconds": None,
    **{name: None for name in SERVING_INPUTS if name not in ("attention_layers",
                                                             "recurrent_layers",
                                                             "state_elements")},
}
# Choices that select a preset's figure rather than set a Deployment input.
SELECTORS = ("memory", "checkpoint")
ALL_INPUTS = (
    *MODEL_FIELDS, *GPU_FIELDS, *SERVING_DEFAULTS, "weights_dtype", "kv_dtype",
    "native_weights_dtype", *SELECTORS,
)


def build_deployment(
    model: str | ModelPreset | None = None,
    gpu: str | None = None,
    values: Mapping[str, Any] | None = None,
    origin: str = "option",
    card_optional: bool = False,
) -> tuple[Deployment, list[Setting]]:
    """Merge a model preset, a GPU preset and explicit values (which win) into a validated
    Deployment, and say where every input came from. With `card_optional`, a deployment with
    no card is sized all the same for what the model alone decides (KV per token and per
    sequence, the weights' bytes): its card figures are placeholders marked NO_CARD."""
    explicit = {key: value for key, value in (values or {}).items() if value is not None}
    unknown = sorted(set(explicit) - set(ALL_INPUTS))
    if unknown:
        raise UnknownName(f"unknown input {unknown[0]!r}: use one of {', '.join(ALL_INPUTS)}")
    chosen: dict[str, Setting] = {}

    def take(name: str, value: Any, source: str, detail: str = "") -> None:
        if value is not None and name not in chosen:
            chosen[name] = Setting(name, value, source, detail)

    selected = {name: explicit.pop(name) for name in SELECTORS if name in explicit}
    for name, value in explicit.items():
        take(name, value, origin)
    if "params" in explicit and "weights_gb" not in explicit:
        chosen["weights_gb"] = Setting("weights_gb", None, origin)  # size from the given params
    model_preset = model_of(model) if model else None
    if "checkpoint" in selected:
        _take_checkpoint(model_preset, str(selected["checkpoint"]), take)
    if model_preset is not None:
        source, detail = (("config", str(model_preset.config_path))
                          if model_preset.from_config else ("preset", model_preset.id))
        if model_preset.weights_unknown and "weights_gb" not in chosen:
            raise InvalidInput(model_preset.weights_unknown)
        # a field the config leaves out and vLLM defaults is said so, not "from the config"
        assumed = dict(model_preset.config_assumed)
        for name in MODEL_FIELDS:
            if name in assumed:
                take(name, getattr(model_preset, name), "default", assumed[name])
            else:
                take(name, getattr(model_preset, name), source, detail)
        if "weights_dtype" in assumed:  # a float32 checkpoint, cast down as vLLM serves it
            take("native_weights_dtype", model_preset.weights_dtype, "default",
                 assumed["weights_dtype"])
        else:
            take("native_weights_dtype", model_preset.weights_dtype, source, detail)
    memory = str(selected.get("memory", "marketed"))
    if memory not in MEMORY_FIGURES:
        raise InvalidInput(f"unknown memory figure {memory!r}: use marketed or reported")
    if gpu:
        gpu_preset = find_gpu(gpu)
        if memory == "reported":
            _take_reported(gpu_preset, take)
        for name, field in GPU_FIELDS.items():
            detail = _marketed_detail(gpu_preset) if name == "hbm_gb" else gpu_preset.id
            take(name, getattr(gpu_preset, field), "preset", detail)
    elif memory == "reported" and "hbm_gb" not in chosen:
        raise InvalidInput("--memory reported needs a GPU preset (--gpu) that carries the "
                           "driver's figure")
    _fill_shape_defaults(chosen, take)
    experts, routed = chosen.get("experts"), chosen.get("experts_per_token")
    if experts is not None and experts.value is not None and routed is not None \
            and routed.value is not None and routed.value < experts.value:
        # An MoE's step is priced by what a token reads (its experts and the shared weights),
        # and a token reads one row of the embedding table, not the table: one rule with the
        # MoE drill's, which names counting the table as a mistake
        vocab = chosen.get("vocab")
        take("reads_embedding", 0, "default",
             "a token reads one row of an MoE's embedding" if vocab and vocab.value else
             "a token reads one row of an MoE's embedding, but with no vocabulary known "
             "the table's size is unknown and nothing is taken off")
    for name, value in SERVING_DEFAULTS.items():
        take(name, value, "default")
    if card_optional:
        for name in ("hbm_gb", "bandwidth_tbs"):
            take(name, Fraction(1), NO_CARD)
    _require(chosen)
    settings = [chosen[name] for name in ALL_INPUTS if name in chosen]
    fields = {s.name: s.value for s in settings if s.value is not None}
    return Deployment(**fields).validate(), settings


def _marketed_detail(gpu: GpuPreset) -> str:
    if gpu.reported_mib is None:
        return f"{gpu.id}, as marketed (GB = 10^9 B)"
    return (f"{gpu.id}, as marketed (GB = 10^9 B); the driver reports "
            f"{format_number(gpu.reported_mib)} MiB: --memory reported")


def _take_reported(gpu: GpuPreset, take: Any) -> None:
    if gpu.reported_gb is None or gpu.reported_mib is None:
        raise InvalidInput(
            f"GPU preset {gpu.id} has no driver-reported memory figure with a source: use "
            "--memory marketed, or give --hbm-gb yourself"
        )
    take("hbm_gb", gpu.reported_gb, "preset",
         f"{gpu.id}, as the driver reports it: {format_number(gpu.reported_mib)} MiB "
         f"(marketed {format_number(gpu.hbm_gb)} GB)")


# `checkpoint: fp8-or-load`: the released FP8 checkpoint where the preset records one, else the
# weights vLLM's load-time FP8 (--quantization fp8) leaves of the 16-bit release: Fp8Config
# gives every LinearBase and FusedMoE layer an FP8 method, and the embedding and the LM head
# (VocabParallelEmbedding, ParallelLMHead) none, so they stay in the model's dtype
# (vllm/model_executor/layers/quantization/fp8.py, get_quant_method; the docs: "all Linear
# modules (except for the final lm_head) have their weights quantized down to FP8_E4M3").
# Norms and an MoE router (ReplicatedLinear with quant_config=None) stay 16-bit as well, well
# under 0.1% of the parameters, counted at one byte as the released checkpoints' sizes count
# their norms.
FP8_OR_LOAD = "fp8-or-load"


def fp8_released(model: ModelPreset | None) -> bool:
    """Whether the preset records a released FP8 checkpoint of the model."""
    return model is not None and "fp8" in (model.checkpoints or {})


def _take_checkpoint(model: ModelPreset | None, dtype: str, take: Any) -> None:
    if dtype == FP8_OR_LOAD:
        if not fp8_released(model):
            _take_fp8_at_load(model, take)
            return
        dtype = "fp8"
    released = (model.checkpoints or {}) if model is not None else {}
    if dtype not in released:
        known = (f" (it lists {', '.join(repr(d) for d in released)})" if released else
                 " (it lists none of its releases, which does not mean none exists)")
        name = model.id if model is not None else "no model preset"
        whose = (f"{model.name}'s config.json records no {dtype!r} checkpoint (a config lists "
                 "no releases)" if model is not None and model.from_config else
                 f"kvdrill's preset for {name} records no {dtype!r} checkpoint{known}")
        raise InvalidInput(f"{whose}: give --weights-gb and --weights-dtype yourself")
    assert model is not None
    size = Fraction(str(released[dtype]["weights_gb"]))
    detail = f"{model.id}, the released {dtype} checkpoint"
    take("weights_gb", size, "preset", detail)
    take("native_weights_dtype", dtype, "preset", detail)
    take("weights_dtype", dtype, "preset", detail)


def _take_fp8_at_load(model: ModelPreset | None, take: Any) -> None:
    """The weights as vLLM quantizes a 16-bit release at load (FP8_OR_LOAD): linear layers in
    FP8, the embedding and the LM head kept in the release's 16-bit dtype."""
    if model is None:
        raise InvalidInput("no model preset: vLLM's FP8 quantization at load is sized from "
                           "the model's vocabulary and parameters")
    whose = (f"{model.name}'s config.json records" if model.from_config else
             f"kvdrill's preset for {model.id} records")
    if model.weights_dtype not in ("bf16", "fp16"):
        raise InvalidInput(
            f"{whose} no 'fp8' checkpoint, and its "
            f"{model.weights_dtype.upper()} release is not one vLLM quantizes to FP8 at load "
            "(--quantization fp8 converts a 16-bit checkpoint; a quantized one keeps its own "
            "method): give --weights-gb and --weights-dtype yourself")
    if model.vision_params or model.uncounted_vision_params:
        # which of a vision tower's layers vLLM converts differs by model (Llama-4 builds its
        # tower with no quantization config, Gemma-3 with the model's): not sized here
        raise InvalidInput(
            f"{whose} no 'fp8' checkpoint, and kvdrill does not size what vLLM's "
            f"--quantization fp8 makes of {model.name}'s vision tower: give --weights-gb and "
            "--weights-dtype yourself")
    if not model.vocab or not model.hidden:
        raise InvalidInput(
            f"{whose} no 'fp8' checkpoint, nor the "
            "vocabulary that sizes the 16-bit embedding and LM head vLLM's --quantization "
            "fp8 keeps beside its FP8 linear layers: give --weights-gb and --weights-dtype "
            "yourself")
    detail = f"{model.id}, quantized to FP8 at load by vLLM (--quantization fp8)"
    take("weights_dtype", "fp8", "preset", detail)
    take("tables_dtype", model.weights_dtype, "preset",
         f"{model.id}: the embedding and the LM head, which vLLM's --quantization fp8 keeps "
         f"in {model.weights_dtype}")


def _fill_shape_defaults(chosen: dict[str, Setting], take: Any) -> None:
    def value(name: str) -> Any:
        setting = chosen.get(name)
        return None if setting is None else setting.value

    if value("heads") is None and value("kv_heads") is not None:
        take("heads", value("kv_heads"), "default", "= kv_heads, as in MHA")
    if value("head_dim") is None and value("hidden") and value("heads"):
        hidden, heads = value("hidden"), value("heads")
        if hidden % heads == 0:
            take("head_dim", hidden // heads, "default", "= hidden ÷ heads; check the config")
    if value("dp_attention") and value("attention") in (None, "gqa") and value("hidden") \
            and value("heads") and value("kv_heads") and value("head_dim"):
        # what DP attention copies to every GPU, for a preset without the figure: the Q, K, V
        # and O projections of every layer, from the shape (biases and norms left out)
        from trainer.capacity.model_config import projection_params

        per_layer = projection_params(value("hidden"), value("heads"), value("kv_heads"),
                                      value("head_dim"))
        take("attention_params", Fraction(value("layers") * per_layer), "default",
             "Q, K, V and O projections: layers × hidden × head_dim × 2(heads + kv_heads)")
    take("native_weights_dtype", value("weights_dtype") or "bf16", "default", "= weights dtype")
    take("weights_dtype", value("native_weights_dtype"), "default", "as released")
    released = value("native_weights_dtype")
    # vLLM's --kv-cache-dtype auto stores the cache in the model's compute dtype: the release
    # dtype for 16-bit weights; quantized weights (fp8, int) still compute in bf16.
    if released in ("bf16", "fp16"):
        take("kv_dtype", released, "default", f"the model's dtype ({released}), as vLLM's "
             "kv-cache-dtype auto")
    else:
        take("kv_dtype", "bf16", "default", f"the weights are {released}, but activations and "
             "the cache compute in bf16, as vLLM's kv-cache-dtype auto; --kv-dtype fp8 halves it")


_REQUIRED = {
    "layers": "--layers or --model",
    "kv_heads": "--kv-heads or --model",
    "head_dim": "--head-dim (or --hidden with --heads) or --model",
    "hbm_gb": "--hbm-gb or --gpu",
    "bandwidth_tbs": "--bandwidth-tbs or --gpu",
}


def _require(chosen: Mapping[str, Setting]) -> None:
    for name, fix in _REQUIRED.items():
        if chosen.get(name) is None or chosen[name].value is None:
            raise InvalidInput(f"{name} is unknown: give {fix}")
    has_params = chosen.get("params") is not None and chosen["params"].value is not None
    has_weights = chosen.get("weights_gb") is not None and chosen["weights_gb"].value is not None
    if not (has_params or has_weights):
        raise InvalidInput("the weight size is unknown: give --params, --weights-gb or --model")


# ---------------------------------------------------------------------------------------------
# A model as stored with an attempt (a drill re-targeted at it): a preset by its id, a model
# read from a config.json by every field the capacity model uses, so the attempt is re-marked
# the same way after the file is moved or changed. Read back as untrusted data.

SPEC_INTS = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "mla_latent",
             "mla_rope", "window", "windowed_layers", "experts", "experts_per_token",
             "attention_layers", "recurrent_layers", "state_elements", "max_context",
             "shared_experts", "moe_layers")
SPEC_EXACT = ("params", "active_params", "weights_gb", "attention_params",
              "uncounted_vision_params", "vision_params")
SPEC_TEXT = ("name", "path", "weights_dtype", "tables_dtype", "attention")


def model_spec(model: ModelPreset) -> dict[str, Any]:
    """The model as plain JSON: {"preset": id}, or {"config": {field: value}}."""
    if not model.from_config:
        return {"preset": model.id}
    fields: dict[str, Any] = {"name": model.name, "path": model.config_path,
                              "tied_embeddings": model.tied_embeddings}
    for name in SPEC_INTS:
        value = getattr(model, name)
        if value is not None:
            fields[name] = int(value)
    for name in SPEC_EXACT:
        value = getattr(model, name)
        if value is not None:
            fraction = Fraction(value)
            fields[name] = str(fraction.numerator) if fraction.denominator == 1 else str(fraction)
    for name in ("weights_dtype", "tables_dtype", "attention"):
        value = getattr(model, name)
        if value is not None:
            fields[name] = str(value)
    return {"config": fields}


def model_from_spec(spec: Any) -> ModelPreset:
    """A stored model spec read back (model_spec); InvalidInput naming the field that is not
    one it could have written."""
    if not isinstance(spec, dict) or len(spec) != 1:
        raise InvalidInput("model: a stored model is {\"preset\": id} or {\"config\": {...}}")
    if "preset" in spec:
        if not isinstance(spec["preset"], str) or len(spec["preset"]) > 100:
            raise InvalidInput("model.preset: not a preset id")
        return find_model(spec["preset"])
    fields = spec.get("config")
    if not isinstance(fields, dict):
        raise InvalidInput("model: a stored model is {\"preset\": id} or {\"config\": {...}}")
    unknown = sorted(set(fields) - {*SPEC_INTS, *SPEC_EXACT, *SPEC_TEXT, "tied_embeddings"})
    if unknown:
        raise InvalidInput(f"model.config.{unknown[0]}: not a field of a stored model")
    values: dict[str, Any] = {}
    for name, value in fields.items():
        if name in SPEC_INTS:
            if isinstance(value, bool) or not isinstance(value, int):
                shown = json.dumps(value)[:30] if isinstance(value, bool | float | str) \
                    else type(value).__name__.replace("dict", "an object").replace("list",
                                                                                   "a list")
                raise InvalidInput(f"model.config.{name}: {shown} is not a whole number")
            if not 0 <= value < 10**12:
                raise InvalidInput(f"model.config.{name}: {value:,} is outside what a model "
                                   "can have (0 up to 10¹²)"[:200])
            values[name] = value
        elif name in SPEC_EXACT:
            try:
                number = Fraction(value) if isinstance(value, str) and len(value) <= 60 \
                    else None
            except (ValueError, ZeroDivisionError):
                number = None
            if number is None or not 0 < number < 10**16:
                raise InvalidInput(f"model.config.{name}: {value!r} is not a count")
            values[name] = number
        elif name == "tied_embeddings":
            if not isinstance(value, bool):
                raise InvalidInput("model.config.tied_embeddings: not true or false")
            values[name] = value
        else:
            if not isinstance(value, str) or not 0 < len(value) <= 300:
                raise InvalidInput(f"model.config.{name}: not a name")
            values[name] = value
    for name in ("name", "layers", "heads", "kv_heads", "head_dim", "params", "weights_dtype"):
        if name not in values:
            raise InvalidInput(f"model.config.{name}: missing")
    from trainer.capacity.model_config import clean_name

    name = clean_name(str(values.pop("name")))
    path = str(values.pop("path", name))
    return ModelPreset(
        id=_spec_slug(name), name=name, aliases=(), source=f"config.json at {path}",
        max_context=int(values.pop("max_context", 0)), config_path=path, **values)


def _spec_slug(name: str) -> str:
    from trainer.capacity.model_config import slug

    return slug(name)


def model_label(value: Any) -> Any:
    """A drill given's model as plain data: a preset id stays, a model read from a config.json
    is named by its name and file."""
    if isinstance(value, ModelPreset):
        return value.id if not value.from_config else f"{value.name} ({value.config_path})"
    return value


# A speculative deployment drafts with its target family's preset (serving_formulas), which
# cannot import this module back: the catalogue is handed over here.
draft_from_catalogue(models)
