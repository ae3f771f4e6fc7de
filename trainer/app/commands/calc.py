"""`kvdrill calc`: any number of the capacity model for a model and a GPU (presets or explicit
values), with the derivation, the assumptions and a picture of memory."""

from __future__ import annotations

from typing import Any

import click

from trainer.app.options import (
    CONTEXT_HELP,
    EXACT,
    KV_DTYPE_CHOICES,
    MODEL_HELP,
    WEIGHT_DTYPE_CHOICES,
    ContextLength,
    ParamCount,
    WholeNumber,
    complete_presets,
    echo,
    emit_json,
    format_options,
    screen_width,
)
from trainer.errors import DoesNotFit, InvalidInput, UsageError


@click.command()
@click.option("--model", "--preset", "model", metavar="MODEL", shell_complete=complete_presets,
              help=MODEL_HELP + " Options below override it.")
@click.option("--layers", type=WholeNumber("LAYERS"), help="Transformer layers.")
@click.option("--heads", type=WholeNumber("HEADS"), help="Query (attention) heads.")
@click.option("--kv-heads", type=WholeNumber("HEADS"),
              help="Key/value heads (GQA; = heads for MHA, 1 for MQA).")
@click.option("--head-dim", type=WholeNumber("DIMS"),
              help="Elements per head (from the config, not hidden/heads).")
@click.option("--hidden", type=WholeNumber("DIMS"), help="Hidden size d_model.")
@click.option("--params", type=ParamCount(), help="Parameter count: 8.03B or 8030261248.")
@click.option("--weights-gb", type=EXACT,
              help="Weight size in GB (10^9 B) as released: in the model's own dtype, which "
                   "another --weights-dtype rescales (with no model, at --weights-dtype).")
@click.option("--window", type=ContextLength(),
              help=f"Sliding-window size in tokens ({CONTEXT_HELP}).")
@click.option("--windowed-layers", type=WholeNumber("LAYERS"),
              help="How many layers use the sliding window.")
@click.option("--active-params", type=ParamCount(),
              help="MoE: parameters each token uses (e.g. 12.9B).")
@click.option("--experts", type=WholeNumber("EXPERTS"), help="MoE: routed experts per layer.")
@click.option("--experts-per-token", type=WholeNumber("EXPERTS"),
              help="MoE: experts each token is routed to.")
@click.option("--gpu", metavar="NAME", shell_complete=complete_presets,
              help="GPU preset (e.g. h100, h200, mi300x).")
@click.option("--hbm-gb", type=EXACT, help="Memory per GPU in GB (10^9 B).")
@click.option("--memory", type=click.Choice(["marketed", "reported"]),
              help="Which memory figure of the --gpu preset to use: the marketed GB (default) "
                   "or the total the driver reports, which vLLM's utilisation multiplies.")
@click.option("--bandwidth-tbs", type=EXACT, help="Memory bandwidth per GPU in TB/s.")
@click.option("--gpus", type=WholeNumber("GPUS"), help="GPUs in tensor parallel (default 1).")
@click.option("--checkpoint", metavar="DTYPE",
              help="Size the weights as the model's released checkpoint in DTYPE (e.g. fp8: "
                   "405B FP8 keeps attention in BF16, 487.2 GB), from the preset.")
@click.option("--dp-attention", "dp_attention", flag_value=1, default=None,
              help="Data-parallel attention: one copy of the attention weights on every GPU, "
                   "each sequence's KV on one GPU.")
@click.option("--weights-dtype", type=click.Choice(WEIGHT_DTYPE_CHOICES, case_sensitive=False),
              help="Dtype of the weights (default: as released).")
@click.option("--kv-dtype", type=click.Choice(KV_DTYPE_CHOICES, case_sensitive=False),
              help="Dtype of the KV cache (default: the model's compute dtype, as vLLM's "
                   "kv-cache-dtype auto: bf16/fp16 as released; bf16 for fp8 or int weights).")
@click.option("--context", "--seq", "context", type=ContextLength(),
              help=f"Live tokens per sequence: prompt + generated so far ({CONTEXT_HELP}; "
                   "default 4k).")
@click.option("--batch", type=WholeNumber("SEQUENCES"),
              help="Sequences decoded together (default: the maximum).")
@click.option("--utilization", type=EXACT,
              help="Fraction of HBM the server may use (default 1.0, like the calculator that "
                   "ships with the 70B-on-MI300X exercise).")
@click.option("--reserve-gb", type=EXACT,
              help="GB per GPU kept for activations, graphs, fragmentation (default 0).")
@click.option("--block-size", type=WholeNumber("TOKENS"),
              help="Tokens per KV page (default 1: no paging).")
@click.option("--tflops", type=EXACT, help="Dense bf16 TFLOPS per GPU (for prefill).")
@click.option("--prefix-tokens", type=ContextLength(),
              help=f"Prompt prefix every sequence shares, stored once (prefix caching; "
                   f"{CONTEXT_HELP}).")
@format_options("text", "json", what="What to print: the derivation as text, or one JSON object.")
@click.option("--symbolic", is_flag=True, help="Also print each formula as a sympy expression.")
@click.option("--list-presets", is_flag=True, help="List the model and GPU presets and exit.")
def calc(model: str | None, gpu: str | None, as_json: bool, symbolic: bool,
         list_presets: bool, **options: Any) -> None:
    """The capacity calculator: KV bytes, budget, concurrency and decode speed.

    Every figure is derived with units; every assumption is listed with where it came from.
    Like the calculator that ships with the 70B-on-MI300X exercise, it counts all of HBM and
    no reserve unless told otherwise: pass --utilization and --reserve-gb for a number you
    can provision against. Model names are read as people write them (llama31-8b,
    llama-3.1-8b, Meta-Llama-3.1-8B); --list-presets shows each canonical name.
    """
    from trainer.capacity import presets, solver
    from trainer.views import calc as calc_view

    if list_presets:
        _print_presets(as_json)
        return
    values = {key: value.lower() if key.endswith("dtype") and value else value
              for key, value in options.items()}
    if values.get("batch") is not None and values["batch"] < 1:
        raise UsageError(f"--batch must be at least 1, got {values['batch']}: give the number of "
                         "sequences decoding together, or leave it out for the most that fit")
    model_preset = presets.resolve_model(model) if model is not None else None
    if gpu is not None and not gpu.strip():
        raise UsageError("--gpu names nothing: give a GPU preset (kvdrill calc --list-presets)")
    # A model alone (no card) is still sized: KV per token and per sequence, the weights.
    no_card = gpu is None and values.get("hbm_gb") is None and model_preset is not None
    try:
        deployment, settings = presets.build_deployment(model_preset, gpu, values,
                                                        card_optional=no_card)
    except InvalidInput as error:
        # "hbm_gb must be greater than 0": said as the option the user typed
        field, _, rest = str(error).partition(" ")
        if options.get(field) is not None:
            raise InvalidInput(f"--{field.replace('_', '-')} {rest}") from None
        raise
    _refuse_idle_options(options, deployment, model_preset)
    _refuse_uneven_query_split(deployment)
    gpu_preset = presets.find_gpu(gpu) if gpu else None
    ids = {"model": model_preset.id if model_preset else None,
           "gpu": gpu_preset.id if gpu_preset else None}
    names = {"model": model_preset.name if model_preset else "custom model",
             "gpu": gpu_preset.name if gpu_preset else "custom GPU"}
    notes = calc_view.model_warnings(model_preset, deployment)
    if gpu_preset is not None and gpu_preset.devices > 1:
        from trainer.reading.numbers import format_number

        parts = gpu_preset.devices
        each, speed = (format_number(value / parts, sig=3)
                       for value in (gpu_preset.hbm_gb, gpu_preset.bandwidth_tbs))
        notes.append(f"software sees one {gpu_preset.name} as {parts} GPUs of {each} GB each, "
                     "every one with its own utilisation cap and reserve, and these figures "
                     f"treat it as one device: for a replica on one card give --gpus {parts} "
                     f"--hbm-gb {each} --bandwidth-tbs {speed}")
    try:
        solution = None if no_card else solver.solve(deployment)
    except DoesNotFit as error:
        _sizing_only(deployment, settings, ids, names, model_preset, notes, as_json,
                     str(error))
        raise
    if solution is None:
        _sizing_only(deployment, settings, ids, names, model_preset, notes, as_json, None)
        return
    if as_json:
        _emit(calc_view.calc_json(deployment, solution, settings, ids, notes), model_preset)
        return
    _echo(calc_view.calc_text(deployment, solution, settings, names, screen_width(), notes),
          model_preset, deployment)
    if symbolic:
        echo("\nFormulas:")
        for name in ("kv_bytes_per_token", "kv_bytes_per_sequence", "kv_budget_bytes",
                     "max_concurrency", "decode_step_seconds"):
            echo(f"  {name} = {solver.expression(name, deployment)}")


def _refuse_idle_options(options: dict[str, Any], deployment: Any, model_preset: Any) -> None:
    """An option that would change no figure is refused, naming why, rather than listed among
    the inputs as if it had been used."""
    named = model_preset.name if model_preset is not None else "the model"
    if options.get("window") is not None and not deployment.windowed_layers:
        raise UsageError(f"--window applies to no layer: {named} has no windowed layers; give "
                         "--windowed-layers (how many layers slide) with it")
    experts, per_token = deployment.experts, deployment.experts_per_token
    given = [f"--{name.replace('_', '-')} {options[name]}"
             for name in ("experts", "experts_per_token") if options.get(name) is not None]
    if given and experts is not None and experts == per_token:
        raise UsageError(f"{' '.join(given)}: every expert would be active ({per_token} of "
                         f"{experts} per token); give --experts-per-token below --experts (a "
                         "model that uses every expert is dense: leave both out)")
    if options.get("active_params") is not None and deployment.experts is None:
        raise UsageError(f"--active-params is for MoE models: {named} is dense, every parameter "
                         "is active; give --experts and --experts-per-token with it")


def _sizing_only(deployment: Any, settings: Any, ids: dict[str, str | None],
                 names: dict[str, str], model_preset: Any, notes: list[str], as_json: bool,
                 does_not_fit: str | None) -> None:
    """What the model alone decides, printed when there is no card to size it on or its
    weights overflow the one given (the refusal follows, exit 2)."""
    from trainer.views import calc as calc_view

    if as_json:
        _emit(calc_view.sizing_json(deployment, settings, ids, notes, does_not_fit),
              model_preset)
        return
    _echo(calc_view.sizing_text(deployment, settings, names, screen_width(), notes,
                                does_not_fit), model_preset, deployment)


def _emit(payload: dict[str, Any], model_preset: Any) -> None:
    """The JSON, with where a model read from a config.json came from and how."""
    from trainer.views import calc as calc_view

    if model_preset is not None and model_preset.from_config:
        payload["config"] = calc_view.config_json(model_preset)
    emit_json(payload)


def _echo(text: str, model_preset: Any, deployment: Any) -> None:
    """The text, then the shape a config.json gives and how each field was read."""
    from trainer.views import calc as calc_view

    echo(text)
    if model_preset is not None and model_preset.from_config:
        echo("\n" + calc_view.config_text(model_preset, deployment))


def _print_presets(as_json: bool) -> None:
    from trainer.capacity import presets
    from trainer.reading.numbers import format_number

    models, gpus = presets.models(), presets.gpus()
    if as_json:
        emit_json({
            "models": {key: {"name": m.name, "aliases": list(m.aliases), "source": m.source}
                       for key, m in models.items()},
            "gpus": {key: {"name": g.name, "aliases": list(g.aliases), "source": g.source,
                           "hbm_gb": float(g.hbm_gb),
                           "reported_mib": None if g.reported_mib is None else (
                               int(g.reported_mib) if g.reported_mib == int(g.reported_mib)
                               else float(g.reported_mib)),
                           "reported_source": g.reported_source}
                     for key, g in gpus.items()},
        })
        return
    echo("Models (the canonical name first; llama31-8b or Meta-Llama-3.1-8B also work):")
    for key, m in models.items():
        also = f" (also {', '.join(m.aliases)})" if m.aliases else ""
        # an MLA model caches one latent a layer, no KV heads (its 128 "heads" are the
        # query heads): listing them as KV heads is the trap public presets fall into
        shape = f"MLA latent {m.mla_latent} + {m.mla_rope}" if m.attention == "mla" else \
            f"{m.kv_heads:>3} KV heads × {m.head_dim}"
        echo(f"  {key:<17} {m.layers:>3} layers, {shape} — {m.name}{also}")
    echo("GPUs:")
    for key, g in gpus.items():
        reported = "" if g.reported_mib is None else \
            f" (driver: {format_number(g.reported_mib)} MiB)"
        echo(f"  {key:<17} {float(g.hbm_gb):>5g} GB, {float(g.bandwidth_tbs):g} TB/s — "
                   f"{g.name}{reported}")


def _refuse_uneven_query_split(deployment: Any) -> None:
    """Tensor parallelism splits the query heads too: vLLM and SGLang refuse a degree that
    does not divide them (28 heads over 8 GPUs), whatever the KV heads allow. Under DP
    attention each GPU keeps whole heads."""
    heads, gpus = deployment.heads, deployment.gpus
    if gpus > 1 and not deployment.dp_attention and heads % gpus:
        from trainer.capacity.deployment import tp_degrees

        fits = tp_degrees(heads, None if deployment.attention == "mla" else deployment.kv_heads)
        raise InvalidInput(
            f"{heads} query heads cannot be split over {gpus} GPUs (tensor parallelism needs "
            f"a degree that divides them): give --gpus {' or '.join(map(str, fits))}")
