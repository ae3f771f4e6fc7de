"""The commands about drills themselves: `list`, `show`, `grade` (an answer sheet), `solution`,
`lint`, `schema` and `variants` (an interviewer's sheets and keys)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from pathlib import Path

from trainer.app.options import (
    SEED,
    WholeNumber,
    as_path,
    complete_drills,
    drill_target,
    echo,
    echo_long,
    emit_json,
    format_options,
    screen_width,
    target_args,
    target_options,
    variant_option,
)
from trainer.printable import json_text


@click.command(name="list")
@format_options("text", "json", what="What to print: a table, or a JSON array.")
def list_drills(as_json: bool) -> None:
    """List the drills: id, title, target minutes and tags."""
    from trainer.drills import catalog

    drills = catalog.drill_list()
    if as_json:
        emit_json(drills)
        return
    from trainer.text_layout import Column, table

    columns = [Column("Drill", wrap=False), Column("Min", ">", wrap=False),
               Column("Title [tags]")]
    rows = [[d["id"], str(d["minutes"]), f"{d['title']} [{', '.join(d['tags'])}]"]
            for d in drills]
    echo(table(columns, rows, screen_width()))


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills)
@variant_option
@target_options
@format_options("text", "json", what="What to print: text, or one JSON object.")
def show(drill_id: str, variant: int | None, target_model: str | None, target_gpu: str | None,
         as_json: bool) -> None:
    """Show a drill as the candidate sees it: the situation and every question, no answers.

    With --model (a preset, a config.json or its folder) and --gpu, the drill is re-targeted
    at that model and card: the same questions with their numbers."""
    from trainer.app.kept_output import kept_output

    width = None if as_json else screen_width()
    target = drill_target(target_model, target_gpu)

    def make() -> str:
        from trainer.drills import loader, variants
        from trainer.views import sheets

        drill, _ = loader.find_drill(drill_id)
        key = variants.answer_key(drill, variant, target)
        if as_json:
            payload = sheets.drill_json(key, variant)
            if target is not None:
                payload["target"] = target
            return json_text(payload)
        return sheets.drill_text(key, variant, width)

    text = kept_output("show", drill_id, (variant, as_json, width, _target_key(target)), make)
    if as_json:
        click.echo(text)
    else:
        echo(text)


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills)
@click.option("--answers", "answers_path", required=True,
              type=click.Path(exists=True, dir_okay=False),
              help="YAML file mapping step id to the answer as typed (1a: 44 GB).")
@variant_option
@target_options
@format_options("text", "json", what="What to print: text, or one JSON object.")
def grade(drill_id: str, answers_path: str, variant: int | None, target_model: str | None,
          target_gpu: str | None, as_json: bool) -> None:
    """Grade an answer sheet: every step checked, mistakes named, the rubric scored.

    With --model and --gpu the sheet is marked against the drill re-targeted at that model and
    card. Exits 0 when every numeric answer is correct, 1 otherwise.
    """
    import pathlib

    from trainer.app.kept_output import kept_output, rubric_paths
    from trainer.errors import KvdrillError

    target = drill_target(target_model, target_gpu)
    width = None if as_json else screen_width()

    def make() -> str:
        from trainer.drills import loader, variants
        from trainer.marking import grading

        drill, _ = loader.find_drill(drill_id)
        # the target as asked, and, where it names the drill's own model again, the same
        # without it (the numbers of the drill as written): a sheet written either way grades
        tried = [target]
        if target is not None and target.get("model") == {"preset": drill.givens.get("model")}:
            tried.append(variants.make_target(None, target.get("gpu")))
        sheet_path = as_path(answers_path, "the answer sheet's path")
        refusals: list[KvdrillError] = []
        for retarget in tried:
            try:
                graded_variant = grading.sheet_variant(sheet_path, drill, variant,
                                                       variants.target_label(retarget),
                                                       variants.target_digest(retarget))
                break
            except KvdrillError as refusal:
                refusals.append(refusal)
        else:
            raise refusals[0]  # the refusal of the target as asked names what was asked
        key = variants.answer_key(drill, graded_variant, retarget)
        sheet = grading.read_sheet(as_path(answers_path), drill)
        graded = grading.grade(drill, key, sheet, graded_variant)
        text = json_text(grading.graded_json(graded)) if as_json else \
            grading.graded_text(graded, width)
        # the exit status is part of what is kept: "1" when every numeric answer is right
        return f"{int(graded.all_numeric_correct)}\n{text}"

    # A sheet graded again (the same sheet, drill, rubrics, code and options) is read back, not
    # marked again; what cannot be read is left to make(), which says what is wrong.
    try:
        inputs: tuple[Path, ...] = (*rubric_paths(), pathlib.Path(answers_path))
    except (KvdrillError, OSError):
        inputs = ()
    kept = kept_output("grade", drill_id, (variant, as_json, width, _target_key(target),
                                           answers_path), make, inputs=inputs) if inputs \
        else make()
    status, _, text = kept.partition("\n")
    if as_json:
        click.echo(text)
    else:
        echo(text)
    if status != "1":
        sys.exit(1)


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills)
@variant_option
@target_options
@click.option("--format", "fmt", type=click.Choice(["md", "text"], case_sensitive=False),
              default=None, help="What to print: Markdown, or text laid out for the terminal.  "
                                 "[default: text on a terminal, md into a pipe or file]")
def solution(drill_id: str, variant: int | None, target_model: str | None,
             target_gpu: str | None, fmt: str | None) -> None:
    """Print the worked solution of a drill (or of one of its variants, or of the drill
    re-targeted at --model and --gpu), with its numbers."""
    from trainer.app.kept_output import kept_output

    target = drill_target(target_model, target_gpu)
    screen = screen_width()
    width = None
    if (fmt or ("text" if screen else "md")).lower() == "text":
        import shutil

        width = screen or shutil.get_terminal_size((80, 24)).columns

    def make() -> str:
        from trainer.drills import loader, solutions, variants

        drill, _ = loader.find_drill(drill_id)
        text = solutions.worked_solution(variants.answer_key(drill, variant, target))
        if width is None:
            return text
        from trainer.views import terminal_text

        return terminal_text.plain(terminal_text.render(text, width), width) + "\n"

    echo_long(kept_output("solution", drill_id, (variant, width, _target_key(target)), make,
                          templates=True), nl=False)


def _target_key(target: dict[str, Any] | None) -> str | None:
    """A re-target as part of a kept output's key: every field of the model, so a config.json
    that changed is read again."""
    import json

    return None if target is None else json.dumps(target, sort_keys=True)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path())
@format_options("text", "json", what="What to print: the findings as text, or JSON.")
def lint(paths: tuple[str, ...], as_json: bool) -> None:
    """Check drill and rubric files: schema, cross-references, values, solutions.

    With no PATH, checks every shipped drill, rubric and solution template. Exits 1 when any
    file has an error.
    """
    from trainer.marking import lint as linting

    files = [as_path(path, "a drill file, or a folder of them") for path in paths]
    for file in files:
        if not file.exists():
            raise click.BadParameter(f"{file} does not exist", param_hint="PATH")
    reports = linting.lint_paths(files)
    # a folder with no drill file in it checks nothing: said, not passed in silence
    empty = [file for file in files if file.is_dir() and not any(
        report.path.parent == file for report in reports)]
    if as_json:
        emit_json([{"path": str(r.path), "ok": r.ok, "errors": r.errors,
                     "warnings": r.warnings} for r in reports])
    else:
        for report in reports:
            # files named on the command line as typed; the shipped ones by their folder
            shown = str(report.path) if files else _short_path(report.path)
            echo(f"{'ok  ' if report.ok else 'FAIL'} {shown}")
            for error in report.errors:
                echo(f"  error: {error.replace(str(report.path), shown)}")
            for warning in report.warnings:
                echo(f"  warning: {warning.replace(str(report.path), shown)}")
    for folder in empty:
        echo(f"Error: {folder}: no drill files were found there (kvdrill lint checks the "
             "*.yaml files in a folder, one level deep): name a drill file or a folder "
             "that holds some", err=True)
    if empty or not all(r.ok for r in reports):
        sys.exit(1)


def _short_path(path: Path) -> str:
    """A shipped file as a person names it: drills/NAME, not a site-packages path."""
    from pathlib import Path

    from trainer.errors import KvdrillError
    from trainer.files.paths import data_dir

    resolved = Path(path).resolve()
    for kind in ("drills", "rubrics", "solutions"):
        try:
            folder = data_dir(kind).resolve()
        except KvdrillError:  # no such folder: nothing to shorten against
            continue
        if resolved.parent == folder:
            return f"{kind}/{resolved.name}"
    return str(path)


@click.command()
@click.option("--rubric", is_flag=True, help="The schema of rubric files instead of drills.")
@format_options("json", what="What to print: the JSON Schema (the one format).")
def schema(rubric: bool, as_json: bool) -> None:
    """Print the JSON Schema of drill files (or rubric files), for editors to validate with."""
    from trainer.drills import schema as file_schema

    cls = file_schema.Rubric if rubric else file_schema.Drill
    emit_json(cls.model_json_schema(by_alias=True))


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills)
@click.option("--count", type=WholeNumber("N", 1, 500), default=5, show_default=True,
              help="How many variants to draw (1 to 500).")
@click.option("--seed", type=SEED, default=0, show_default=True,
              help="The draw's seed: the same seed gives byte-identical files.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False),
              help="Folder for the files, created if missing ('-': standard output).")
@target_options
@format_options("md", "html", "json",
                 what="What to write: a sheet and a key per variant in Markdown or HTML, or "
                      "the variants' parameters and answers as JSON.", to="fmt")
def variants(drill_id: str, count: int, seed: int, out_dir: str | None,
             target_model: str | None, target_gpu: str | None, fmt: str) -> None:
    """Draw interviewer variants: a sheet for the candidate and a key for you, per variant.

    Each variant is physically sensible (the weights fit, at least one sequence fits) and
    differs from the others in its answers. With --out DIR: <drill>-<variant>-sheet and -key
    in the format chosen (or <drill>-variants.json), -blank.yaml, an answer sheet for the
    candidate to fill in, and -answers.yaml, the key as a filled sheet; both name their
    variant, so `kvdrill grade` marks them against its numbers. Without --out (or with '-'),
    Markdown or JSON is printed.
    """
    from trainer.app.outfiles import write_output
    from trainer.drills import loader
    from trainer.drills import variants as drawing
    from trainer.drills.reference import AnswerKey
    from trainer.views import keys

    drill, _ = loader.find_drill(drill_id)
    target = drill_target(target_model, target_gpu)
    again = target_args(target_model, target_gpu)
    folder = None if out_dir in (None, "-") else as_path(out_dir)
    if folder is not None and folder.is_symlink() and not folder.exists():
        raise click.UsageError(f"--out {out_dir} is a symbolic link to nothing (a loop, or a "
                               "target that does not exist), not a folder: give --out a folder")
    if folder is not None and folder.exists() and not folder.is_dir():
        what = "a file" if folder.is_file() else "a device, pipe or socket"
        raise click.UsageError(f"--out {out_dir} is {what}, not a folder: give --out a folder "
                               "(made if missing), or '-' for standard output")
    if folder is None and fmt == "html":
        raise click.UsageError("HTML is written as files, a sheet and a key per variant: "
                               "give --out DIR")
    if target is not None:  # the drill as written re-targeted first: its refusal, whatever --count
        drawing.retarget(drill, dict(drill.givens), target)
    built: dict[int, AnswerKey] = {}  # the keys the draw compared, rendered as they are
    chosen = keys.pick_variants(drill, count, seed, target, built)
    payload: dict[str, Any] = {"drill": drill.id, "seed": seed, "variants": []}
    if target is not None:
        payload["target"] = target
    printed: list[str] = []
    writes: list[tuple[Path, str]] = []  # written once every variant has rendered: a variant
    # that fails leaves no half-written set behind
    for variant, _ in chosen:
        key = built[variant]
        if target is not None:
            key.retargeted = drawing.target_label(target)
            key.target_digest = drawing.target_digest(target)
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
        writes += [(as_path(f"{stem}-{suffix}"), text) for suffix, text in (
            *files, ("answers.yaml", keys.key_as_sheet(key, variant)),
            ("blank.yaml", keys.blank_sheet(key, variant, again)))]
    if folder is not None:
        if fmt == "json":
            writes.append((folder / f"{drill.id}-variants.json", json_text(payload) + "\n"))
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in writes:
            write_output(path, text)
    if fmt == "json" and folder is None:
        emit_json(payload)
    elif folder is None:
        text = "\n\n---\n\n".join(text.rstrip("\n") for text in printed)
        width = screen_width()
        if width is not None:  # a person reads it here: laid out, not Markdown source
            from trainer.views import terminal_text

            text = terminal_text.plain(terminal_text.render(text, width), width)
        echo(text)
    if folder is not None:
        echo(f"Wrote {len(chosen)} variants of {drill.id} to {out_dir}: "
             + ", ".join(str(v) for v, _ in chosen), err=fmt == "json")
