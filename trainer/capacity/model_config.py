"""A Hugging Face `config.json` read as the capacity model needs it: the shape that sizes the KV
cache, the parameter count (embedding, attention, MLP or experts, norms, LM head unless tied) and
the bytes of the weights as the checkpoint stores them.

Pure: the file is read bounded (files.bounded_io) and parsed by `json.loads`; nothing in it is
evaluated, imported or fetched. Each field is read the way vLLM reads it, and the traps a careless
reader falls into are handled and named in the notes:

- `head_dim` stated in the config wins over hidden ÷ heads (Qwen3-32B: 128, not 80);
  `num_key_value_heads` missing means MHA (vLLM ModelArchConfigConvertorBase.get_head_size and
  get_total_num_kv_heads, vllm/transformers_utils/model_arch_config_convertor.py);
- `sliding_window` is off when `use_sliding_window` is false (Qwen2.5: 131072, unused), and with
  `max_window_layers` only the layers from that index on slide (vLLM ModelConfig
  get_hf_config_sliding_window, vllm/config/model.py; transformers Qwen2Config.layer_types);
- alternating layers: `layer_types` (GPT-OSS: sliding, full, ...), a pattern (Gemma-3: five local
  layers to one global, `sliding_window_pattern`, default 6), Gemma-2's every other layer, or
  GPT-OSS's `layer_idx % 2 == 0` (vllm/model_executor/models/gpt_oss.py, gemma2.py, gemma3.py);
- MLA: `kv_lora_rank` + `qk_rope_head_dim` per token and layer, no K/V pair
  (ModelArchConfigConvertorBase.is_deepseek_mla and get_head_size; MLAAttentionSpec in
  vllm/v1/kv_cache_interface.py);
- MoE under any of its names (`num_local_experts`, `num_experts`, `n_routed_experts`,
  `moe_num_experts`; `num_experts_per_tok`, `experts_per_token`), which layers carry experts
  (`first_k_dense_replace`, `decoder_sparse_step`, `mlp_only_layers`, Jamba's
  `expert_layer_period`), shared experts (ModelArchConfigConvertorBase.get_num_experts);
- hybrids: Jamba's `attn_layer_period`/`attn_layer_offset` and the Mamba state
  (`mamba_d_state`, `mamba_d_conv`, `mamba_expand`; vllm/model_executor/models/jamba.py);
- the text part of a multimodal model under `text_config`, with the transformers defaults its
  sparse file leaves out (Gemma-3: vocabulary 262,208, tied embeddings), and a SigLIP vision
  tower counted in the weights (vllm/transformers_utils/config.py get_hf_text_config);
- `torch_dtype` and `quantization_config` (fp8, mxfp4, awq, gptq) for the weights' bytes, the
  embedding and LM head kept at 16 bits (ModelArchConfigConvertorBase.get_torch_dtype and
  get_quantization_config);
- `tie_word_embeddings` for the parameter count.

What it cannot size it refuses by name ("config.json: no num_hidden_layers"), as ConfigError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from trainer.errors import UsageError
from trainer.files.bounded_io import read_text_bounded

# A config.json is a few kilobytes; a megabyte holds any real one with room to spare.
MAX_CONFIG_BYTES = 1024 * 1024
_MAX_COUNT = 10**7  # no layer, head or width count of a real model is near it
_MAX_VOCAB = 10**8


class ConfigError(UsageError):
    """A config.json that cannot be read or that lacks what sizing the model needs (exit 2)."""


@dataclass(frozen=True)
class ParamCount:
    """The parameters of a model by where they sit, so the quantized part can be priced apart."""

    embedding: int = 0
    lm_head: int = 0
    attention: int = 0  # projections, their biases, q/k norms, sinks
    dense_mlp: int = 0  # MLPs of the layers without experts, shared experts included
    expert_weights: int = 0  # routed experts' matrices, every layer
    expert_biases: int = 0
    router: int = 0
    mamba: int = 0
    norms: int = 0  # the layers' norms and the final norm
    vision: int = 0  # a vision tower and its projector
    unused_expert_params: int = 0  # routed experts a token does not use, every layer

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp
                + self.expert_weights + self.expert_biases + self.router + self.mamba
                + self.norms + self.vision)

    @property
    def tables(self) -> int:
        return self.embedding + self.lm_head


@dataclass(frozen=True)
class ConfigModel:
    """What a config.json says, as the fields of a model preset, with the notes that say how
    each was read."""

    where: str  # the file as the user named it
    name: str
    fields: dict[str, Any]
    params: ParamCount
    notes: tuple[str, ...] = field(default=())


# ---------------------------------------------------------------------------------------------
# Reading the file


def read_config(path: Path, shown: str | None = None) -> ConfigModel:
    """The model a config.json describes: read bounded, parsed as JSON, never evaluated."""
    where = shown or str(path)
    text = read_text_bounded(path, MAX_CONFIG_BYTES, "config.json", ConfigError,
                             advice="a config.json is UTF-8 JSON")
    data = parse_json(text, where)
    return model_from_config(data, where, _name_from_path(path))


def parse_json(text: str, where: str) -> dict[str, Any]:
    def refuse_constant(name: str) -> Any:
        raise ConfigError(f"{where}: {name} is not a number JSON allows: fix the file")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise ConfigError(f"{where}: {key!r} is given twice: keep one")
            found[key] = value
        return found

    try:
        data = json.loads(text, parse_constant=refuse_constant, object_pairs_hook=no_duplicates)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to be a config.json") from None
    except ValueError as error:  # JSONDecodeError, or a number too long to convert
        line = getattr(error, "lineno", None)
        at = f" (line {line})" if line is not None else ""
        message = getattr(error, "msg", None) or str(error)
        raise ConfigError(f"{where}: not valid JSON{at}: {message}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: a config.json is one JSON object ({{...}}), not "
                          f"{type(data).__name__}")
    return data


def _name_from_path(path: Path) -> str:
    folder = path.parent.name if path.name.lower() == "config.json" else path.stem
    return folder or path.name


# ---------------------------------------------------------------------------------------------
# Fields


class _Fields:
    """A config's fields (the text part's first, then the top level's) read with their types
    checked and every failure named by file and field."""

    def __init__(self, text: Mapping[str, Any], top: Mapping[str, Any], where: str,
                 defaults: Mapping[str, Any]) -> None:
        self.text, self.top, self.where, self.defaults = text, top, where, defaults
        self.notes: list[str] = []

    def error(self, message: str) -> ConfigError:
        return ConfigError(f"{self.where}: {message}")

    def raw(self, name: str) -> Any:
        if name in self.text:
            return self.text[name]
        return self.top.get(name)

    def has(self, name: str) -> bool:
        return self.raw(name) is not None

    def count(self, name: str, *, required: bool = False, least: int = 1,
              most: int = _MAX_COUNT) -> int | None:
        value = self.raw(name)
        if value is None:
            default = self.defaults.get(name)
            if default is not None:
                self.notes.append(f"{name} {default:,}: not in the file, the default of its "
                                  "model type in transformers (as vLLM loads it)")
                return int(default)
            if required:
                raise self.error(f"no {name}: kvdrill cannot size a model without it (is this "
                                 "a model's config.json?)")
            return None
        if isinstance(value, bool) or not isinstance(value, int | float) or \
                (isinstance(value, float) and not value.is_integer()):
            raise self.error(f"{name} is {_shown(value)}, not a whole number")
        number = int(value)
        if not least <= number <= most:
            raise self.error(f"{name} {number:,} is outside what a model can have "
                             f"({least:,} to {most:,})")
        return number

    def flag(self, name: str, default: bool) -> bool:
        value = self.raw(name)
        if value is None:
            default = bool(self.defaults.get(name, default))
            return default
        if not isinstance(value, bool):
            raise self.error(f"{name} is {_shown(value)}, not true or false")
        return value

    def text_value(self, name: str) -> str | None:
        value = self.raw(name)
        if value is None:
            return None
        if not isinstance(value, str) or len(value) > 200:
            raise self.error(f"{name} is {_shown(value)}, not a name")
        return value

    def int_list(self, name: str, most: int) -> list[int]:
        value = self.raw(name)
        if value is None:
            return []
        if not isinstance(value, list) or len(value) > most or any(
                isinstance(item, bool) or not isinstance(item, int) for item in value):
            raise self.error(f"{name} is {_shown(value)}, not a list of layer numbers")
        return list(value)


def _shown(value: Any) -> str:
    text = json.dumps(value) if not isinstance(value, str) else repr(value)
    return text if len(text) <= 40 else text[:39] + "…"


# transformers' defaults for the fields a sparse config.json leaves out, for the model types
# whose published files rely on them (vLLM loads the config through these classes).
_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    "gemma3_text": {"vocab_size": 262_208, "max_position_embeddings": 131_072,
                    "tie_word_embeddings": True, "sliding_window_pattern": 6,
                    "head_dim": 256},
    "gemma2": {"tie_word_embeddings": True, "head_dim": 256},
    "gemma": {"tie_word_embeddings": True, "head_dim": 256},
}
# Untied unless the model type's config class says otherwise (every class below sets False).
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text"}
_KNOWN_TYPES = {
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
    "gemma2", "gemma3", "gemma3_text", "phi3", "gpt_oss", "deepseek_v2", "deepseek_v3",
    "jamba", "mistral3", "granite", "olmo2", "exaone", "internlm2", "cohere",
}
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "longcat_flash"}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
           "float": "fp32"}
_SLIDING = {"sliding_attention", "sliding", "local", "local_attention", "chunked_attention"}
_FULL = {"full_attention", "full", "global", "global_attention", "attention"}


# ---------------------------------------------------------------------------------------------
# The model


def model_from_config(data: Mapping[str, Any], where: str = "config.json",
                      name: str | None = None) -> ConfigModel:
    """A parsed config.json → the fields of a model preset (see ModelPreset), the parameter
    count by part and the notes on how each trap was read."""
    text_config = data.get("text_config")
    if text_config is not None and not isinstance(text_config, dict):
        raise ConfigError(f"{where}: text_config is {_shown(text_config)}, not an object")
    text: Mapping[str, Any] = text_config if text_config else data
    model_type = str(text.get("model_type") or data.get("model_type") or "")
    top_type = str(data.get("model_type") or model_type)
    defaults = _TYPE_DEFAULTS.get(model_type, {})
    f = _Fields(text, data, where, defaults)
    if text_config:
        f.notes.append("text_config: the language model is read from it, as vLLM's "
                       "get_hf_text_config does (vllm/transformers_utils/config.py); the "
                       "vision part only adds weights")

    layers = f.count("num_hidden_layers", required=True)
    hidden = f.count("hidden_size", required=True)
    heads = f.count("num_attention_heads", required=True)
    assert layers is not None and hidden is not None and heads is not None
    vocab = f.count("vocab_size", required=True, most=_MAX_VOCAB)
    assert vocab is not None
    kv_heads = _kv_heads(f, heads)
    head_dim = _head_dim(f, hidden, heads)
    tied = f.flag("tie_word_embeddings", model_type in _TIED_BY_DEFAULT
                  or top_type in _TIED_BY_DEFAULT)
    if model_type and model_type not in _KNOWN_TYPES and top_type not in _KNOWN_TYPES:
        f.notes.append(f"model_type {model_type!r} is not one kvdrill knows: its parameters "
                       "are counted as a Llama-style decoder (gated MLP, two norms a layer, no "
                       "biases); check the count against the published one")

    fields: dict[str, Any] = {
        "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "vocab": vocab, "tied_embeddings": tied,
        "attention": "gqa", "mla_latent": 0, "mla_rope": 0, "window": None,
        "windowed_layers": 0, "experts": None, "experts_per_token": None,
        "attention_layers": None, "state_elements": None,
    }
    mla = _mla(f, model_type)
    if mla is not None:
        # head_dim does not size an MLA cache; the query/key head width without its rope part
        # (qk_nope_head_dim, DeepSeek-V3: 128) stands in the shape, as the presets have it
        nope = f.count("qk_nope_head_dim", least=0)
        fields.update(attention="mla", mla_latent=mla[0], mla_rope=mla[1],
                      head_dim=nope or head_dim)
    attention_layer_ids = _attention_layers(f, model_type, layers, fields)
    if mla is None:
        _windows(f, model_type, layers, fields)
    experts = _experts(f, fields)
    params = _count(f, model_type, fields, experts, attention_layer_ids)
    fields["params"] = params.total
    if fields["experts"] is not None:
        fields["active_params"] = params.total - params.unused_expert_params
    else:
        fields["active_params"] = None
    fields["attention_params"] = params.attention
    fields["max_context"] = _max_context(f, top_type)
    fields.update(_weights(f, data, text, params))
    model_name = name or _text(data.get("_name_or_path")) or _first_architecture(data) or \
        "config.json"
    fields["name"] = model_name
    return ConfigModel(where, model_name, fields, params, tuple(dict.fromkeys(f.notes)))


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and len(value) <= 200:
        return value.strip().rstrip("/").rsplit("/", 1)[-1]
    return None


def _first_architecture(data: Mapping[str, Any]) -> str | None:
    names = data.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return names[0][:200]
    return None


def _kv_heads(f: _Fields, heads: int) -> int:
    if f.flag("multi_query", False):
        f.notes.append("multi_query: one KV head (MQA), as vLLM reads it")
        return 1
    for name in ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num"):
        value = f.count(name)
        if value is not None:
            if value > heads:
                raise f.error(f"{name} {value} exceeds num_attention_heads {heads}: a model has "
                              "at most one KV head per query head")
            return value
    f.notes.append(f"no num_key_value_heads: KV heads = num_attention_heads = {heads} (MHA), as "
                   "vLLM's get_total_num_kv_heads defaults")
    return heads


def _head_dim(f: _Fields, hidden: int, heads: int) -> int:
    stated = f.raw("head_dim")
    if stated is None and "head_dim" in f.defaults:
        stated_value = f.count("head_dim")
        assert stated_value is not None
        return stated_value
    if stated is not None:
        value = f.count("head_dim")
        assert value is not None
        if hidden % heads or value != hidden // heads:
            quotient = f"{hidden:,} ÷ {heads} = {hidden / heads:g}"
            f.notes.append(f"head_dim {value} as the config states it, not hidden_size ÷ "
                           f"num_attention_heads ({quotient}), as vLLM's get_head_size reads it")
        return value
    if hidden % heads:
        raise f.error(f"no head_dim, and hidden_size {hidden} is not a multiple of "
                      f"num_attention_heads {heads}: add head_dim")
    return hidden // heads


def _mla(f: _Fields, model_type: str) -> tuple[int, int] | None:
    latent = f.count("kv_lora_rank")
    if latent is None:
        return None
    rope = f.count("qk_rope_head_dim", least=0) or 0
    where = "" if model_type in _MLA_TYPES else f" (model_type {model_type!r})"
    f.notes.append(f"MLA{where}: kv_lora_rank {latent} + qk_rope_head_dim {rope} = "
                   f"{latent + rope} values per token and layer, one latent and no K/V pair, "
                   "as vLLM's get_head_size and MLAAttentionSpec hold it")
    return latent, rope


def _attention_layers(f: _Fields, model_type: str, layers: int,
                      fields: dict[str, Any]) -> list[int]:
    """Which layers attend (the rest are recurrent); sets attention_layers and
    state_elements for a hybrid."""
    period = f.count("attn_layer_period")
    if period is None:
        if f.has("layers_block_type") or model_type in ("mamba", "mamba2", "falcon_mamba"):
            raise f.error("this hybrid or state-space layout (layers_block_type, Mamba) is not "
                          "one kvdrill can size from config.json: give the shape with calc's "
                          "options")
        return list(range(layers))
    offset = f.count("attn_layer_offset", least=0) or 0
    chosen = [i for i in range(layers) if i % period == offset]
    if not chosen:
        raise f.error(f"attn_layer_period {period} and attn_layer_offset {offset} leave no "
                      "attention layer")
    d_state = f.count("mamba_d_state", required=True)
    d_conv = f.count("mamba_d_conv", required=True)
    expand = f.count("mamba_expand", required=True)
    hidden = fields["hidden"]
    assert d_state is not None and d_conv is not None and expand is not None
    inner = expand * hidden
    fields["attention_layers"] = len(chosen)
    fields["state_elements"] = inner * d_state + inner * (d_conv - 1)
    f.notes.append(
        f"hybrid: attention in layers i with i % attn_layer_period {period} = attn_layer_offset "
        f"{offset} ({len(chosen)} of {layers}: {', '.join(map(str, chosen[:8]))}"
        f"{'…' if len(chosen) > 8 else ''}); the other {layers - len(chosen)} keep a Mamba "
        f"state of {inner:,} × {d_state} (SSM) + {inner:,} × {d_conv - 1} (convolution) = "
        f"{fields['state_elements']:,} values per sequence, as vLLM's jamba.py keeps them")
    return chosen


def _windows(f: _Fields, model_type: str, layers: int, fields: dict[str, Any]) -> None:
    window = f.count("sliding_window")
    layer_types = f.raw("layer_types")
    if layer_types is not None:
        if not isinstance(layer_types, list) or len(layer_types) != layers or not all(
                isinstance(kind, str) for kind in layer_types):
            raise f.error(f"layer_types must list one kind per layer ({layers}), got "
                          f"{_shown(layer_types)}")
        unknown = sorted({kind for kind in layer_types} - _SLIDING - _FULL)
        if unknown:
            raise f.error(f"layer_types {unknown[0]!r} is not a layer kvdrill can size (it "
                          "knows sliding_attention and full_attention)")
        sliding = sum(kind in _SLIDING for kind in layer_types)
        if sliding and window is None:
            raise f.error("layer_types names sliding layers but sliding_window is not set")
        if sliding:
            _set_window(f, fields, window, sliding, layers, "layer_types lists "
                        f"{sliding} sliding_attention and {layers - sliding} full_attention "
                        "layers (vLLM gives each sliding layer its window: per_layer_sliding_"
                        "window)")
        return
    if window is None:
        return
    if f.raw("use_sliding_window") is False:
        f.notes.append(f"sliding_window {window:,} is switched off by use_sliding_window false: "
                       "every layer holds the whole context (vLLM's "
                       "get_hf_config_sliding_window returns None, vllm/config/model.py)")
        return
    max_window = f.count("max_window_layers", least=0)
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and max_window is not None:
        sliding = max(0, layers - max_window)
        if not sliding:
            f.notes.append(f"use_sliding_window is on, but max_window_layers {max_window} ≥ "
                           f"{layers} layers: no layer slides (transformers Qwen2Config "
                           "layer_types: sliding only from max_window_layers on)")
            return
        _set_window(f, fields, window, sliding, layers, f"layers {max_window} on slide "
                    f"(max_window_layers {max_window})")
        return
    pattern = f.count("sliding_window_pattern") or f.count("_sliding_window_pattern")
    if model_type == "gemma2" and pattern is None:
        pattern = 2
    if pattern is not None:
        sliding = sum(1 for i in range(layers) if (i + 1) % pattern)
        _set_window(f, fields, window, sliding, layers,
                    f"sliding_window_pattern {pattern}: {pattern - 1} local layers to one "
                    f"global ({sliding} local, {layers - sliding} global; vLLM gemma2.py and "
                    "gemma3.py)")
        return
    if model_type == "gpt_oss":
        sliding = (layers + 1) // 2
        _set_window(f, fields, window, sliding, layers, "every other layer "
                    "(layer_idx % 2 == 0, vllm/model_executor/models/gpt_oss.py)")
        return
    _set_window(f, fields, window, layers, layers, "on every layer")


def _set_window(f: _Fields, fields: dict[str, Any], window: int | None, sliding: int,
                layers: int, how: str) -> None:
    assert window is not None
    most = f.count("max_position_embeddings")
    if most is not None and window >= most and sliding == layers:
        f.notes.append(f"sliding_window {window:,} ≥ max_position_embeddings {most:,}: it never "
                       "binds, so every layer holds the whole context")
        return
    fields["window"] = window
    fields["windowed_layers"] = sliding
    f.notes.append(f"sliding window {window:,} tokens on {sliding} of {layers} layers: {how}; a "
                   "sliding layer keeps only its window's KV (vLLM's SlidingWindowSpec, "
                   "vllm/v1/kv_cache_interface.py)")


def _experts(f: _Fields, fields: dict[str, Any]) -> dict[str, Any] | None:
    names = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
    found = {name: f.count(name, least=0) for name in names if f.has(name)}
    counts = {value for value in found.values() if value}
    if not counts:
        return None
    if len(counts) > 1:
        listed = ", ".join(f"{k} {v}" for k, v in found.items())
        raise f.error(f"the expert counts disagree ({listed}): keep one")
    experts = counts.pop()
    per_names = ("num_experts_per_tok", "experts_per_token", "moe_top_k",
                 "num_experts_per_token")
    per = {name: f.count(name) for name in per_names if f.has(name)}
    chosen = {value for value in per.values() if value}
    if not chosen:
        raise f.error(f"{next(iter(found))} {experts} but no num_experts_per_tok: how many "
                      "experts each token uses is needed")
    if len(chosen) > 1:
        raise f.error("the experts-per-token counts disagree: keep one")
    top_k = chosen.pop()
    if top_k > experts:
        raise f.error(f"num_experts_per_tok {top_k} exceeds the {experts} experts")
    fields["experts"], fields["experts_per_token"] = experts, top_k
    f.notes.append(f"MoE: {experts} routed experts ({next(iter(found))}), {top_k} per token "
                   f"({next(iter(per))}), as vLLM's get_num_experts reads the names")
    return {"experts": experts, "top_k": top_k}


def _max_context(f: _Fields, top_type: str) -> int | None:
    """The longest context the config allows, as vLLM derives max_model_len: the position
    limit, times a RoPE scaling factor (YaRN from its original length; not llama3, longrope or
    Gemma-3, whose limit is already the scaled one)."""
    base = f.count("max_position_embeddings")
    if base is None:
        return None
    scaling = f.raw("rope_scaling") or f.raw("rope_parameters")
    if not isinstance(scaling, dict) or "gemma3" in top_type:
        return base
    kind = str(scaling.get("rope_type") or scaling.get("type") or "default")
    factor = scaling.get("factor")
    if kind in ("su", "longrope", "llama3", "default") or isinstance(factor, bool) or \
            not isinstance(factor, int | float) or not 1 <= factor <= 1024:
        return base
    original = scaling.get("original_max_position_embeddings")
    if kind == "yarn" and isinstance(original, int) and not isinstance(original, bool) and \
            0 < original <= base:
        return int(original * factor)
    return int(base * factor)


# ---------------------------------------------------------------------------------------------
# Parameters


def _count(f: _Fields, model_type: str, fields: dict[str, Any], experts: dict[str, Any] | None,
           attention_layer_ids: list[int]) -> ParamCount:
    layers, hidden, vocab = fields["layers"], fields["hidden"], fields["vocab"]
    counts: dict[str, int] = {key: 0 for key in ParamCount.__dataclass_fields__}
    counts["embedding"] = vocab * hidden
    counts["lm_head"] = 0 if fields["tied_embeddings"] else vocab * hidden
    norms_per_layer = 4 if model_type in ("gemma2", "gemma3", "gemma3_text") else 2
    counts["norms"] = layers * norms_per_layer * hidden + hidden

    attention_ids = set(attention_layer_ids)
    per_attention = _attention_params(f, model_type, fields)
    counts["attention"] = per_attention * len(attention_ids)
    mamba_layers = layers - len(attention_ids)
    if mamba_layers:
        counts["mamba"] = mamba_layers * _mamba_params(f, hidden)

    intermediate = f.count("intermediate_size")
    dense_width = intermediate
    moe_layers = _moe_layers(f, model_type, layers) if experts else set()
    if experts:
        moe_width = f.count("moe_intermediate_size") or intermediate
        if moe_width is None:
            raise f.error("no moe_intermediate_size or intermediate_size: the experts' width "
                          "is needed")
        per_expert = 3 * hidden * moe_width
        expert_bias = 0
        if model_type == "gpt_oss":  # gate_up and down projections carry biases
            expert_bias = 2 * moe_width + hidden
        n, top_k = experts["experts"], experts["top_k"]
        counts["expert_weights"] = len(moe_layers) * n * per_expert
        counts["expert_biases"] = len(moe_layers) * n * expert_bias
        counts["unused_expert_params"] = len(moe_layers) * (n - top_k) * (per_expert
                                                                           + expert_bias)
        router = hidden * n + (n if model_type == "gpt_oss" else 0)
        if model_type == "deepseek_v3" or f.text_value("topk_method") == "noaux_tc":
            router += n  # e_score_correction_bias
        counts["router"] = len(moe_layers) * router
        shared = _shared_expert_params(f, hidden, moe_width)
        counts["dense_mlp"] += len(moe_layers) * shared
    dense_layers = layers - len(moe_layers)
    if dense_layers:
        if dense_width is None:
            raise f.error("no intermediate_size: the MLP's width is needed")
        mlp = 3 * hidden * dense_width
        if f.flag("mlp_bias", False):
            mlp += 2 * dense_width + hidden
        counts["dense_mlp"] += dense_layers * mlp
    if model_type == "jamba":
        counts["norms"] = layers * 2 * hidden + hidden
    counts["vision"] = _vision_params(f, fields)
    return ParamCount(**counts)


def _attention_params(f: _Fields, model_type: str, fields: dict[str, Any]) -> int:
    hidden, heads = fields["hidden"], fields["heads"]
    if fields["attention"] == "mla":
        q_rank = f.count("q_lora_rank")
        nope = f.count("qk_nope_head_dim", least=0) or 0
        rope = fields["mla_rope"]
        v_dim = f.count("v_head_dim") or nope
        latent = fields["mla_latent"]
        if q_rank:
            query = hidden * q_rank + q_rank + q_rank * heads * (nope + rope)
        else:
            query = hidden * heads * (nope + rope)
        kv = hidden * (latent + rope) + latent + latent * heads * (nope + v_dim)
        return int(query + kv + heads * v_dim * hidden)
    kv_heads, head_dim = fields["kv_heads"], fields["head_dim"]
    q_width, kv_width = heads * head_dim, kv_heads * head_dim
    params = hidden * q_width + 2 * hidden * kv_width + q_width * hidden
    if model_type in ("qwen2", "qwen2_moe") or f.flag("qkv_bias", False):
        params += q_width + 2 * kv_width  # q, k and v carry biases; o does not
    elif f.flag("attention_bias", False):
        params += q_width + 2 * kv_width + hidden
    if model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2"):
        params += 2 * head_dim if model_type != "olmo2" else q_width + kv_width  # q/k norms
    if model_type == "gpt_oss":
        params += heads  # attention sinks
    return int(params)


def _mamba_params(f: _Fields, hidden: int) -> int:
    d_state = f.count("mamba_d_state", required=True)
    d_conv = f.count("mamba_d_conv", required=True)
    expand = f.count("mamba_expand", required=True)
    assert d_state is not None and d_conv is not None and expand is not None
    inner = expand * hidden
    dt_rank = f.count("mamba_dt_rank") or -(-hidden // 16)
    params = hidden * 2 * inner + inner * d_conv + inner * (dt_rank + 2 * d_state)
    params += dt_rank * inner + inner  # dt_proj and its bias
    params += inner * d_state + inner + inner * hidden  # A_log, D, out_proj
    params += dt_rank + 2 * d_state  # Jamba's dt, B and C layer norms
    if f.flag("mamba_conv_bias", True):
        params += inner
    if f.flag("mamba_proj_bias", False):
        params += 2 * inner + hidden
    return params


def _moe_layers(f: _Fields, model_type: str, layers: int) -> set[int]:
    if f.has("first_k_dense_replace") or model_type in ("deepseek_v2", "deepseek_v3"):
        first = f.count("first_k_dense_replace", least=0) or 0
        freq = f.count("moe_layer_freq") or 1
        chosen = {i for i in range(layers) if i >= first and i % freq == 0}
        f.notes.append(f"experts in {len(chosen)} of {layers} layers (first_k_dense_replace "
                       f"{first}: the first {first} are dense)")
        return chosen
    if f.has("expert_layer_period"):
        period = f.count("expert_layer_period")
        offset = f.count("expert_layer_offset", least=0) or 0
        assert period is not None
        chosen = {i for i in range(layers) if i % period == offset}
        f.notes.append(f"experts in {len(chosen)} of {layers} layers (expert_layer_period "
                       f"{period}, offset {offset})")
        return chosen
    step = f.count("decoder_sparse_step")
    only_dense = set(f.int_list("mlp_only_layers", layers))
    if step is not None or only_dense:
        step = step or 1
        chosen = {i for i in range(layers) if i not in only_dense and (i + 1) % step == 0}
        if len(chosen) != layers:
            f.notes.append(f"experts in {len(chosen)} of {layers} layers (decoder_sparse_step "
                           f"{step}, mlp_only_layers {sorted(only_dense)})")
        return chosen
    return set(range(layers))


def _shared_expert_params(f: _Fields, hidden: int, moe_width: int) -> int:
    shared = f.count("n_shared_experts", least=0) or f.count("num_shared_experts", least=0)
    if shared:
        return shared * 3 * hidden * moe_width
    width = f.count("shared_expert_intermediate_size", least=0)
    if width:
        return 3 * hidden * width + hidden  # Qwen2-MoE: the shared expert and its gate
    return 0


def _vision_params(f: _Fields, fields: dict[str, Any]) -> int:
    vision = f.top.get("vision_config")
    if not isinstance(vision, dict):
        return 0
    kind = vision.get("model_type")
    if kind != "siglip_vision_model":
        f.notes.append(f"vision_config ({_shown(kind)}) is not counted: the weights are the "
                       "language model's only")
        return 0
    sub = _Fields(vision, {}, f.where + ": vision_config", {})
    width = sub.count("hidden_size", required=True)
    depth = sub.count("num_hidden_layers", required=True)
    inner = sub.count("intermediate_size", required=True)
    image = sub.count("image_size", required=True)
    patch = sub.count("patch_size", required=True)
    channels = sub.count("num_channels") or 3
    assert width and depth and inner and image and patch
    layer = 4 * (width * width + width) + 2 * 2 * width + 2 * width * inner + inner + width
    tower = depth * layer + channels * patch * patch * width + width
    tower += (image // patch) ** 2 * width + 2 * width  # positions, post-layernorm
    if vision.get("vision_use_head") is True:
        f.notes.append("vision_use_head: the SigLIP head is not counted")
    projector = width * int(fields["hidden"]) + width  # Gemma-3's input projection and norm
    total = tower + projector
    f.notes.append(f"vision tower (SigLIP, {depth} layers of {width:,}) and projector: "
                   f"{total:,} parameters, loaded with the weights; no KV of its own")
    return total


# ---------------------------------------------------------------------------------------------
# The weights' bytes


def _weights(f: _Fields, data: Mapping[str, Any], text: Mapping[str, Any],
             params: ParamCount) -> dict[str, Any]:
    raw = data.get("torch_dtype") or data.get("dtype") or text.get("torch_dtype") or \
        text.get("dtype")
    if raw is None:
        compute = "bf16"
        f.notes.append("no torch_dtype: the weights are taken as bf16 (vLLM would read the "
                       "safetensors' own dtype)")
    elif not isinstance(raw, str) or raw not in _DTYPES:
        raise f.error(f"torch_dtype {_shown(raw)} is not one kvdrill knows (bfloat16, float16, "
                      "float32)")
    else:
        compute = _DTYPES[raw]
        if compute == "fp32":
            compute = "bf16"
            f.notes.append("torch_dtype float32: served in 16 bits, as vLLM's dtype auto casts "
                           "a float32 checkpoint down (vllm/config/model.py); sized as bf16")
    quant = data.get("quantization_config") or text.get("quantization_config") or \
        data.get("compression_config")
    if quant is None:
        return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
                "weights_unknown": None}
    if not isinstance(quant, dict):
        raise f.error(f"quantization_config is {_shown(quant)}, not an object")
    method = str(quant.get("quant_method", "")).lower().replace("_", "-")
    total = params.total
    if method in ("fp8", "fbgemm-fp8"):
        f.notes.append(f"quantization_config {method}: linear weights at 1 byte, the embedding "
                       f"and LM head stay {compute} (vLLM's Fp8Config quantizes linear layers "
                       "only); block scales not counted")
        return {"weights_dtype": "fp8", "weights_gb": None, "tables_dtype": compute,
                "weights_unknown": None}
    if method == "mxfp4":
        quantized = params.expert_weights
        if not quantized:
            raise f.error("quantization_config mxfp4 on a model without experts: kvdrill knows "
                          "mxfp4 only for MoE experts (GPT-OSS)")
        size = Fraction(quantized * 17, 32) + (total - quantized) * _bytes(compute)
        f.notes.append(f"quantization_config mxfp4: the experts' {quantized:,} weights at 4 bits "
                       "plus one 8-bit scale per 32 (4.25 bits, 17/32 B); attention, router, "
                       f"embedding and LM head (modules_to_not_convert) stay {compute}: "
                       f"{_gb(size)} GB")
        return {"weights_dtype": "mxfp4", "weights_gb": size / 10**9, "tables_dtype": compute,
                "weights_unknown": None}
    if method in ("awq", "gptq"):
        bits = quant.get("bits", quant.get("w_bit"))
        group = quant.get("group_size", quant.get("q_group_size", 128))
        if bits not in (4, 8) or isinstance(bits, bool):
            raise f.error(f"quantization_config {method} bits {_shown(bits)}: kvdrill sizes 4 "
                          "and 8 bits")
        if isinstance(group, bool) or not isinstance(group, int) or group == 0 or \
                group < -1 or group > 10**6:
            raise f.error(f"quantization_config group_size {_shown(group)} is not a group size")
        rows = total - params.tables - params.norms - params.expert_biases - params.vision
        per = Fraction(bits, 8)
        if group > 0:  # a 16-bit scale and a packed zero point per group of each column
            per += Fraction(2, group) + Fraction(bits, 8 * group)
        size = rows * per + (total - rows) * _bytes(compute)
        f.notes.append(f"quantization_config {method}: {rows:,} linear weights at {bits} bits "
                       f"with a {compute} scale and a zero point per {group} "
                       f"({float(per):.4g} B each); embedding, LM head and norms stay "
                       f"{compute}: {_gb(size)} GB")
        return {"weights_dtype": f"int{bits}", "weights_gb": size / 10**9,
                "tables_dtype": compute, "weights_unknown": None}
    shown = method or "(no quant_method)"
    return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
            "weights_unknown": (f"{f.where}: quantization_config quant_method {shown!r} is not "
                                "one kvdrill can size (it knows fp8, mxfp4, awq and gptq): "
                                "give --weights-gb")}


def _bytes(dtype: str) -> Fraction:
    return {"bf16": Fraction(2), "fp16": Fraction(2), "fp32": Fraction(4)}[dtype]


def _gb(size: Fraction) -> str:
    return f"{float(size) / 10**9:,.2f}"


def config_path(folder_or_file: Path) -> Path:
    """The config.json a path names: the file itself, or the one in a folder."""
    if folder_or_file.is_dir():
        return folder_or_file / "config.json"
    return folder_or_file


SLUG = re.compile(r"[^a-z0-9.]+")


def slug(name: str) -> str:
    return SLUG.sub("-", name.lower()).strip("-") or "config"


