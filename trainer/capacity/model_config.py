"""A Hugging Face `config.json` read as the capacity model needs it: the shape that sizes the KV
cache, the parameter count (embedding, attention, MLP or experts, norms, LM head unless tied) and
the bytes of the weights as the checkpoint stores them.

Pure: the file is read bounded (files.bounded_io) and parsed by `json.loads`; nothing in it is
evaluated, imported or fetched. Each field is read the way vLLM reads it, and the traps a careless
reader falls into are handled and named in the notes:

- `head_dim` stated in the config wins over hidden ÷ heads (Qwen3-32B: 128, not 80);
  `num_key_value_heads` missing means MHA (vLLM ModelArchConfigConvertorBase.get_head_size and
  get_total_num_kv_heads, vllm/transformers_utils/model_arch_config_convertor.py);
- `sliding_window` is off when `use_sliding_window` is false, 0 or null, or left out of a
  Qwen-family file (Qwen2.5: 131072, unused; a string is refused), and with
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
  get_quantization_config), and the modules `ignored_layers` / `modules_to_not_convert` name
  (attention, MLP, router, experts, whole or per layer) at 16 bits too, or refused by name;
- `tie_word_embeddings` for the parameter count;
- ChatGLM's names for the same fields (`num_layers`, `padded_vocab_size`, `ffn_hidden_size`,
  `kv_channels`, `multi_query_group_num`, `add_qkv_bias`).

Weights it cannot size (bitsandbytes, MLX's own `quantization`, Falcon's ungated MLP) are
refused unless the user states them (--weights-gb or --params).

What it cannot size it refuses by name ("config.json: no num_hidden_layers"), as ConfigError.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from trainer.capacity.config_fields import (
    MAX_LAYERS,
    MAX_POSITIONS,
    MAX_VOCAB,
    ConfigError,
    Fields,
    JsonConstant,
    shown,
)
from trainer.capacity.config_layers import (
    CHUNKED_KINDS,
    FULL_KINDS,
    SLIDING_KINDS,
    Layout,
    chunked_layers,
    delta_net_dims,
    describe_state,
    mamba2_dims,
    mamba_dims,
    read_layout,
    refuse_attention_free,
    refuse_gpt2_names,
)
from trainer.files.bounded_io import read_text_bounded
from trainer.reading.exact import Fraction
from trainer.records import field, field_names, record

# A config.json is a few kilobytes; a megabyte holds any real one with room to spare.
MAX_CONFIG_BYTES = 1024 * 1024

__all__ = ["ConfigError", "ConfigModel", "ParamCount", "model_from_config", "read_config"]


@record
class LayerShares:
    """The parameters of one layer's attention, router, routed experts and the rest of its MLP
    (a dense MLP, or an MoE layer's shared experts), and the layers that hold each."""

    attention: int
    router: int
    experts: int
    shared: int
    dense_mlp: int
    attention_layers: frozenset[int]
    moe_layers: frozenset[int]
    dense_layers: frozenset[int]


@record
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
    # A vision tower loaded with the model but left out of the count (an MoE's: its active
    # share must stay the language model's), estimated from its vision_config
    uncounted_vision: int = 0
    unused_expert_params: int = 0  # routed experts a token does not use, every layer
    # One layer's share of each part, and which layers carry it, so a quantization_config that
    # keeps named modules unquantized can price them: None where the layers are not alike.
    per_layer: LayerShares | None = None

    @property
    def total(self) -> int:
        return (self.embedding + self.lm_head + self.attention + self.dense_mlp
                + self.expert_weights + self.expert_biases + self.router + self.mamba
                + self.norms + self.vision)

    @property
    def tables(self) -> int:
        return self.embedding + self.lm_head


@record
class ConfigModel:
    """What a config.json says, as the fields of a model preset, with the notes that say how
    each was read."""

    where: str  # the file as the user named it
    name: str
    fields: dict[str, Any]
    params: ParamCount
    notes: tuple[str, ...] = field(default=())
    assumed: tuple[tuple[str, str], ...] = field(default=())  # (field, how a default filled it)


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
    def kept_constant(name: str) -> Any:
        # NaN and Infinity are not JSON, but published files carry them in fields no sizing
        # reads (Nemotron-H's time_step_limit); kept as text, a field that is read refuses it
        return JsonConstant(name)

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        found: dict[str, Any] = {}
        for key, value in pairs:
            if key in found:
                raise ConfigError(f"{where}: {key!r} is given twice: keep one")
            found[key] = value
        return found

    text = text.removeprefix("\ufeff")  # a byte-order mark, as editors on Windows write
    try:
        data = json.loads(text, parse_constant=kept_constant, object_pairs_hook=no_duplicates)
    except RecursionError:
        raise ConfigError(f"{where}: nested too deeply to be a config.json") from None
    except ValueError as error:  # JSONDecodeError, or a number too long to convert
        if "digits" in str(error) and not hasattr(error, "lineno"):
            raise ConfigError(f"{where}: a number of thousands of digits: a config.json holds "
                              "figures of sensible size") from None
        line = getattr(error, "lineno", None)
        at = f" (line {line})" if line is not None else ""
        message = getattr(error, "msg", None) or str(error)
        raise ConfigError(f"{where}: not valid JSON{at}: {message}") from None
    if not isinstance(data, dict):
        kind = {type(None): "null", list: "a list", str: "a string", bool: "true or false"}
        raise ConfigError(f"{where}: a config.json is one JSON object ({{...}}), not "
                          f"{kind.get(type(data), 'a number')}")
    return data


def _name_from_path(path: Path) -> str:
    """The model's name from where its config lies: its folder, or, in a Hugging Face cache
    (…/models--Qwen--Qwen2.5-7B/snapshots/<commit>/config.json), the repository's name,
    not the commit's."""
    folder = path.parent.name if path.name.lower() == "config.json" else path.stem
    if _COMMIT.fullmatch(folder) and path.parent.parent.name == "snapshots":
        cached = _HUB_FOLDER.fullmatch(path.parent.parent.parent.name)
        if cached is not None:
            folder = cached.group(1)
    return clean_name(folder or path.name)


_COMMIT = re.compile(r"[0-9a-f]{40}")
_HUB_FOLDER = re.compile(r"models--[\w.-]+?--([\w.-]+)")


# Characters that are markup in Markdown or HTML (a tag, a link, a code span, a table cell), in
# a name from outside: shown as look-alikes that mean nothing in any output format.
_MARKUP_LOOKALIKES = str.maketrans({"<": "‹", ">": "›", "[": "(", "]": ")", "`": "'",
                                    "|": "¦", "*": "×", "\\": "/"})


def clean_name(text: str) -> str:
    """A name from outside (a folder, a config field) as one printable line with no markup:
    newlines and control characters never reach a title, a YAML sheet or a Markdown line, and
    `<img …>`, `[link](…)` or a `|` never become a tag, a link or a table cell."""
    printable = "".join(char if char.isprintable() else " " for char in text)
    return " ".join(printable.translate(_MARKUP_LOOKALIKES).split())[:120] or "config"


# transformers' defaults for the fields a sparse config.json leaves out, for the model types
# whose published files rely on them (vLLM loads the config through these classes).
_TYPE_DEFAULTS: dict[str, dict[str, Any]] = {
    # Gemma3TextConfig's defaults: Gemma-3-4B's text_config states neither its heads nor its
    # KV heads, which are these
    "gemma3_text": {"vocab_size": 262_208, "max_position_embeddings": 131_072,
                    "tie_word_embeddings": True, "sliding_window_pattern": 6,
                    "head_dim": 256, "num_attention_heads": 8, "num_key_value_heads": 4,
                    "hidden_size": 2304, "intermediate_size": 9216, "num_hidden_layers": 26,
                    "sliding_window": 4096},
    "gemma2": {"tie_word_embeddings": True, "head_dim": 256},
    "gemma": {"tie_word_embeddings": True, "head_dim": 256},
    # DeepseekV2Config and DeepseekV3Config: a file without q_lora_rank gets 1536 (an explicit
    # null is uncompressed Q, read in _attention_params)
    "deepseek_v2": {"q_lora_rank": 1536, "v_head_dim": 128},
    "deepseek_v3": {"q_lora_rank": 1536, "v_head_dim": 128},
}
# Untied unless the model type's config class says otherwise (every class below sets False;
# FalconConfig leaves it at PretrainedConfig's True, and vLLM's falcon.py ties it so).
_TIED_BY_DEFAULT = {"gemma", "gemma2", "gemma3", "gemma3_text", "lfm2", "falcon", "RefinedWeb",
                    "RefinedWebModel"}
_KNOWN_TYPES = {
    "llama4", "llama4_text", "mllama", "mllama_text_model", "nemotron_h", "qwen3_next",
    "qwen3_5", "qwen3_5_text", "falcon_h1", "granitemoehybrid", "lfm2", "bamba",
    "nemotron-nas", "qwen2_5_vl", "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3",
    "qwen3_moe", "gemma", "gemma2", "gemma3", "gemma3_text", "phi3", "gpt_oss", "deepseek_v2",
    "deepseek_v3", "jamba", "mistral3", "granite", "olmo2", "exaone", "internlm2", "cohere",
    "chatglm",
}
# Falcon's MLP is two matrices 4 × hidden wide (GELU), not a gated one: its parameters are
# estimated, and its weights are refused unless the user states them.
_FALCON_TYPES = {"falcon", "RefinedWeb", "RefinedWebModel"}
_MLA_TYPES = {"deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_mtp", "kimi_k2",
              "longcat_flash", "pangu_ultra_moe"}
# Model types whose experts have a width of their own (moe_intermediate_size in transformers),
# not the dense intermediate_size: a file without it is refused rather than sized at the other.
_MOE_WIDTH_TYPES = {
    "qwen2_moe", "qwen3_moe", "qwen3_next", "qwen3_vl_moe", "qwen3_vl_moe_text",
    "qwen3_omni_moe_text", "deepseek_v2", "deepseek_v3", "deepseek_v32", "kimi_k2", "dots1",
    "ernie4_5_moe", "glm4_moe", "glm4v_moe", "longcat_flash",
}
# Model types whose experts are intermediate_size wide (transformers' config has no
# moe_intermediate_size, and vLLM builds the experts at intermediate_size): a stray one is not read.
_EXPERTS_AT_INTERMEDIATE = {
    "mixtral", "phimoe", "olmoe", "jamba", "gpt_oss", "granitemoe", "granitemoehybrid",
    "minimax", "llama4", "llama4_text",
}
_DTYPES = {"bfloat16": "bf16", "float16": "fp16", "half": "fp16", "float32": "fp32",
           "float": "fp32"}


# ---------------------------------------------------------------------------------------------
# The model


def model_from_config(data: Mapping[str, Any], where: str = "config.json",
                      name: str | None = None) -> ConfigModel:
    """A parsed config.json → the fields of a model preset (see ModelPreset), the parameter
    count by part and the notes on how each trap was read."""
    text_config = data.get("text_config")
    if text_config is not None and not isinstance(text_config, dict):
        raise ConfigError(f"{where}: text_config is {shown(text_config)}, not an object")
    text: Mapping[str, Any] = text_config if text_config else data
    model_type = str(text.get("model_type") or data.get("model_type") or "")
    top_type = str(data.get("model_type") or model_type)
    defaults = _TYPE_DEFAULTS.get(model_type) or \
        (_TYPE_DEFAULTS.get(f"{top_type}_text", {}) if text_config else {})
    f = Fields(text, data, where, defaults)
    if text_config:
        f.notes.append("text_config: the language model is read from it, as vLLM's "
                       "get_hf_text_config does (vllm/transformers_utils/config.py); the "
                       "vision part only adds weights")

    refuse_attention_free(f, model_type)
    refuse_gpt2_names(f, model_type)
    layers = f.count_of("num_hidden_layers", "num_layers", required=True, most=MAX_LAYERS)
    hidden = f.count("hidden_size", required=True)
    heads = f.count("num_attention_heads", required=True)
    assert layers is not None and hidden is not None and heads is not None
    vocab = f.count_of("vocab_size", "padded_vocab_size", required=True, most=MAX_VOCAB)
    assert vocab is not None
    layout = read_layout(f, model_type, layers, hidden, heads)
    kv_heads = layout.kv_heads or _kv_heads(f, heads)
    head_dim = _head_dim(f, hidden, heads)
    tied = f.flag("tie_word_embeddings", model_type in _TIED_BY_DEFAULT
                  or top_type in _TIED_BY_DEFAULT)
    if model_type and model_type not in _KNOWN_TYPES and top_type not in _KNOWN_TYPES \
            and model_type not in _FALCON_TYPES:
        f.notes.append(f"model_type {model_type!r} is not one kvdrill knows: its parameters "
                       "are counted as a Llama-style decoder (gated MLP, two norms a layer, no "
                       "biases); check the count against the published one")

    fields: dict[str, Any] = {
        "layers": layers, "hidden": hidden, "heads": heads, "kv_heads": kv_heads,
        "head_dim": head_dim, "vocab": vocab, "tied_embeddings": tied,
        "attention": "gqa", "mla_latent": 0, "mla_rope": 0, "window": None,
        "windowed_layers": 0, "experts": None, "experts_per_token": None,
        "attention_layers": None, "state_elements": None, "recurrent_layers": None,
    }
    mla = _mla(f, model_type)
    if mla is not None:
        # head_dim does not size an MLA cache; the query/key head width without its rope part
        # (qk_nope_head_dim, DeepSeek-V3: 128) stands in the shape, as the presets have it
        nope = f.count("qk_nope_head_dim", least=0)
        fields.update(attention="mla", mla_latent=mla[0], mla_rope=mla[1],
                      head_dim=nope or head_dim)
    fields.update(describe_state(layout))
    if mla is None:
        _windows(f, model_type, layout, fields)
    experts = _experts(f, fields)
    params = _count(f, model_type, fields, experts, layout)
    fields["params"] = params.total
    if fields["experts"] is not None:
        fields["active_params"] = params.total - params.unused_expert_params
        moe = len(params.per_layer.moe_layers) if params.per_layer else fields["layers"]
        fields["moe_layers"] = moe if moe != fields["layers"] else None
        fields["shared_experts"] = _shared_expert_count(f, model_type)
    else:
        fields["active_params"] = None
    fields["attention_params"] = params.attention
    fields["max_context"] = _max_context(f, top_type)
    fields.update(_weights(f, data, text, params))
    if model_type in _FALCON_TYPES:
        width = _falcon_width(f, hidden)
        how = f"ffn_hidden_size {width:,}" if width != 4 * hidden else \
            f"4 × hidden_size = {width:,}"
        fields["weights_unknown"] = (
            f"{where}: {model_type}'s MLP is not gated ({how}, GELU), and kvdrill counts "
            "Llama-style decoders only: give --weights-gb (the checkpoint's size) or --params")
    model_name = name or _text(data.get("_name_or_path")) or _first_architecture(data) or \
        "config.json"
    fields["name"] = model_name
    return ConfigModel(where, model_name, fields, params, tuple(dict.fromkeys(f.notes)),
                       tuple(f.assumed.items()))


def _text(value: Any) -> str | None:
    if isinstance(value, str) and value.strip() and len(value) <= 200:
        return clean_name(value.strip().rstrip("/").rsplit("/", 1)[-1])
    return None


def _first_architecture(data: Mapping[str, Any]) -> str | None:
    names = data.get("architectures")
    if isinstance(names, list) and names and isinstance(names[0], str):
        return clean_name(names[0][:200])
    return None


def _kv_heads(f: Fields, heads: int) -> int:
    # Falcon's new decoder (40B, 180B) keeps num_kv_heads whatever multi_query says (vLLM's
    # get_total_num_kv_heads)
    if f.flag("multi_query", False) and not f.flag("new_decoder_architecture", False):
        f.notes.append("multi_query: one KV head (MQA), as vLLM reads it")
        return 1
    for name in ("num_key_value_heads", "n_head_kv", "num_kv_heads", "multi_query_group_num"):
        value = f.count(name)
        if value is not None:
            if value > heads:
                raise f.error(f"{name} {value} exceeds num_attention_heads {heads}: a model has "
                              "at most one KV head per query head")
            if value and heads % value:
                # grouped-query attention gives each KV head an equal group of query heads
                # (transformers' repeat_kv and vLLM's attention layer both need it)
                raise f.error(f"{name} {value} does not divide num_attention_heads {heads}: "
                              "each KV head serves an equal group of query heads")
            return value
    f.notes.append(f"no num_key_value_heads: KV heads = num_attention_heads = {heads} (MHA), as "
                   "vLLM's get_total_num_kv_heads defaults")
    f.assumed["kv_heads"] = "no num_key_value_heads: = num_attention_heads (MHA), as vLLM defaults"
    return heads


def _head_dim(f: Fields, hidden: int, heads: int) -> int:
    if f.raw("head_dim") is None and f.has("attention_head_dim"):  # Nemotron-H's spelling
        value = f.count("attention_head_dim")
        assert value is not None
        f.notes.append(f"attention_head_dim {value}: the head width, as vLLM's nemotron_h.py "
                       "reads it")
        return value
    if f.raw("head_dim") is None and f.has("kv_channels"):  # ChatGLM's spelling
        value = f.count("kv_channels")
        assert value is not None
        f.notes.append(f"kv_channels {value}: the head width, as ChatGLM names head_dim")
        return value
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


def _mla(f: Fields, model_type: str) -> tuple[int, int] | None:
    latent = f.count("kv_lora_rank")
    if latent is None:
        return None
    if model_type not in _MLA_TYPES and (model_type in _KNOWN_TYPES or not model_type):
        # vLLM's is_deepseek_mla reads kv_lora_rank only for DeepSeek-family model types; a
        # Qwen3 or Llama attention keeps its K/V pair whatever else the file says
        named = f"model_type {model_type!r}" if model_type else "no model_type"
        f.notes.append(f"kv_lora_rank {latent} is not read: {named} has no MLA attention "
                       "(vLLM's is_deepseek_mla reads it only for DeepSeek-family types), so "
                       "the KV is K and V per KV head")
        return None
    for name in ("qk_rope_head_dim", "qk_nope_head_dim"):
        if f.raw(name) is None:
            raise f.error(f"kv_lora_rank {latent} but no {name}: MLA's per-token cache and "
                          "its projections need it")
    rope = f.count("qk_rope_head_dim", least=0) or 0
    where = "" if model_type in _MLA_TYPES else f" (model_type {model_type!r})"
    f.notes.append(f"MLA{where}: kv_lora_rank {latent} + qk_rope_head_dim {rope} = "
                   f"{latent + rope} values per token and layer, one latent and no K/V pair, "
                   "as vLLM's get_head_size and MLAAttentionSpec hold it")
    return latent, rope


def _windows(f: Fields, model_type: str, layout: Layout, fields: dict[str, Any]) -> None:
    layers = layout.layers
    window = f.count("sliding_window")
    chunked = chunked_layers(f, layers) if layout.kinds is None else None
    if chunked is not None:
        if layout.recurrent or layout.cross_attention:
            raise f.error("attention_chunk_size in a hybrid model: kvdrill sizes chunks or a "
                          "recurrent state, not both")
        _set_window(f, fields, chunked[0], chunked[1], layers, "chunked local attention",
                    chunked=True)
        return
    if layout.kinds is not None:
        kinds = layout.kinds
        sliding = sum(kind in SLIDING_KINDS for kind in kinds)
        chunks = sum(kind in CHUNKED_KINDS for kind in kinds)
        if sliding and chunks:
            raise f.error("layer_types mixes sliding and chunked attention: kvdrill sizes one "
                          "window per model")
        if (sliding or chunks) and (layout.recurrent or layout.cross_attention):
            raise f.error("layer_types mixes windowed attention with recurrent layers: kvdrill "
                          "sizes a window or a recurrent state, not both")
        if chunks:
            chunk = f.count("attention_chunk_size")
            if chunk is None:
                raise f.error("layer_types names chunked_attention layers but "
                              "attention_chunk_size is not set")
            _set_window(f, fields, chunk, chunks, layers, f"layer_types lists {chunks} "
                        "chunked_attention layers (ChunkedLocalAttentionSpec)", chunked=True)
        elif sliding and model_type in _SLIDING_SWITCH_TYPES and \
                not _sliding_switch(f, model_type, window):
            return
        elif sliding:
            if window is None:
                raise f.error("layer_types names sliding layers but sliding_window is not set")
            full = sum(kind in FULL_KINDS for kind in kinds)
            _set_window(f, fields, window, sliding, layers, "layer_types lists "
                        f"{sliding} sliding_attention and {full} full_attention "
                        "layers (vLLM gives each sliding layer its window: per_layer_sliding_"
                        "window)")
        return
    most = f.count("max_position_embeddings", most=MAX_POSITIONS)
    switched_on = _sliding_switch(f, model_type, window)
    if window is not None and layout.recurrent and switched_on \
            and (most is None or window < most):
        raise f.error(f"sliding_window {window:,} in a hybrid model: kvdrill sizes a window or "
                      "a recurrent state, not both")
    if window is None or not switched_on:
        return
    max_window = f.count("max_window_layers", least=0)
    if model_type in ("qwen2", "qwen2_moe", "qwen3", "qwen3_moe") and max_window is not None:
        sliding = max(0, layers - max_window)
        if not sliding:
            f.notes.append(f"use_sliding_window is on, but max_window_layers {max_window} ≥ "
                           f"{layers} layers: no layer slides (transformers Qwen2Config "
                           "layer_types: sliding only from max_window_layers on)")
            return
        _set_window(f, fields, window, sliding, layers, f"layers {max_window}–{layers - 1} "
                    f"slide (max_window_layers {max_window})")
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


# The model types whose transformers config reads use_sliding_window, default false, and drops
# sliding_window unless it is on (Qwen2Config: `sliding_window if use_sliding_window else None`).
_SLIDING_SWITCH_TYPES = frozenset({
    "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "qwen2_vl", "qwen2_vl_text", "qwen2_5_vl",
    "qwen2_5_vl_text", "smollm3",
})


def _sliding_switch(f: Fields, model_type: str, window: int | None) -> bool:
    """Whether use_sliding_window lets sliding_window bind, as transformers and vLLM read it:
    vLLM's get_hf_config_sliding_window returns None when the field is there and `not` it
    (false, 0, null); a Qwen-family config without it takes its class's default, false. A
    string or any other value is refused: transformers would read "false" as on."""
    value = f.raw("use_sliding_window")
    stated = "use_sliding_window" in f.text or "use_sliding_window" in f.top
    if not stated:
        if window is not None and model_type in _SLIDING_SWITCH_TYPES:
            f.notes.append(f"sliding_window {window:,} is off: no use_sliding_window, whose "
                           f"default in transformers' {model_type} config is false; every "
                           "layer holds the whole context")
            return False
        return True
    if isinstance(value, bool):
        on = value
    elif value is None or (isinstance(value, int) and value in (0, 1)):
        on = bool(value)
        if window is not None:
            f.notes.append(f"use_sliding_window {shown(value)} read as "
                           f"{'true' if on else 'false'}, as vLLM reads it "
                           "(get_hf_config_sliding_window tests `not use_sliding_window`)")
    else:
        raise f.error(f"use_sliding_window is {shown(value)}, not true or false: fix the file")
    if not on and window is not None:
        f.notes.append(f"sliding_window {window:,} is switched off by use_sliding_window "
                       f"{shown(value)}: every layer holds the whole context (vLLM's "
                       "get_hf_config_sliding_window returns None, vllm/config/model.py)")
    return on


def _set_window(f: Fields, fields: dict[str, Any], window: int | None, sliding: int,
                layers: int, how: str, chunked: bool = False) -> None:
    assert window is not None
    most = f.count("max_position_embeddings", most=MAX_POSITIONS)
    if most is not None and window >= most and sliding == layers:
        f.notes.append(f"sliding_window {window:,} ≥ max_position_embeddings {most:,}: it never "
                       "binds, so every layer holds the whole context")
        return
    fields["window"] = window
    fields["windowed_layers"] = sliding
    if chunked:
        f.notes.append(f"chunks of {window:,} tokens on {sliding} of {layers} layers: {how}; "
                       "sized as a window of one chunk, the most such a layer holds")
        return
    f.notes.append(f"sliding window {window:,} tokens on {sliding} of {layers} layers: {how}; a "
                   "sliding layer keeps only its window's KV (vLLM's SlidingWindowSpec, "
                   "vllm/v1/kv_cache_interface.py)")


def _experts(f: Fields, fields: dict[str, Any]) -> dict[str, Any] | None:
    names = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
    found = {name: f.count(name, least=0) for name in names if f.has(name)}
    counts = {value for value in found.values() if value}
    if not counts:
        if found:
            f.notes.append(f"{next(iter(found))} 0: no experts, so every layer's MLP is dense "
                           "(intermediate_size wide), as transformers and vLLM build a layer "
                           "with no experts")
        return None
    if len(counts) > 1:
        listed = ", ".join(f"{k} {v}" for k, v in found.items())
        raise f.error(f"the expert counts disagree ({listed}): keep one")
    experts = counts.pop()
    if experts == 1:
        # (a single expert is the layer's MLP: transformers and vLLM build Jamba's JambaMLP,
        # not JambaMoE, when num_experts is 1; every step reads it, as a dense model's;
        # expert pass 51)
        f.notes.append(f"{next(iter(found))} 1: one expert is a dense MLP (intermediate_size "
                       "wide), as transformers and vLLM build a layer with a single expert")
        return None
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


def _max_context(f: Fields, top_type: str) -> int | None:
    """The longest context the config allows, as vLLM derives max_model_len: the position
    limit, times a RoPE scaling factor (YaRN from its original length; not llama3, longrope or
    Gemma-3, whose limit is already the scaled one)."""
    base = f.count("max_position_embeddings", most=MAX_POSITIONS)
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


def _count(f: Fields, model_type: str, fields: dict[str, Any], experts: dict[str, Any] | None,
           layout: Layout) -> ParamCount:
    layers, hidden, vocab = fields["layers"], fields["hidden"], fields["vocab"]
    counts: dict[str, Any] = {key: 0 for key in field_names(ParamCount)
                              if key != "per_layer"}
    counts["embedding"] = vocab * hidden
    counts["lm_head"] = 0 if fields["tied_embeddings"] else vocab * hidden
    norms_per_layer = 4 if model_type in ("gemma2", "gemma3", "gemma3_text") else 2
    if layout.mlp_only or layout.moe_blocks:
        norms_per_layer = 1  # Nemotron-H: one norm before each block's one mixer or MLP
    counts["norms"] = layers * norms_per_layer * hidden + hidden

    # Cross-attention layers carry the same projections (their K and V read image tokens).
    per_attention = _attention_params(f, model_type, fields)
    counts["attention"] = per_attention * (len(layout.attention) + len(layout.cross_attention))
    if layout.recurrent:
        counts["mamba"] = len(layout.recurrent) * _mixer_params(f, layout, hidden)
    if layout.mlp_params is not None:  # DeciLM: each block its own
        assert layout.norms is not None
        counts["attention"] += layout.linear_params
        counts["dense_mlp"] = layout.mlp_params
        counts["norms"] = layout.norms
        counts["vision"] = _vision_params(f, fields)
        counts["uncounted_vision"] = fields.pop("uncounted_vision", 0)
        return ParamCount(**counts)

    intermediate = f.count_of("intermediate_size", "ffn_hidden_size")
    gated = 2 if _ungated(f, model_type) else 3
    if model_type in _FALCON_TYPES:
        intermediate, gated = _falcon_width(f, hidden), 2
        f.assumed["params"] = (f"an estimate (an ungated MLP {intermediate:,} wide), not "
                               "kvdrill's count of falcon: give --params")
    shared_per_layer = dense_per_layer = 0
    if layout.mlp_only or layout.moe_blocks:  # Nemotron-H: MLP and MoE are blocks of their own
        moe_layers = set(layout.moe_blocks) if experts else set()
        dense_layers = len(layout.mlp_only)
    else:
        moe_layers = _moe_layers(f, model_type, layers) if experts else set()
        dense_layers = layers - len(moe_layers)
    dense_width = f.count("intermediate_size_mlp") or intermediate
    if model_type == "granitemoehybrid" and not experts:  # the shared MLP is the only one
        dense_width = f.count("shared_intermediate_size") or intermediate
    if dense_width is not None and f.flag("block_auto_adjust_ff_dim", False):
        dense_width = _lfm2_width(f, dense_width)
    if experts:
        if model_type in _MOE_WIDTH_TYPES and not f.has("moe_intermediate_size"):
            raise f.error(f"no moe_intermediate_size: the experts' width is needed ({model_type}"
                          "'s experts are not intermediate_size wide)")
        if model_type in _EXPERTS_AT_INTERMEDIATE and f.has("moe_intermediate_size"):
            f.notes.append(f"moe_intermediate_size {shown(f.raw('moe_intermediate_size'))} is "
                           f"not read: {model_type}'s experts are intermediate_size wide (its "
                           "config in transformers has no such field, vLLM does not read it)")
            moe_width = intermediate
        else:
            moe_width = f.count("moe_intermediate_size") or intermediate
        if moe_width is None:
            raise f.error("no moe_intermediate_size or intermediate_size: the experts' width "
                          "is needed")
        per_expert = gated * hidden * moe_width
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
        shared = _shared_expert_params(f, model_type, hidden, moe_width, gated)
        counts["dense_mlp"] += len(moe_layers) * shared
        shared_per_layer = shared
    if dense_layers:
        if dense_width is None:
            raise f.error("no intermediate_size: the MLP's width is needed")
        mlp = gated * hidden * dense_width
        if f.flag("mlp_bias", False):
            mlp += 2 * dense_width + hidden
        counts["dense_mlp"] += dense_layers * mlp
        dense_per_layer = mlp
    if model_type == "jamba":
        counts["norms"] = layers * 2 * hidden + hidden
    counts["vision"] = _vision_params(f, fields)
    counts["uncounted_vision"] = fields.pop("uncounted_vision", 0)
    moe = len(moe_layers)
    dense_set = set(layout.mlp_only) if layout.mlp_only or layout.moe_blocks else \
        set(range(layers)) - moe_layers
    counts["per_layer"] = LayerShares(
        attention=per_attention, router=counts["router"] // moe if moe else 0,
        experts=(counts["expert_weights"] + counts["expert_biases"]) // moe if moe else 0,
        shared=shared_per_layer, dense_mlp=dense_per_layer,
        attention_layers=frozenset(layout.attention) | frozenset(layout.cross_attention),
        moe_layers=frozenset(moe_layers), dense_layers=frozenset(dense_set))
    return ParamCount(**counts)


def _lfm2_width(f: Fields, stated: int) -> int:
    """LFM2's MLP width when block_auto_adjust_ff_dim: two thirds of the stated one, times
    block_ffn_dim_multiplier, rounded up to block_multiple_of (transformers Lfm2MLP)."""
    width = int(2 * stated / 3)
    multiplier = f.raw("block_ffn_dim_multiplier")
    if isinstance(multiplier, int | float) and not isinstance(multiplier, bool) and \
            0 < multiplier <= 100:
        width = int(multiplier * width)
    multiple = f.count("block_multiple_of") or 1
    width = multiple * -(-width // multiple)
    f.notes.append(f"block_auto_adjust_ff_dim: the MLP is {width:,} wide, not the stated "
                   f"{stated:,} (⅔, block_ffn_dim_multiplier, rounded to block_multiple_of; "
                   "transformers Lfm2MLP)")
    return width


def _falcon_width(f: Fields, hidden: int) -> int:
    """Falcon's MLP width: ffn_hidden_size, else 4 × hidden (transformers FalconConfig)."""
    return f.count_of("intermediate_size", "ffn_hidden_size") or 4 * hidden


def _ungated(f: Fields, model_type: str | None) -> bool:
    """An MLP of two matrices (up, down) rather than three (gate, up, down): Nemotron-H's
    squared ReLU. A nemotron_h config that names no activation has transformers' default,
    NemotronHConfig's mlp_hidden_act "relu2", and is said so among the defaults filled."""
    act = f.raw("mlp_hidden_act") or f.raw("hidden_act")
    if act is None and model_type == "nemotron_h":
        f.assumed["params"] = ("no mlp_hidden_act: relu2, as transformers' NemotronHConfig "
                               "defaults (an ungated MLP, up and down projections only)")
        f.notes.append("no mlp_hidden_act: the MLP blocks are counted as transformers' default "
                       "for nemotron_h, relu2 (squared ReLU): up and down projections, 2 × "
                       "hidden × intermediate_size each, no gate")
        return True
    return isinstance(act, str) and act.lower() in ("relu2", "squared_relu", "relu_squared")


def _mixer_params(f: Fields, layout: Layout, hidden: int) -> int:
    kind = layout.recurrent_kind
    if kind == "mamba":
        return _mamba_params(f, hidden)
    if kind == "mamba2":
        d = mamba2_dims(f, hidden)
        inner, groups, state, heads = d["inner"], d["groups"], d["state"], d["heads"]
        conv_dim = inner + 2 * groups * state
        params = hidden * (2 * inner + 2 * groups * state + heads)  # in_proj: z, x, B, C, dt
        params += conv_dim * d["kernel"] + conv_dim  # depthwise convolution and its bias
        params += 3 * heads + inner  # dt_bias, A_log, D; the gated norm
        params += inner * hidden  # out_proj
        return params
    if kind == "gated-delta-net":
        d = delta_net_dims(f)
        value = d["value_heads"] * d["value_dim"]
        key = d["key_heads"] * d["key_dim"]
        params = hidden * (2 * key + 2 * value)  # in_proj_qkvz
        params += hidden * 2 * d["value_heads"]  # in_proj_ba
        params += d["conv"] * d["kernel"]  # convolution, no bias
        params += 2 * d["value_heads"] + d["value_dim"]  # dt_bias, A_log; the norm
        params += value * hidden  # out_proj
        return params
    kernel = f.first_count("conv_L_cache", "conv_kernel", required=True)
    assert kernel is not None
    bias = f.flag("conv_bias", False)
    return hidden * 3 * hidden + hidden * kernel + hidden * hidden + (hidden if bias else 0)


def projection_params(hidden: int, heads: int, kv_heads: int, head_dim: int) -> int:
    """One attention layer's Q, K, V and O projections (no biases or norms)."""
    return hidden * head_dim * (2 * heads + 2 * kv_heads)


def _attention_params(f: Fields, model_type: str, fields: dict[str, Any]) -> int:
    hidden, heads = fields["hidden"], fields["heads"]
    if fields["attention"] == "mla":
        # An explicit null is uncompressed Q; a missing field, its model type's default
        explicit_null = "q_lora_rank" in f.text or "q_lora_rank" in f.top
        q_rank = None if explicit_null and not f.has("q_lora_rank") else \
            f.count("q_lora_rank")
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
    params = projection_params(hidden, heads, kv_heads, head_dim)
    if model_type in ("qwen2", "qwen2_moe") or f.flag("qkv_bias", False) or \
            f.flag("add_qkv_bias", False):  # ChatGLM's name
        params += q_width + 2 * kv_width  # q, k and v carry biases; o does not
    elif f.flag("attention_bias", False):
        params += q_width + 2 * kv_width + hidden
    if f.flag("attn_output_gate", model_type == "qwen3_next"):
        params += hidden * q_width  # the query projection also gives the output's gate
    if model_type in ("qwen3_next", "qwen3_5_text", "qwen3_5", "lfm2"):
        params += 2 * head_dim  # q and k norms
    if model_type in ("qwen3", "qwen3_moe", "gemma3", "gemma3_text", "olmo2"):
        params += 2 * head_dim if model_type != "olmo2" else q_width + kv_width  # q/k norms
    if model_type == "gpt_oss":
        params += heads  # attention sinks
    return int(params)


def _mamba_params(f: Fields, hidden: int) -> int:
    d_state, d_conv, inner = mamba_dims(f, hidden)
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


def _moe_layers(f: Fields, model_type: str, layers: int) -> set[int]:
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
    interleave = f.count("interleave_moe_layer_step", least=0)
    if interleave:  # Llama-4: (layer_idx + 1) % step == 0 (vllm llama4.py)
        chosen = {i for i in range(layers) if (i + 1) % interleave == 0}
        if len(chosen) != layers:
            f.notes.append(f"experts in {len(chosen)} of {layers} layers "
                           f"(interleave_moe_layer_step {interleave})")
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


def _shared_expert_params(f: Fields, model_type: str, hidden: int, moe_width: int,
                          gated: int) -> int:
    shared = f.count("n_shared_experts", least=0) or f.count("num_shared_experts", least=0)
    width = f.count("moe_shared_expert_intermediate_size", least=0)
    if shared and width:  # Nemotron-H
        return shared * gated * hidden * width
    if shared:
        return shared * gated * hidden * moe_width
    if model_type in ("llama4", "llama4_text"):  # one shared expert as wide as a routed one
        return gated * hidden * moe_width
    width = f.count("shared_expert_intermediate_size", least=0) or \
        f.count("shared_intermediate_size", least=0)
    if width:
        gate = hidden if f.has("shared_expert_intermediate_size") else 0
        return gated * hidden * width + gate  # Qwen2-MoE: the shared expert and its gate
    return 0


def _shared_expert_count(f: Fields, model_type: str) -> int:
    """The experts every token goes through beside its routed ones, as _shared_expert_params
    counts their weights: n_shared_experts (DeepSeek, GLM-4.5), Llama-4's one, Qwen2-MoE's one
    wider expert."""
    shared = f.count("n_shared_experts", least=0) or f.count("num_shared_experts", least=0)
    if shared:
        return shared
    if model_type in ("llama4", "llama4_text"):
        return 1
    return 1 if (f.count("shared_expert_intermediate_size", least=0)
                 or f.count("shared_intermediate_size", least=0)) else 0


def _vision_params(f: Fields, fields: dict[str, Any]) -> int:
    vision = f.top.get("vision_config")
    if not isinstance(vision, dict):
        return 0
    kind = vision.get("model_type")
    top = str(f.top.get("model_type") or "")
    if kind is None and top in ("qwen2_5_vl", "qwen2_vl"):
        return _qwen_vision_params(f, vision, top)
    if kind in ("qwen3_vl", "qwen3_vl_moe"):
        tower = _qwen3_vision_params(f, vision)
        if fields.get("experts") is None:
            f.notes.append(f"vision tower (qwen3_vl, {vision.get('depth')} blocks) and its "
                           f"mergers: {tower:,} parameters, loaded with the weights; no KV "
                           "of its own")
            return tower
        fields["uncounted_vision"] = tower
        f.notes.append(f"vision_config (model_type {kind!r}) is not counted: about {tower:,} "
                       "parameters the card holds too, left out so that the active share "
                       "stays the language model's")
        return 0
    if kind != "siglip_vision_model":
        named = f"model_type {kind!r}" if isinstance(kind, str) else "no model_type"
        f.notes.append(f"vision_config ({named}) is not counted: the weights are the language "
                       "model's only, and the card holds the vision tower too")
        return 0
    sub = Fields(vision, {}, f.where + ": vision_config", {})
    width = sub.count("hidden_size", required=True)
    depth = sub.count("num_hidden_layers", required=True, most=MAX_LAYERS)
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


def _qwen3_vision_params(f: Fields, vision: Mapping[str, Any]) -> int:
    """Qwen3-VL's vision tower (transformers modeling_qwen3_vl.py): a biased 3-D patch
    embedding, learned position embeddings, `depth` blocks (LayerNorms, biased qkv and
    projection, a GELU MLP), the merger that folds 2 × 2 patches into the language model's
    width, and one more merger (with its norm after the shuffle) per deepstack layer."""
    sub = Fields(vision, {}, f.where + ": vision_config", {})
    depth = sub.count("depth", required=True, most=MAX_LAYERS)
    width = sub.count("hidden_size", required=True)
    inner = sub.count("intermediate_size", required=True)
    patch = sub.count("patch_size", required=True)
    out = sub.count("out_hidden_size", required=True)
    assert depth and width and inner and patch and out
    frames = sub.count("temporal_patch_size") or 2
    channels = sub.count("in_channels") or 3
    merge = sub.count("spatial_merge_size") or 2
    positions = sub.count("num_position_embeddings") or 0
    deepstack = vision.get("deepstack_visual_indexes")
    extra = len(deepstack) if isinstance(deepstack, list) and len(deepstack) <= MAX_LAYERS \
        else 0
    block = 4 * width + (width * 3 * width + 3 * width) + (width * width + width) \
        + (width * inner + inner) + (inner * width + width)
    merged = width * merge * merge
    linears = merged * merged + merged + merged * out + out
    return (channels * frames * patch * patch * width + width + positions * width
            + depth * block + (2 * width + linears) + extra * (2 * merged + linears))


def _qwen_vision_params(f: Fields, vision: Mapping[str, Any], top: str) -> int:
    """Qwen2-VL and Qwen2.5-VL's vision tower: a 3-D patch embedding, `depth` blocks (biased
    attention; a gated MLP in 2.5, a GELU one in 2), and the merger that folds 2 × 2 patches
    into the language model's width (transformers modeling_qwen2_5_vl.py)."""
    sub = Fields(vision, {}, f.where + ": vision_config", {})
    depth = sub.count("depth", required=True, most=MAX_LAYERS)
    width = sub.first_count("hidden_size", "embed_dim", required=True)
    patch = sub.count("patch_size", required=True)
    frames = sub.count("temporal_patch_size") or 2
    channels = sub.count("in_chans") or sub.count("in_channels") or 3
    merge = sub.count("spatial_merge_size") or 2
    out = sub.count("out_hidden_size") or sub.count("hidden_size")
    assert depth and width and patch and out
    gated = top == "qwen2_5_vl"
    if gated:
        inner = sub.count("intermediate_size", required=True)
        assert inner
        mlp = 2 * (width * inner + inner) + inner * width + width
        norms = 2 * width  # RMSNorm, weight only
    else:
        ratio = sub.count("mlp_ratio") or 4
        inner = width * ratio
        mlp = width * inner + inner + inner * width + width
        norms = 4 * width  # LayerNorm, weight and bias
    block = norms + (width * 3 * width + 3 * width) + (width * width + width) + mlp
    merged = width * merge * merge
    merger = (width if gated else 2 * width) + merged * merged + merged + merged * out + out
    tower = channels * frames * patch * patch * width + depth * block + merger
    f.notes.append(f"vision tower ({top}, {depth} blocks of {width:,}) and merger: {tower:,} "
                   "parameters, loaded with the weights; no KV of its own")
    return tower


# ---------------------------------------------------------------------------------------------
# The weights' bytes


def _weights(f: Fields, data: Mapping[str, Any], text: Mapping[str, Any],
             params: ParamCount) -> dict[str, Any]:
    raw = data.get("torch_dtype") or data.get("dtype") or text.get("torch_dtype") or \
        text.get("dtype")
    if raw is None:
        compute = "bf16"
        f.notes.append("no torch_dtype: the weights are taken as bf16 (vLLM would read the "
                       "safetensors' own dtype)")
    elif not isinstance(raw, str) or raw not in _DTYPES:
        raise f.error(f"torch_dtype {shown(raw)} is not one kvdrill knows (bfloat16, float16, "
                      "float32)")
    else:
        compute = _DTYPES[raw]
        if compute == "fp32":
            compute = "bf16"
            f.notes.append("torch_dtype float32: served in 16 bits, as vLLM's dtype auto casts "
                           "a float32 checkpoint down (vllm/config/model.py); sized as bf16")
            f.assumed["weights_dtype"] = "torch_dtype float32 in the config, served as bf16"
    mlx = data.get("quantization") or text.get("quantization")
    if isinstance(mlx, dict) and "bits" in mlx:  # MLX's own key (mlx-lm writes it)
        mlx_bits, mlx_group = (
            value if isinstance(value, int) and not isinstance(value, bool) else shown(value)
            for value in (mlx.get("bits"), mlx.get("group_size")))
        return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
                "weights_unknown": (f"{f.where}: quantization (bits {mlx_bits}, group_size "
                                    f"{mlx_group}) marks a {mlx_bits}-bit MLX checkpoint, which "
                                    f"vLLM does not load, not the {compute} weights kvdrill "
                                    "would size: give --weights-gb (the checkpoint's size) or "
                                    "--params")}
    quant = data.get("quantization_config") or text.get("quantization_config") or \
        data.get("compression_config")
    if quant is None:
        return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
                "weights_unknown": None}
    if not isinstance(quant, dict):
        raise f.error(f"quantization_config is {shown(quant)}, not an object")
    method = str(quant.get("quant_method", "")).lower().replace("_", "-")
    total = params.total
    kept, kept_said, unknown = _unconverted(f, quant, method, params)
    if unknown is not None:
        return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
                "weights_unknown": unknown}
    if method in ("fp8", "fbgemm-fp8") and kept:
        size = Fraction(total - params.tables - kept) + (params.tables + kept) * _bytes(compute)
        f.notes.append(f"quantization_config {method}: linear weights at 1 byte, except "
                       f"{kept_said} ({kept:,} parameters): they stay {compute} with the "
                       "embedding and LM head, as vLLM loads the modules it skips: "
                       f"{_gb(size)} GB; block scales not counted")
        return {"weights_dtype": "fp8", "weights_gb": size / 10**9, "tables_dtype": compute,
                "weights_unknown": None}
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
        if isinstance(bits, bool) or bits not in (4, 8):
            raise f.error(f"quantization_config {method} bits {shown(bits)}: kvdrill sizes 4 "
                          "and 8 bits")
        bits = int(bits)  # 4.0 is 4: JSON writers differ
        if isinstance(group, float) and group.is_integer():
            group = int(group)
        if isinstance(group, bool) or not isinstance(group, int) or group == 0 or \
                group < -1 or group > 10**6:
            raise f.error(f"quantization_config group_size {shown(group)} is not a group size")
        rows = total - params.tables - params.norms - params.expert_biases - params.vision
        if kept:
            rows -= kept
            f.notes.append(f"quantization_config {method}: {kept_said} ({kept:,} "
                           f"parameters), stay {compute}, not quantized")
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
    written = quant.get("quant_method")
    named = shown(clean_name(written) if isinstance(written, str) else written) \
        if written not in (None, "") else "(no quant_method)"
    return {"weights_dtype": compute, "weights_gb": None, "tables_dtype": None,
            "weights_unknown": (f"{f.where}: quantization_config quant_method {named} is not "
                                "one kvdrill can size (it knows fp8, mxfp4, awq and gptq): "
                                "give --weights-gb")}


# Where a module path starts in a checkpoint (model.layers.0.self_attn), and the names of the
# parts of a layer kvdrill prices apart, as Llama, Qwen, Mixtral and DeepSeek spell them.
_MODULE_ROOTS = ("model.language_model.", "language_model.model.", "language_model.", "model.")
_LAYER_PARTS: dict[str, tuple[str, ...]] = {
    "self_attn": ("attention",), "attn": ("attention",), "self_attention": ("attention",),
    "mlp": ("router", "experts", "rest"), "block_sparse_moe": ("router", "experts", "rest"),
    "feed_forward": ("router", "experts", "rest"),
    "mlp.gate": ("router",), "mlp.router": ("router",), "block_sparse_moe.gate": ("router",),
    "feed_forward.router": ("router",),
    "mlp.experts": ("experts",), "block_sparse_moe.experts": ("experts",),
    "feed_forward.experts": ("experts",),
}
_TABLES = ("lm_head", "embed_tokens")
_VISION = ("visual", "vision_tower", "vision_model", "multi_modal_projector")


def _unconverted(f: Fields, quant: Mapping[str, Any], method: str,
                 params: ParamCount) -> tuple[int, str, str | None]:
    """The parameters a quantization_config keeps unquantized by name (fp8's ignored_layers,
    else modules_to_not_convert, as vLLM's Fp8Config reads them; AWQ's and GPTQ's
    modules_to_not_convert), beyond the embedding and LM head; what they are, said; and the
    refusal when a name is not a module kvdrill can price apart."""
    if method not in ("fp8", "fbgemm-fp8", "awq", "gptq"):
        return 0, "", None
    field_name = "modules_to_not_convert"
    names = quant.get("ignored_layers") if method != "awq" and method != "gptq" else None
    if names:
        field_name = "ignored_layers"
    else:
        names = quant.get("modules_to_not_convert")
    if not names:
        return 0, "", None
    if not isinstance(names, list) or len(names) > 100_000 or \
            not all(isinstance(name, str) for name in names):
        raise f.error(f"quantization_config {field_name} is {shown(names)}, not a list of "
                      "module names")
    layers = f.count_of("num_hidden_layers", "num_layers") or 0
    shares = params.per_layer
    atoms: set[tuple[str, int]] = set()
    vision = False
    for name in names:
        path = name.strip()
        for root in _MODULE_ROOTS:
            path = path.removeprefix(root)
        if path in _TABLES:
            continue
        if path.split(".", 1)[0] in _VISION:
            # AWQ and GPTQ leave a vision tower at 16 bits already; fp8 would quantize it
            vision = vision or (bool(params.vision) and method in ("fp8", "fbgemm-fp8"))
            continue
        match = re.fullmatch(r"layers\.(\d{1,6}|\*)\.(.+)", path)
        where, part = (match.group(1), match.group(2)) if match else ("*", path)
        kinds = _LAYER_PARTS.get(part)
        if kinds is None or shares is None or (where != "*" and int(where) >= layers):
            return 0, "", (f"{f.where}: quantization_config {field_name} names "
                           f"{clean_name(name)!r}, a module kvdrill cannot price apart (it "
                           "reads self_attn, mlp, mlp.gate, mlp.experts, lm_head, embed_tokens "
                           "and a vision tower, whole or per layer): give --weights-gb")
        chosen = range(layers) if where == "*" else (int(where),)
        atoms.update((kind, i) for kind in kinds for i in chosen)
    kept = params.vision if vision else 0
    said: dict[str, set[int]] = {}
    assert shares is not None or not atoms
    for kind, i in atoms:
        assert shares is not None
        if kind == "attention" and i in shares.attention_layers:
            kept += shares.attention
        elif kind == "router" and i in shares.moe_layers:
            kept += shares.router
        elif kind == "experts" and i in shares.moe_layers:
            kept += shares.experts
        elif kind == "rest" and i in shares.moe_layers:
            kept += shares.shared
        elif kind == "rest" and i in shares.dense_layers:
            kept += shares.dense_mlp
        else:
            continue
        said.setdefault({"rest": "MLP"}.get(kind, kind), set()).add(i)
    parts = [f"the {kind} of {len(chosen)} layers" if len(chosen) > 1 else
             f"the {kind} of layer {min(chosen)}" for kind, chosen in sorted(said.items())]
    if vision:
        parts.append("the vision tower")
    return kept, " and ".join(parts) + f", which {field_name} names", None


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


