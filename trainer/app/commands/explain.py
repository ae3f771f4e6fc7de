"""`kvdrill explain LOG`: a serving engine's start-up log, every KV-cache figure in it accounted
for from the model, the card and the settings."""

from __future__ import annotations

import sys
from typing import Any

import click

from trainer.app.options import (
    MODEL_HELP,
    UnitFraction,
    WholeNumber,
    as_path,
    complete_presets,
    echo,
    emit_json,
    format_options,
    screen_width,
)
from trainer.errors import UsageError

# vLLM's --kv-cache-dtype values kvdrill sizes (engine_account.KV_DTYPE_BYTES)
KV_CACHE_DTYPES = ("auto", "bfloat16", "bf16", "float16", "fp16", "half", "fp8", "fp8_e4m3",
                   "fp8_e5m2", "fp8_inc", "fp8_ds_mla", "float32", "fp32", "int8")


@click.command()
@click.argument("log_path", metavar="LOG")
@click.option("--model", "model_name", metavar="MODEL", shell_complete=complete_presets,
              help=MODEL_HELP + " Default: the model the log names (a release such as "
                   "…-FP8 or …-AWQ is read as its base model's shape).")
@click.option("--gpu", metavar="NAME", shell_complete=complete_presets,
              help="GPU preset, for the memory the log does not account for.")
@click.option("--tensor-parallel-size", "-tp", type=WholeNumber("N", 1, 4096),
              help="As given to vLLM.")
@click.option("--pipeline-parallel-size", "-pp", type=WholeNumber("N", 1, 4096),
              help="As given to vLLM.")
@click.option("--kv-cache-dtype", metavar="DTYPE",
              type=click.Choice(KV_CACHE_DTYPES, case_sensitive=False),
              help="auto, fp8, fp8_e4m3, fp8_e5m2, bfloat16 (as given to vLLM).")
@click.option("--block-size", type=WholeNumber("TOKENS", 1, 1_000_000),
              help="Tokens per KV block.")
@click.option("--max-model-len", type=WholeNumber("TOKENS", 1, 2**31),
              help="The request length.")
@click.option("--gpu-memory-utilization", type=UnitFraction(),
              help="The fraction of the card vLLM may use (above 0, at most 1).")
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

    if start_practice and fmt.lower() == "json":
        raise UsageError("--practice starts a practice session, which is no JSON: drop --json "
                         "(--format json) to practise, or --practice to keep the JSON")
    if start_practice and fmt.lower() != "text":
        # the session would land in the same standard output as the document
        raise UsageError(f"--practice starts a practice session, which is no {fmt.lower()} "
                         f"document: drop --format {fmt.lower()} to practise, or --practice "
                         "to keep the document")
    if log_path == "-":
        text = sys.stdin.read(MAX_LOG_CHARS + 1)
        if len(text) > MAX_LOG_CHARS:
            raise UsageError("the log on standard input is over 4 MiB: paste the start-up "
                             "through the KV-cache sizing lines")
    else:
        # a path that is no readable regular file (a FIFO, a folder, a device, binary, too
        # large) is misuse, as it is for every command that reads a file
        path = as_path(log_path, what="the log's path, or - for standard input")
        text = read_text_bounded(path, MAX_LOG_CHARS, "log", UsageError)
    if gpu is not None and not gpu.strip():
        raise UsageError("--gpu names nothing: give a GPU preset (kvdrill calc --list-presets)")
    log = read_log(text)
    if log.mixed is not None:
        raise UsageError(f"{log_path}: {log.mixed}")
    model, model_notes, weights_differ = _model(
        log_path, log.settings.get("model") or log.settings.get("served_model_name"),
        model_name)
    gpu_preset = presets.find_gpu(gpu) if gpu is not None else None
    settings = engine_account.settings_of(log, {**options, "model_name": model_name}, model)
    for note in model_notes:
        settings = engine_account.with_conflict(settings, note)
    if weights_differ:
        settings = engine_account.with_weights_differ(settings, weights_differ)
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


def _model(log_path: str, logged: str | None,
           option: str | None) -> tuple[Any, list[str], str | None]:
    """The model, what is said of how it was resolved, and why its weight size is not the
    preset's (a release with other weights). The log's model wins when kvdrill knows it (a
    preset, a quantised copy of one, a release in release_names), and a conflict with --model
    is said; else --model (a preset, a release, a config.json). A name kvdrill cannot be sure
    of is refused, saying what to give."""
    from trainer.capacity import presets, release_names

    notes: list[str] = []
    from_log = None
    log_release = None
    if logged:
        try:
            from_log, log_release = release_names.resolve(logged, presets.find_model)
        except UsageError:
            from_log = None
    chosen = None
    release = None
    if option is not None:
        chosen, release = _option_model(option)
    if from_log is not None:
        if chosen is not None and from_log.id != chosen.id:
            notes.append(f"model: the log names {logged} ({from_log.name}), --model {option} "
                         f"({chosen.name}); the log's is used")
        return from_log, notes + _release_notes(logged, log_release), \
            _weights_differ(log_release)
    if chosen is not None:
        if logged:
            notes.append(f"model: the log names {logged}, which kvdrill does not know; "
                         f"--model {option} ({chosen.name}) is used")
        if option is not None and presets.looks_like_path(option) and not chosen.from_config:
            notes.append(f"model: {option} is not a folder here; read by its name as "
                         f"{chosen.name}")
        return chosen, notes + _release_notes(option, release), _weights_differ(release)
    if logged:
        try:
            release_names.resolve(logged, presets.find_model)
        except UsageError as error:
            raise UsageError(f"{log_path}: the log's {error}") from None
    raise UsageError(f"{log_path}: the log does not name its model: give --model (a preset, "
                     "a Hugging Face id of one, or the model's config.json)")


def _option_model(option: str) -> tuple[Any, Any]:
    """The model --model names, and the release entry that says why (None when it names a
    preset or a config.json). Refused as calc refuses it: the config reader's own message for
    a path or a config it cannot read, and a release kvdrill does not know for a name; a
    config whose weights kvdrill cannot size (bitsandbytes, compressed-tensors, …) too."""
    from trainer.capacity import presets, release_names
    from trainer.errors import UnknownName

    try:
        chosen, release = presets.resolve_model(option), None
    except UsageError as error:
        text = option.strip()
        hub_id = text.count("/") == 1 and "\\" not in text and \
            not text.startswith(("~", ".", "/")) and not text.lower().endswith(".json")
        # A folder on the server the log came from (/mnt/models/Qwen3-30B-A3B), which is not
        # here: read by its name, as the log's own model path is, and said so.
        server_path = "no such file" in str(error) and not text.lower().endswith(".json")
        by_name = (isinstance(error, UnknownName) and text and not presets.looks_like_path(text)) \
            or (hub_id and "no such file" in str(error)) or server_path
        if not by_name:
            raise
        try:
            chosen, release = release_names.resolve(option, presets.find_model)
        except UsageError as second:
            if server_path and not hub_id:
                raise error from None  # neither here nor a name kvdrill knows: calc's refusal
            raise second from None
    if chosen.weights_unknown:
        raise UsageError(chosen.weights_unknown.split(": give --weights-gb")[0] + ": kvdrill "
                         "explain cannot size its weights; give a preset or a config.json "
                         "whose weights kvdrill can size")
    return chosen, release


def _release_notes(name: str | None, release: Any) -> list[str]:
    if release is None or name is None:
        return []
    return [f"model: {name} has {release.preset}'s KV geometry ({release.checked})"]


def _weights_differ(release: Any) -> str | None:
    return None if release is None else release.weights_differ
