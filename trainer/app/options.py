"""What the commands share: the option types (exact numbers, whole numbers, context lengths,
attempt ids), the one output rule (--format, --json, --out), shell completion of drill ids and
presets, and printing that no control character gets through."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # only for annotations: start-up imports as little as it can
    from pathlib import Path

from trainer.errors import KvdrillError
from trainer.printable import json_text, printable

KV_DTYPE_CHOICES = ("fp32", "bf16", "fp16", "fp8", "int8")


WEIGHT_DTYPE_CHOICES = ("fp32", "bf16", "fp16", "fp8", "int8", "int4", "mxfp4")


class ExactNumber(click.ParamType):  # type: ignore[type-arg]
    """A decimal number kept exact (3.35 stays 335/100); refuses nan, inf and junk."""

    name = "NUMBER"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        from trainer.reading.exact import Fraction

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


class UnitFraction(ExactNumber):
    """A fraction above 0 and at most 1 (a memory utilisation), as a float; nan, inf, 0 and
    anything above 1 are refused naming the range."""

    name = "FRACTION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, float) and 0 < value <= 1:
            return value
        try:
            number = super().convert(value, param, ctx)
        except click.BadParameter:
            number = None
        if number is None or not 0 < number <= 1:
            self.fail(f"{str(value)[:40]!r} is out of range: give a fraction above 0 and at "
                      "most 1 (e.g. 0.9)", param, ctx)
        return float(number)


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
        from trainer.reading.exact import Fraction

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

MODEL_HELP = ("A preset (llama-3.1-8b, also written llama31-8b or Meta-Llama-3.1-8B), a "
              "Hugging Face config.json, or a folder that holds one (read locally; nothing is "
              "downloaded).")


def chosen_format(fmt: str | None, json_shorthand: bool, default: str) -> str:
    if json_shorthand and fmt not in (None, "json"):
        raise click.UsageError(f"--json is short for --format json: give one of --json and "
                               f"--format {fmt}")
    return "json" if json_shorthand else (fmt or default).lower()


def format_options(*choices: str, what: str, to: str = "as_json") -> Callable[[Any], Any]:
    """The one output rule of every command: --format names what is printed or written (the
    first choice is the default) and --json is short for --format json. The command receives
    `as_json` (a bool) or, with to="fmt", the format's name."""
    import functools

    def decorate(function: Any) -> Any:
        @functools.wraps(function)
        def command(*args: Any, fmt: str | None = None, json_shorthand: bool = False,
                    **kwargs: Any) -> Any:
            chosen = chosen_format(fmt, json_shorthand, choices[0])
            kwargs[to] = chosen == "json" if to == "as_json" else chosen
            return function(*args, **kwargs)

        command = click.option("--json", "json_shorthand", is_flag=True,
                               help="Short for --format json.")(command)
        return click.option("--format", "fmt", type=click.Choice(choices, case_sensitive=False),
                            help=f"{what}  [default: {choices[0]}]")(command)

    return decorate


def parse_attempt_id(text: str) -> int:
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
    """An attempt id: see parse_attempt_id."""

    name = "ID"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return value if isinstance(value, int) else parse_attempt_id(str(value))


def complete_drills(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[str]:
    """Shell completion of a DRILL: the shipped drill ids."""
    from trainer.files import paths

    try:
        ids = sorted(path.stem for path in paths.drill_paths())
    except KvdrillError:
        return []
    return [drill for drill in ids if drill.startswith(incomplete)]


def complete_presets(ctx: click.Context, param: click.Parameter,
                     incomplete: str) -> list[Any]:
    """Shell completion of --model or --gpu: the canonical preset names; a model that starts
    like a path (./, /, ~) completes as a file or folder, for a config.json."""
    from trainer.capacity import presets

    is_gpu = param.name in ("gpu", "target_gpu")
    if not is_gpu and presets.looks_like_path(incomplete):
        from click.shell_completion import CompletionItem

        return [CompletionItem(incomplete, type="file")]
    table = presets.gpus() if is_gpu else presets.models()
    return [name for name in table if name.startswith(incomplete.lower())]


def screen_width(err: bool = False) -> int | None:
    """The width of the terminal the text goes to (80 when a terminal does not say), or None
    when it goes to a pipe or a file, where each record may keep its own line."""
    stream = sys.stderr if err else sys.stdout
    try:
        if not stream.isatty():
            return None
    except (AttributeError, ValueError):
        return None
    import shutil

    return max(20, shutil.get_terminal_size((80, 24)).columns)


def echo(message: Any = "", *, err: bool = False, nl: bool = True) -> None:
    """click.echo for text: no control character from an answer, a drill file or an error
    reaches the terminal (JSON has its own escaping, in emit_json), and on a terminal every
    line is wrapped between words at its width."""
    text = printable(str(message))
    width = screen_width(err)
    if width is not None:
        from trainer.text_layout import wrap

        text = wrap(text, width)
    click.echo(text, err=err, nl=nl)


def echo_long(message: Any = "", *, nl: bool = True) -> None:
    """echo for output that may run past the screen (a worked solution, a review, the table at
    the end of a drill): on a terminal shorter than it, shown through the pager ($PAGER, else
    less) from its top; KVDRILL_PAGER=never, a pipe or a file print it whole."""
    import os

    text = printable(str(message))
    width = screen_width()
    if width is None or os.environ.get("KVDRILL_PAGER", "").lower() in ("never", "0", "off"):
        echo(text, nl=nl)
        return
    import shutil

    from trainer.text_layout import wrap

    text = wrap(text, width)
    if text.count("\n") + 1 < shutil.get_terminal_size((80, 24)).lines:
        click.echo(text, nl=nl)
        return
    # less without a setting of the user's own: colours kept, and no alternate screen, so what
    # was read stays on the terminal after quitting
    os.environ.setdefault("LESS", "-RX")
    click.echo_via_pager(text + ("\n" if nl else ""))


def emit_json(payload: Any) -> None:
    click.echo(json_text(payload))


def print_or_write(text: str, out: str | None, paged: bool = False) -> None:
    """Print `text` (also for `--out -`), or write it to the file `out` and say so on stderr.
    Written files keep the text as it is (an HTML report escapes its own); printed text is
    made safe for the terminal, and `paged` text taller than the terminal goes through the
    pager from its top."""
    if out is None or out == "-":
        (echo_long if paged else echo)(text, nl=not text.endswith("\n"))
        return
    from trainer.app.outfiles import write_output
    from trainer.store.database import default_path

    write_output(as_path(out), text, protected=[default_path()])
    echo(f"Wrote {out}", err=True)


def as_path(value: str, what: str | None = None) -> Path:
    """A path the user named; an empty one names nothing (Path('') would be the current
    folder), so it is misuse, not a place to write. `what`: the input it names, for the
    refusal ("the transcript's path, or an attempt ID"); None: an output, which '-' may be."""
    from pathlib import Path

    if not value.strip():
        if what is not None:
            raise click.UsageError(f"an empty path names no file: give {what}")
        raise click.UsageError("an empty path names no file or folder: give a path, or '-' "
                               "for standard output where the option takes it")
    return Path(value)


def variant_option(function: Any) -> Any:
    return click.option("--variant", type=SEED,
                        help="Use interviewer variant SEED instead of the drill's own givens.")(
        function)


def target_options(function: Any) -> Any:
    """--model and --gpu on a drill: re-target it at a model and a card of your choosing."""
    function = click.option(
        "--gpu", "target_gpu", metavar="NAME", shell_complete=complete_presets,
        help="Re-target the drill at this GPU preset (h100, h200, mi300x...).")(function)
    return click.option(
        "--model", "target_model", metavar="MODEL", shell_complete=complete_presets,
        help="Re-target the drill at this model: " + MODEL_HELP)(function)


def drill_target(model: str | None, gpu: str | None) -> dict[str, Any] | None:
    """The re-target --model and --gpu ask for (stored with an attempt), or None."""
    if model is None and gpu is None:
        return None
    from trainer.capacity import presets
    from trainer.drills import variants
    from trainer.errors import UsageError

    if gpu is not None and not gpu.strip():
        raise UsageError("--gpu names nothing: give a GPU preset (kvdrill calc --list-presets)")
    return variants.make_target(presets.resolve_model(model) if model is not None else None, gpu)


def target_args(model: str | None, gpu: str | None) -> str:
    """The options that name a re-target again, for a command a user is told to run."""
    import shlex

    def quoted(text: str) -> str:
        if text.isprintable():
            return shlex.quote(text)
        # a newline or control character in a folder's name: bash's $'…' keeps it on one
        # line, so the command can be copied and run
        escaped = "".join(char if char.isprintable() and char not in "\\'"
                          else f"\\x{ord(char):02x}" if ord(char) < 0x100
                          else f"\\u{ord(char):04x}" if ord(char) < 0x10000
                          else f"\\U{ord(char):08x}" for char in text)
        return f"$'{escaped}'"

    parts = []
    if model is not None:
        parts += ["--model", quoted(model)]
    if gpu is not None:
        parts += ["--gpu", quoted(gpu)]
    return (" " + " ".join(parts)) if parts else ""
