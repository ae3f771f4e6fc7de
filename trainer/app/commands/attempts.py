"""The commands over stored attempts: `history`, `export`, `next`, `review`, `import`,
`cohort` and `progress`."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, Literal

import click

from trainer.app.options import (
    AttemptId,
    WholeNumber,
    as_path,
    complete_drills,
    echo,
    echo_long,
    emit_json,
    format_options,
    parse_attempt_id,
    print_or_write,
    screen_width,
)
from trainer.errors import KvdrillError
from trainer.printable import json_text

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

from trainer.printable import printable

_REVIEWED = "the transcript's path, or an attempt ID"  # what `review ID|FILE` names


@click.command()
@click.option("--drill", "drill_id", metavar="ID", shell_complete=complete_drills,
              help="Only attempts of this drill.")
@click.option("--limit", type=WholeNumber("N", 1), default=20, show_default=True,
              help="Show the newest N attempts.")
@click.option("--all", "show_all", is_flag=True, help="Show every attempt (overrides --limit).")
@format_options("text", "json", what="What to print: a table and trends, or a JSON array.")
def history(drill_id: str | None, limit: int, show_all: bool, as_json: bool) -> None:
    """List your attempts, newest first: drill, variant, when, status, answered, scores; then
    each drill's trend over its latest complete attempts. Incomplete attempts are listed, not
    scored."""
    from trainer.store import database as store
    from trainer.store import kept_marks

    db = store.Store(read_only=True)
    keeper = kept_marks.Keeper(db)
    try:
        if drill_id is not None and not db.count_attempts(drill_id):
            _known_drill_or_exit(drill_id, set(db.drill_ids()))
        total = db.count_attempts(drill_id)
        batches = kept_marks.chunked(db.iter_attempts(drill_id, limit=None if show_all else limit),
                                   200)
        if as_json:
            _emit_json_rows(row for batch in batches for row in keeper.summaries(batch))
            return
        if not total:
            echo("No attempts yet: kvdrill practice DRILL")
            return
        from trainer.text_layout import Table

        # --all streams, a row at a time; the newest N are gathered and paged like review
        lines: list[str] = []
        say = echo if show_all else lines.append
        shown = 0
        layout: Table | None = None
        for batch in batches:
            rows = [_history_cells(row) for row in keeper.summaries(batch)]
            if layout is None:  # laid out on the first batch, kept for the rest
                layout = Table(_history_columns(), screen_width()).fit(rows)
                if layout.header_lines():
                    say("\n".join(layout.header_lines()))
            for cells in rows:
                say("\n".join(layout.row_lines(cells)))
                shown += 1
        if shown < total:
            say(f"({shown} of {total} attempts; --all or --limit N shows more)")
        trends = keeper.trends(None if drill_id is None else [drill_id])
    finally:
        keeper.close()
        db.close()
    if trends:
        say(f"\nTrends (complete attempts, oldest → newest, at most {kept_marks.TREND_POINTS}):")
        for line in kept_marks.trend_lines(trends):
            say(f"  {line}")
    if lines:
        echo_long("\n".join(lines))


def _history_cells(row: dict[str, Any]) -> list[str]:
    if row["scored"]:
        detail = ", ".join(f"{k} {v:g}" for k, v in row["scores"].items())
    elif row["status"] == "complete":
        detail = str(row["note"])
    else:
        detail = "not scored"
    if row.get("candidate") is not None:
        detail = f"candidate {row['candidate']}: {detail}"
    variant = "—" if row.get("variant") is None else str(row["variant"])
    return [str(row["id"]), row["started_at"][:16].replace("T", " "), row["drill"], variant,
            str(row.get("status_text") or row["status"]), detail]


def _history_columns() -> list[Any]:
    from trainer.text_layout import Column

    # a drill id is never broken mid-id: a narrow terminal stacks the fields instead
    return [Column("ID", ">", wrap=False), Column("Started (UTC)", wrap=False),
            Column("Drill", wrap=False), Column("Variant", ">", wrap=False),
            Column("Status", least=14), Column("Scores", least=16)]


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
    from trainer.files import paths

    try:
        shipped = {path.stem for path in paths.drill_paths()}
    except KvdrillError:
        shipped = set()
    if drill_id in shipped or drill_id in stored:
        return
    near = difflib.get_close_matches(drill_id, sorted(shipped | stored), n=3, cutoff=0.4)
    hint = f"did you mean {', '.join(near)}?" if near else "see kvdrill list"
    shown = drill_id if len(drill_id) <= 60 else drill_id[:59] + "…"
    raise UnknownName(f"--drill: unknown drill {shown!r}: {hint}")


@click.command()
@click.argument("attempt_id", type=AttemptId(), metavar="ID")
@format_options("json", "md", what="What to write: the transcript as JSON, or Markdown.",
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
    if fmt == "json":
        text = json_text(transcript)
    else:
        from trainer.views.export import transcript_markdown

        text = transcript_markdown(transcript)
    print_or_write(text + "\n", out)


@click.command(name="next")
@format_options("text", "json",
                 what="What to print: the choice, or JSON with the choice and the schedule.")
def next_drill(as_json: bool) -> None:
    """Say which drill to practise now, and why: spaced repetition over your scored attempts;
    or a short session on your weak skills (practice --weak) when that would help more."""
    from trainer.drills import catalog
    from trainer.files import paths
    from trainer.store import database as store
    from trainer.store import kept_marks, schedule

    db = store.Store(read_only=True)  # a store it cannot read is refused before anything
    try:
        with kept_marks.Keeper(db) as keeper:
            cards = keeper.cards(catalog.usable_drill_ids())
            skill_cards = keeper.skill_cards()
            # stored times that are not usable dates, by attempt (repaired or left out)
            notes = [keeper.notes[attempt_id] for attempt_id in sorted(keeper.notes)]
    finally:
        db.close()
    folder = paths.data_dir("drills")
    if not cards:
        from trainer.errors import KvdrillError

        raise KvdrillError(f"no drill in {folder} can be practised: kvdrill lint names the "
                           "errors in each")
    chosen, why = schedule.choose(cards)
    from trainer.app import weak

    drill_due = chosen.due is None or why.startswith(("due", "overdue"))
    weak_advice = weak.advice(skill_cards, drill_due)
    if as_json:
        emit_json({"drill": chosen.drill, "reason": why,
                    "schedule": [schedule.card_json(c) for c in cards],
                    "weak": weak_advice,
                    "skills": [schedule.skill_json(c) for c in skill_cards],
                    "notes": notes})
        return
    for note in notes:
        echo(f"Note: {printable(note, keep_lines=False)}", err=True)
    if weak_advice is not None and weak_advice["recommended"]:
        echo(f"Practise your weak skills now: {weak_advice['reason']}.\n"
             "  kvdrill practice --weak")
        echo(f"Then {chosen.drill}: {why}.\n  kvdrill practice {chosen.drill}")
        return
    echo(f"Practise {chosen.drill} now: {why}.\n  kvdrill practice {chosen.drill}")
    if weak_advice is not None and weak_advice["skills"]:
        echo(f"Also: kvdrill practice --weak ({weak_advice['reason']}).")


@click.command()
@click.argument("source", metavar="ID|FILE")
@format_options("text", "md", "html", "json",
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
    from trainer.store import kept_marks, transcripts
    from trainer.views import report

    if note is not None and not settings:
        raise click.UsageError("--note goes with --set DIMENSION=SCORE; give both")
    stripped = source.strip()
    number_like = stripped[1:].isdigit() if stripped[:1] in ("+", "-") else stripped.isdigit()
    if (stripped.isascii() and stripped.isdigit()) or (
            number_like and not as_path(source, _REVIEWED).exists()):
        attempt_id = parse_attempt_id(source)
        db = store.Store(read_only=not settings)
        try:
            if settings:
                for dimension, score in transcripts.parse_overrides(settings, db, attempt_id):
                    db.set_override(attempt_id, dimension, score, note or "")
            transcript = transcripts.transcript(db, attempt_id)
            with kept_marks.Keeper(db) as keeper:
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
        transcript = transcripts.from_file(as_path(source, _REVIEWED))
        overrides, trend, label = {}, [], source
    data = report.review_data(transcript, overrides, label, trend,
                              transcripts.solution_markdown(transcript))
    if fmt == "json":
        print_or_write(json_text(data) + "\n", out)
    else:
        to_screen = out is None or out == "-"
        print_or_write(report.render_review(data, fmt, screen_width() if to_screen else None),
                       out, paged=fmt == "text")


@click.command(name="import")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False),
                metavar="FILE...")
@format_options("text", "json", what="How to report what was imported.")
def import_transcripts(files: tuple[str, ...], as_json: bool) -> None:
    """Take exported transcripts (kvdrill export ID) into the store, to compare candidates.

    Each is re-marked from its raw answers, and what it contradicts (tampering, recorded
    verdicts the re-mark does not give) is flagged; the file's name is the candidate's. A file
    already in the store is refused as a duplicate. Exits 1 when any file was not imported.
    """
    from trainer.store import database as store
    from trainer.store import importing

    for name in files:  # a path that is no readable regular file is misuse, as everywhere
        _regular_file(as_path(name, "the path of an exported transcript"), "transcript")
    done: list[dict[str, Any]] = []
    worst = 0
    db = store.Store()
    try:
        for name in files:
            try:
                result = importing.import_file(db, as_path(name))
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
        emit_json(done)
    if worst:
        sys.exit(worst)


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills)
@click.option("--variant", type=WholeNumber("SEED", 0, 2**63 - 1), metavar="SEED",
              help="Only the attempts of variant SEED.")
@click.option("--own", is_flag=True,
              help="Put your own attempts (practised in this store) in beside the imported "
                   "candidates'.")
@format_options("text", "md", "html", "json", what="Report format.", to="fmt")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write the report to this file ('-': standard output).")
def cohort(drill_id: str, variant: int | None, own: bool, fmt: str, out: str | None) -> None:
    """Compare the attempts of one drill side by side: each candidate's rubric dimensions,
    level and time against budget; per step who was right, which mistake, who ran over; and
    the steps that separate candidates most.

    A cohort holds the candidates' attempts you imported (kvdrill import), not your own
    unless --own; with none imported, it holds your own. Its first line says which, and
    which variants."""
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
        data = cohorts.cohort_data(db, drill_id, variant, own)
    finally:
        db.close()
    to_screen = out is None or out == "-"
    print_or_write(cohorts.render(data, fmt, screen_width() if to_screen else None), out,
                   paged=fmt == "text")


@click.command()
@format_options("text", "md", "html", "json",
                 what="What to write: text for the terminal, Markdown, a page of charts (HTML), "
                      "or the data as JSON.", to="fmt")
@click.option("--out", type=click.Path(dir_okay=False),
              help="Write to this file ('-': standard output, the default).")
def progress(fmt: str, out: str | None) -> None:
    """Show your progress at a glance: on how many drills you are Solid or better, each
    skill's recall now, when it is due, its last answers and last mistake, and each drill's
    scores, level and time across your complete attempts (imported attempts stay out)."""
    from trainer.store import database as store
    from trainer.store import progress as gathered
    from trainer.views import progress as shown

    db = store.Store(read_only=True)
    try:
        data = gathered.progress_data(db)
    finally:
        db.close()
    to_screen = out is None or out == "-"
    print_or_write(shown.render(data, fmt, screen_width() if to_screen else None), out,
                   paged=fmt == "text")


def _regular_file(path: Path, what: str) -> None:
    """UsageError (exit 2) unless `path` is a regular file this user can read: a FIFO, a
    folder, a device or an unreadable file is named, not opened."""
    import os
    import stat

    from trainer.errors import UsageError

    try:
        mode = os.stat(path).st_mode
    except OSError as problem:
        raise UsageError(f"{path}: cannot read the {what}: {problem.strerror or problem}") \
            from None
    except ValueError:
        raise UsageError(f"{path!r}: not a usable path for the {what}") from None
    if not stat.S_ISREG(mode):
        kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO (named pipe)"
                if stat.S_ISFIFO(mode) else "a device" if stat.S_ISCHR(mode) or
                stat.S_ISBLK(mode) else "a socket" if stat.S_ISSOCK(mode) else "not a file")
        raise UsageError(f"{path}: is {kind}, not a file: give the {what} as a regular file")
    if not os.access(path, os.R_OK):
        raise UsageError(f"{path}: cannot read the {what}: permission denied")
