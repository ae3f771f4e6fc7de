"""The Hugging Face names people serve, resolved to the preset whose KV-cache geometry they
share, and only when that is certain.

Two rules, both checked against published config.json files:

- A quantised copy keeps its base's geometry: `…-FP8`, `…-fp8-dynamic`, `…-AWQ`,
  `…-GPTQ-Int4`, `…-quantized.w4a16`, `…-bnb-4bit`, `…-NVFP4` change how the weights are
  stored, never the layers, KV heads or head size. Those tags are taken off the end of the
  name, and then an `-Instruct`, `-Chat`, `-it`, `-hf`, `-Base` or `-pt` that names a
  preset's own release (a base model and its tuned release share every shape).
- Anything else (a fine-tune, a distill, a dated re-release, a vision model's language half)
  resolves only through RELEASES below, each entry with the published fields it was checked
  on. Dates, versions and "-Thinking" are never stripped by rule: Mistral-Small-Instruct-2409
  is 22B with 56 layers, Mistral-Small-24B-Instruct-2501 40 layers, and a guess between them
  sizes the cache wrongly. A name no rule reaches is refused, naming what to pass instead.

Pure lookups over a fixed table: nothing a user types is evaluated, and the work is bounded by
the length of the name (cut to 300 characters)."""

from __future__ import annotations

import re
from collections.abc import Callable

from trainer.capacity.presets import ModelPreset
from trainer.errors import UnknownName
from trainer.records import record


@record
class Release:
    """A published release and the preset whose KV geometry it has."""

    preset: str
    checked: str  # the published fields it was checked on
    weights_differ: str | None = None  # why the preset's weight size is not this release's


_QWEN3_2507 = ("Qwen's 2507 re-release keeps the original's config shapes (num_hidden_layers, "
               "num_attention_heads, num_key_value_heads, head_dim); only the context and "
               "rope_theta grew")
_R1_DISTILL = "DeepSeek-R1-Distill-{base} config.json: the {base} shapes ({fields})"

RELEASES: dict[str, Release] = {
    # Moonshot: the DeepSeek-V3 architecture with 384 experts; MLA 512 + 64 on 61 layers
    "Kimi-K2-Thinking": Release(
        "kimi-k2", "moonshotai/Kimi-K2-Thinking config.json: DeepseekV3ForCausalLM, 61 layers, "
        "kv_lora_rank 512, qk_rope_head_dim 64 (as Kimi-K2-Instruct); the vLLM recipe's "
        "8×H200 log gives 715,072 tokens from 46.80 GiB, exactly 61 × 576 × 2 B a token",
        "INT4 (compressed-tensors) weights, not Kimi-K2-Instruct's FP8"),
    "Kimi-K2-Instruct-0905": Release(
        "kimi-k2", "moonshotai/Kimi-K2-Instruct-0905 config.json: 61 layers, hidden 7168, 64 "
        "heads (as Kimi-K2-Instruct)"),
    "Kimi-K2.5": Release(
        "kimi-k2", "moonshotai/Kimi-K2.5 config.json text_config: 61 layers, kv_lora_rank 512, "
        "qk_rope_head_dim 64, hidden 7168, 64 heads (as Kimi-K2-Instruct)",
        "Kimi-K2.5 adds a vision tower"),
    # NVIDIA: the NAS-pruned Llama-3.3-70B, 49 of 80 layers with attention
    "Llama-3_3-Nemotron-Super-49B-v1_5": Release(
        "llama-3.3-nemotron-super-49b", "nvidia/Llama-3_3-Nemotron-Super-49B-v1_5 keeps v1's "
        "block_configs (49 attention layers of 8 KV heads); a TP4 log of it gives 914,832 tokens "
        "from 42.75 GiB, 49 layers' worth"),
    # DeepSeek distills: the base model's config with DeepSeek's tokenizer settings
    "DeepSeek-R1-Distill-Qwen-14B": Release(
        "qwen2.5-14b", _R1_DISTILL.format(base="Qwen2.5-14B", fields="48 layers, hidden 5120, "
                                          "40 heads, 8 KV heads, vocab 152064")),
    "DeepSeek-R1-Distill-Qwen-7B": Release(
        "qwen2.5-7b", _R1_DISTILL.format(base="Qwen2.5-Math-7B", fields="28 layers, hidden "
                                         "3584, 28 heads, 4 KV heads, vocab 152064")),
    "DeepSeek-R1-Distill-Qwen-1.5B": Release(
        "qwen2.5-1.5b", _R1_DISTILL.format(base="Qwen2.5-Math-1.5B", fields="28 layers, hidden "
                                           "1536, 12 heads, 2 KV heads"),
        "untied embeddings (Qwen2.5-1.5B ties them): about 0.23B more parameters"),
    "DeepSeek-R1-Distill-Llama-8B": Release(
        "llama-3.1-8b", _R1_DISTILL.format(base="Llama-3.1-8B", fields="32 layers, hidden 4096, "
                                           "32 heads, 8 KV heads, vocab 128256")),
    "DeepSeek-R1-Distill-Llama-70B": Release(
        "llama-3.3-70b", _R1_DISTILL.format(base="Llama-3.3-70B-Instruct", fields="80 layers, "
                                            "hidden 8192, 64 heads, 8 KV heads")),
    # DeepSeek MLA families
    "DeepSeek-Coder-V2-Lite-Instruct": Release(
        "deepseek-v2-lite", "deepseek-ai/DeepSeek-Coder-V2-Lite-Instruct config.json: 27 layers, "
        "kv_lora_rank 512, qk_rope_head_dim 64, hidden 2048, 16 heads (DeepSeek-V2-Lite's); a "
        "V0 log of its AWQ copy gives 116,023 blocks from 59.75 GiB, 27 × 1,280 B a token"),
    "DeepSeek-Coder-V2-Lite-Base": Release(
        "deepseek-v2-lite", "deepseek-ai/DeepSeek-Coder-V2-Lite-Base config.json: DeepSeek-V2-"
        "Lite's attention (27 layers, kv_lora_rank 512, qk_rope_head_dim 64)"),
    "DeepSeek-V2-Lite-Chat": Release(
        "deepseek-v2-lite", "deepseek-ai/DeepSeek-V2-Lite-Chat config.json: DeepSeek-V2-Lite's"),
    "DeepSeek-V3-0324": Release(
        "deepseek-v3", "deepseek-ai/DeepSeek-V3-0324 config.json: DeepSeek-V3's (61 layers, "
        "kv_lora_rank 512, qk_rope_head_dim 64, 256 experts)"),
    "DeepSeek-R1-0528": Release(
        "deepseek-v3", "deepseek-ai/DeepSeek-R1-0528 config.json: DeepSeek-V3's (61 layers, "
        "kv_lora_rank 512, qk_rope_head_dim 64)"),
    "DeepSeek-R1-Zero": Release(
        "deepseek-v3", "deepseek-ai/DeepSeek-R1-Zero config.json: DeepSeek-R1's"),
    "DeepSeek-V3.1": Release(
        "deepseek-v3", "deepseek-ai/DeepSeek-V3.1 config.json (and nvidia/DeepSeek-V3.1-NVFP4's): "
        "DeepseekV3ForCausalLM, 61 layers, kv_lora_rank 512, qk_rope_head_dim 64, no "
        "index_topk (no sparse-attention indexer cache, unlike V3.2)"),
    "DeepSeek-V3.1-Terminus": Release(
        "deepseek-v3", "deepseek-ai/DeepSeek-V3.1-Terminus config.json: DeepSeek-V3.1's"),
    # Qwen: dated re-releases, coders, QwQ, the vision models' language half
    **{f"Qwen3-{size}-{kind}-2507": Release(preset, _QWEN3_2507)
       for size, preset in (("4B", "qwen3-4b"), ("30B-A3B", "qwen3-30b-a3b"),
                            ("235B-A22B", "qwen3-235b-a22b"))
       for kind in ("Instruct", "Thinking")},
    "Qwen3-30B-A3B-Base": Release("qwen3-30b-a3b", "Qwen/Qwen3-30B-A3B-Base config.json: "
                                  "Qwen3-30B-A3B's shapes"),
    **{name: Release(
        "qwen3-30b-a3b", "Qwen/Qwen3-VL-30B-A3B-Instruct config.json text_config: 48 layers, "
        "hidden 2048, 32 heads, 4 KV heads, head_dim 128 (Qwen3-30B-A3B's)",
        "a vision tower loads with the language model")
       for name in ("Qwen3-VL-30B-A3B-Instruct", "Qwen3-VL-30B-A3B-Thinking",
                    "Qwen3-VL-30B-A3B")},
    **{f"Qwen3-VL-{size}-{kind}": Release(
        preset, f"Qwen/Qwen3-VL-{size}-Instruct config.json text_config: {fields} "
        f"(Qwen3-{size}'s)", "a vision tower loads with the language model")
       for size, preset, fields in (
           ("2B", "qwen3-1.7b", "28 layers, hidden 2048, 16 heads, 8 KV heads, head_dim 128"),
           ("4B", "qwen3-4b", "36 layers, hidden 2560, 32 heads, 8 KV heads, head_dim 128"),
           ("8B", "qwen3-8b", "36 layers, hidden 4096, 32 heads, 8 KV heads, head_dim 128"),
           ("32B", "qwen3-32b", "64 layers, hidden 5120, 64 heads, 8 KV heads, head_dim 128"),
           ("235B-A22B", "qwen3-235b-a22b", "94 layers, hidden 4096, 64 heads, 4 KV heads, "
            "head_dim 128, 128 experts"))
       for kind in ("Instruct", "Thinking")},
    "Qwen2.5-VL-7B-Instruct": Release(
        "qwen2.5-7b", "Qwen/Qwen2.5-VL-7B-Instruct config.json: 28 layers, hidden 3584, 28 "
        "heads, 4 KV heads (Qwen2.5-7B's)", "a vision tower (0.68B) loads with the language "
        "model"),
    "Qwen2.5-VL-3B-Instruct": Release(
        "qwen2.5-3b", "Qwen/Qwen2.5-VL-3B-Instruct config.json: 36 layers, hidden 2048, 16 "
        "heads, 2 KV heads (Qwen2.5-3B's)", "a vision tower loads with the language model"),
    "QwQ-32B": Release("qwen2.5-32b", "Qwen/QwQ-32B config.json: 64 layers, hidden 5120, 40 "
                       "heads, 8 KV heads, vocab 152064 (Qwen2.5-32B's)"),
    **{f"Qwen2.5-Coder-{size}-Instruct": Release(
        preset, f"Qwen/Qwen2.5-Coder-{size}-Instruct config.json: Qwen2.5-{size}'s shapes")
       for size, preset in (("1.5B", "qwen2.5-1.5b"), ("3B", "qwen2.5-3b"),
                            ("7B", "qwen2.5-7b"), ("14B", "qwen2.5-14b"),
                            ("32B", "qwen2.5-32b"))},
    # Mistral
    "Mixtral-8x7B-Instruct-v0.1": Release(
        "mixtral-8x7b", "mistralai/Mixtral-8x7B-Instruct-v0.1 config.json: Mixtral-8x7B-v0.1's "
        "(32 layers, 8 KV heads of 128, vocab 32000, sliding_window null)"),
    "Mistral-7B-Instruct-v0.2": Release(
        "mistral-7b-v0.3", "mistralai/Mistral-7B-Instruct-v0.2 config.json: 32 layers, hidden "
        "4096, 32 heads, 8 KV heads, sliding_window null (v0.3's shapes with a 32,000-entry "
        "vocabulary)"),
    "Mistral-7B-v0.3": Release(
        "mistral-7b-v0.3", "mistralai/Mistral-7B-v0.3 config.json: the Instruct release's"),
    **{name: Release(
        "mistral-small-24b", "mistralai/Mistral-Small-3.1-24B-Instruct-2503 config.json "
        "text_config: 40 layers, hidden 5120, 32 heads, 8 KV heads, head_dim 128 "
        "(Mistral-Small-24B-Instruct-2501's)", "a Pixtral vision tower loads with the language "
        "model")
       for name in ("Mistral-Small-3.1-24B-Instruct-2503", "Mistral-Small-3.1-24B-Base-2503")},
    # Meta
    "Llama-4-Scout-17B-16E": Release(
        "llama-4-scout", "meta-llama/Llama-4-Scout-17B-16E config.json: the Instruct release's "
        "text_config (48 layers, 8 KV heads of 128, attention_chunk_size 8192)"),
    "Llama-4-Maverick-17B-128E": Release(
        "llama-4-maverick", "meta-llama/Llama-4-Maverick-17B-128E config.json: the Instruct "
        "release's text_config"),
    # Microsoft
    "Phi-3-mini-128k-instruct": Release(
        "phi-3-mini", "microsoft/Phi-3-mini-128k-instruct config.json: 32 layers, hidden 3072, "
        "32 heads, 32 KV heads (Phi-3-mini-4k's), LongRoPE scaling"),
    "Phi-3.5-mini-instruct": Release(
        "phi-3-mini", "microsoft/Phi-3.5-mini-instruct config.json: 32 layers, hidden 3072, 32 "
        "heads, 32 KV heads (Phi-3-mini's)"),
}

# Names that look like a preset's release but are another model: refused by name.
NOT_RELEASES: dict[str, str] = {
    "Mistral-Small-Instruct-2409": "a 22B model (56 layers), not Mistral-Small-24B, and no preset: "
                                   "give --model path/to/config.json (its published config.json)",
    "Mistral-Small-2409": "a 22B model (56 layers), not Mistral-Small-24B, and no preset: give "
                          "--model path/to/config.json (its published config.json)",
    "DeepSeek-V3.2": "DeepSeek-V3.2 keeps a sparse-attention indexer cache beside its MLA "
                     "latents, which kvdrill does not size: no preset to give",
    "DeepSeek-V3.2-Exp": "DeepSeek-V3.2-Exp keeps a sparse-attention indexer cache beside its "
                         "MLA latents, which kvdrill does not size: no preset to give",
    "Kimi-Linear-48B-A3B-Instruct": "Kimi-Linear mixes linear attention (KDA) with MLA; vLLM pads "
                                    "its pages to the recurrent state's size, which a log alone "
                                    "does not show, so kvdrill does not account for it",
    "Kimi-Linear-48B-A3B": "Kimi-Linear mixes linear attention (KDA) with MLA; vLLM pads its "
                           "pages to the recurrent state's size, which a log alone does not "
                           "show, so kvdrill does not account for it",
}

# Quantisation tags: how the weights are stored, never the attention's shape.
_QUANT_TAG = re.compile(
    r"[-_.](?:fp8(?:[-_](?:dynamic|static|block|e4m3|e5m2))*|fp8[-_]?kv|int[48](?:[-_]?w\d+a\d+)?|"
    r"awq|gptq(?:[-_]int[48])?|gptq[-_]?q?[48]bit|w[48]a(?:8|16)|w4a8|nvfp4|mxfp4|fp4|"
    r"quantized(?:[._-]w[48]a(?:8|16))?|bnb[-_]?[48]bit|[48]bit|dynamic|marlin|unsloth|"
    r"auto[-_]?round|compressed[-_]tensors|fp16|bf16)$", re.IGNORECASE)
# The release of a preset's own model: only taken off after the quantisation tags.
_ROLE_TAG = re.compile(r"[-_](?:instruct|chat|it|hf|base|pt)$", re.IGNORECASE)
_MAX_NAME = 300
_HUB_CACHE = re.compile(r"models--[\w.-]+?--([\w.-]+)(?:/|$)")


def _key(name: str) -> str:
    from trainer.capacity.presets import name_key

    return name_key(name)


def _tail(name: str) -> str:
    """The model's own name: the last part of a Hugging Face id or a local path."""
    text = name.strip()[:_MAX_NAME].replace("\\", "/").rstrip("/")
    cached = _HUB_CACHE.search(text)  # …/models--Qwen--Qwen3-32B/snapshots/<commit>
    if cached is not None:
        return cached.group(1)
    return text.rsplit("/", 1)[-1]


def resolve(name: str, find: Callable[[str], ModelPreset]) -> tuple[ModelPreset, Release | None]:
    """The preset a served model name is, and the release entry that says why (None when the
    name is the preset's own, or a quantised copy of it). UnknownName, saying what to give
    instead, when no rule reaches a preset with certainty."""
    tail = _tail(name)
    if not tail:
        raise UnknownName("the model is named by nothing: give --model (a preset, or the "
                          "model's config.json)")
    releases = {_key(k): v for k, v in RELEASES.items()}
    refused = {_key(k): v for k, v in NOT_RELEASES.items()}
    first_error: UnknownName | None = None
    for candidate in _candidates(tail):
        key = _key(candidate)
        if key in refused:
            raise UnknownName(f"model {tail!r}: {refused[key]}")
        if key in releases:
            release = releases[key]
            return find(release.preset), release
        try:
            return find(candidate), None
        except UnknownName as failed:
            first_error = first_error or failed
    hint = ""
    if first_error is not None and "did you mean" in str(first_error):
        near = str(first_error).split("did you mean", 1)[1].split("?", 1)[0].strip()
        hint = f" (near: {near}; not taken, as a release of another size or version sizes " \
               "the cache differently)"
    raise UnknownName(f"model {tail!r} is no preset or release kvdrill knows{hint}: give "
                      "--model path/to/config.json (the model's published config.json) or a "
                      "preset (kvdrill calc --list-presets)")


def _candidates(tail: str) -> list[str]:
    """The name, then the name without each quantisation tag at its end, then without a
    release tag (-Instruct, -Chat, -it, -hf, -Base, -pt) once the quantisation tags are off."""
    names = [tail]
    current = tail
    for _ in range(6):
        shorter = _QUANT_TAG.sub("", current)
        if shorter == current or not shorter:
            break
        current = shorter
        names.append(current)
    role = _ROLE_TAG.sub("", current)
    if role != current and role:
        names.append(role)
    return names
