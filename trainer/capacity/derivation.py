"""The working of every quantity, as a person would write it down, with units at every step,
and the warnings a deployment deserves (a context past the model's, KV that does not fit...)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, Literal

from trainer.capacity.deployment import DTYPE_BYTES, Deployment
from trainer.capacity.solver import (
    EXACT_OPS,
    FORMULAS,
    Solution,
    busiest_rank,
    mixed_mxfp4,
    one_kind_of_page,
    requantized_with_tables,
    split_attention,
)
from trainer.capacity.solver import prefix_bytes as solver_prefix_bytes
from trainer.reading.exact import Fraction
from trainer.records import record, replace

# ---------------------------------------------------------------------------------------------
# Derivation: the working, with units at every step


@record
class DerivationStep:
    name: str
    label: str
    working: str
    result: str


def prefix_bytes(d: Deployment, shared: Fraction, s: Solution) -> tuple[Fraction, Fraction]:
    """The prefix's bytes stored once and each sequence's own (solver.prefix_bytes), from a
    solution's figures."""
    figures = SimpleNamespace(
        context=d.context, block_size=d.block_size, layers=d.layers,
        windowed_layers=d.windowed_layers, shared_prefix_tokens=shared,
        **{name: s[name] for name in ("kv_bytes_per_token", "recurrent_state_bytes_per_sequence",
                                      "window_tokens_held_per_sequence")})
    stored, own = solver_prefix_bytes(figures, EXACT_OPS)
    return Fraction(stored), Fraction(own)


def derivation(deployment: Deployment, solution: Solution | None = None) -> list[DerivationStep]:
    """Each quantity with the numbers that produce it, as a person would write them down."""
    from trainer.reading.formatting import format_bytes, format_seconds
    from trainer.reading.numbers import format_number

    d = deployment
    s = solution if solution is not None else Solution(d)
    gpus = f"{d.gpus:,} GPU" if d.gpus == 1 else f"{d.gpus:,} GPUs"

    def n(x: Any) -> str:
        return format_number(Fraction(x))

    def b(x: Any) -> str:
        return format_bytes(Fraction(x))

    # The KV lines sit one under another: one unit family for all of them (128 KiB beside
    # 512 MiB, or 70.3 KB beside 562 KB; never 70.3 KB beside 549 KiB).
    kv_lines = [s["kv_bytes_per_token_per_gpu"], s["kv_bytes_per_token"],
                s["kv_bytes_per_sequence"], s["kv_bytes_per_token"] / d.layers]
    family: Literal["binary", "si"] = "binary" if all(
        "iB" in format_bytes(Fraction(x), system="both") for x in kv_lines if x >= 1024
    ) else "si"

    def both(x: Any) -> str:
        exact = format_bytes(Fraction(x), system="both").split(" (")[0]
        return exact if x < 1000 else f"{exact} ({format_bytes(Fraction(x), system=family)})"

    def plural(count: int, word: str) -> str:
        return f"{count:,} {word}" if count == 1 else f"{count:,} {word}s"

    e = s.deployment.kv_bytes_per_element
    dtype = f"{n(e)} B ({d.kv_dtype})"
    steps: list[DerivationStep] = []

    def add(name: str, working: str, result: str) -> None:
        steps.append(DerivationStep(name, FORMULAS[name].label, working, result))

    if d.attention == "mla":
        per_gpu = (
            f"{n(d.layers)} layers × ({n(d.mla_latent)} latent + {n(d.mla_rope)} rope) "
            f"× {dtype}, no K/V pair"
        )
    else:
        add("kv_width", f"{n(d.kv_heads)} KV heads × {n(d.head_dim)} head_dim",
            f"{n(s['kv_width'])} elements")
        if d.gpus > 1 and not d.dp_attention:
            note = " (replicated)" if d.gpus > d.kv_heads else ""
            add("kv_heads_per_gpu", f"max(1, {n(d.kv_heads)} KV heads ÷ {n(d.gpus)} GPUs)",
                f"{n(s['kv_heads_per_gpu'])} KV heads{note}")
        heads = d.kv_heads if d.dp_attention else s["kv_heads_per_gpu"]
        layers = "layers" if d.attention_layers is None else "attention layers"
        per_gpu = (
            f"{n(d.kv_factor)} (K and V) × {n(s['kv_layers'])} {layers} × "
            f"{n(heads)} KV heads × {n(d.head_dim)} head_dim × {dtype}"
        )
    if d.gpus > 1 and d.dp_attention:
        add("kv_bytes_per_token_per_gpu", per_gpu + ", on the one GPU serving the sequence",
            both(s["kv_bytes_per_token_per_gpu"]))
        add("kv_bytes_per_token", "one copy (data-parallel attention)",
            both(s["kv_bytes_per_token"]))
    elif d.gpus > 1:
        add("kv_bytes_per_token_per_gpu", per_gpu, both(s["kv_bytes_per_token_per_gpu"]))
        whole = "the latent is held whole on every GPU" if d.attention == "mla" else "summed"
        add("kv_bytes_per_token",
            f"{n(d.gpus)} GPUs × {both(s['kv_bytes_per_token_per_gpu'])} ({whole})",
            both(s["kv_bytes_per_token"]))
    else:
        add("kv_bytes_per_token", per_gpu, both(s["kv_bytes_per_token"]))

    held = s["tokens_held_per_sequence"]
    blocks = ""
    if d.block_size > 1:
        blocks = f" ({n(held / d.block_size)} blocks of {n(d.block_size)})"
    if d.windowed_layers:
        full = d.layers - d.windowed_layers
        working = (
            f"{both(s['kv_bytes_per_token'] / d.layers)} per layer-token × "
            f"({n(full)} full layers × {n(held)} tokens + {n(d.windowed_layers)} windowed "
            f"layers × {n(s['window_tokens_held_per_sequence'])} tokens)"
        )
    else:
        working = f"{both(s['kv_bytes_per_token'])} × {n(held)} tokens{blocks}"
        if d.attention_layers is not None:
            working += f" + {b(s['recurrent_state_bytes_per_sequence'])} recurrent state"
    add("kv_bytes_per_sequence", working, both(s["kv_bytes_per_sequence"]))

    if d.weights_gb is not None and not (requantized_with_tables(d) and not mixed_mxfp4(d)):
        working = f"{n(d.weights_gb)} GB as stated ({d.native_weights_dtype})"
        if mixed_mxfp4(d) and d.experts is not None \
                and d.weights_dtype != d.native_weights_dtype:
            experts = s["routed_expert_bytes"] / d.weight_bytes_per_param
            working += (
                f" + {n(experts)} expert params × ({n(d.weight_bytes_per_param)} − "
                f"{n(DTYPE_BYTES[d.native_weights_dtype])}) B (experts in {d.weights_dtype}; "
                f"attention, router and tables stay {d.tables_dtype})"
            )
        elif d.weights_dtype != d.native_weights_dtype:
            working += (
                f" × {n(d.weight_bytes_per_param)} B ÷ {n(DTYPE_BYTES[d.native_weights_dtype])} B"
                f" ({d.weights_dtype})"
            )
    else:
        assert d.params is not None
        working = f"{n(d.params)} params × {n(d.weight_bytes_per_param)} B ({d.weights_dtype})"
        if d.tables_dtype is not None and d.vocab is not None and d.hidden is not None:
            tables = d.vocab * d.hidden * (1 if d.tied_embeddings else 2)
            wider = DTYPE_BYTES[d.tables_dtype] - d.weight_bytes_per_param
            working += (f" + {n(tables)} embedding and LM head params × {n(wider)} B more "
                        f"({d.tables_dtype})")
        elif d.vocab is not None and d.hidden is not None \
                and d.weights_dtype in ("fp8", "int8", "int4") \
                and d.native_weights_dtype in ("bf16", "fp16"):
            # a quantized serving of a 16-bit release: vLLM's FP8 and INT8 quantize the linear
            # layers, and the embedding table and LM head stay in the release's dtype
            tables = d.vocab * d.hidden * (1 if d.tied_embeddings else 2)
            kept = tables * (DTYPE_BYTES[d.native_weights_dtype] - d.weight_bytes_per_param)
            which = "that table" if d.tied_embeddings else "those two"
            working += (f", the embedding and LM head included (vLLM keeps {which} in "
                        f"{d.native_weights_dtype}, {b(kept)} more, not counted here"
                        + ("; an int4 checkpoint (AWQ, GPTQ) also stores a scale and zero "
                           "point per group of 128 weights" if d.weights_dtype == "int4"
                           else "") + ")")
    add("weights_bytes", working, b(s["weights_bytes"]))
    if d.dp_attention and d.attention_params is not None:
        embedding = (f" + {b(s['embedding_table_bytes'])} embedding table"
                     if s["embedding_table_bytes"] else "")
        per_param = DTYPE_BYTES[d.tables_dtype] if mixed_mxfp4(d) and d.tables_dtype else \
            d.weight_bytes_per_param
        add("replicated_attention_bytes",
            f"({n(d.gpus)} − 1) extra copies × ({n(d.attention_params)} attention params × "
            f"{n(per_param)} B{embedding})", b(s["replicated_attention_bytes"]))
        add("weights_per_gpu_bytes",
            f"({b(s['weights_bytes'])} + {b(s['replicated_attention_bytes'])}) ÷ {gpus}",
            b(s["weights_per_gpu_bytes"]))

    util = f" × {format_number(d.utilization, sig=4)}" if d.utilization != 1 else ""
    reserve = f" − {n(d.reserve_gb)} GB reserve" if d.reserve_gb else ""
    add("usable_bytes", f"{gpus} × ({n(d.hbm_gb)} GB memory{util}{reserve})", b(s["usable_bytes"]))
    copied = "attention and embedding copies" if s["embedding_table_bytes"] else \
        "attention copies"
    copies = (f" − {b(s['replicated_attention_bytes'])} {copied}"
              if d.dp_attention else "")
    add("kv_budget_bytes", f"{b(s['usable_bytes'])} − {b(s['weights_bytes'])} weights{copies}",
        b(s["kv_budget_bytes"]))
    # a windowed layer keeps at most its window: the tokens of every layer bound nothing
    every_layer = ", every layer keeping every token (a windowed layer keeps only its " \
        "window: the sequences below hold more)" if d.windowed_layers else ""
    add("max_tokens", f"{b(s['kv_budget_bytes'])} ÷ {n(s['kv_bytes_per_token'])} B{every_layer}, "
        "rounded down", f"{n(s['max_tokens'])} tokens")
    if d.dp_attention:
        add("max_concurrency",
            f"{gpus} × ({b(s['kv_budget_bytes'] / d.gpus)} per GPU ÷ "
            f"{b(s['kv_bytes_per_sequence'])}, rounded down)",
            plural(int(s["max_concurrency"]), "sequence"))
    else:
        add("max_concurrency",
            f"{b(s['kv_budget_bytes'])} ÷ {b(s['kv_bytes_per_sequence'])}, rounded down",
            plural(int(s["max_concurrency"]), "sequence"))
    try:
        if d.block_size > 1 and one_kind_of_page(d):  # paged blocks: what vLLM logs
            add("num_blocks", f"{b(s['kv_budget_bytes'])} ÷ ({n(d.block_size)} tokens × "
                f"{n(s['kv_bytes_per_token'])} B), rounded down", f"{n(s['num_blocks'])} blocks")
            add("engine_max_concurrency",
                f"{n(s['num_blocks'])} blocks ÷ {n(s['blocks_per_sequence'])} blocks per "
                "sequence", format_number(s["engine_max_concurrency"]))
        if d.prefix_tokens:  # a shared prefix stored once, in whole blocks
            shared = s["shared_prefix_tokens"]
            stored, own = prefix_bytes(d, shared, s)
            where = (f" on the {n(d.layers - d.windowed_layers)} full layers (a windowed "
                     "layer keeps each sequence's own window)" if d.windowed_layers else "")
            add("max_concurrency_with_prefix",
                f"({b(s['kv_budget_bytes'])} − {n(shared)} shared tokens{where}, "
                f"{b(stored)}) ÷ {b(own)} of each sequence's own, rounded down",
                plural(int(s["max_concurrency_with_prefix"]), "sequence"))
    except ZeroDivisionError:
        pass  # a deployment with no KV per token or no context has no blocks to count
    batch = int(s["batch_size"])
    # under DP attention every busy rank reads its own copy of the attention weights
    busy = min(batch, d.gpus) - 1 if d.dp_attention and d.attention_params else 0
    also = f" + {plural(busy, 'more rank')}' own attention copies" if busy else ""
    if d.experts is not None:
        add("weights_read_per_step",
            f"shared weights + experts touched by {plural(batch, 'token')} × "
            f"{n(d.experts_per_token)} of {n(d.experts)} experts{also}",
            b(s["weights_read_per_step"]))
    elif also:
        add("weights_read_per_step", f"the weights{also}", b(s["weights_read_per_step"]))
    add("bytes_read_per_step",
        f"{b(s['weights_read_per_step'])} weights + {n(batch)} × "
        f"{b(s['kv_bytes_per_sequence'])} KV",
        b(s["bytes_read_per_step"]))
    if split_attention(d):
        # the busiest rank sets the step: its own attention copy and sequences' KV
        busiest = busiest_rank(d)
        per_rank = -(-batch // d.gpus)
        add("decode_step_seconds",
            f"the busiest rank: its attention copy + 1/{n(d.gpus)} of the other weights + "
            f"the KV of {plural(per_rank, 'sequence')} = {b(busiest)} ÷ "
            f"{n(d.bandwidth_tbs)} TB/s",
            format_seconds(s["decode_step_seconds"]))
    else:
        add("decode_step_seconds",
            f"{b(s['bytes_read_per_step'])} ÷ ({gpus} × {n(d.bandwidth_tbs)} TB/s)",
            format_seconds(s["decode_step_seconds"]))
    step = format_seconds(s["decode_step_seconds"])
    add("tokens_per_second", f"{plural(batch, 'sequence')} ÷ {step}",
        f"{format_number(s['tokens_per_second'])} tokens/s")
    add("tokens_per_second_per_sequence", f"1 token ÷ {step}",
        f"{format_number(s['tokens_per_second_per_sequence'])} tokens/s")
    active = "active weights" if d.experts is not None else "weights"
    if split_attention(d):
        add("batch1_ceiling_tokens_per_second",
            f"{n(d.bandwidth_tbs)} TB/s ÷ (one rank's attention copy + 1/{n(d.gpus)} of the "
            f"other {active})",
            f"{format_number(s['batch1_ceiling_tokens_per_second'])} tokens/s")
    else:
        add("batch1_ceiling_tokens_per_second",
            f"{gpus} × {n(d.bandwidth_tbs)} TB/s ÷ {b(s['active_weights_bytes'])} {active}",
            f"{format_number(s['batch1_ceiling_tokens_per_second'])} tokens/s")
    return steps


def warnings(deployment: Deployment, solution: Solution) -> list[str]:
    """What a careful engineer would say about these numbers before anyone relies on them."""
    d, s = deployment, solution
    found: list[str] = []
    if d.utilization == 1:
        found.append(
            "utilization 1.0: all of HBM is assumed usable; servers cap it "
            "(vLLM gpu_memory_utilization 0.9), so pass --utilization"
        )
    if d.reserve_gb == 0:
        found.append(
            "no reserve: activations, CUDA graphs and fragmentation need a few GB per GPU, "
            "so this overstates capacity; pass --reserve-gb"
        )
    if d.weights_dtype == "mxfp4" and d.tables_dtype is None:
        # every weight at 17/32 B, where MXFP4 releases keep the embedding and LM head (and
        # more: GPT-OSS keeps attention and the router) in BF16
        found.append(
            "mxfp4 weights: every weight is counted at 17/32 B, but MXFP4 checkpoints keep the "
            "embedding and LM head (GPT-OSS: attention and router too) in bf16, so this "
            "understates the weights; size from the release's config.json"
        )
    if d.block_size > 1 and not one_kind_of_page(d):
        found.append(
            "vLLM pages windowed and recurrent layers in KV-cache groups of their own (a "
            "page padded to the largest): its block count and 'Maximum concurrency' are not "
            "this budget over one page, so they are not shown"
        )
    if s["max_concurrency"] == 0:
        found.append(
            "not one sequence fits at this context: shorten the context, add GPUs, "
            "or shrink the KV cache (fp8 KV, fewer KV heads)"
        )
    elif d.batch is not None and d.batch > s["max_concurrency"]:
        found.append(
            f"batch {d.batch} exceeds the {int(s['max_concurrency'])} sequences that fit: "
            "its KV cache would not fit in memory"
        )
    if d.dp_attention and d.gpus > 1 and d.attention != "mla" and d.kv_heads % d.gpus == 0:
        # GQA heads that split evenly are copied nowhere under TP: DP attention only adds copies
        try:
            plain = Solution(replace(d, dp_attention=False))["max_concurrency"]
        except (ArithmeticError, ValueError):
            plain = None
        if plain is not None and plain > s["max_concurrency"]:
            found.append(
                f"DP attention copies the attention weights to every GPU and saves no KV here: "
                f"{d.kv_heads} KV heads split over {d.gpus} GPUs with no copies under tensor "
                f"parallelism, which holds {int(plain)} sequences against "
                f"{int(s['max_concurrency'])}")
    if d.gpus > d.kv_heads and d.attention != "mla":
        found.append(
            f"{d.gpus} GPUs exceed {d.kv_heads} KV heads: each GPU keeps a replica, "
            "so the KV per token grows with every GPU added"
        )
    return found
