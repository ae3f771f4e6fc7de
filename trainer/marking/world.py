"""The values an input of the capacity model takes in the world: what a person who got one
input wrong most likely put in its place. Another GPU's memory, bandwidth or TFLOP/s (dense,
FP8 or the datasheet's sparse figure), another model's shape or parameter count, a common
setting (a utilisation, a headroom, a block size, a batch), a power of two or its decimal
neighbour for a token count.

Read from the presets once and kept; a diagnosis adds what only its own step knows (the
drill's other givens and variants, the true value doubled, halved or rounded)."""

from __future__ import annotations

from functools import cache

from trainer.capacity.presets import GpuPreset, ModelPreset, gpus, models
from trainer.reading.exact import Fraction
from trainer.records import record

GB = 10**9


@record
class Figure:
    """A value an input takes somewhere, and where ("an H200's", "a common block size").
    `card` names the GPU preset a figure belongs to ("self" for the drill's own model's weights
    at another dtype), and `alternate` marks a card's other figures for the field (memory as
    the driver reports it, FP8 or sparse TFLOP/s): likely in place of the same card's main
    figure, much less in place of another card's."""

    value: Fraction
    why: str
    card: str = ""
    alternate: bool = False


# Settings people use, by the input they set (the list: utilisation 0.8–0.95, a
# headroom of 1–8 GB, blocks of 8–128 tokens, batches in powers of two).
_UTILIZATIONS = (80, 85, 88, 90, 92, 95)
_RESERVES = (1, 2, 3, 4, 5, 6, 8)
_BLOCKS = (8, 16, 32, 64, 128)
# Links a KV transfer or a swap uses, one direction, GB/s.
_LINKS = ((Fraction(25, 2), "100 GbE"), (Fraction(25), "200 Gb/s Ethernet"),
          (Fraction(50), "400 Gb/s InfiniBand"), (Fraction(100), "800 Gb/s InfiniBand"),
          (Fraction(32), "PCIe 4.0 x16"), (Fraction(64), "PCIe 5.0 x16"),
          (Fraction(450), "NVLink 4, one direction"), (Fraction(900), "NVLink 4, both ways"))
_DTYPES = ((Fraction(1, 2), "int4's half byte"), (Fraction(1), "fp8's 1 byte"),
           (Fraction(2), "bf16's 2 bytes"), (Fraction(4), "fp32's 4 bytes"))
# Shape fields a model preset carries, by the input name a diagnosis uses.
_MODEL_FIELDS = {
    "layers": "layers", "heads": "heads", "kv_heads": "kv_heads", "head_dim": "head_dim",
    "hidden": "hidden", "vocab": "vocab", "params": "params", "active_params": "active_params",
    "mla_latent": "mla_latent", "mla_rope": "mla_rope", "window": "window",
    "windowed_layers": "windowed_layers", "experts": "experts",
    "experts_per_token": "experts_per_token", "attention_layers": "attention_layers",
    "recurrent_layers": "recurrent_layers",
    "state_elements": "state_elements", "draft_params": "params", "draft_layers": "layers",
    "draft_kv_heads": "kv_heads", "draft_head_dim": "head_dim",
}
TOKEN_INPUTS = frozenset({"context", "prompt_tokens", "prefix_tokens", "window",
                          "long_prompt_tokens", "output_tokens"})


def dtype_bytes() -> tuple[tuple[Fraction, str], ...]:
    """Bytes per element or parameter of each dtype, with its name."""
    return tuple((value, why) for value, why in _DTYPES)


def figures(name: str) -> tuple[Figure, ...]:
    """Every value the input `name` takes in the world, strongest reason first, each value
    once."""
    return _figures(name)


@cache
def _figures(name: str) -> tuple[Figure, ...]:
    found: list[Figure] = []
    if name in ("hbm_gb", "bandwidth_tbs", "tflops"):
        found += _gpu_figures(name)
    if name in _MODEL_FIELDS:
        found += _model_figures(_MODEL_FIELDS[name])
    if name == "weights_gb":
        found += _weight_figures()
    found += _settings(name)
    seen: set[Fraction] = set()
    unique = []
    for figure in found:
        if figure.value > 0 and figure.value not in seen:
            seen.add(figure.value)
            unique.append(figure)
    return tuple(unique)


def gpu_label(gpu: GpuPreset) -> str:
    """"an H200", "a B200", "an H100 PCIe", "an A100 40GB": the card as people name it, with
    its article; the memory only where two cards share the rest of the name."""
    label = _short(gpu, keep_memory=False)
    if sum(1 for other in gpus().values() if _short(other, keep_memory=False) == label) > 1:
        label = _short(gpu, keep_memory=True)
    return f"{_article(label)} {label}"


def _short(gpu: GpuPreset, keep_memory: bool) -> str:
    name = gpu.name
    for vendor in ("NVIDIA ", "AMD Instinct ", "Intel "):
        name = name.removeprefix(vendor)
    return " ".join(w for w in name.split() if w not in ("SXM", "SXM5")
                    and (keep_memory or not w.endswith("GB")))


def model_label(model: ModelPreset) -> str:
    return model.name


def _article(label: str) -> str:
    # Letter names (H200, A100, L40S, MI300X) are read out letter by letter.
    spelled = len(label) > 1 and (label[1].isdigit() or label[1].isupper())
    sound = "AEFHILMNORSX" if spelled else "AEIOU"
    return "an" if label[0].upper() in sound else "a"


# Figures a card is also quoted at (shared/reference/models-and-gpus.md: the B200 as
# announced, 192 GB and 8 TB/s, against the 180 GB and 7.7 TB/s some configurations ship).
_ALSO_QUOTED = {("b200", "hbm_gb"): Fraction(192), ("b200", "bandwidth_tbs"): Fraction(8)}


def _gpu_figures(name: str) -> list[Figure]:
    found: list[Figure] = []
    announced: list[Figure] = []  # after every card's own: 192 GB is the MI300X's first
    for gpu in gpus().values():
        label = gpu_label(gpu)
        quoted = _ALSO_QUOTED.get((gpu.id, name))
        if quoted is not None:
            announced.append(Figure(quoted, f"{label}'s, as announced", gpu.id))
        if name == "hbm_gb":
            found.append(Figure(gpu.hbm_gb, f"{label}'s", gpu.id))
            if gpu.reported_gb is not None:
                found.append(Figure(gpu.reported_gb, f"{label}'s, as its driver reports it",
                                    gpu.id, alternate=True))
        elif name == "bandwidth_tbs":
            found.append(Figure(gpu.bandwidth_tbs, f"{label}'s", gpu.id))
        elif gpu.bf16_tflops is not None:
            found.append(Figure(gpu.bf16_tflops, f"{label}'s dense BF16", gpu.id))
            others = [(2 * gpu.bf16_tflops, "BF16 with sparsity")]
            if gpu.fp8_tflops is not None:
                others += [(gpu.fp8_tflops, "dense FP8"), (2 * gpu.fp8_tflops, "FP8 with sparsity")]
            found += [Figure(rate, f"{label}'s {what}", gpu.id, alternate=True)
                      for rate, what in others]
    return found + announced


def card_of(name: str, value: Fraction, reported: bool = False) -> str:
    """The GPU preset whose main figure for the field `name` is `value` ("" if none);
    `reported`: whose driver reports it instead (a drill on the memory as the driver reports
    it, where the card's datasheet figure is no other card's)."""
    return next((f.card for f in _figures(name) if f.value == value and f.card
                 and f.alternate == reported), "")


# The models whose figures a slip is read against: the ones the drills, the seeds and the
# reference notes name, on which the chance model's precision was measured
# (benchmarks/diagnosis_tradeoff.py). The catalogue holds more shapes for calc and explain; a
# world of every look-alike shape would make each reading likelier by chance and name fewer.
WORLD_MODELS = frozenset({
    "llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b", "llama-2-7b", "llama-2-70b",
    "mistral-7b-v0.1", "mixtral-8x7b", "qwen2.5-7b", "qwen2.5-72b", "gemma-2-9b",
    "deepseek-v3", "phi-3-mini", "llama-3.2-1b", "jamba-1.5-mini", "llama-3.3-70b", "qwen3-8b",
    "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b", "gpt-oss-20b", "gpt-oss-120b",
    "gemma-3-27b", "mistral-small-24b",
})


def _world_models() -> list[ModelPreset]:
    return [model for key, model in models().items() if key in WORLD_MODELS]


def _model_figures(field: str) -> list[Figure]:
    found: list[Figure] = []
    for model in _world_models():
        value = getattr(model, field)
        if isinstance(value, int | Fraction) and not isinstance(value, bool) and value:
            found.append(Figure(Fraction(value), f"{model_label(model)}'s"))
    return found


def _weight_figures() -> list[Figure]:
    """Weight sizes in GB that a model states: its stated size and its released checkpoints
    (a diagnosis adds every model's parameters at the drill's bytes per parameter)."""
    found: list[Figure] = []
    for model in _world_models():
        label = model_label(model)
        if model.weights_gb is not None:
            found.append(Figure(model.weights_gb, f"{label}'s stated weights"))
        for dtype, size in (model.checkpoints or {}).items():
            found.append(Figure(Fraction(str(size["weights_gb"])),
                                f"{label}'s released {dtype} checkpoint"))
    return found


def _settings(name: str) -> list[Figure]:
    if name == "utilization":
        return [Figure(Fraction(n, 100), "a common utilisation setting")
                for n in _UTILIZATIONS]
    if name == "reserve_gb":
        return [Figure(Fraction(n), "a common headroom") for n in _RESERVES]
    if name == "block_size":
        return [Figure(Fraction(n), "a common block size") for n in _BLOCKS]
    if name == "batch":
        return [Figure(Fraction(2**n), "a power of two") for n in range(11)]
    if name == "gpus":
        return [Figure(Fraction(2**n), "another GPU count") for n in range(5)]
    if name in ("kv_bytes_per_element",):
        return [Figure(value, why) for value, why in _DTYPES]
    if name == "link_gbs":
        return [Figure(value, f"{why}'s") for value, why in _LINKS]
    if name in ("spec_tokens", "experts_per_token"):
        return [Figure(Fraction(n), "another common count") for n in range(1, 9)]
    if name == "acceptance_rate":
        return [Figure(Fraction(n, 100), "another acceptance rate")
                for n in range(50, 100, 5)]
    if name in TOKEN_INPUTS:
        return list(_token_figures())
    return []


@cache
def _token_figures() -> tuple[Figure, ...]:
    """Powers of two from 512 to 1M tokens, each with its decimal neighbour (4,096 and
    4,000), and the round 100k and 200k."""
    found: list[Figure] = []
    for power in range(9, 21):
        value = 2**power
        found.append(Figure(Fraction(value), "a power of two"))
        decimal = value // 1024 * 1000 if value >= 1024 else value // 512 * 500
        found.append(Figure(Fraction(decimal), f"{value:,}'s decimal neighbour"))
    found += [Figure(Fraction(100_000), "a round figure"),
              Figure(Fraction(200_000), "a round figure")]
    return tuple(found)
