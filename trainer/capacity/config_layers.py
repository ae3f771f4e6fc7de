"""Which layers of a config.json's model hold what: a KV cache that grows with every token, a
window or chunk of one, a fixed state per sequence (Mamba, Mamba2, gated delta-net linear
attention, short convolutions), cross-attention to image tokens, or nothing of their own
(a block of MLP alone).

One rule: a field that changes which layers hold what is understood or refused by name, never
read as "every layer is attention". Each spelling in use is read as the engines read it:

- `layer_types` (transformers' per-layer list: full/sliding/chunked attention, `mamba`,
  `linear_attention`, `conv`), `layers_block_type` (the same, older);
- `hybrid_override_pattern` (Nemotron-H: `M` Mamba2, `*` attention, `-` MLP, `E` MoE;
  vllm/model_executor/models/nemotron_h.py);
- `full_attention_interval` (Qwen3-Next: every 4th layer attends, the others are gated
  delta-net; vllm/model_executor/models/qwen3_next.py);
- `attn_layer_indices` (Bamba), `attn_layer_period`/`attn_layer_offset` (Jamba);
- Falcon-H1, whose every layer runs attention and Mamba2 side by side (falcon_h1.py);
- `cross_attention_layers` (Llama-3.2-Vision: those layers attend to the image tokens, once
  per request, and keep no KV per text token; mllama);
- `attention_chunk_size` with `no_rope_layers` (Llama-4: the RoPE layers attend within
  chunks and hold at most one chunk; the NoPE layers attend to everything; llama4.py).

State sizes are vLLM's (vllm/model_executor/layers/mamba/mamba_utils.py,
MambaStateShapeCalculator): Mamba (d_conv − 1) × inner + inner × d_state; Mamba2 (d_conv − 1)
× (inner + 2 × groups × d_state) + heads × head_dim × d_state; gated delta-net (kernel − 1) ×
(2 × key heads × key dim + value heads × value dim) + value heads × key dim × value dim; short
convolution (L_cache − 1) × hidden. Kept in the model's dtype (vLLM's mamba cache dtype auto).
"""

from __future__ import annotations

from typing import Any

from trainer.capacity.config_fields import Fields, shown
from trainer.records import field, record

FULL_KINDS = frozenset({"full_attention", "full", "global", "global_attention", "attention"})
SLIDING_KINDS = frozenset({"sliding_attention", "sliding", "local", "local_attention"})
CHUNKED_KINDS = frozenset({"chunked_attention"})
# A recurrent kind by the names configs give it.
RECURRENT_KINDS = {"mamba": "mamba", "mamba2": "mamba2", "linear_attention": "gated-delta-net",
                   "conv": "short-conv"}
_NEMOTRON_PATTERN = {"M": "mamba2", "*": "attention", "-": "mlp", "E": "moe"}

# Fields that say how layers differ in ways kvdrill does not read: a config naming one is
# refused, naming it, rather than sized as if every layer were attention.
_UNREAD_LAYOUT = ("block_types", "layer_block_types", "attn_type_list", "layer_pattern",
                  "hybrid_layer_ids", "full_attn_idxs", "swa_layers", "global_attn_layers",
                  "attention_layers", "mamba_layers", "ssm_layers", "linear_attn_layers",
                  "shared_attention_layers", "hybrid_layer_pattern", "block_type",
                  "attention_pattern", "layer_configs", "linear_attn_config")
# Those of them that name layers with a recurrent or linear-attention state, which calc's
# options cannot give; the others may differ in a window alone, which they can.
_UNREAD_STATE = frozenset({"block_types", "attn_type_list", "hybrid_layer_ids", "full_attn_idxs",
                           "mamba_layers", "ssm_layers", "linear_attn_layers",
                           "shared_attention_layers", "linear_attn_config"})
# Model types with no attention at all: a fixed state per sequence, no KV cache.
_ATTENTION_FREE = {"mamba": "state-space model (Mamba)", "mamba2": "state-space model (Mamba2)",
                   "falcon_mamba": "state-space model (Mamba)", "rwkv": "recurrent model (RWKV)",
                   "xlstm": "recurrent model (xLSTM)"}
_RECURRENT_HINTS = ("mamba_", "ssm_", "linear_key_head_dim", "linear_num_value_heads",
                    "conv_L_cache", "time_step_", "rwkv", "recurrent_")


@record(frozen=False)
class Layout:
    """What each layer holds, by index."""

    layers: int
    attention: list[int]  # self-attention layers (full, sliding or chunked)
    recurrent: list[int] = field(default_factory=list)
    recurrent_kind: str | None = None  # mamba, mamba2, gated-delta-net, short-conv
    state_elements: int = 0  # per recurrent layer and sequence
    cross_attention: list[int] = field(default_factory=list)
    mlp_only: list[int] = field(default_factory=list)  # Nemotron-H's "-" blocks
    moe_blocks: list[int] = field(default_factory=list)  # Nemotron-H's "E" blocks
    kinds: list[str] | None = None  # layer_types as read, for the window reader
    kv_heads: int | None = None  # DeciLM's block_configs: the KV heads its attention blocks have
    mlp_params: int | None = None  # DeciLM: its MLPs, each its own width
    linear_params: int = 0  # DeciLM: attention blocks replaced by one linear layer
    norms: int | None = None  # DeciLM: a norm before each block that is not a no-op


def read_layout(f: Fields, model_type: str, layers: int, hidden: int, heads: int) -> Layout:
    """The layout a config describes; ConfigError naming the field it cannot read."""
    _refuse_unread(f, layers)
    if f.has("block_configs"):
        return _blocks(f, layers, hidden, heads)
    if model_type == "falcon_h1":
        layout = Layout(layers, list(range(layers)), list(range(layers)), "mamba2")
        f.notes.append(f"Falcon-H1: every one of the {layers} layers runs attention and a Mamba2 "
                       "mixer side by side (vllm falcon_h1.py): each keeps a KV cache and a "
                       "state")
        return _with_state(f, layout, hidden, _ssm_fp32(f))
    if f.has("hybrid_override_pattern"):
        return _with_state(f, _nemotron(f, layers), hidden, ssm_in_fp32=_nemotron_fp32(f))
    kinds_field = "layer_types" if f.has("layer_types") else \
        "layers_block_type" if f.has("layers_block_type") else None
    if kinds_field is not None:
        return _with_state(f, _from_kinds(f, kinds_field, layers), hidden, _ssm_fp32(f))
    if f.has("full_attention_interval"):
        interval = f.count("full_attention_interval")
        assert interval is not None
        attention = [i for i in range(layers) if (i + 1) % interval == 0]
        if not attention:
            raise f.error(f"full_attention_interval {interval} leaves no attention layer in "
                          f"{layers}")
        recurrent = [i for i in range(layers) if (i + 1) % interval]
        f.notes.append(f"full_attention_interval {interval}: layers {interval - 1}, "
                       f"{2 * interval - 1}, … attend ({len(attention)} of {layers}); the other "
                       f"{len(recurrent)} are linear attention (gated delta-net) with a fixed "
                       "state (vllm qwen3_next.py)")
        return _with_state(f, Layout(layers, attention, recurrent, "gated-delta-net"), hidden,
                           _ssm_fp32(f))
    if f.has("attn_layer_indices"):
        attention = sorted(set(f.int_list("attn_layer_indices", layers)))
        if not attention or attention[0] < 0 or attention[-1] >= layers:
            raise f.error(f"attn_layer_indices {shown(f.raw('attn_layer_indices'))} must name "
                          f"layers 0 to {layers - 1}")
        recurrent = [i for i in range(layers) if i not in set(attention)]
        f.notes.append(f"attn_layer_indices: attention in {len(attention)} of {layers} layers, "
                       f"Mamba2 in the other {len(recurrent)}")
        return _with_state(f, Layout(layers, attention, recurrent, "mamba2"), hidden,
                           _ssm_fp32(f))
    if f.has("attn_layer_period"):
        return _with_state(f, _jamba(f, layers), hidden)
    if model_type in ("zamba", "zamba2", "recurrent_gemma"):
        raise f.error(f"model_type {model_type!r} mixes attention with recurrent layers in a "
                      "layout kvdrill does not read from config.json, and calc's options cannot "
                      "give a recurrent layer's state")
    if f.has("cross_attention_layers"):
        return _cross_attention(f, layers)
    _refuse_state_without_layout(f)
    return Layout(layers, list(range(layers)))


def refuse_attention_free(f: Fields, model_type: str) -> None:
    """A model with no attention, refused by what it is before any attention field is asked
    for."""
    what = _ATTENTION_FREE.get(model_type)
    if what is not None:
        raise f.error(f"model_type {model_type!r} is an attention-free {what}: it keeps no KV "
                      "cache, only a fixed state per sequence whatever the context, which "
                      "kvdrill's KV lessons do not cover")


def refuse_gpt2_names(f: Fields, model_type: str) -> None:
    """A config that names its sizes as GPT-2 does (n_layer, n_head, n_embd: gpt2,
    gpt_bigcode), refused by that name: its MLP is not gated either, so no count is guessed
    (expert pass 55: "no num_hidden_layers … is this a model's config.json?")."""
    if f.has("num_hidden_layers") or not (f.has("n_layer") and f.has("n_embd")):
        return
    layers, heads, width = (f.raw(name) for name in ("n_layer", "n_head", "n_embd"))
    shape = [f"--layers {layers}"]
    if isinstance(heads, int) and heads > 0:
        one_kv = f.raw("multi_query") is True  # gpt_bigcode's MQA: one KV head
        shape += [f"--heads {heads}", f"--kv-heads {1 if one_kv else heads}"]
        if isinstance(width, int) and width % heads == 0:
            shape.append(f"--head-dim {width // heads}")
    named = f"model_type {model_type!r}" if model_type else "it"
    raise f.error(f"{named} names its sizes n_layer, n_head and n_embd (GPT-2's names), which "
                  "kvdrill does not read, and its MLP is not gated: give the shape with calc's "
                  f"options ({' '.join(shape)} and --params)")


def _refuse_unread(f: Fields, layers: int) -> None:
    for name in _UNREAD_LAYOUT:
        if f.has(name):
            way = (", and calc's options cannot give the state its other layers keep"
                   if name in _UNREAD_STATE else " (if its layers differ in a window alone, "
                   "give the shape with calc's options --window and --windowed-layers)")
            raise f.error(f"{name} says how its layers differ, in a way kvdrill does not read: "
                          f"it will not guess that every layer is attention{way}")
    if f.raw("index_head_dim") not in (None, 0):
        raise f.error(_indexer_refusal(f, layers))
    if f.raw("num_kv_shared_layers") not in (None, 0):
        raise f.error(_shared_kv_refusal(f, layers))


def _indexer_refusal(f: Fields, layers: int) -> str:
    """DeepSeek-V3.2's lightning indexer. calc's options give K and V heads, not a latent
    (--kv-heads 1 --head-dim 576 counts it twice), so the way forward is the preset of the same
    latent, or the latent by hand."""
    keys = f.count("index_head_dim")
    if (layers, f.raw("kv_lora_rank"), f.raw("qk_rope_head_dim")) == (61, 512, 64):
        latent = "size the latent with --model deepseek-v3 (the same MLA shape, 61 × (512 + 64))"
    else:
        latent = "size the latent by hand (kv_lora_rank + qk_rope_head_dim per token and layer)"
    return (f"index_head_dim {keys} names a lightning indexer that keeps its own key cache "
            "beside the latent (DeepSeek-V3.2), which kvdrill does not size: "
            f"{latent} and add the indexer's keys by hand ({keys} per token and layer, 1 B each "
            "in fp8 plus a scale)")


def _shared_kv_refusal(f: Fields, layers: int) -> str:
    """Gemma-3n's last num_kv_shared_layers layers reuse an earlier layer's K and V (vLLM
    kv_sharing_target_layer_name): only the first ones cache, which calc's options can give."""
    shared = f.count("num_kv_shared_layers", least=0) or 0
    said = (f"num_kv_shared_layers {shared} names layers that reuse an earlier layer's K and V "
            "instead of caching their own (Gemma-3n), which kvdrill does not read")
    own = layers - shared
    if own < 1:
        return f"{said}: it leaves no layer that caches its own"
    kinds = f.raw("layer_types")
    window = f.count("sliding_window")
    sliding = sum(kind in SLIDING_KINDS for kind in kinds[:own]) \
        if isinstance(kinds, list) and len(kinds) == layers and \
        all(isinstance(kind, str) for kind in kinds) else 0
    windowed = f" --window {window} --windowed-layers {sliding}" if sliding and window else ""
    return (f"{said}: give the shape with calc's options for the first {own} layers, which "
            f"cache their own (--layers {own}{windowed})")


def _refuse_state_without_layout(f: Fields) -> None:
    for source in (f.text, f.top):
        for name in source:
            if isinstance(name, str) and name.startswith(_RECURRENT_HINTS) and \
                    source[name] is not None:
                raise f.error(f"{name} names a recurrent layer, but no field says which layers "
                              "have one: kvdrill will not guess that every layer is attention")


def _from_kinds(f: Fields, name: str, layers: int) -> Layout:
    kinds = f.raw(name)
    if not isinstance(kinds, list) or len(kinds) != layers or not all(
            isinstance(kind, str) for kind in kinds):
        raise f.error(f"{name} must list one kind per layer ({layers}), got {shown(kinds)}")
    attention_kinds = FULL_KINDS | SLIDING_KINDS | CHUNKED_KINDS
    unknown = sorted({kind for kind in kinds} - attention_kinds - set(RECURRENT_KINDS)
                     - {"hybrid"})
    if unknown:
        raise f.error(f"{name} {unknown[0]!r} is not a layer kvdrill can size (it knows "
                      "full, sliding and chunked attention, mamba, linear_attention and conv)")
    if "hybrid" in kinds:
        raise f.error(f"{name} 'hybrid' (a shared attention block beside a Mamba layer, as in "
                      "Zamba2) is not a layout kvdrill can size, and calc's options cannot give "
                      "a Mamba layer's state")
    recurrent_kinds = {RECURRENT_KINDS[kind] for kind in kinds if kind in RECURRENT_KINDS}
    if len(recurrent_kinds) > 1:
        raise f.error(f"{name} mixes {' and '.join(sorted(recurrent_kinds))} layers: kvdrill "
                      "sizes one kind of recurrent layer per model")
    attention = [i for i, kind in enumerate(kinds) if kind in attention_kinds]
    recurrent = [i for i, kind in enumerate(kinds) if kind in RECURRENT_KINDS]
    if not attention:
        raise f.error(f"{name} names no attention layer: a model with no KV cache is not one "
                      "kvdrill sizes")
    kind = next(iter(recurrent_kinds), None)
    if kind == "mamba" and any(f.has(name) for name in ("mamba_n_heads", "mamba_num_heads",
                                                        "mamba_d_head", "mamba_head_dim")):
        kind = "mamba2"  # Granite-4.0-H's "mamba" layers are Mamba2: heads of a width
    layout = Layout(layers, attention, recurrent, kind, kinds=list(kinds))
    if recurrent:
        f.notes.append(f"{name}: attention in {len(attention)} of {layers} layers, "
                       f"{layout.recurrent_kind} in the other {len(recurrent)}, each with a "
                       "fixed state per sequence")
    return layout


def _nemotron(f: Fields, layers: int) -> Layout:
    pattern = f.raw("hybrid_override_pattern")
    if not isinstance(pattern, str) or len(pattern) != layers or \
            set(pattern) - set(_NEMOTRON_PATTERN):
        raise f.error(f"hybrid_override_pattern must give one of M, *, - or E for each of the "
                      f"{layers} layers, got {shown(pattern)}")
    by_kind: dict[str, list[int]] = {kind: [] for kind in _NEMOTRON_PATTERN.values()}
    for i, char in enumerate(pattern):
        by_kind[_NEMOTRON_PATTERN[char]].append(i)
    if not by_kind["attention"]:
        raise f.error("hybrid_override_pattern has no attention layer (*): a model with no KV "
                      "cache is not one kvdrill sizes")
    f.notes.append(
        f"hybrid_override_pattern: {layers} blocks, of which {len(by_kind['attention'])} "
        f"attention (*), {len(by_kind['mamba2'])} Mamba2 (M) with a fixed state, "
        f"{len(by_kind['mlp'])} MLP (-) and {len(by_kind['moe'])} MoE (E) with no cache of "
        "their own (vllm nemotron_h.py)")
    return Layout(layers, by_kind["attention"], by_kind["mamba2"], "mamba2",
                  mlp_only=by_kind["mlp"], moe_blocks=by_kind["moe"])


def _blocks(f: Fields, layers: int, hidden: int, heads: int) -> Layout:
    """DeciLM's block_configs (Llama-Nemotron Super and Ultra): each layer's attention is a
    no-op, one linear layer, or attention with its own KV heads (heads ÷ n_heads_in_group);
    each MLP has its own width (vllm nemotron_nas.py)."""
    blocks = f.raw("block_configs")
    if not isinstance(blocks, list) or len(blocks) != layers or not all(
            isinstance(block, dict) and isinstance(block.get("attention"), dict)
            and isinstance(block.get("ffn"), dict) for block in blocks):
        raise f.error(f"block_configs must give attention and ffn for each of the {layers} "
                      f"layers, got {shown(blocks)}")
    attention: list[int] = []
    kv_heads: set[int] = set()
    linear = mlp = norms = 0
    for i, block in enumerate(blocks):
        att, ffn = block["attention"], block["ffn"]
        for name in ("window_length", "num_sink_tokens", "sparsify"):
            if att.get(name) is not None:
                raise f.error(f"block_configs layer {i} attention {name} "
                              f"{shown(att.get(name))}: not a layout kvdrill sizes")
        if att.get("no_op") is True:
            pass
        elif att.get("replace_with_linear") is True:
            linear += hidden * hidden
            norms += hidden
        else:
            group = att.get("n_heads_in_group")
            if isinstance(group, bool) or not isinstance(group, int) or group < 1 or \
                    heads % group:
                raise f.error(f"block_configs layer {i} n_heads_in_group {shown(group)} does "
                              f"not divide the {heads} heads")
            attention.append(i)
            kv_heads.add(heads // group)
            norms += hidden
        if ffn.get("no_op") is True:
            continue
        norms += hidden
        if ffn.get("replace_with_linear") is True:
            mlp += hidden * hidden
            continue
        multiplier = ffn.get("ffn_mult")
        if isinstance(multiplier, bool) or not isinstance(multiplier, int | float) or \
                not 0 < multiplier <= 100:
            raise f.error(f"block_configs layer {i} ffn_mult {shown(multiplier)} is not a width")
        width = int(2 * multiplier * hidden / 3)  # DeciLM's own rounding, as the engines do it
        width += -width % 256
        mlp += 3 * hidden * width
    if not attention:
        raise f.error("block_configs has no attention layer: a model with no KV cache is not "
                      "one kvdrill sizes")
    if len(kv_heads) > 1:
        raise f.error(f"block_configs gives its attention layers different KV heads "
                      f"({', '.join(map(str, sorted(kv_heads)))}): kvdrill sizes one KV width")
    f.notes.append(f"block_configs: attention in {len(attention)} of {layers} layers with "
                   f"{next(iter(kv_heads))} KV heads each (num_attention_heads ÷ "
                   "n_heads_in_group); the others are no-ops or one linear layer and hold no "
                   "KV; each MLP its own width (ffn_mult; vllm nemotron_nas.py)")
    return Layout(layers, attention, kv_heads=next(iter(kv_heads)), mlp_params=mlp,
                  linear_params=linear, norms=norms + hidden)


def _jamba(f: Fields, layers: int) -> Layout:
    period = f.count("attn_layer_period")
    offset = f.count("attn_layer_offset", least=0) or 0
    assert period is not None
    attention = [i for i in range(layers) if i % period == offset]
    if not attention:
        raise f.error(f"attn_layer_period {period} and attn_layer_offset {offset} leave no "
                      "attention layer")
    recurrent = [i for i in range(layers) if i % period != offset]
    f.notes.append(
        f"hybrid: attention in layers i with i % attn_layer_period {period} = attn_layer_offset "
        f"{offset} ({len(attention)} of {layers}: {', '.join(map(str, attention[:8]))}"
        f"{'…' if len(attention) > 8 else ''}); the other {len(recurrent)} are Mamba, with a "
        "fixed state (vllm jamba.py)")
    return Layout(layers, attention, recurrent, "mamba")


def _cross_attention(f: Fields, layers: int) -> Layout:
    cross = sorted(set(f.int_list("cross_attention_layers", layers)))
    if cross and (cross[0] < 0 or cross[-1] >= layers):
        raise f.error(f"cross_attention_layers must name layers 0 to {layers - 1}")
    attention = [i for i in range(layers) if i not in set(cross)]
    if cross:
        f.notes.append(f"cross_attention_layers: {len(cross)} of {layers} layers attend to the "
                       "image tokens, whose K and V they hold once per request (not per text "
                       f"token); the other {len(attention)} hold the text's KV (vllm mllama)")
    return Layout(layers, attention, cross_attention=cross)


def _nemotron_fp32(f: Fields) -> bool:
    """vLLM keeps Nemotron-H's SSM state in the config's mamba_ssm_cache_dtype, float32 when
    it has none (NemotronHForCausalLMConfig, vllm/model_executor/models/config.py)."""
    return _ssm_fp32(f, default=True)


def _ssm_fp32(f: Fields, default: bool = False) -> bool:
    """The recurrent (SSM) state in float32 when the config says so (mamba_ssm_dtype, as
    Qwen3.5's files do; mamba_ssm_cache_dtype); the convolution state stays in the model's
    dtype."""
    for name in ("mamba_ssm_cache_dtype", "mamba_ssm_dtype"):
        stated = f.text_value(name)
        if stated is None:
            continue
        if stated == "float32":
            return True
        if stated in ("bfloat16", "float16", "auto"):
            return False
        raise f.error(f"{name} {stated!r} is not one kvdrill knows (float32, bfloat16, "
                      "float16)")
    return default


def _with_state(f: Fields, layout: Layout, hidden: int, ssm_in_fp32: bool = False) -> Layout:
    if not layout.recurrent:
        return layout
    kind = layout.recurrent_kind
    if kind == "mamba":
        layout.state_elements = _mamba_state(f, hidden)
    elif kind == "mamba2":
        layout.state_elements = _mamba2_state(f, hidden, ssm_in_fp32)
    elif kind == "gated-delta-net":
        layout.state_elements = _delta_net_state(f, ssm_in_fp32)
    elif kind == "short-conv":
        kernel = f.first_count("conv_L_cache", "conv_kernel", required=True)
        assert kernel is not None
        layout.state_elements = (kernel - 1) * hidden
        f.notes.append(f"short convolution state: (conv_L_cache {kernel} − 1) × hidden "
                       f"{hidden:,} = {layout.state_elements:,} values per layer and sequence "
                       "(vllm short_conv_state_shape)")
    return layout


def mamba2_dims(f: Fields, hidden: int) -> dict[str, int]:
    """A Mamba2 mixer's sizes under any of the names configs give them."""
    heads = f.first_count("mamba_n_heads", "mamba_num_heads", required=True)
    head_dim = f.first_count("mamba_d_head", "mamba_head_dim", required=True)
    groups = f.first_count("mamba_n_groups", "n_groups", required=True)
    state = f.first_count("mamba_d_state", "ssm_state_size", required=True)
    kernel = f.first_count("mamba_d_conv", "conv_kernel", required=True)
    assert heads and head_dim and groups and state and kernel
    inner = heads * head_dim
    stated = f.first_count("mamba_d_ssm")
    if stated is not None and stated != inner:
        raise f.error(f"mamba_d_ssm {stated:,} is not mamba_n_heads × mamba_d_head "
                      f"({heads} × {head_dim} = {inner:,})")
    return {"heads": heads, "head_dim": head_dim, "groups": groups, "state": state,
            "kernel": kernel, "inner": inner}


def _mamba2_state(f: Fields, hidden: int, ssm_in_fp32: bool) -> int:
    d = mamba2_dims(f, hidden)
    conv = (d["kernel"] - 1) * (d["inner"] + 2 * d["groups"] * d["state"])
    ssm = d["heads"] * d["head_dim"] * d["state"]
    f.notes.append(
        f"Mamba2 state: convolution (d_conv {d['kernel']} − 1) × (inner {d['inner']:,} + 2 × "
        f"{d['groups']} groups × d_state {d['state']}) = {conv:,} + SSM {d['heads']} heads × "
        f"{d['head_dim']} × {d['state']} = {ssm:,}: {conv + ssm:,} values per layer and "
        "sequence (vllm mamba2_state_shape)")
    return _priced(f, conv, ssm, ssm_in_fp32)


def mamba_dims(f: Fields, hidden: int) -> tuple[int, int, int]:
    """(d_state, d_conv, inner) of a Mamba (v1) mixer: Jamba's fields."""
    d_state = f.count("mamba_d_state", required=True)
    d_conv = f.count("mamba_d_conv", required=True)
    expand = f.count("mamba_expand", required=True)
    assert d_state is not None and d_conv is not None and expand is not None
    return d_state, d_conv, expand * hidden


def _mamba_state(f: Fields, hidden: int) -> int:
    d_state, d_conv, inner = mamba_dims(f, hidden)
    elements = inner * d_state + inner * (d_conv - 1)
    f.notes.append(f"Mamba state: {inner:,} × {d_state} (SSM) + {inner:,} × {d_conv - 1} "
                   f"(convolution) = {elements:,} values per layer and sequence (vllm jamba.py)")
    return elements


def delta_net_dims(f: Fields) -> dict[str, int]:
    key_heads = f.count("linear_num_key_heads", required=True)
    value_heads = f.count("linear_num_value_heads", required=True)
    key_dim = f.count("linear_key_head_dim", required=True)
    value_dim = f.count("linear_value_head_dim", required=True)
    kernel = f.count("linear_conv_kernel_dim", required=True)
    assert key_heads and value_heads and key_dim and value_dim and kernel
    return {"key_heads": key_heads, "value_heads": value_heads, "key_dim": key_dim,
            "value_dim": value_dim, "kernel": kernel,
            "conv": 2 * key_heads * key_dim + value_heads * value_dim}


def _delta_net_state(f: Fields, ssm_in_fp32: bool) -> int:
    d = delta_net_dims(f)
    conv = (d["kernel"] - 1) * d["conv"]
    recurrent = d["value_heads"] * d["key_dim"] * d["value_dim"]
    f.notes.append(
        f"gated delta-net state: convolution (kernel {d['kernel']} − 1) × {d['conv']:,} = "
        f"{conv:,} + recurrent {d['value_heads']} value heads × {d['key_dim']} × "
        f"{d['value_dim']} = {recurrent:,}: {conv + recurrent:,} values per layer and sequence "
        "(vllm gated_delta_net_state_shape)")
    return _priced(f, conv, recurrent, ssm_in_fp32)


def _priced(f: Fields, conv: int, ssm: int, ssm_in_fp32: bool) -> int:
    """State values in units of the model's 2-byte dtype: an SSM part kept in float32 counts
    twice."""
    if ssm_in_fp32:
        f.notes.append(f"the recurrent part kept in float32 (the config's mamba_ssm_dtype, or "
                       f"vLLM's default for Nemotron-H), the convolution "
                       f"in the model's dtype: counted as {conv:,} + 2 × {ssm:,} = "
                       f"{conv + 2 * ssm:,} values of 2 bytes")
        return conv + 2 * ssm
    f.notes.append("the state kept in the model's dtype (vLLM's mamba cache dtype auto)")
    return conv + ssm


def chunked_layers(f: Fields, layers: int) -> tuple[int, int] | None:
    """(chunk, layers that attend within a chunk) for Llama-4's chunked local attention."""
    chunk = f.count("attention_chunk_size")
    if chunk is None:
        return None
    flags = f.raw("no_rope_layers")
    if not flags:  # transformers: an empty list means the default pattern
        interval = f.count("no_rope_layer_interval") or 4
        flags = [int((i + 1) % interval != 0) for i in range(layers)]
        how = f"no_rope_layers not given: every {interval}th layer is NoPE (transformers' default)"
    else:
        how = "no_rope_layers"
    if not isinstance(flags, list) or len(flags) != layers or any(
            isinstance(v, bool) or v not in (0, 1) for v in flags):
        raise f.error(f"no_rope_layers must give 0 or 1 for each of the {layers} layers, got "
                      f"{shown(flags)}")
    chunked = sum(flags)
    f.notes.append(f"attention_chunk_size {chunk:,}: the {chunked} RoPE layers attend within "
                   f"chunks of {chunk:,} tokens and hold at most one, the {layers - chunked} NoPE "
                   f"layers hold the whole context ({how}; vllm llama4.py, "
                   "ChunkedLocalAttentionSpec)")
    return chunk, chunked


def describe_state(layout: Layout) -> dict[str, Any]:
    """The layout's figures as fields of a model preset."""
    fields: dict[str, Any] = {}
    if layout.recurrent or len(layout.attention) < layout.layers:
        fields["attention_layers"] = len(layout.attention)
        fields["state_elements"] = layout.state_elements if layout.recurrent else 0
        others = layout.layers - len(layout.attention)
        if len(layout.recurrent) != others:
            fields["recurrent_layers"] = len(layout.recurrent)
    return fields
