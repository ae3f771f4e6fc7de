"""The kvdrill command line: the only module that imports click.

Commands import what they need when they run, so `kvdrill --help` stays fast; the project's
errors become one `Error:` line and an exit code (1: the request failed, 2: misused).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

import click

if TYPE_CHECKING:  # only for annotations: start-up imports as little as it can
    from collections.abc import Iterator, Sequence
    from pathlib import Path

from trainer import __version__
from trainer.errors import KvdrillError
from trainer.printable import json_text, printable

KV_DTYPE_CHOICES = ("fp32", "bf16", "fp16", "fp8", "int8")
WEIGHT_DTYPE_CHOICES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4")


class ExactNumber(click.ParamType):  # type: ignore[type-arg]
    """A decimal number kept exact (3.35 stays 335/100); refuses nan, inf and junk."""

    name = "NUMBER"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from fractions import Fraction

        if isinstance(value, Fraction):
            return value
        text = str(value).strip().replace("_", "")
        if len(text) > 40:
            self.fail("is too long to be a number", param, ctx)
        try:
            number = Fraction(text)
        except (ValueError, ZeroDivisionError):
            self.fail(f"{value!r} is not a number (write e.g. 80 or 3.35)", param, ctx)
        if number and not Fraction(1, 10**30) <= abs(number) <= 10**30:
            # 1e400 or 1e-320 would overflow the figures printed; no model or GPU is near them.
            self.fail(f"{value!r} is out of range: write a number between 1e-30 and 1e30",
                      param, ctx)
        return number


class ParamCount(ExactNumber):
    """A parameter count: 8030261248, 8.03e9, 8.03B or 70B (B = billion, M = million)."""

    name = "COUNT"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip()
        scale = {"b": 10**9, "m": 10**6, "t": 10**12}.get(text[-1:].lower())
        if scale is not None:
            return super().convert(text[:-1], param, ctx) * scale
        count = super().convert(text, param, ctx)
        if count < 10**5:
            self.fail(
                f"{value!r} is too small for a parameter count: write 8.03B or 8030261248",
                param,
                ctx,
            )
        return count


EXACT = ExactNumber()


class WholeNumber(click.ParamType):  # type: ignore[type-arg]
    """A whole number within bounds; its help shows a name (LAYERS, SEED), not a range."""

    def __init__(self, name: str, least: int | None = None, most: int | None = None) -> None:
        self.name, self.least, self.most = name, least, most

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, int):
            number = value
        else:
            text = str(value).strip().replace("_", "").replace(",", "")
            if len(text) > 40 or not text.lstrip("+-").isascii() or \
                    not text.lstrip("+-").isdigit():
                self.fail(f"{str(value)[:40]!r} is not a whole number (write e.g. 8)", param, ctx)
            number = int(text)
        if (self.least is not None and number < self.least) or \
                (self.most is not None and number > self.most):
            upper = "" if self.most is None else f" and at most {self.most:,}"
            self.fail(f"{number} is out of range: give a whole number of at least "
                      f"{self.least}{upper}", param, ctx)
        return number


class ContextLength(WholeNumber):
    """A length in tokens as people say it: 4096, 4k (4,096), 32k, 128k (131,072), 1M."""

    def __init__(self, name: str = "TOKENS") -> None:
        super().__init__(name)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        text = str(value).strip()
        scale = {"k": 1024, "m": 1024**2}.get(text[-1:].lower())
        if scale is None or isinstance(value, int):
            return super().convert(value, param, ctx)
        from fractions import Fraction

        try:
            tokens = Fraction(text[:-1].strip()) * scale if len(text) <= 20 else None
        except (ValueError, ZeroDivisionError):
            tokens = None
        if tokens is None or tokens.denominator != 1:
            self.fail(f"{text[:40]!r} is not a token count (write e.g. 4096, 4k or 128k)",
                      param, ctx)
        return super().convert(int(tokens), param, ctx)


SEED = WholeNumber("SEED", 0, 2**63 - 1)
CONTEXT_HELP = "4k = 4,096 and 128k = 131,072 tokens"


def _chosen_format(fmt: str | None, json_shorthand: bool, default: str) -> str:
    if json_shorthand and fmt not in (None, "json"):
        raise click.UsageError(f"--json is short for --format json: give one of --json and "
                               f"--format {fmt}")
    return "json" if json_shorthand else (fmt or default).lower()


def _format_options(*choices: str, what: str, to: str = "as_json") -> Callable[[Any], Any]:
    """The one output rule of every command: --format names what is printed or written (the
    first choice is the default) and --json is short for --format json. The command receives
    `as_json` (a bool) or, with to="fmt", the format's name."""
    import functools

    def decorate(function: Any) -> Any:
        @functools.wraps(function)
        def command(*args: Any, fmt: str | None = None, json_shorthand: bool = False,
                    **kwargs: Any) -> Any:
            chosen = _chosen_format(fmt, json_shorthand, choices[0])
            kwargs[to] = chosen == "json" if to == "as_json" else chosen
            return function(*args, **kwargs)

        command = click.option("--json", "json_shorthand", is_flag=True,
                               help="Short for --format json.")(command)
        return click.option("--format", "fmt", type=click.Choice(choices, case_sensitive=False),
                            help=f"{what}  [default: {choices[0]}]")(command)

    return decorate


def _attempt_id(text: str) -> int:
    """An attempt id as `kvdrill history` shows it (digits 0-9). A number no attempt can have
    is StoreError "no attempt …" (exit 1, as for an id not in the store); anything else is
    a usage error (exit 2) that also says "no attempt"."""
    from trainer.errors import StoreError, UsageError

    shown = text if len(text) <= 30 else text[:29] + "…"
    stripped = text.strip()
    if not stripped.isascii() or not stripped.isdigit():
        raise UsageError(f"no attempt {shown!r}: an attempt ID is a number written with the "
                         "digits 0-9, as kvdrill history shows it (e.g. 3)")
    if len(stripped.lstrip("0")) > 19:
        raise StoreError(f"no attempt {shown}: see kvdrill history")
    return int(stripped)


class AttemptId(click.ParamType):  # type: ignore[type-arg]
    """An attempt id: see _attempt_id."""

    name = "ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if isinstance(value, int) else _attempt_id(str(value))


def _complete_drills(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a DRILL: the shipped drill ids."""
    from trainer.files import paths as datadirs

    try:
        ids = sorted(path.stem for path in datadirs.drill_paths())
    except KvdrillError:
        return []
    return [drill for drill in ids if drill.startswith(incomplete)]


def _complete_presets(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of --model or --gpu: the canonical preset names."""
    from trainer.capacity import presets

    table = presets.gpus() if param.name == "gpu" else presets.models()
    return [name for name in table if name.startswith(incomplete.lower())]


def _fail_line(message: str, code: int) -> None:
    echo(f"Error: {printable(message, keep_lines=False)}", err=True)
    sys.exit(code)


class KvdrillGroup(click.Group):
    """A click group whose every failure is one line on stderr with a meaningful exit code."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, complete_var, False, **extra)
        given = sys.argv[1:] if args is None else list(args)
        if any("\udc80" <= c <= "\udcff" for arg in given for c in arg):
            # Bytes that are not UTF-8 reach Python as lone surrogates, which nothing can
            # print or store.
            _fail_line("an argument holds bytes that are not UTF-8 text: retype it", 2)
        try:
            result = super().main(args, prog_name, complete_var, False, **extra)
        except click.UsageError as error:
            where = f" (see '{error.ctx.command_path} --help')" if error.ctx else ""
            _fail_line(f"{error.format_message()}{where}", 2)
        except click.ClickException as error:
            _fail_line(error.format_message(), error.exit_code)
        except click.Abort:
            _fail_line("aborted; nothing already saved was lost", 1)
        except KvdrillError as error:
            _fail_line(str(error), error.exit_code)
        except BrokenPipeError:
            sys.stderr.close()  # the reader went away (| head); nothing to say
            sys.exit(1)
        except OSError as error:
            name = f" {error.filename}" if error.filename else ""
            _fail_line(f"cannot use{name}: {error.strerror or error}", 1)
        except Exception as error:
            if os.environ.get("KVDRILL_DEBUG"):
                raise
            _fail_line(
                f"internal error ({type(error).__name__}: {error}); "
                "rerun with KVDRILL_DEBUG=1 for details and report it",
                1,
            )
        sys.exit(result if isinstance(result, int) else 0)


@click.group(cls=KvdrillGroup, invoke_without_command=True,
             context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="kvdrill")
@click.pass_context
def cli(ctx: click.Context) -> None:
    """kvdrill: timed drills for the numbers of LLM-serving interviews.

    KV-cache bytes per token, how many users a GPU holds after weights and headroom, what a
    decode step costs, which lever doubles capacity. Start with `kvdrill list`, then
    `kvdrill practice ID`; `kvdrill calc` gives any number directly.
    """
    if ctx.invoked_subcommand is None:
        echo(ctx.get_help())


def echo(message: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """click.echo for text: no control character from an answer, a drill file or an error
    reaches the terminal (JSON has its own escaping, in _emit_json)."""
    click.echo(printable(str(message)), err=err, nl=nl)


def _emit_json(payload: Any) -> None:
    click.echo(json_text(payload))


def _write(text: str, out: str | None) -> None:
    """Print `text` (also for `--out -`), or write it to the file `out` and say so on stderr.
    Written files keep the text as it is (an HTML report escapes its own); printed text is
    made safe for the terminal."""
    if out is None or out == "-":
        echo(text, nl=not text.endswith("\n"))
        return
    from trainer.app.outfiles import write_output
    from trainer.store.database import default_path

    write_output(_path(out), text, protected=[default_path()])
    echo(f"Wrote {out}", err=True)


def _path(value: str) -> Path:
    from pathlib import Path

    return Path(value)


@cli.command()
@click.option("--model", "--preset", "model", metavar="NAME", shell_complete=_complete_presets,
              help="Model preset (e.g. llama-3.1-8b, also written llama31-8b or "
                   "Meta-Llama-3.1-8B); options below override it.")
@click.option("--layers", type=WholeNumber("LAYERS"), help="Transformer layers.")
@click.option("--heads", type=WholeNumber("HEADS"), help="Query (attention) heads.")
@click.option("--kv-heads", type=WholeNumber("HEADS"),
              help="Key/value heads (GQA; = heads for MHA, 1 for MQA).")
@click.option("--head-dim", type=WholeNumber("DIMS"),
              help="Elements per head (from the config, not hidden/heads).")
@click.option("--hidden", type=WholeNumber("DIMS"), help="Hidden size d_model.")
@click.option("--params", type=ParamCount(), help="Parameter count: 8.03B or 8030261248.")
@click.option("--weights-gb", type=EXACT, help="Weight size in GB (10^9 B), at --weights-dtype.")
@click.option("--window", type=ContextLength(),
              help=f"Sliding-window size in tokens ({CONTEXT_HELP}).")
@click.option("--windowed-layers", type=WholeNumber("LAYERS"),
              help="How many layers use the sliding window.")
@click.option("--active-params", type=ParamCount(),
              help="MoE: parameters each token uses (e.g. 12.9B).")
@click.option("--experts", type=WholeNumber("EXPERTS"), help="MoE: routed experts per layer.")
@click.option("--experts-per-token", type=WholeNumber("EXPERTS"),
              help="MoE: experts each token is routed to.")
@click.option("--gpu", metavar="NAME", shell_complete=_complete_presets,
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
@_format_options("text", "json", what="What to print: the derivation as text, or one JSON object.")
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
    deployment, settings = presets.build_deployment(model, gpu, values)
    solution = solver.solve(deployment)
    model_preset = presets.find_model(model) if model else None
    gpu_preset = presets.find_gpu(gpu) if gpu else None
    if as_json:
        ids = {"model": model_preset.id if model_preset else None,
               "gpu": gpu_preset.id if gpu_preset else None}
        _emit_json(calc_view.calc_json(deployment, solution, settings, ids))
        return
    names = {"model": model_preset.name if model_preset else "custom model",
             "gpu": gpu_preset.name if gpu_preset else "custom GPU"}
    echo(calc_view.calc_text(deployment, solution, settings, names))
    if symbolic:
        echo("\nFormulas:")
        for name in ("kv_bytes_per_token", "kv_bytes_per_sequence", "kv_budget_bytes",
                     "max_concurrency", "decode_step_seconds"):
            echo(f"  {name} = {solver.expression(name, deployment)}")


def _print_presets(as_json: bool) -> None:
    from trainer.capacity import presets

    models, gpus = presets.models(), presets.gpus()
    if as_json:
        _emit_json({
            "models": {key: {"name": m.name, "aliases": list(m.aliases), "source": m.source}
                       for key, m in models.items()},
            "gpus": {key: {"name": g.name, "aliases": list(g.aliases), "source": g.source,
                           "hbm_gb": float(g.hbm_gb),
                           "reported_mib": None if g.reported_mib is None else int(g.reported_mib),
                           "reported_source": g.reported_source}
                     for key, g in gpus.items()},
        })
        return
    echo("Models (the canonical name first; llama31-8b or Meta-Llama-3.1-8B also work):")
    for key, m in models.items():
        also = f" (also {', '.join(m.aliases)})" if m.aliases else ""
        echo(f"  {key:<16} {m.layers:>3} layers, {m.kv_heads:>3} KV heads × "
                   f"{m.head_dim} — {m.name}{also}")
    echo("GPUs:")
    for key, g in gpus.items():
        reported = "" if g.reported_mib is None else f" (driver: {int(g.reported_mib):,} MiB)"
        echo(f"  {key:<16} {float(g.hbm_gb):>5g} GB, {float(g.bandwidth_tbs):g} TB/s — "
                   f"{g.name}{reported}")


def _variant_option(function: Any) -> Any:
    return click.option("--variant", type=SEED,
                        help="Use interviewer variant SEED instead of the drill's own givens.")(
        function)


@cli.command(name="list")
@_format_options("text", "json", what="What to print: a table, or a JSON array.")
def list_drills(as_json: bool) -> None:
    """List the drills: id, title, target minutes and tags."""
    from trainer.drills import catalog

    drills = catalog.drill_list()
    if as_json:
        _emit_json(drills)
        return
    width = max((len(d["id"]) for d in drills), default=10)
    for d in drills:
        echo(f"{d['id']:<{width}}  {d['minutes']:>3} min  {d['title']}  "
                   f"[{', '.join(d['tags'])}]")


@cli.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=_complete_drills)
@_variant_option
@_format_options("text", "json", what="What to print: text, or one JSON object.")
def show(drill_id: str, variant: int | None, as_json: bool) -> None:
    """Show a drill as the candidate sees it: the situation and every question, no answers."""
    from trainer.drills import loader, variants
    from trainer.views import sheets

    drill, _ = loader.find_drill(drill_id)
    key = variants.answer_key(drill, variant)
    if as_json:
        _emit_json(sheets.drill_json(key, variant))
    else:
        echo(sheets.drill_text(key, variant))


@cli.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=_complete_drills)
@click.option("--answers", "answers_path", required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="YAML file mapping step id to the answer as typed (1a: 44 GB).")
@_variant_option
@_format_options("text", "json", what="What to print: text, or one JSON object.")
def grade(drill_id: str, answers_path: str, variant: int | None, as_json: bool) -> None:
    """Grade an answer sheet: every step checked, mistakes named, the rubric scored.

    Exits 0 when every numeric answer is correct, 1 otherwise.
    """
    from trainer.drills import loader, variants
    from trainer.marking import grading

    drill, _ = loader.find_drill(drill_id)
    key = variants.answer_key(drill, variant)
    sheet = grading.read_sheet(_path(answers_path), drill)
    graded = grading.grade(drill, key, sheet, variant)
    if as_json:
        _emit_json(grading.graded_json(graded))
    else:
        echo(grading.graded_text(graded))
    if not graded.all_numeric_correct:
        sys.exit(1)


@cli.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=_complete_drills)
@_variant_option
@click.option("--format", "fmt", type=click.Choice(["md", "text"], case_sensitive=False),
              default="md", help="What to print: Markdown, or text wrapped for the terminal.  "
                                 "[default: md]")
def solution(drill_id: str, variant: int | None, fmt: str) -> None:
    """Print the worked solution of a drill (or of one of its variants), with its numbers."""
    from trainer.drills import loader, render, variants

    drill, _ = loader.find_drill(drill_id)
    text = render.render_solution(variants.answer_key(drill, variant))
    if fmt.lower() == "text":
        import shutil

        from trainer.views import terminal_text

        width = max(40, min(100, shutil.get_terminal_size().columns - 2))
        text = terminal_text.plain(terminal_text.render(text, width)) + "\n"
    echo(text, nl=False)


@cli.command()
@click.argument("paths", nargs=-1, type=click.Path())
@_format_options("text", "json", what="What to print: the findings as text, or JSON.")
def lint(paths: tuple[str, ...], as_json: bool) -> None:
    """Check drill and rubric files: schema, cross-references, values, solutions.

    With no PATH, checks every shipped drill, rubric and solution template. Exits 1 when any
    file has an error.
    """
    from trainer.drills import lint as linting

    files = [_path(path) for path in paths]
    for file in files:
        if not file.exists():
            raise click.BadParameter(f"{file} does not exist", param_hint="PATH")
    reports = linting.lint_paths(files)
    if as_json:
        _emit_json([{"path": str(r.path), "ok": r.ok, "errors": r.errors,
                     "warnings": r.warnings} for r in reports])
    else:
        for report in reports:
            echo(f"{'ok  ' if report.ok else 'FAIL'} {report.path}")
            for error in report.errors:
                echo(f"  error: {error}")
            for warning in report.warnings:
                echo(f"  warning: {warning}")
    if not all(r.ok for r in reports):
        sys.exit(1)


@cli.command()
@click.option("--rubric", is_flag=True, help="The schema of rubric files instead of drills.")
@_format_options("json", what="What to print: the JSON Schema (the one format).")
def schema(rubric: bool, as_json: bool) -> None:
    """Print the JSON Schema of drill files (or rubric files), for editors to validate with."""
    from trainer.drills import model

    cls = model.Rubric if rubric else model.Drill
    _emit_json(cls.model_json_schema(by_alias=True))


@cli.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=_complete_drills, required=False)
@click.option("--exam", is_flag=True, help="No feedback or hints until the end (interviews).")
@click.option("--strict", is_flag=True, help="A step whose time runs out closes unanswered.")
@_variant_option
@click.option("--random", "random_variant", is_flag=True, help="Practise a random variant.")
@click.option("--resume", type=AttemptId(), metavar="ID",
              help="Continue attempt ID where it stopped.")
@click.option("--weak", is_flag=True,
              help="A short session on the skills you miss most, with new numbers.")
@click.option("--steps", "weak_steps", type=WholeNumber("N", 1, 20), default=6, show_default=True,
              metavar="N", help="How many steps --weak asks.")
def practice(drill_id: str | None, exam: bool, strict: bool, variant: int | None,
             random_variant: bool, resume: int | None, weak: bool, weak_steps: int) -> None:
    """Practise a drill, timed, one step at a time; every answer is saved as you give it.

    In a terminal: Enter starts the clock once you have read the givens; a live countdown and
    commands (? hint, :skip, :back, :formula, :givens, :help, :quit); an answer that cannot be
    read is asked again. Through a pipe: one answer per line in step order (an unreadable line
    is recorded as invalid); at end of input the attempt is saved with the rest unanswered.
    With --weak (and no DRILL): a short session on the skills you miss most, new numbers.
    """
    import random
    import time

    from trainer.app import session
    from trainer.drills import loader, variants
    from trainer.store import database as store

    if weak and (drill_id or resume is not None or variant is not None or random_variant):
        raise click.UsageError("--weak builds its own session: give it without DRILL, "
                               "--resume, --variant or --random")
    steps_source = click.get_current_context().get_parameter_source("weak_steps")
    if not weak and steps_source is not None and steps_source.name == "COMMANDLINE":
        raise click.UsageError("--steps goes with --weak (kvdrill practice --weak --steps N)")
    db = store.Store()
    if weak:
        drill, key, attempt_id = _weak_session(db, weak_steps, exam=exam, strict=strict)
    elif resume is not None:
        attempt = db.attempt(resume)
        imported = db.imports([resume]).get(resume)
        if imported is not None:
            from trainer.errors import KvdrillError

            raise KvdrillError(f"attempt {resume} is an imported transcript (candidate "
                               f"{imported.candidate}): it cannot be resumed; kvdrill review "
                               f"{resume} shows it")
        if drill_id and drill_id != attempt.drill_id:
            raise click.BadParameter(f"attempt {resume} is of drill {attempt.drill_id}",
                                     param_hint="DRILL")
        from trainer.store import transcripts

        try:
            drill, note = transcripts.drill_for(transcripts.attempt_meta(attempt))
        except transcripts.DrillUnavailable as error:
            raise transcripts.DrillUnavailable(
                f"attempt {resume} cannot be resumed: {error}; kvdrill export {resume} shows "
                "its answers as recorded") from None
        if note:
            echo(f"Note: {note}.", err=True)
        variant = attempt.variant
        key = variants.answer_key(drill, variant)
        attempt_id = resume
        exam, strict = attempt.mode == "exam", attempt.strict
    else:
        if not drill_id:
            raise click.UsageError("name a DRILL (see kvdrill list) or give --resume ID")
        drill, path = loader.find_drill(drill_id)
        if random_variant:
            variant = random.SystemRandom().randrange(1, 10**6)
        key = variants.answer_key(drill, variant)
        attempt_id = session.new_attempt(db, key, path, variant, exam=exam, strict=strict)
    piped = not sys.stdin.isatty()
    ask: Callable[[Any], str | None]
    ready: Callable[[str], bool] | None = None
    say: Callable[[str], None] = echo
    if piped:
        ask = _piped_ask
    else:
        from trainer.app import tui

        ask, ready, say = tui.make_ask(), tui.make_ready(), tui.make_say()
    # A terminal asks again after an unreadable answer and starts the clock on Enter; a pipe
    # keeps one line per step (an unreadable line is recorded invalid) and never waits.
    run = session.Session(key, db, attempt_id, ask=ask, say=say, clock=time.monotonic,
                          exam=exam, strict=strict, reask_unreadable=not piped, ready=ready)
    if resume is None or not piped:
        run.introduce()
    if resume is not None:  # in a terminal, just above "Press Enter to start the clock"
        echo(f"Resuming attempt {attempt_id} of {drill.id} at step "
                   f"{run.first_open_step() + 1}.")
    finished = run.run()
    if finished:
        from trainer.store import kept_marks as progress

        progress.keep_finished(db, attempt_id)
    if finished or piped:
        echo("")
        echo(session.summary(run, None if piped else tui.terminal_width()))
        chosen = f" --variant {variant}" if variant is not None else ""
        if drill.id == weak_drill_id():  # a session of its own: no worked solution to show
            echo(f"\nAttempt {attempt_id} saved. kvdrill review {attempt_id} · "
                 f"kvdrill export {attempt_id}")
        else:
            echo(f"\nAttempt {attempt_id} saved. kvdrill export {attempt_id} · "
                       f"kvdrill solution {drill.id}{chosen}")
        if finished and not piped and drill.id != weak_drill_id() and click.confirm(
                "Show the worked solution?", default=False):
            from trainer.drills import render

            tui.show_markdown(render.render_solution(key))
    db.close()


def weak_drill_id() -> str:
    return "weak-skills"  # trainer.app.weak.DRILL_ID, without importing it at start-up


def _weak_session(db: Any, steps: int, *, exam: bool, strict: bool) -> tuple[Any, Any, int]:
    """Build a weak-skill session (trainer.app.weak) as a drill file, load it like any drill and
    start its attempt, which keeps the file's text: (drill, key, attempt id)."""
    import random
    import tempfile

    from trainer.app import session, weak
    from trainer.drills import loader
    from trainer.drills.reference import AnswerKey
    from trainer.store import kept_marks as progress

    cards = progress.Keeper(db).skill_cards()
    text = weak.build(cards, steps, random.Random(random.SystemRandom().randrange(2**63)))
    with tempfile.TemporaryDirectory(prefix="kvdrill-weak-") as folder:
        path = _path(folder) / f"{weak.DRILL_ID}.yaml"
        path.write_text(text, encoding="utf-8")
        drill = loader.load_drill_file(path)
        key = AnswerKey(drill)
        attempt_id = session.new_attempt(db, key, path, None, exam=exam, strict=strict)
    return drill, key, attempt_id


def _piped_ask(prompt: Any) -> str | None:
    """The next line of standard input, one per step. Bytes that are not UTF-8 are read as
    U+FFFD, and a line is read only up to just past the longest answer allowed, the rest
    of it discarded, so no input can fill memory."""
    from trainer.marking.grading import MAX_ANSWER_CHARS

    stdin = sys.stdin
    if hasattr(stdin, "reconfigure") and stdin.errors != "replace":
        stdin.reconfigure(errors="replace")
    line = stdin.readline(MAX_ANSWER_CHARS + 1)
    if not line:
        return None
    rest = line
    while not rest.endswith("\n") and len(rest) == MAX_ANSWER_CHARS + 1:
        rest = stdin.readline(MAX_ANSWER_CHARS + 1)  # the tail of an overlong line, dropped
    answer = line.rstrip("\r\n")
    shown = answer if len(answer) <= 200 else answer[:199] + "…"
    unit = f" [{prompt.step.unit}]" if prompt.step.unit else ""
    # A transcript: the question as a terminal shows it, then the answer read for it.
    echo(f"\n{prompt.number}. {prompt.text}{unit}\n{prompt.step.id}> {shown}")
    return answer


@cli.command()
@click.option("--drill", "drill_id", metavar="ID", help="Only attempts of this drill.")
@click.option("--limit", type=WholeNumber("N", 1), default=20, show_default=True,
              help="Show the newest N attempts.")
@click.option("--all", "show_all", is_flag=True, help="Show every attempt (overrides --limit).")
@_format_options("text", "json", what="What to print: a table and trends, or a JSON array.")
def history(drill_id: str | None, limit: int, show_all: bool, as_json: bool) -> None:
    """List your attempts, newest first: drill, variant, when, status, answered, scores; then
    each drill's trend over its latest complete attempts. Incomplete attempts are listed, not
    scored."""
    from trainer.store import database as store
    from trainer.store import kept_marks as progress

    db = store.Store(read_only=True)
    keeper = progress.Keeper(db)
    try:
        if drill_id is not None and not db.count_attempts(drill_id):
            _known_drill_or_exit(drill_id, set(db.drill_ids()))
        total = db.count_attempts(drill_id)
        batches = progress.chunked(db.iter_attempts(drill_id, limit=None if show_all else limit),
                                   200)
        if as_json:
            _emit_json_rows(row for batch in batches for row in keeper.summaries(batch))
            return
        if not total:
            echo("No attempts yet: kvdrill practice DRILL")
            return
        shown = 0
        for batch in batches:
            for row in keeper.summaries(batch):
                echo(_history_line(row))
                shown += 1
        if shown < total:
            echo(f"({shown} of {total} attempts; --all or --limit N shows more)")
        trends = keeper.trends(None if drill_id is None else [drill_id])
    finally:
        keeper.close()
        db.close()
    if trends:
        echo(f"\nTrends (complete attempts, oldest → newest, at most {progress.TREND_POINTS}):")
        for line in progress.trend_lines(trends):
            echo(f"  {line}")


def _history_line(row: dict[str, Any]) -> str:
    if row["scored"]:
        detail = " ".join(f"{k}={v:g}" for k, v in row["scores"].items())
    elif row["status"] == "complete":
        detail = str(row["note"])
    else:
        detail = "not scored"
    if row.get("candidate") is not None:
        detail = f"[candidate {row['candidate']}] {detail}"
    return (f"{row['id']:>4}  {row['started_at'][:16]}  {row['drill']:<22} "
            f"{row['status']:<10} {row['answered']:>2} answered  {detail}")


def _emit_json_rows(rows: Iterator[dict[str, Any]]) -> None:
    """A JSON array written a row at a time, so a long history is never held at once."""
    first = True
    for row in rows:
        click.echo(("[\n" if first else ",\n") + _indented(json_text(row)), nl=False)
        first = False
    click.echo("[]" if first else "\n]")


def _indented(text: str) -> str:
    return "\n".join("  " + line for line in text.splitlines())


def _known_drill_or_exit(drill_id: str, stored: set[str]) -> None:
    """`history --drill ID` with no attempts: fine for a drill that exists; otherwise a usage
    error naming the nearest drill ids (shipped or in the store)."""
    import difflib

    from trainer.errors import KvdrillError, UnknownName
    from trainer.files import paths as datadirs

    try:
        shipped = {path.stem for path in datadirs.drill_paths()}
    except KvdrillError:
        shipped = set()
    if drill_id in shipped or drill_id in stored:
        return
    near = difflib.get_close_matches(drill_id, sorted(shipped | stored), n=3, cutoff=0.4)
    hint = f"did you mean {', '.join(near)}?" if near else "see kvdrill list"
    shown = drill_id if len(drill_id) <= 60 else drill_id[:59] + "…"
    raise UnknownName(f"--drill: unknown drill {shown!r}: {hint}")


@cli.command()
@click.argument("attempt_id", type=AttemptId(), metavar="ID")
@_format_options("json", "md", what="What to write: the transcript as JSON, or Markdown.",
                 to="fmt")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write to this file ('-': standard output, the default).")
def export(attempt_id: int, fmt: str, out: str | None) -> None:
    """Write the full transcript of an attempt: every answer as typed, verdicts, times."""
    from trainer.store import database as store
    from trainer.store import transcripts

    db = store.Store(read_only=True)
    transcript = transcripts.transcript(db, attempt_id, unmarked_ok=True)
    db.close()
    text = json_text(transcript) if fmt == "json" else transcripts.markdown(transcript)
    _write(text + "\n", out)


@cli.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=_complete_drills)
@click.option("--count", type=WholeNumber("N", 1, 500), default=5, show_default=True,
              help="How many variants to draw (1 to 500).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="The draw's seed: the same seed gives byte-identical files.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Folder for the files, created if missing ('-': standard output).")
@_format_options("md", "html", "json",
                 what="What to write: a sheet and a key per variant in Markdown or HTML, or "
                      "the variants' parameters and answers as JSON.", to="fmt")
def variants(drill_id: str, count: int, seed: int, out_dir: str | None, fmt: str) -> None:
    """Draw interviewer variants: a sheet for the candidate and a key for you, per variant.

    Each variant is physically sensible (the weights fit, at least one sequence fits) and
    differs from the others. With --out DIR: <drill>-<variant>-sheet and -key in the format
    chosen (or <drill>-variants.json), and -answers.yaml, the key as a sheet for
    `kvdrill grade --variant`. Without --out (or with '-'), Markdown or JSON is printed.
    """
    from trainer.app.outfiles import write_output
    from trainer.drills import loader
    from trainer.drills.reference import AnswerKey
    from trainer.views import keys

    drill, _ = loader.find_drill(drill_id)
    folder = None if out_dir in (None, "-") else _path(out_dir)
    if folder is None and fmt == "html":
        raise click.UsageError("HTML is written as files, a sheet and a key per variant: "
                               "give --out DIR")
    chosen = keys.pick_variants(drill, count, seed)
    payload: dict[str, Any] = {"drill": drill.id, "seed": seed, "variants": []}
    printed: list[str] = []
    if folder is not None:
        folder.mkdir(parents=True, exist_ok=True)
    for variant, givens in chosen:
        key = AnswerKey(drill, givens)
        payload["variants"].append(keys.variant_json(key, variant))
        if fmt == "json":
            files = []
        elif fmt == "md":
            files = [("sheet.md", keys.sheet_markdown(key, variant)),
                     ("key.md", keys.key_markdown(key, variant))]
        else:
            from trainer.views import report

            files = [("sheet.html", report.sheet_html(key, variant)),
                     ("key.html", report.key_html(key, variant))]
        if folder is None:
            printed += [text for _, text in files]
            continue
        stem = folder / f"{drill.id}-{variant}"
        for suffix, text in (*files, ("answers.yaml", keys.key_as_sheet(key))):
            write_output(_path(f"{stem}-{suffix}"), text)
    if fmt == "json":
        if folder is None:
            _emit_json(payload)
        else:
            write_output(folder / f"{drill.id}-variants.json", json_text(payload) + "\n")
    elif folder is None:
        echo("\n\n---\n\n".join(text.rstrip("\n") for text in printed))
    if folder is not None:
        echo(f"Wrote {len(chosen)} variants of {drill.id} to {out_dir}: "
             + ", ".join(str(v) for v, _ in chosen), err=fmt == "json")


@cli.command(name="next")
@_format_options("text", "json",
                 what="What to print: the choice, or JSON with the choice and the schedule.")
def next_drill(as_json: bool) -> None:
    """Say which drill to practise now, and why: spaced repetition over your scored attempts;
    or a short session on your weak skills (practice --weak) when that would help more."""
    from trainer.drills import catalog
    from trainer.files import paths as datadirs
    from trainer.store import database as store
    from trainer.store import kept_marks as progress
    from trainer.store import schedule

    db = store.Store(read_only=True)  # a store it cannot read is refused before anything
    try:
        with progress.Keeper(db) as keeper:
            cards = keeper.cards(catalog.usable_drill_ids())
            skill_cards = keeper.skill_cards()
    finally:
        db.close()
    folder = datadirs.data_dir("drills")
    if not cards:
        from trainer.errors import KvdrillError

        raise KvdrillError(f"no drill in {folder} can be practised: kvdrill lint names the "
                           "errors in each")
    chosen, why = schedule.choose(cards)
    from trainer.app import weak

    drill_due = chosen.due is None or why.startswith(("due", "overdue"))
    weak_advice = weak.advice(skill_cards, drill_due)
    if as_json:
        _emit_json({"drill": chosen.drill, "reason": why,
                    "schedule": [schedule.card_json(c) for c in cards],
                    "weak": weak_advice,
                    "skills": [schedule.skill_json(c) for c in skill_cards]})
        return
    if weak_advice is not None and weak_advice["recommended"]:
        echo(f"Practise your weak skills now: {weak_advice['reason']}.\n"
             "  kvdrill practice --weak")
        echo(f"Then {chosen.drill}: {why}.\n  kvdrill practice {chosen.drill}")
        return
    echo(f"Practise {chosen.drill} now: {why}.\n  kvdrill practice {chosen.drill}")
    if weak_advice is not None and weak_advice["skills"]:
        echo(f"Also: kvdrill practice --weak ({weak_advice['reason']}).")


@cli.command()
@click.argument("source", metavar="ID|FILE")
@_format_options("text", "md", "html", "json",
                 what="What to write: the report as text, Markdown, HTML, or its data as JSON.",
                 to="fmt")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write the report to this file ('-': standard output, the default).")
@click.option("--set", "settings", multiple=True, metavar="DIMENSION=SCORE",
              help="Override a text dimension's score (repeatable), e.g. levers=2.")
@click.option("--note", help="The reviewer's note that goes with --set.")
def review(source: str, fmt: Literal["text", "md", "html", "json"], out: str | None,
           settings: tuple[str, ...],
           note: str | None) -> None:
    """Review a stored attempt (ID) or an exported transcript (FILE), re-marked from the raw
    answers with today's solver; any recorded verdict that disagrees is flagged."""
    from trainer.store import database as store
    from trainer.store import kept_marks as progress
    from trainer.store import transcripts
    from trainer.views import report

    if note is not None and not settings:
        raise click.UsageError("--note goes with --set DIMENSION=SCORE; give both")
    stripped = source.strip()
    number_like = stripped[1:].isdigit() if stripped[:1] in ("+", "-") else stripped.isdigit()
    if (stripped.isascii() and stripped.isdigit()) or (
            number_like and not _path(source).exists()):
        attempt_id = _attempt_id(source)
        db = store.Store(read_only=not settings)
        try:
            if settings:
                for dimension, score in transcripts.parse_overrides(settings, db, attempt_id):
                    db.set_override(attempt_id, dimension, score, note or "")
            transcript = transcripts.transcript(db, attempt_id)
            with progress.Keeper(db) as keeper:
                _, changed = keeper.fresh(db.attempt(attempt_id), transcript)
                trend = keeper.kept_trend(transcript["drill"])
            if changed:
                transcript["kept_marks_differ"] = changed
            imported = db.imports([attempt_id]).get(attempt_id)
            if imported is not None:  # what the file contradicted when it was imported
                transcript["tampered"] = imported.flags
            overrides = db.overrides(attempt_id)
        finally:
            db.close()
        label = f"attempt {attempt_id}"
    else:
        if settings:
            raise click.UsageError("--set works on a stored attempt ID, not on a file")
        transcript = transcripts.from_file(_path(source))
        overrides, trend, label = {}, [], source
    data = report.review_data(transcript, overrides, label, trend,
                              transcripts.solution_markdown(transcript))
    if fmt == "json":
        _write(json_text(data) + "\n", out)
    else:
        _write(report.render_review(data, fmt), out)


@cli.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False),
                metavar="FILE...")
@_format_options("text", "json", what="How to report what was imported.")
def import_transcripts(files: tuple[str, ...], as_json: bool) -> None:
    """Take exported transcripts (kvdrill export ID) into the store, to compare candidates.

    Each is re-marked from its raw answers, and what it contradicts (tampering, recorded
    verdicts the re-mark does not give) is flagged; the file's name is the candidate's. A file
    already in the store is refused as a duplicate. Exits 1 when any file was not imported.
    """
    from trainer.store import database as store
    from trainer.store import importing

    done: list[dict[str, Any]] = []
    worst = 0
    db = store.Store()
    try:
        for name in files:
            try:
                result = importing.import_file(db, _path(name))
            except KvdrillError as error:
                # A file that cannot be taken in is a failure of that file (exit 1), however
                # it is broken; the others are still imported.
                message = str(error) if str(error).startswith(name) else f"{name}: {error}"
                echo(f"Error: {printable(message, keep_lines=False)}", err=True)
                done.append({"file": name, "attempt": None, "error": message})
                worst = 1
                continue
            done.append({"file": name, "attempt": result.attempt_id,
                         "candidate": result.candidate, "flags": result.flags})
            if not as_json:
                flagged = (f"; ⚑ {len(result.flags)} flagged (kvdrill review "
                           f"{result.attempt_id})" if result.flags else "")
                echo(f"Imported {printable(name, keep_lines=False)} as attempt "
                     f"{result.attempt_id}, candidate "
                     f"{result.candidate}{flagged}")
    finally:
        db.close()
    if as_json:
        _emit_json(done)
    if worst:
        sys.exit(worst)


@cli.command()
@click.argument("drill_id", metavar="DRILL")
@click.option("--variant", type=WholeNumber("SEED", 0, 2**63 - 1), metavar="SEED",
              help="Only the attempts of variant SEED.")
@_format_options("text", "md", "html", "json", what="Report format.", to="fmt")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write the report to this file ('-': standard output).")
def cohort(drill_id: str, variant: int | None, fmt: str, out: str | None) -> None:
    """Compare the attempts of one drill side by side: each candidate's rubric dimensions,
    level and time against budget; per step who was right, which mistake, who ran over; and
    the steps that separate candidates most."""
    from trainer.store import database as store
    from trainer.views import cohort as cohorts

    db = store.Store(read_only=True)
    try:
        if not db.count_attempts(drill_id):
            from trainer.errors import UnknownName

            try:
                _known_drill_or_exit(drill_id, set(db.drill_ids()))
            except UnknownName as error:
                raise UnknownName(str(error).replace("--drill: ", "DRILL: ", 1)) from None
        data = cohorts.cohort_data(db, drill_id, variant)
    finally:
        db.close()
    _write(cohorts.render(data, fmt), out)


def main() -> None:
    cli(prog_name="kvdrill")
