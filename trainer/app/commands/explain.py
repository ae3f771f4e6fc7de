"""`kvdrill explain LOG`: a serving engine's start-up log, every KV-cache figure in it accounted
for from the model, the card and the settings."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from trainer.app.options import (
    MODEL_HELP,
    WholeNumber,
    complete_presets,
    echo,
    emit_json,
    format_options,
    screen_width,
)
from trainer.errors import UsageError


@click.command()
@click.argument("log_path", metavar="LOG")
@click.option("--model", "model_name", metavar="MODEL", shell_complete=complete_presets,
              help=MODEL_HELP + " Default: the model the log names (a release such as "
                   "…-FP8 or …-AWQ is read as its base model's shape).")
@click.option("--gpu", metavar="NAME", shell_complete=complete_presets,
              help="GPU preset, for the memory the log does not account for.")
@click.option("--tensor-parallel-size", "-tp", type=WholeNumber("N"), help="As given to vLLM.")
@click.option("--pipeline-parallel-size", "-pp", type=WholeNumber("N"), help="As given to vLLM.")
@click.option("--kv-cache-dtype", metavar="DTYPE", help="auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16.")
@click.option("--block-size", type=WholeNumber("TOKENS"), help="Tokens per KV block.")
@click.option("--max-model-len", type=WholeNumber("TOKENS"), help="The request length.")
@click.option("--gpu-memory-utilization", type=click.FloatRange(0, 1, min_open=True),
              help="The fraction of the card vLLM may use.")
@click.option("--practice", "start_practice", is_flag=True,
              help="Then practise paged-blocks-vllm re-targeted at this log's model and card.")
@format_options("text", "md", "json", what="What to print: a table, Markdown or JSON.",
                to="fmt")
def explain(log_path: str, model_name: str | None, gpu: str | None, fmt: str,
            start_practice: bool, **options: Any) -> None:
    """Account for the KV-cache figures of a vLLM (V0 or V1) or SGLang start-up log.

    LOG is a file, or - for standard input. What the log states (its model, tensor and
    pipeline parallel sizes, KV dtype, block size) wins over the options; a conflict is said.
    Each figure: as logged, as expected, whether they agree within the engine's rounding, and
    how the expectation is worked.
    """
    from trainer.capacity import engine_account, presets
    from trainer.files.bounded_io import read_text_bounded
    from trainer.reading.engine_log import MAX_LOG_CHARS, read_log
    from trainer.views import explain as view

    if log_path == "-":
        text = sys.stdin.read(MAX_LOG_CHARS + 1)
        if len(text) > MAX_LOG_CHARS:
            raise UsageError("the log on standard input is over 4 MiB: paste the start-up "
                             "through the KV-cache sizing lines")
    else:
        text = read_text_bounded(Path(log_path), MAX_LOG_CHARS, "log")
    log = read_log(text)
    model, conflict = _model(log_path, log.settings.get("model")
                             or log.settings.get("served_model_name"), model_name)
    gpu_preset = presets.find_gpu(gpu) if gpu else None
    settings = engine_account.settings_of(log, {**options, "model_name": model_name}, model)
    if conflict:
        settings = engine_account.with_conflict(settings, conflict)
    try:
        rows, notes = engine_account.account(log, model, gpu_preset, settings)
    except ValueError as error:
        raise UsageError(f"{log_path}: {error}") from None
    title = (f"{model.name}{' on ' + gpu_preset.name if gpu_preset else ''} · "
             f"{log.engine or 'engine unknown'}{' ' + log.version if log.version else ''} · "
             f"TP {settings.tensor_parallel}, PP {settings.pipeline_parallel}, KV "
             f"{settings.kv_dtype}, block {settings.block_size}")
    chosen = fmt.lower()
    if chosen == "json":
        emit_json(view.explain_json(model.id, gpu_preset.id if gpu_preset else None, settings,
                                    rows, notes, log.engine, log.version))
    elif chosen == "md":
        echo(view.explain_markdown(title, rows, notes), nl=False)
    else:
        echo(view.explain_text(title, rows, notes, screen_width()))
    if start_practice:
        from trainer.app.commands.practice import practice

        target = model.config_path if model.from_config else model.id
        click.get_current_context().invoke(
            practice, drill_id="paged-blocks-vllm", target_model=target,
            target_gpu=gpu_preset.id if gpu_preset else None)


def _model(log_path: str, logged: str | None, option: str | None) -> tuple[Any, str | None]:
    """The model: the log's when it names a preset kvdrill knows (a release's base), else
    --model; a conflict between the two is said."""
    from trainer.capacity import engine_account, presets

    from_log = None
    if logged:
        try:
            from_log = engine_account.base_model(logged, presets.find_model)
        except UsageError:
            from_log = None
    chosen = None
    if option is not None:
        try:
            chosen = presets.resolve_model(option)
        except UsageError:
            chosen = engine_account.base_model(option, presets.find_model)
    if from_log is not None:
        conflict = None
        if chosen is not None and chosen.id != from_log.id:
            conflict = (f"model: the log names {logged} ({from_log.name}), --model {option} "
                        f"({chosen.name}); the log's is used")
        return from_log, conflict
    if chosen is not None:
        return chosen, None
    if logged:
        raise UsageError(f"{log_path}: the log's model {logged!r} is not a preset kvdrill "
                         "knows: give --model (a preset, or the model's config.json)")
    raise UsageError(f"{log_path}: the log does not name its model: give --model")
