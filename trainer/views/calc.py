"""What `kvdrill calc` prints: the derivation, a one-line picture of HBM, the assumptions and
warnings as text, and the same facts as one JSON object."""

from __future__ import annotations

from typing import Any

from trainer.capacity.deployment import GB, Deployment
from trainer.capacity.derivation import DerivationStep, derivation, warnings
from trainer.capacity.presets import NO_CARD, ModelPreset, Setting
from trainer.capacity.serving_formulas import recurrent_layers
from trainer.capacity.solver import Solution, one_kind_of_page
from trainer.reading.exact import Fraction
from trainer.reading.formatting import format_bytes
from trainer.reading.numbers import format_number

# What the model alone decides (with the context, dtype and GPU count): printed even with no
# card, or when the weights overflow the card given.
SIZING_QUANTITIES = (
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "kv_bytes_per_sequence",
    "recurrent_state_bytes_per_sequence",
    "weights_bytes",
    "weights_per_gpu_bytes",
)
JSON_QUANTITIES = (
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "kv_bytes_per_sequence",
    "recurrent_state_bytes_per_sequence",
    "weights_bytes",
    "usable_bytes",
    "kv_budget_bytes",
    "max_tokens",
    "max_concurrency",
    "bytes_read_per_step",
    "decode_step_seconds",
    "tokens_per_second",
    "tokens_per_second_per_sequence",
    "batch1_ceiling_tokens_per_second",
    "weights_read_per_step",
    "prefill_flops",
    "prefill_seconds",
    "crossover_batch",
    "max_concurrency_with_prefix",
    "num_blocks",
    "engine_max_concurrency",
)

BAR_WIDTH = 48


def json_number(value: Fraction | int | None) -> int | float | None:
    """An exact integer where the value is whole, else the nearest float."""
    if value is None:
        return None
    fraction = Fraction(value)
    return fraction.numerator if fraction.denominator == 1 else float(fraction)


def _json_value(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    if isinstance(value, int | Fraction):
        return json_number(value)
    return value


def calc_json(
    deployment: Deployment, solution: Solution, settings: list[Setting],
    ids: dict[str, str | None], notes: list[str] | None = None,
) -> dict[str, Any]:
    """The calculator's JSON contract; `ids` are the model and GPU preset ids (or None)."""
    payload: dict[str, Any] = {"model": ids.get("model"), "gpu": ids.get("gpu")}
    paged_as_one = one_kind_of_page(deployment)
    for name in JSON_QUANTITIES:
        if name in ("num_blocks", "engine_max_concurrency") and not paged_as_one:
            continue  # vLLM pages windowed and recurrent layers in groups: not this figure
        if name in solution:
            payload[name] = json_number(solution[name])
    payload["kv_bytes_per_token_one_copy"] = json_number(one_copy(deployment))
    payload["batch"] = json_number(solution["batch_size"])
    if solution["batch_size"] == 0:
        payload["tokens_per_second_per_sequence"] = None
    payload["assumptions"] = {
        s.name: {"value": _json_value(s.value), "source": s.source, "detail": s.detail}
        for s in shown_settings(deployment, settings)
    }
    payload["warnings"] = [*(notes or []), *warnings(deployment, solution)]
    return payload


def one_copy(deployment: Deployment) -> Fraction:
    """The model's KV per token as one unsharded copy holds it: what a config.json decides,
    whatever the GPUs replicate."""
    from trainer.capacity.solver import value_of

    return value_of(deployment.changed(gpus=1, dp_attention=None), "kv_bytes_per_token")


def model_warnings(model: ModelPreset | None, deployment: Deployment) -> list[str]:
    """What the model says about these inputs: a context past its position limit, a latent
    held whole on every GPU."""
    d = deployment
    found: list[str] = []
    if model is not None and model.max_context and d.context > model.max_context:
        found.append(f"context {format_number(d.context)} tokens is past the model's "
                     f"{format_number(model.max_context)} (max_position_embeddings and its "
                     "RoPE scaling): vLLM refuses a max_model_len beyond it")
    if model is not None and model.chunked_attention and d.window is not None \
            and d.windowed_layers and d.context > d.window:
        # (vLLM frees a chunked layer's blocks before the current chunk's start)
        held = d.context % d.window or d.window
        found.append(f"{model.name}'s local layers attend within chunks of "
                     f"{format_number(d.window)} tokens: each is counted at a whole chunk, the "
                     f"most it holds; at {format_number(d.context)} tokens it holds "
                     f"{format_number(held)} (those since its current chunk began), so the "
                     "sequence's KV is at most what is shown")
    if d.attention == "mla" and d.gpus > 1 and not d.dp_attention:
        found.append(f"MLA on {d.gpus} GPUs: every GPU holds the whole latent, so the KV per "
                     "token summed over the GPUs is that many copies of one "
                     "(kv_bytes_per_token_one_copy)")
    return found


def sizing_json(deployment: Deployment, settings: list[Setting], ids: dict[str, str | None],
                notes: list[str], does_not_fit: str | None) -> dict[str, Any]:
    """The JSON of what the model alone decides; the card's figures are absent."""
    from trainer.capacity.solver import value_of

    payload: dict[str, Any] = {"model": ids.get("model"), "gpu": ids.get("gpu")}
    for name in SIZING_QUANTITIES:
        payload[name] = json_number(value_of(deployment, name))
    payload["kv_bytes_per_token_one_copy"] = json_number(one_copy(deployment))
    payload["assumptions"] = {
        s.name: {"value": _json_value(s.value), "source": s.source, "detail": s.detail}
        for s in shown_settings(deployment, settings)
    }
    reason = does_not_fit or "no card given (--gpu or --hbm-gb): only what the model decides " \
        "is sized; capacity and speed need a card"
    payload["warnings"] = [*notes, reason]
    payload["fits"] = None if does_not_fit is None else False
    return payload


def sizing_text(deployment: Deployment, settings: list[Setting], names: dict[str, str],
                width: int | None, notes: list[str], does_not_fit: str | None) -> str:
    """What the model alone decides, as derivation rows; capacity needs a card."""
    from trainer.text_layout import Column, Table

    d = deployment
    gpus = f" on {d.gpus} GPUs" if d.gpus > 1 else ""
    lines = [f"{names['model']}{gpus} · context {format_number(d.context)} tokens · "
             f"KV {d.kv_dtype} · {_weights_title(d, settings)}", ""]
    wanted = {"kv_width", "kv_heads_per_gpu", "kv_bytes_per_token_per_gpu",
              "kv_bytes_per_token", "kv_bytes_per_sequence", "weights_bytes",
              "weights_per_gpu_bytes"}
    from trainer.capacity.solver import Solution

    steps = [step for step in derivation(d, Solution(d)) if step.name in wanted]
    inner = None if width is None else width - 2
    table = Table([Column("quantity", least=16), Column("working = result", least=30)], inner)
    lines += ["  " + line for line in table.lines(
        [[step.label, f"{_working(step, d, settings)} = {step.result}"] for step in steps])]
    lines += ["", "Assumptions:"]
    assumptions = Table([Column("input", wrap=False), Column("value", ">", wrap=False),
                         Column("from")], inner)
    rows = [[s.name, _show(s.value), s.source + (f": {s.detail}" if s.detail else "")]
            for s in shown_settings(d, settings)]
    lines += ["  " + line for line in assumptions.lines(rows)]
    for note in notes:
        lines.append(f"Warning: {note}")
    if does_not_fit is None:
        lines.append("No card given (--gpu or --hbm-gb): capacity and decode speed need one.")
    return "\n".join(lines)


def calc_text(
    deployment: Deployment, solution: Solution, settings: list[Setting], names: dict[str, str],
    width: int | None = None, notes: list[str] | None = None,
) -> str:
    """The derivation, the HBM bar and the assumptions; on a terminal of `width` columns the
    two tables narrow and wrap inside their cells."""
    from trainer.text_layout import Column, Table

    d = deployment
    model, gpu = names["model"], names["gpu"]
    lines = [
        f"{model} on {d.gpus} × {gpu} · context {format_number(d.context)} tokens · "
        f"KV {d.kv_dtype} · {_weights_title(d, settings)}",
        "",
    ]
    steps = derivation(d, solution)
    inner = None if width is None else width - 2  # the tables sit two columns in
    derivation_table = Table([Column("quantity", least=16), Column("working = result",
                                                                   least=30)], inner)
    rows = [[step.label, f"{_working(step, d, settings)} = {step.result}"] for step in steps]
    lines += ["  " + line for line in derivation_table.lines(rows)]
    bar, legend = hbm_bar(d, solution).split("] ", 1)
    lines += ["", f"{bar}]", f"    {legend}", "", "Assumptions:"]
    assumptions = Table([Column("input", wrap=False), Column("value", ">", wrap=False),
                         Column("from")], inner)
    rows = []
    for setting in shown_settings(d, settings):
        where = setting.source
        if setting.detail:
            where += f": {setting.detail}" if setting.source == "default" else f" {setting.detail}"
        rows.append([setting.name, _show(setting.value), where])
    lines += ["  " + line for line in assumptions.lines(rows)]
    for warning in [*(notes or []), *warnings(d, solution)]:
        lines.append(f"Warning: {warning}")
    return "\n".join(lines)


def _stated_without_dtype(settings: list[Setting]) -> bool:
    """The weights given as a size (--weights-gb) with no --weights-dtype: a size no dtype of
    the model's describes (a 4-bit checkpoint of a bf16 model)."""
    given = {s.name: s for s in settings}
    size, dtype = given.get("weights_gb"), given.get("weights_dtype")
    return size is not None and size.value is not None and size.source == "option" and \
        (dtype is None or dtype.source != "option")


def _weights_title(d: Deployment, settings: list[Setting]) -> str:
    if _stated_without_dtype(settings) and d.weights_gb is not None:
        return f"weights {format_number(d.weights_gb)} GB as stated"
    return f"weights {d.weights_dtype}"


def _working(step: DerivationStep, d: Deployment, settings: list[Setting]) -> str:
    if step.name == "weights_bytes" and _stated_without_dtype(settings):
        return step.working.replace(f" as stated ({d.native_weights_dtype})", " as stated", 1)
    return step.working


def config_json(model: ModelPreset) -> dict[str, Any]:
    """Where a model read from a config.json came from and how each field was read."""
    return {"path": model.config_path, "name": model.name, "notes": list(model.config_notes)}


def model_shape(model: ModelPreset, deployment: Deployment) -> str:
    """One line of the shape a config.json gives, the way a person would say it."""
    from trainer.reading.numbers import format_number as n

    d = deployment
    if d.attention == "mla":
        attention = f"MLA: latent {n(d.mla_latent)} + rope {n(d.mla_rope)} per token and layer"
    else:
        attention = (f"{n(d.heads)} query heads, {n(d.kv_heads)} KV heads × head_dim "
                     f"{n(d.head_dim)}")
    parts = [f"{n(d.layers)} layers", attention]
    if d.hidden is not None:
        parts.append(f"hidden {n(d.hidden)}")
    if d.vocab is not None:
        parts.append(f"vocab {n(d.vocab)}{' (tied)' if d.tied_embeddings else ''}")
    if d.window is not None and d.windowed_layers:
        parts.append(f"window {n(d.window)} on {n(d.windowed_layers)} of {n(d.layers)} layers")
    if d.attention_layers is not None:
        others = d.layers - d.attention_layers
        recurrent = recurrent_layers(d)
        if recurrent > others:  # a parallel hybrid: both in the same layers (Falcon-H1)
            parts.append(f"attention in {n(d.attention_layers)} of {n(d.layers)} layers, and "
                         f"{n(d.state_elements or 0)} state values in "
                         + ("every layer" if recurrent == d.layers else
                            f"{n(recurrent)} layers")
                         + (", beside the attention" if d.attention_layers == d.layers else
                            f", {n(recurrent - others)} of them beside attention"))
        else:
            parts.append(f"attention in {n(d.attention_layers)} of {n(d.layers)} layers, "
                         f"{n(d.state_elements or 0)} state values in each of "
                         + ("the others" if recurrent == others else
                            f"{n(recurrent)} recurrent ones (the other "
                            f"{n(others - recurrent)} keep no cache)"))
    if d.experts is not None:
        parts.append(f"{n(d.experts)} experts, {n(d.experts_per_token or 0)} per token")
    params = format_number((d.params or 0) / 10**9, sig=4)
    if dict(model.config_assumed).get("params", "").startswith("an estimate") and \
            d.params == model.params:
        parts.append(f"about {params}B params (an estimate, not a count)")
    else:
        parts.append(f"{params}B params")
    if d.active_params is not None:
        parts.append(f"{format_number(d.active_params / 10**9, sig=3)}B active")
    return ", ".join(parts)


def config_text(model: ModelPreset, deployment: Deployment) -> str:
    """The shape read from a config.json and how each trap in it was read."""
    lines = [f"Read from {model.config_path}: {model_shape(model, deployment)}."]
    lines += [f"  - {note}" for note in model.config_notes]
    return "\n".join(lines)


def shown_settings(deployment: Deployment, settings: list[Setting]) -> list[Setting]:
    """The settings that matter for this deployment (no MLA sizes for a GQA model...)."""
    hidden = set()
    if deployment.attention != "mla":
        hidden |= {"attention", "mla_latent", "mla_rope"}
    if deployment.window is None:
        hidden |= {"window", "windowed_layers"}
    return [s for s in settings if s.value is not None and s.name not in hidden
            and s.source != NO_CARD]


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | Fraction):
        return format_number(Fraction(value), sig=6)
    return str(value)


def hbm_bar(deployment: Deployment, solution: Solution) -> str:
    """HBM of all GPUs as one bar: weights | reserve | KV in use | unused."""
    d, s = deployment, solution
    total = d.gpus * d.hbm_gb * GB
    weights = s["weights_bytes"]
    reserve = total - s["usable_bytes"]
    budget = max(s["kv_budget_bytes"], Fraction(0))
    in_use = min(s["batch_size"] * s["kv_bytes_per_sequence"], budget)
    unused = budget - in_use
    parts = [("█", weights), ("▒", reserve), ("▓", in_use), ("░", unused)]
    cells = [round(BAR_WIDTH * part / total) for _, part in parts]
    cells[-1] = max(0, BAR_WIDTH - sum(cells[:-1]))
    bar = "".join(char * count for (char, _), count in zip(parts, cells, strict=True))
    # what the utilisation cap holds back is no reserve the user gave: named as what it is
    held = "held back" if not d.reserve_gb else "reserve and held back" \
        if d.utilization != 1 else "reserve"
    return (
        f"HBM [{bar}] █ weights {format_bytes(weights)} | ▒ {held} {format_bytes(reserve)} | "
        f"▓ KV in use {format_bytes(in_use)} | ░ unused {format_bytes(unused)}"
    )
