"""What `kvdrill calc` prints: the derivation, a one-line picture of HBM, the assumptions and
warnings as text, and the same facts as one JSON object."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from trainer.capacity.deployment import GB, Deployment
from trainer.capacity.derivation import derivation, warnings
from trainer.capacity.presets import ModelPreset, Setting
from trainer.capacity.solver import Solution
from trainer.reading.formatting import format_bytes
from trainer.reading.numbers import format_number

JSON_QUANTITIES = (
    "kv_bytes_per_token",
    "kv_bytes_per_token_per_gpu",
    "kv_bytes_per_sequence",
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
    ids: dict[str, str | None],
) -> dict[str, Any]:
    """The calculator's JSON contract; `ids` are the model and GPU preset ids (or None)."""
    payload: dict[str, Any] = {"model": ids.get("model"), "gpu": ids.get("gpu")}
    for name in JSON_QUANTITIES:
        if name in solution:
            payload[name] = json_number(solution[name])
    payload["batch"] = json_number(solution["batch_size"])
    if solution["batch_size"] == 0:
        payload["tokens_per_second_per_sequence"] = None
    payload["assumptions"] = {
        s.name: {"value": _json_value(s.value), "source": s.source, "detail": s.detail}
        for s in shown_settings(deployment, settings)
    }
    payload["warnings"] = warnings(deployment, solution)
    return payload


def calc_text(
    deployment: Deployment, solution: Solution, settings: list[Setting], names: dict[str, str],
    width: int | None = None,
) -> str:
    """The derivation, the HBM bar and the assumptions; on a terminal of `width` columns the
    two tables narrow and wrap inside their cells."""
    from trainer.text_layout import Column, Table

    d = deployment
    model, gpu = names["model"], names["gpu"]
    lines = [
        f"{model} on {d.gpus} × {gpu} · context {format_number(d.context)} tokens · "
        f"KV {d.kv_dtype} · weights {d.weights_dtype}",
        "",
    ]
    steps = derivation(d, solution)
    inner = None if width is None else width - 2  # the tables sit two columns in
    derivation_table = Table([Column("quantity", least=16), Column("working = result",
                                                                   least=30)], inner)
    rows = [[step.label, f"{step.working} = {step.result}"] for step in steps]
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
    for warning in warnings(d, solution):
        lines.append(f"Warning: {warning}")
    return "\n".join(lines)


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
        parts.append(f"attention in {n(d.attention_layers)} of {n(d.layers)} layers, "
                     f"{n(d.state_elements or 0)} state values in each of the others")
    if d.experts is not None:
        parts.append(f"{n(d.experts)} experts, {n(d.experts_per_token or 0)} per token")
    params = format_number((d.params or 0) / 10**9, sig=4)
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
    return [s for s in settings if s.value is not None and s.name not in hidden]


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
    return (
        f"HBM [{bar}] █ weights {format_bytes(weights)} | ▒ reserve {format_bytes(reserve)} | "
        f"▓ KV in use {format_bytes(in_use)} | ░ unused {format_bytes(unused)}"
    )
