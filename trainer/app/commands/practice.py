"""`kvdrill practice`: a drill timed in a terminal, read from a pipe, resumed, or built from the
skills you miss (`--weak`)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from trainer.app.options import (
    AttemptId,
    WholeNumber,
    as_path,
    complete_drills,
    drill_target,
    echo,
    echo_long,
    target_args,
    target_options,
    variant_option,
)


@click.command()
@click.argument("drill_id", metavar="DRILL", shell_complete=complete_drills, required=False)
@click.option("--exam", is_flag=True, help="No feedback or hints until the end (interviews).")
@click.option("--strict", is_flag=True, help="A step whose time runs out closes unanswered.")
@variant_option
@target_options
@click.option("--random", "random_variant", is_flag=True, help="Practise a random variant.")
@click.option("--resume", type=AttemptId(), metavar="ID",
              help="Continue attempt ID where it stopped.")
@click.option("--weak", is_flag=True,
              help="A short session on the skills you miss most, with new numbers.")
@click.option("--steps", "weak_steps", type=WholeNumber("N", 1, 20), default=6, show_default=True,
              metavar="N", help="How many steps --weak asks.")
def practice(drill_id: str | None, exam: bool, strict: bool, variant: int | None,
             target_model: str | None, target_gpu: str | None, random_variant: bool,
             resume: int | None, weak: bool, weak_steps: int) -> None:
    """Practise a drill, timed, one step at a time; every answer is saved as you give it.

    In a terminal: Enter starts the clock once you have read the givens; a live countdown and
    commands (? hint, :skip, :back, :formula, :givens, :help, :quit); an answer that cannot be
    read is asked again; Ctrl-C stops (with an answer typed and not sent, it asks first).
    Through a pipe: one answer per line in step order (an unreadable line is recorded as
    invalid); at end of input the attempt is saved with the rest unanswered. With --weak (and
    no DRILL): a short session on the skills you have missed, with new numbers. With --model
    (a preset, a config.json or its folder) and --gpu: the drill re-targeted at that model and
    card, kept with the attempt so review, export and cohort re-derive it.
    """
    import random
    import time

    from trainer.app import session
    from trainer.drills import loader, variants
    from trainer.store import database as store

    retargeted = target_model is not None or target_gpu is not None
    if random_variant and variant is not None:
        raise click.UsageError("--random picks a variant of its own: give one of --random and "
                               "--variant SEED")
    if resume is not None and (variant is not None or random_variant):
        raise click.UsageError("--resume continues an attempt on the variant it began with: "
                               "give it without --variant and --random")
    if weak and (drill_id or resume is not None or variant is not None or random_variant
                 or retargeted):
        raise click.UsageError("--weak builds its own session: give it without DRILL, "
                               "--resume, --variant, --random, --model or --gpu")
    if resume is not None and (exam or strict):
        raise click.UsageError("--resume continues an attempt in the mode it began with: "
                               "give it without --exam and --strict")
    if resume is not None and retargeted:
        raise click.UsageError("--resume continues an attempt on the model and GPU it began "
                               "with: give it without --model and --gpu")
    target = drill_target(target_model, target_gpu)
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
        target = attempt.target
        key = variants.answer_key(drill, variant, target)
        attempt_id = resume
        exam, strict = attempt.mode == "exam", attempt.strict
    else:
        if not drill_id:
            raise click.UsageError("name a DRILL (see kvdrill list) or give --resume ID")
        drill, path = loader.find_drill(drill_id)
        if random_variant:
            variant = random.SystemRandom().randrange(1, 10**6)
        key = variants.answer_key(drill, variant, target)
        attempt_id = session.new_attempt(db, key, path, variant, exam=exam, strict=strict,
                                         target=target)
    piped = not sys.stdin.isatty()
    ask: Callable[[Any], str | None]
    ready: Callable[[str], bool] | None = None
    intro: Callable[[str], bool] | None = None
    say: Callable[[str], None] = echo
    if piped:
        ask = _piped_ask
    else:
        from trainer.app import tui

        ask, ready, say = tui.make_ask(), tui.make_ready(), tui.make_say()
        intro = tui.make_intro(ready)
    # A terminal asks again after an unreadable answer and starts the clock on Enter; a pipe
    # keeps one line per step (an unreadable line is recorded invalid) and never waits.
    run = session.Session(key, db, attempt_id, ask=ask, say=say, clock=time.monotonic,
                          exam=exam, strict=strict, reask_unreadable=not piped, ready=ready,
                          givens_per_step=drill.id == weak_drill_id(), intro=intro,
                          keep_empty=not piped or resume is not None)
    if resume is None or not piped:
        run.introduce()
    if resume is not None:  # in a terminal, just above "Press Enter to start the clock"
        at = run.first_open_step()
        where = f"step {drill.steps[at].id} ({at + 1} of {len(drill.steps)})" \
            if at < len(drill.steps) else "its end"
        echo(f"Resuming attempt {attempt_id} of {drill.id} at {where}.")
    try:
        finished = run.run()
    except KeyboardInterrupt:
        if not piped:
            raise
        # Ctrl-C (SIGINT) while a pipe is read: the same stop line a terminal gives, with
        # the attempt to resume; everything answered is already saved
        run.stopped()
        db.close()
        sys.exit(1)
    if run.discarded:  # the input ended before any answer: nothing to keep or show
        db.close()
        return
    if finished:
        from trainer.store import kept_marks

        kept_marks.keep_finished(db, attempt_id)
    if finished or piped:
        echo("")
        echo_long(session.summary(run, None if piped else tui.terminal_width()))
        chosen = f" --variant {variant}" if variant is not None else ""
        chosen += target_args(target_model, target_gpu)
        if resume is not None and target is not None:
            chosen = ""  # the stored target names no path to type: review shows it
            echo(f"\nRe-targeted at {key.retargeted}: kvdrill review {attempt_id} shows the "
                 "worked solution with its numbers.")
        if drill.id == weak_drill_id():  # a session of its own: no worked solution to show
            echo(f"\nAttempt {attempt_id} saved. kvdrill review {attempt_id} · "
                 f"kvdrill export {attempt_id}")
        else:
            echo(f"\nAttempt {attempt_id} saved. kvdrill export {attempt_id} · "
                       f"kvdrill solution {drill.id}{chosen}")
        if finished and not piped and drill.id != weak_drill_id() and click.confirm(
                "Show the worked solution?", default=False):
            from trainer.drills import solutions

            tui.show_markdown(solutions.worked_solution(key))
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
    from trainer.store import kept_marks

    cards = kept_marks.Keeper(db).skill_cards()
    text = weak.build(cards, steps, random.Random(random.SystemRandom().randrange(2**63)))
    with tempfile.TemporaryDirectory(prefix="kvdrill-weak-") as folder:
        path = as_path(folder) / f"{weak.DRILL_ID}.yaml"
        path.write_text(text, encoding="utf-8")
        drill = loader.load_drill_file(path)
        key = AnswerKey(drill)
        attempt_id = session.new_attempt(db, key, path, None, exam=exam, strict=strict)
    return drill, key, attempt_id


OVERLONG_MARGIN = 4 * 1024 * 1024  # how far past the longest answer a line is read for its end


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
    rest, read = line, len(line)
    while not rest.endswith("\n") and len(rest) == MAX_ANSWER_CHARS + 1:
        if read >= MAX_ANSWER_CHARS + OVERLONG_MARGIN:
            # a line with no end in sight (/dev/zero, a binary file): read no further
            echo(f"Error: the answer to step {prompt.step.id} runs past {read:,} characters "
                 f"with no line end (at most {MAX_ANSWER_CHARS:,}): refused as too long; the "
                 "input stops here", err=True)
            return None
        rest = stdin.readline(MAX_ANSWER_CHARS + 1)  # the tail of an overlong line, dropped
        read += len(rest)
    answer = line.rstrip("\r\n")
    shown = answer if len(answer) <= 200 else answer[:199] + "…"
    unit = f" [{prompt.step.unit}]" if prompt.step.unit else ""
    # A transcript: the question as a terminal shows it, then the answer read for it.
    echo(f"\n{prompt.label} {prompt.text.strip()}{unit}\n{prompt.step.id}> {shown}")
    return answer
