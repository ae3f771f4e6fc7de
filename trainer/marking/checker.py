"""One answer against its reference: read it safely, compare within the step's tolerance,
name the known mistake a wrong value matches, and credit error carried forward."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Literal

from trainer.capacity.solver import FORMULAS, changed_inputs, value_of
from trainer.capacity.wrong_paths import (
    UNIT_MIX_IDS,
    UNIT_MIXES,
    WRONG_PATHS,
    WrongPath,
    changed_by,
)
from trainer.drills.model import Step
from trainer.drills.placeholders import fill
from trainer.drills.reference import AnswerKey, Reference, dim_of_unit, show
from trainer.errors import AnswerParseError, KvdrillError
from trainer.marking import chance, kept_readings
from trainer.marking.text_figures import Figure, figures_in
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor
from trainer.reading.numbers import format_number, typed_at_some_scale
from trainer.reading.patterns import lazy
from trainer.reading.reader import (
    OPERATOR_WORD,
    Answer,
    ParsedAnswer,
    accepted_dims,
    read_answer,
    working_values,
)
from trainer.reading.units import DIMENSIONLESS, Dim
from trainer.records import record, replace

if TYPE_CHECKING:  # imported when a wrong answer first needs a diagnosis
    from trainer.capacity.deployment import Deployment
    from trainer.marking.diagnosis import Diagnosis

# (the answer as read, the step's tolerance, the known mistakes named for it, those of them
# that give its very value)
Diagnoser = Callable[[ParsedAnswer, Fraction, tuple[str, ...], tuple[str, ...]],
                     "Diagnosis | None"]
# (the answer as read, the figures of the working shown before '=', the tolerance, the known
# mistakes that give the answer)
WorkingReader = Callable[[ParsedAnswer, tuple[Fraction, ...], Fraction, tuple[str, ...],
                          frozenset[Fraction]], "Diagnosis | None"]
# (a value; where the mistake or slip it repeats was named; what it was; the mistake's id or "")
Repeated = Callable[[], tuple[tuple[Fraction, str, str, str], ...]]
Verdict = Literal["correct", "wrong", "invalid", "unanswered", "answered", "revealed"]

ESTIMATE_TOLERANCE = Fraction(1, 5)  # the seed's "within 20%" for estimates
# An earlier answer this far from its reference is absurd, and earns no carried-forward credit.
# 16 query heads per GPU for 1 KV head (32×), a request's 400 output tokens left out (400×) or
# milliseconds written as seconds (1,000×) are mistakes; 44 GB typed as 0.001 GB is no answer.
CARRY_FACTOR = 1024
PAIR_TOLERANCE = Fraction(1, 100)
# An answer follows from the candidate's own numbers when it agrees this well (or to the digits
# typed): an estimate's wide band would take in answers that merely lie near them.
CARRY_TOLERANCE = Fraction(2, 100)
CARRY_GRAIN = Fraction(1, 4)  # the most the digits typed stand for, as a share of the answer


@record
class Mark:
    """The verdict on one step, with everything a transcript or report shows about it."""

    step_id: str
    kind: str
    answer: str | None
    verdict: Verdict
    expected: Fraction | None = None  # base units
    unit: str = ""
    parsed: Fraction | None = None  # base units (a range: its middle)
    shown: str = ""  # how the answer was read
    misconceptions: tuple[str, ...] = ()  # every known mistake the value matches, nearest first
    carried_forward: bool = False
    feedback: str = ""
    read_unit: str | None = None  # the unit the answer was read in ("KiB"; None: plain)
    note: str = ""  # how a human form was read, for a right answer ("'128k' read as 128 KiB")
    span: tuple[Fraction, Fraction] | None = None  # a range answer, base units
    # The likely slip behind a wrong value that no known mistake explains (solved backwards).
    diagnosis: Diagnosis | None = None
    # The mistake named is the one explanation (False: the first of several that give it).
    certain: bool = True
    figures: tuple[Figure, ...] = ()  # a text answer's figures that state a key or a mistake

    @property
    def is_numeric(self) -> bool:
        return self.kind == "numeric"

    @property
    def misconception(self) -> str | None:
        """The mistake named first (the nearest), or None."""
        return self.misconceptions[0] if self.misconceptions else None

    @property
    def sure_mistake(self) -> str | None:
        """The mistake named alone, the one explanation: not a tie, not beside a slip that
        gives the same number, not two made together, not a carried-forward answer. Only this
        may raise a red flag or be remembered as the skill's last mistake."""
        alone = self.certain and len(self.misconceptions) == 1 and self.diagnosis is None \
            and not self.carried_forward
        return self.misconceptions[0] if alone else None


def tolerance_of(step: Step) -> Fraction:
    """The step's own tolerance; an estimate that names none gets the seed's 20%."""
    tolerance = Fraction(str(step.tolerance))
    if step.estimate and not step.tolerance_given:
        return max(tolerance, ESTIMATE_TOLERANCE)
    return tolerance


def close(value: Fraction, target: Fraction, tolerance: Fraction) -> bool:
    if target == 0:  # "none fit": 0, or anything under half a sequence
        return abs(value) < Fraction(1, 2)
    return abs(value - target) <= tolerance * abs(target)


def check_text(step: Step, answer: str | None) -> Mark:
    if answer is None or not answer.strip():
        return Mark(step.id, "text", answer, "unanswered", feedback="no answer given")
    return Mark(step.id, "text", answer, "answered")


NUMBER = "<number>"  # an example form's figure: a placeholder, never a number to mistake for a hint


def form_text(step: Step) -> str:
    """The form a numeric step's answer takes, its figure a placeholder (issue 38: a real
    figure, however far from this step's answer, reads as a hint, or lands near another
    step's): "a number with its unit, such as <number> sequences"."""
    if step.ratio_of is not None:
        return f"a ratio, such as {NUMBER}x"
    if not step.unit:
        return "a number"
    if step.unit == "B":  # bytes per token or per sequence: typed in the unit that suits it
        return f"a number with a byte unit, such as {NUMBER} KiB or {NUMBER} GB"
    return f"a number with its unit, such as {NUMBER} {step.unit}"


def unreadable_reason(error: AnswerParseError) -> str:
    """Why the reader refused an answer, with what it had read so far."""
    understood = f" (read so far: {error.understood!r})" if error.understood else ""
    return f"{error}{understood}"


def check_numeric(
    step: Step,
    answer: str | None,
    reference: Reference,
    carried: tuple[Fraction, ...] | Callable[[], tuple[Fraction, ...]] = (),
    pairs: Callable[[], tuple[tuple[tuple[str, str], Fraction], ...]] = tuple,
    diagnose_slip: Diagnoser | None = None,
    deployment: Callable[[], Deployment] | None = None,
    ruled_out: frozenset[str] | Callable[[], frozenset[str]] = frozenset(),
    working_slip: WorkingReader | None = None,
    made_before: frozenset[str] = frozenset(),
    fed_by: tuple[str, ...] = (),
    fed_inputs: Mapping[str, Fraction] | None = None,
    repeated: Repeated = tuple,
    carried_right: Callable[[], tuple[Fraction, ...]] = tuple,
    stated: Callable[[], tuple[tuple[Fraction, str], ...]] = tuple,
    quotients: Callable[[], tuple[Fraction, ...]] = tuple,
    carried_from: Callable[[Fraction], tuple[tuple[str, ...], ...]] = lambda value: (),
    own_earlier: Callable[[], tuple[tuple[Fraction, str, str], ...]] = tuple,
    just_before: str = "",
) -> Mark:
    """Mark one numeric answer, and say at most one true thing about a wrong one (two only
    when they tie). `carried`: the values recomputed from the candidate's own earlier answers
    (error carried forward); an answer that follows from them is said to, alone. `pairs`
    gives the values of two mistakes made together, asked for only when no single one
    explains the answer; `diagnose_slip` (the reading, tolerance, the known mistakes named,
    those that give its very value) the likely slip of one input; `deployment` the step's,
    to name a mistake in its terms (its KV dtype); `ruled_out`: the mistakes the attempt's
    own right answers show were not made (or what gives them, asked only for a wrong
    answer); `working_slip`: the slip a figure of the shown working gives, which is said
    alone, before any mistake or guess; `made_before`: the mistakes named for sure on the
    attempt's earlier steps, the likelier of several that give a number. `fed_by`: the
    earlier steps this one is worked from that were answered wrong; a value none of their
    answers carries to is then not guessed at (a slip of one input read backwards, or two
    mistakes together, would blame this step for what came before it). `repeated`: this
    step's values with a mistake or slip named at an earlier step made again, each with what
    it was (asked for a wrong answer only): an answer that one of them gives is carried
    forward, the one mistake charged once. `carried_from`: the earlier answers a carried
    value follows from, named in its feedback (not every wrong one the step uses).
    `own_earlier`: the candidate's own answers to earlier steps that ask this step's quantity
    in another setting (value, step, as shown): a wrong answer that is one of them, typed
    again, is said to be, before a momentary slip that happens to give the same number."""
    unit = reference.unit
    counted = unit == "sequences" or reference.whole_count

    def nonzero(values: Callable[[], tuple[Fraction, ...]]) -> Callable[[], tuple[Fraction, ...]]:
        # a carried 0 stands for "none fit" only in a count: 0% of waste carried is no band
        # that takes in 35% (close() reads any answer under a half as 0)
        return functools.cache(lambda: tuple(v for v in values() if v != 0 or counted))

    # worked out where an answer needs them: a right sheet's answers never do
    carried_of = nonzero(carried if callable(carried) else lambda: carried)
    carried_right = nonzero(carried_right)
    if fed_by:
        diagnose_slip = None
    if answer is None or not answer.strip():
        return unanswered(step, answer, reference)
    base = Mark(step.id, "numeric", answer, "unanswered", reference.value, unit)
    if len(answer) <= 200 and _UNBOUNDED.match(answer):
        # "never", "no limit": a claim that there is no finite value, and every step has one
        return replace(base, verdict="wrong", shown=answer.strip(),
                       feedback=f"read '{answer.strip()}' as no finite value: expected "
                                f"{reference.display}.")
    answer, scope_note = _scoped(answer, "per_gpu" in (step.answer or ""))
    try:
        read = read_answer(answer, unit)
        if scope_note:
            read = replace(read, notes=(scope_note, *read.notes))
    except AnswerParseError as error:
        return replace(base, verdict="invalid",
                       feedback=f"{unreadable_reason(error)}; not marked. Type "
                                f"{form_text(step)}")
    expected_dim = dim_of_unit(unit)
    fitting = [r for r in read.readings if r.quantity.dim in accepted_dims(expected_dim)]
    if not fitting:
        first = read.readings[0]
        return replace(
            base, verdict="wrong", parsed=first.quantity.value, shown=first.shown,
            read_unit=first.unit,
            feedback=f"read as {first.shown}, but the question asks for "
                     f"{_dimension_words(expected_dim)}; expected {reference.display}",
        )
    tolerance = tolerance_of(step)
    targets = (reference.value, *reference.alternatives)
    # working may show it before its floor (or its ceiling)
    whole = reference.whole_count or reference.ceiling or unit == "sequences"
    if read.bound and read.span is not None:
        if step.accepts_bound:
            return _check_bound(base, read.span[1], reference, targets, tolerance)
        top = read.span[1]
        return replace(base, verdict="invalid", shown=f"at most {top.shown}",
                       read_unit=top.unit,
                       feedback=f"read as at most {top.shown}: give the value, not a "
                                "bound; not marked")
    if read.span is not None:
        return _check_span(base, read.span, reference, targets, tolerance, carried_of,
                           repeated)
    zero = fitting[0]
    if step.accepts_bound and zero.quantity.value == 0:
        # "~0%" where the order of magnitude is asked: under half its last digit (of one of
        # its unit, where the digits say no more)
        half = (zero.resolution or unit_factor(zero.unit or unit).value) / 2
        return _check_bound(base, zero, reference, targets, tolerance, half,
                            f"about {zero.shown.lstrip('~')}, under {show(half, unit)}")
    for reading in fitting:
        if _right(reading.quantity.value, reference, targets, tolerance, reading.resolution):
            own_figures = _carried_within(reading, reference, carried_of, carried_right)
            note = " ".join(_sentence(part) for part in (
                _working_note(read, reading, tolerance, unit, whole, right=True).strip(),
                # a count one's own earlier answers give is no rounding up of the reference's
                "" if own_figures else _before_rounding(reading, reference, tolerance, unit),
                *read.notes, reading.note, own_figures,
                # (a mistake carried from an earlier answer was named there: said once)
                _unit_guessed(reading, unit),
                "" if own_figures else _also_a_mistake(reading, reference))
                if part)
            return replace(base, verdict="correct", parsed=reading.quantity.value,
                           shown=reading.shown, read_unit=reading.unit, note=note,
                           feedback=f"read as {reading.shown}: correct. {note}".rstrip())
    if callable(ruled_out):  # a wrong answer: what the right ones rule out is asked now
        ruled_out = ruled_out()
    for reading in fitting:
        value = reading.quantity.value
        guess = _round_guess(reading)
        band = GUESS_BAND if guess else naming_band(value, reading.resolution, tolerance)
        # A count typed with its fraction kept (0.4, 3.02 sequences) follows from nothing
        # (earlier answers give a whole count, and 0.4 is not 0) and shows the floor left out.
        # (Little's law's 0.6 requests in flight is a mean: its reference keeps a fraction too)
        kept_fraction = whole and value % 1 != 0 and reference.value % 1 == 0
        # the carried value nearest the answer is the one quoted (each alone, or together)
        grain = _approximate_figure(reading, unit) or reading.resolution or \
            _last_digit(value, reading.unit or unit)
        # one typed figure is a rough guess, not a result carried: "1 ms" does not follow
        # from 0.568 ms because it is that rounded to one figure
        grain = min(grain, abs(value) * CARRY_GRAIN) if grain is not None else None
        follows = None if kept_fraction else min(
            (c for c in carried_of()
             if _agrees(value, c, min(tolerance, CARRY_TOLERANCE), grain)),
            key=lambda c: abs(c - value), default=None)
        if follows is not None and any(
                _agrees(value, c, min(tolerance, CARRY_TOLERANCE), grain)
                for c in carried_right()):
            # from earlier answers each marked right (within its tolerance): nothing here is
            # wrong (260 tok/s from a right 3.85 ms, where the key's 3.92 ms gives 255)
            return replace(base, verdict="correct", parsed=value, shown=reading.shown,
                           read_unit=reading.unit,
                           feedback=f"read as {reading.shown}: correct. It follows from your "
                                    f"earlier answers ({show(follows, unit)}), each right "
                                    "within its tolerance; from the reference figures it is "
                                    f"{reference.display}.")
        if follows is not None:
            # The candidate's own earlier numbers give this answer: that is the explanation,
            # before any mistake of this step.
            # ("…to bytes-per-token (203,895 tokens)" read as that answer's own value)
            source, which = _sources_text(carried_from(follows)
                                          or ((fed_by,) if fed_by else ()))
            feedback = (f"read as {reading.shown}: expected {reference.display}. It follows "
                        f"from {source}, {which} {show(follows, unit)} here: carried forward."
                        + _working_note(read, reading, tolerance, unit, whole))
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit, carried_forward=True, feedback=feedback)
        # Working that comes to the answer by plain arithmetic, with no conversion in it,
        # mixed no unit prefixes on its last step, whatever an earlier step mixed ("76.95 - 16
        # = ~61 GB" left the reserve out; it did not mix GB and GiB again), and beside another
        # mistake that gives the number a unit mix is no tie (80*.9 - 16 = 56 GB).
        figures = _figures(read.working_text)
        plain = _by_arithmetic(read, reading, tolerance) and \
            not any(f in CONVERSIONS for f in figures)
        again = None if kept_fraction else next(
            (entry for entry in repeated()
             if _agrees(value, entry[0], min(tolerance, CARRY_TOLERANCE), grain)
             and not (plain and entry[3] in UNIT_MIX_IDS)), None)
        if again is not None:
            # a mistake already named, made again where this step reads the same thing (the
            # reserve left out of 1a and again of 4e): charged once, as an error carried
            _, where, what, path_id = again
            feedback = (f"read as {reading.shown}: expected {reference.display}. It is {where}, "
                        f"made again here: {what}. One mistake is charged once: this step "
                        "earns what an answer carried forward earns."
                        # (244% of the datasheet's bandwidth: the slip shows in the physics)
                        + (OVER_THE_WHOLE if step.answer in AT_MOST_WHOLE and value > 1 else "")
                        + _working_note(read, reading, tolerance, unit, whole))
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit, carried_forward=True, feedback=feedback,
                           misconceptions=(path_id,) if path_id else ())
        # (working "right" only where it comes to the value, not anywhere in a wide band: a
        # budget of 80.5 GB is no count within a follow-up's 20% of 97: expert pass 54)
        right_working = _working_gives_right(read, reading, targets,
                                             min(tolerance, CARRY_TOLERANCE), unit)
        if right_working is not None \
                and not _agrees(right_working, value, Fraction(0), reading.resolution):
            # (working that comes to the very value typed is no slip of the last line: 3.02
            # sequences, worked as 52/17.2 and never rounded down, is the step's own mistake)
            # The working is right and the result after it is not: no mistake or slip of the
            # reasoning to name, only of the last line (a unit mixed in writing it down).
            twin_mix = _prefix_mixed(reading, right_working)
            mixed = [twin_mix[0]] if twin_mix else []
            said = f" {_sentence(mixed[0].mistake_in(None))} {mixed[0].advice}" if mixed else ""
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit, misconceptions=tuple(p.id for p in mixed),
                           feedback=f"read as {reading.shown}: expected {reference.display}. "
                                    f"Your working ({_last_working_text(read)}) gives "
                                    f"{show(right_working, unit)}, which is right; the value "
                                    f"you ended with was marked.{said}")
        operands = _operands(read.working_text)
        shown = None if working_slip is None or not operands else working_slip(
            reading, operands, min(tolerance, CARRY_TOLERANCE),
            tuple(p.id for p in _mistakes(value, reference, band)),
            _figures_of_bytes(read.working_text))
        if shown is not None:
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit, diagnosis=shown,
                           feedback=f"read as {reading.shown}: expected {reference.display}. "
                                    f"{shown.sentence}")
        # (a small count is too often another step's by chance: 4 sequences, 4 KV heads)
        # (nor where a mistake of belief the step lists gives it too: 8,192 for GQA's d_kv,
        # kept from MHA's, is the query heads used for the KV heads, and is named so)
        believed = any(path_id not in MOMENTARY and _listed(step, path_id) and (
            wrong == value or (reading.resolution is not None
                               and 2 * abs(wrong - value) <= reading.resolution))
            for path_id, wrong in reference.wrong)
        again_typed = None if figures or kept_fraction or believed or (
            value.denominator == 1 and abs(value) < 10) else next(
            ((step_id, shown_there) for earlier, step_id, shown_there in own_earlier()
             if earlier == value or (reading.resolution is not None
                                     and 2 * abs(earlier - value) <= reading.resolution)), None)
        if again_typed is not None:
            # (107 GB, the budget on the marketed card, typed again where the card as its
            # driver reports it is asked: the earlier answer kept, whatever mistake also gives
            # 107; 134 sessions kept from the 1-byte-per-parameter count)
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit,
                           feedback=f"read as {reading.shown}: expected {reference.display}. "
                                    f"It is your answer to {again_typed[0]} "
                                    f"({again_typed[1]}) again, not what this step asks for.")
        in_twin = _prefix_mixed(reading, reference.value)
        if in_twin is not None:  # the right number in the twin unit (52 GiB for 52 GB): that
            path, twin = in_twin
            return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                           read_unit=reading.unit, misconceptions=(path.id,),
                           feedback=f"read as {reading.shown}: expected {reference.display}. "
                                    f"The number is right in {twin}: you "
                                    f"{path.mistake_in(None)}. {path.advice}"
                                    + _working_note(read, reading, tolerance, unit, whole))
        d = deployment() if deployment is not None else None
        paths, certain = _explaining(step, value, reading.resolution, reference, band,
                                     ruled_out, d, mixes_tie=not plain,
                                     made_before=made_before)
        # a bare product ("2*80*64*128*2") is working that shows every figure it multiplies
        bare = None if read.working_text else _BARE_PRODUCT.match(answer)
        in_sight = _figures(bare.group("expression")) if bare else figures
        comes_to = bare is not None or _shown_working_comes_to(read, reading, value, tolerance,
                                                               unit)
        if d is not None and comes_to:
            # (the value typed counts as shown: "3584/16 = 224" works out the 224 it slips)
            paths = [p for p in paths if not _working_hides(d, p, (*in_sight, value))]
        # working that rounds its own quotient the other way rules the rounding slip out
        # (239/166 = 1.4 → 2 took the ceiling: 2 is no count rounded down, whatever gives it)
        # (and makes the value's other coincidences no surer: none is named)
        if any(_rounded_otherwise(p.id, value, figures) for p in paths):
            paths = []
        # working that rounds its own quotient this way shows the rounding slip itself
        # (238/94 = 2.5 → 2): named alone, not beside a coincidence that gives 2 too
        shown_rounding = [p for p in paths if p.id in ROUNDINGS
                          and _rounded_otherwise(_OTHER_ROUNDING[p.id], value, figures)]
        if shown_rounding:
            paths = shown_rounding
        if fed_by:
            # where the step is worked from an earlier answer that was wrong and moves it, a
            # mistake named on the key's figures blames one slip for two (8 KV heads per GPU
            # in bf16 is 320 KiB, as 4 in fp32 is), unless it is a mistake of that very input
            # (32 query heads used for the 16 KV heads answered)
            # ... but a mistake the step itself lists, giving the very number typed, is named
            # whatever else was wrong before: the split latent's 8,784 B beside a wrong latent
            # width that would give 140,544 (expert pass 47, M6)
            paths = [p for p in paths if d is not None and (
                _touches(d, p, fed_inputs)
                or (_listed(step, p.id) and _gives_exactly(reference, p.id, value)))]
            if paths and not all(_listed(step, p.id) for p in paths) and (
                    _rounded_up_own(value, quotients(), counted) is not None
                    or _rounded_down_own(value, quotients(), reference.ceiling) is not None):
                # the candidate's own numbers, rounded the wrong way, give it: that is said,
                # not a mistake the key's figures happen to give too
                paths = []
        if paths and not fed_by and not any(_listed(step, p.id) for p in paths) \
                and abs(value) >= 10 and just_before \
                and (_copied(reading, stated()) or "").startswith(f"the answer to {just_before} ("):
            # the step before's figure kept (64 in flight given as the open conversations):
            # said as that, not a mistake the step does not list that gives it by chance
            # (expert pass 49, M6)
            paths = []
        if not paths:
            continue
        feedback = f"read as {reading.shown}: expected {reference.display}."
        if len(paths) == 2:
            one, other = paths
            feedback += (f" This is the value you get if you {one.mistake_in(d)}, or if you "
                         f"{other.mistake_in(d)}: both give it. {one.advice} {other.advice}")
        else:
            feedback += f" This is the value you get if you {paths[0].mistake_in(d)}. " \
                        f"{paths[0].advice}"
        # One mistake named: a strong slip of one input that gives the same number (or, where
        # the mistake is only within 2%, the number as typed) is said beside it as a tie, the
        # second and last explanation; then neither is certain enough for a red flag.
        beside = None
        ties = _same_number(value, reading.resolution, reference, paths)
        if len(paths) == 1 and paths[0].id not in ties and _near_an_earlier_answer(
                value, stated()):
            # the mistake only near the number, and an earlier step's answer as near: 189
            # sessions for BF16 KV after 192 with FP8 KV may be that answer kept (the step's
            # own change not made) as well as the mistake: said, but no red flag (found in
            # practice, stop 68)
            certain = False
        # the floor left out is said alone: no slip of an input beside it
        floor_left_out = kept_fraction and paths[0].id == "rounded-up"
        if diagnose_slip is not None and len(paths) == 1 and not floor_left_out \
                and not (paths[0].id == WEIGHTS_ALONE and ties):
            found = _unless_contradicted(
                diagnose_slip(reading, tolerance, (paths[0].id,), ties), in_sight, comes_to, value)
            if found is not None and found.crowded:
                certain = False  # the mistake is one of many ways to this number
                feedback += f" {CROWDED_BESIDE}"
            elif found is not None and _listed(step, paths[0].id) and paths[0].id in ties:
                # the mistake the step is about gives the number as typed: said alone; a slip
                # of one input that gives it too makes it less than certain (no red flag)
                certain = False
            elif found is not None and paths[0].id not in ties:
                # the mistake is only near the answer, a slip of one input gives it as typed
                # (10.3 ms: the datasheet's 4.8 TB/s gives 10.29, the weights left out 10.1):
                # the slip is said alone, a guess
                slip = found.alone()
                return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                               read_unit=reading.unit, diagnosis=slip,
                               feedback=f"read as {reading.shown}: expected "
                                        f"{reference.display}. {slip.sentence}"
                                        + _working_note(read, reading, tolerance, unit, whole))
            elif found is not None:
                beside = replace(found.alone(), tie=True)
                feedback += f" {beside.sentence}"
        feedback += _working_note(read, reading, tolerance, unit, whole)
        return replace(base, verdict="wrong", parsed=value, shown=reading.shown,
                       read_unit=reading.unit, misconceptions=tuple(p.id for p in paths),
                       feedback=feedback, diagnosis=beside,
                       # a round guess is some mistake's for certain only where the step
                       # lists it and it gives that very number (0.5 KV heads at TP=16)
                       certain=certain and not (guess and not all(
                           _listed(step, p.id) and _gives_exactly(reference, p.id, value)
                           for p in paths)))
    first = fitting[0]
    feedback = f"read as {first.shown}: expected {reference.display}."
    value = first.quantity.value
    copied = None if fed_by else _copied(first, stated())
    if copied is not None:
        # a figure the drill shows (another step's answer, the situation's checkpoint size):
        # copied, not a slip of some input that happens to come to it (16.06 GB is no context
        # of 8,000 tokens)
        return replace(base, verdict="wrong", parsed=value, shown=first.shown,
                       read_unit=first.unit,
                       feedback=f"{feedback} It is {copied}, not what this step asks for."
                                + _working_note(read, first, tolerance, unit, whole))
    band = GUESS_BAND if _round_guess(first) else naming_band(value, first.resolution, tolerance)
    nearby = _mistakes(value, reference, band)
    crowded = len(nearby) > 2 or _ruled_out_tie(
        step, nearby, _same_number(value, first.resolution, reference, nearby), ruled_out)
    bare = None if read.working_text else _BARE_PRODUCT.match(answer)
    diagnosis = None if diagnose_slip is None or crowded else _unless_contradicted(
        diagnose_slip(first, tolerance, (), ()),
        _figures(bare.group("expression")) if bare else _figures(read.working_text),
        bare is not None or _shown_working_comes_to(read, first, value, tolerance, unit), value)
    if diagnosis is not None and diagnosis.crowded:
        diagnosis, crowded = None, True
    # A slip of one input is one thing wrong; two mistakes made together are two.
    together = [] if diagnosis is not None or crowded or fed_by else \
        _pair(value, first.resolution, reference.whole_count or unit == "sequences",
              step.estimate, pairs, ruled_out)
    if step.answer in AT_MOST_WHOLE and value > 1:
        # more than the whole: no slip of one input, and no rounding, makes it right
        feedback += OVER_THE_WHOLE
        return replace(base, verdict="wrong", parsed=value, shown=first.shown,
                       read_unit=first.unit, feedback=feedback)
    if together:
        one, other = together
        d = deployment() if deployment is not None else None
        feedback += (f" This is the value you get if you {one.mistake_in(d)}, and also "
                     f"{other.mistake_in(d)}. {one.advice} {other.advice}")
    elif diagnosis is not None:
        feedback += f" {diagnosis.sentence}"
    elif fed_by and (rounded := _rounded_up_own(value, quotients(), counted)) is not None:
        # "about 5" from the candidate's own 4.74: their numbers, but a count rounded up
        feedback += (f" Your earlier answers give {show(rounded, unit)} here before the "
                     f"floor; {first.shown} rounds it up, but only whole ones fit: "
                     f"{show(Fraction(math.floor(rounded)), unit)}.")
    elif fed_by and (below := _rounded_down_own(value, quotients(), reference.ceiling)) \
            is not None:
        # 8 from the candidate's own 8.45 GPUs' worth: their numbers, a ceiling rounded down
        feedback += (f" Your earlier answers give {show(below, unit)} here before rounding up; "
                     f"{first.shown} rounds it down, but a part of one more needs all of it: "
                     f"{show(Fraction(math.ceil(below)), unit)}.")
    elif fed_by:
        feedback += f" {_fed_note(fed_by)}"
    elif crowded:
        feedback += f" {CROWDED}"
    else:  # no slip explains it: if it is near, it is the rounding
        # (not where shown working comes to it: "80*0.9 - 16 = 56 GB" is no rounding of 57,
        # whatever it is, so "close" would hide what the working did)
        worked = _figures(read.working_text) and _working_comes_to(read, first, value,
                                                                   Fraction(0), unit)
        near = None if worked else _near_miss(value, reference, tolerance, step.unit or "")
        feedback += f" {near}" if near else ""
    feedback += _working_note(read, first, tolerance, unit, whole)
    return replace(base, verdict="wrong", parsed=value, shown=first.shown,
                   read_unit=first.unit, feedback=feedback, diagnosis=diagnosis,
                   misconceptions=tuple(p.id for p in together), certain=not together)


# Mistakes that betray a belief (a model's shape, the budget's terms), which a right answer
# elsewhere in the attempt rules out; a unit mixed, a count rounded or a per-GPU figure given
# is a slip of the moment, which it does not. So is an MoE's active weights subtracted from the
# budget where its resident weights were answered right: of two figures worked side by side,
# the wrong one picked (the drill's own wrong path for the budget).
MOMENTARY = frozenset({*UNIT_MIX_IDS, "rounded-up", "rounded-down", "per-gpu-vs-total",
                       "link-bits-as-bytes", "moe-active-as-resident"})


def _explaining(step: Step, value: Fraction, resolution: Fraction | None,
                reference: Reference, band: Fraction, ruled_out: frozenset[str],
                deployment: Deployment | None = None, mixes_tie: bool = True,
                made_before: frozenset[str] = frozenset()) -> tuple[list[WrongPath], bool]:
    """The mistakes to name for a wrong value, and whether the one named is the only
    explanation. The step's own listed mistake first (with a second only when that one alone
    gives the same value: a tie); else the one other known mistake that gives the number as
    typed (two: a tie; of three or more, the first, said without certainty). Mistakes within
    `band` (naming_band) are considered; those that give the number as typed come first;
    those the attempt's right answers rule out are left out. (Two made together are tried
    only after a slip of one input: see _pair.)"""
    everything = _mistakes(value, reference, band)
    exact = set(_same_number(value, resolution, reference, everything))
    if step.estimate and reference.unit == "sequences":
        # an estimated count may be the quotient rounded, where a mistake's value is its floor
        exact |= {path_id for path_id, wrong in reference.wrong
                  if 0 <= value - wrong <= 1 and path_id in {p.id for p in everything}}
    if WEIGHTS_ALONE in (exact or {p.id for p in everything}):
        # The weights alone: any other mistake that gives it does so by leaving out the KV.
        # A right answer elsewhere that counts the KV rules it out only where it is not the
        # number as typed: leaving a term out is a slip of one step, not a belief ("15.01 /
        # 4.8 = 3.1 ms" after a right 15.55 GB at batch 1).
        # (unless another that gives it as typed is not ruled out: 1 replica for 173 ÷ 105
        # is the ceiling left out, beside a right step time that read the KV)
        others = exact - {WEIGHTS_ALONE} - ruled_out
        if WEIGHTS_ALONE in ruled_out and WEIGHTS_ALONE not in exact:
            return [], False
        if not (WEIGHTS_ALONE in ruled_out and others):
            return [WRONG_PATHS[WEIGHTS_ALONE]], True
    found = [p for p in everything if p.id not in ruled_out]
    if not mixes_tie and any(p.id not in UNIT_MIX_IDS for p in everything):
        # plain working with no conversion in it mixed no unit where another mistake gives the
        # number, even one an earlier right answer rules out (the reserve left out of "77 - 16
        # = 61 GB"); a mix inside the working, "52e9/128000", has no other to give it
        found = [p for p in found if p.id not in UNIT_MIX_IDS]
    # A mistake the step does not list is named only when it gives the number as typed.
    found = [p for p in found if p.id in exact] or [p for p in found if _listed(step, p.id)]
    again = [p for p in everything
             if p.id in exact and p.id in made_before and _listed(step, p.id)
             and (mixes_tie or p.id not in UNIT_MIX_IDS)]  # (plain working mixed no unit)
    if len(again) == 1:
        # the step's own mistake, named for sure on an earlier step, gives this very number:
        # the same mistake again is likelier than another that happens to give it (4e's 22
        # is 1a's reserve left out again, before it is a count rounded up)
        return again, True
    if found and not any(_listed(step, p.id) for p in found) and \
            _ruled_out_tie(step, everything, exact, ruled_out):
        return [], False
    if not mixes_tie and any(p.id not in UNIT_MIX_IDS for p in found):
        found = [p for p in found if p.id not in UNIT_MIX_IDS]
    listed = [p for p in found if _listed(step, p.id)]
    # A count one off its floor or ceiling is the rounding first: other mistakes give a small
    # count by chance more often than by design.
    listed.sort(key=lambda p: p.id not in ROUNDINGS)
    sure = value != 0  # many roads lead to nothing: a 0 is no one mistake's for certain
    if listed or found:
        first = (listed or found)[0]
        # A tie: another that gives the number as typed as well, or the very same value.
        peers = [p for p in found if p is not first and (
            p.id in exact if first.id in exact
            else _same_value(reference, first.id, p.id, value))
            and not _same_change(first, p, deployment)]
        peers = [p for n, p in enumerate(peers)
                 if not any(_same_change(q, p, deployment) for q in peers[:n])]
        if listed and first is listed[0]:
            # one explanation: the step's own mistake is named alone; another that the step
            # does not list and that gives the number too only makes it less than certain
            unlisted = [p for p in peers if not _listed(step, p.id)]
            if unlisted:
                peers = [p for p in peers if p not in unlisted]
                sure = False
        if len(peers) == 1:
            return [first, *peers], False
        return [first], sure and not peers
    return [], False


def _ruled_out_tie(step: Step, near: list[WrongPath], exact: Iterable[str],
                   ruled_out: frozenset[str]) -> bool:
    """Whether the step's own mistake gives this very number (`exact`, among the mistakes
    `near` it), though a right answer elsewhere argues against it: then another mistake or slip
    that gives it too is no surer (bits for bytes, or every layer of a hybrid counted: 128 KiB
    either way), and none is named."""
    exact = set(exact)
    return any(p.id in ruled_out and p.id in exact and _listed(step, p.id) for p in near)


def _same_change(first: WrongPath, other: WrongPath, d: Deployment | None) -> bool:
    """Two mistakes that change the deployment alike are one said twice (for Llama-3.1-8B,
    hidden ÷ head_dim is the 32 query heads)."""
    if d is None:
        return False
    changed = first.change(d)
    return changed is not None and changed == other.change(d)


def _pair(value: Fraction, resolution: Fraction | None, whole: bool, estimate: bool,
          pairs: Callable[[], tuple[tuple[tuple[str, str], Fraction], ...]],
          ruled_out: frozenset[str]) -> list[WrongPath]:
    """Two mistakes made together that give the number as typed, when neither is ruled
    out. Pairs are hundreds: a small count, or an estimate's count, which many of them give,
    is left alone."""
    if whole and (estimate or value < PAIR_COUNT):
        return []
    half = max((resolution or Fraction(0)) / 2, abs(value) * SAME_VALUE)
    together = _two_mistakes(value, min(half / abs(value), PAIR_TOLERANCE), pairs) \
        if value else []
    return [] if any(p.id in ruled_out for p in together) else together


# A mistake is named when it gives the answer within this (or within the typed digits), and
# never beyond the step's tolerance: an estimate's 20% band would take in a random number.
NAMING_BAND = Fraction(2, 100)
PAIR_COUNT = 10  # a whole count below this, many pairs of mistakes give


# A number of one significant figure (100 GB, 50,000, 2) is a round guess as often as a
# result: a mistake is named only where it gives that number to within half a percent (60 GB
# for the 59.94 all of HBM gives), and for certain only where it gives that very number.
GUESS_BAND = Fraction(1, 200)
EXACT_GUESS = Fraction(1, 10**4)


def _gives_exactly(reference: Reference, path_id: str, value: Fraction) -> bool:
    return any(close(value, wrong, EXACT_GUESS) for wrong_id, wrong in reference.wrong
               if wrong_id == path_id)


def _round_guess(reading: ParsedAnswer) -> bool:
    if reading.quantity.value == 0:
        return False  # a 0 has its own rule (no one mistake's for certain)
    unit = reading.unit or ""
    try:
        scale = unit_factor(unit).value if unit else Fraction(1)
    except KvdrillError:
        return False  # a unit read but not one of the table's: taken as typed, no guess
    return chance.typed_figures(reading.quantity.value, reading.resolution, scale) <= 1


_UNBOUNDED = lazy(r"^\s*(?:∞|(?:never|infinite|infinity|unlimited|unbounded|always|"
                  r"no\s+(?:limit|cap|bound|ceiling|upper\s+bound|max(?:imum)?))\b)"
                  r"[^0-9]*$", re.IGNORECASE)
# "48 per GPU, 97 total": two figures, one labelled per GPU and one summed, read as the one
# the step asks for (a per-GPU quantity, or the whole job's)
_PER_GPU = lazy(r"\bper[- ]?(?:gpu|card|device|rank)\b|/\s*gpu\b", re.IGNORECASE)
_SUMMED = lazy(r"\b(?:total|in all|across|summed|overall|combined|together|both|pair|"
               r"node|job)\b", re.IGNORECASE)
_TWO_PARTS = lazy(r"^([^,;]*\d[^,;]*)[,;]\s*([^,;]*\d[^,;]*)$")


def _scoped(answer: str, per_gpu: bool) -> tuple[str, str]:
    """The answer, or the one of its two labelled figures the step asks for, with a note."""
    match = _TWO_PARTS.match(answer.strip()) if len(answer) <= 200 else None
    if match is None:
        return answer, ""
    first, second = (part.strip() for part in match.groups())
    scopes = [(bool(_PER_GPU.search(p)), bool(_SUMMED.search(p)) and not _PER_GPU.search(p))
              for p in (first, second)]
    if scopes not in ([(True, False), (False, True)], [(False, True), (True, False)]):
        return answer, ""
    pick = (first if scopes[0][0] else second) if per_gpu else \
        (first if scopes[0][1] else second)
    if pick == first:
        return answer, ""  # read first as it stands
    return pick, f"read '{pick}', the {'per-GPU' if per_gpu else 'summed'} figure the step asks for"


def naming_band(value: Fraction, resolution: Fraction | None, tolerance: Fraction) -> Fraction:
    """How near a mistake's value an answer must lie for the mistake to be named."""
    typed = (resolution or Fraction(0)) / 2 / abs(value) if value else Fraction(0)
    # a mistake's value rounded to the figures typed is the answer as typed, even where the
    # step's tolerance is tighter ("1.3 ms" for the 1.34 a link's bits read as bytes give)
    return max(min(tolerance, max(NAMING_BAND, typed)), min(typed, TYPED_BAND))


TYPED_BAND = Fraction(5, 100)  # the most two typed figures may stand for: 1.3 for 1.34


WEIGHTS_ALONE = "forgot-kv"
ROUNDINGS = ("rounded-up", "rounded-down")  # added by the answer key only to whole counts
# Mistakes listed wherever they change a step, whatever its own list says.
ALWAYS_LISTED = frozenset({WEIGHTS_ALONE, "forgot-kv-factor-2", *ROUNDINGS})


def _listed(step: Step, path_id: str) -> bool:
    """The step lists the mistake (a unit mix listed stands for every prefix's)."""
    if path_id in ALWAYS_LISTED:
        return True
    if path_id in UNIT_MIX_IDS:
        return any(listed in UNIT_MIX_IDS for listed in step.misconceptions)
    return path_id in step.misconceptions


def _same_value(reference: Reference, first: str, second: str, value: Fraction) -> bool:
    """Both mistakes give the value nearest the answer within SAME_VALUE of each other."""
    def nearest(path_id: str) -> Fraction:
        return min((wrong for wrong_id, wrong in reference.wrong if wrong_id == path_id),
                   key=lambda wrong: abs(wrong - value))
    return close(nearest(first), nearest(second), SAME_VALUE)


# Said where three or more mistakes or slips give the number alike, and none is named alone;
# and beside a mistake that several slips of one input give as well.
CROWDED = "Several different slips give this same number, so none is named as the cause."
CROWDED_BESIDE = "Several slips of one input give this number too: it is one reading of many."

# A wrong value this close to the reference is a rounding, not a slip: say the rule instead.
# (A blind review read "Close (22% off)" of a guess on a ±5% step as a false comfort.)
NEAR_MISS = 3  # times the step's tolerance
NEAR_MISS_AT_MOST = Fraction(1, 10)  # "close" is never said of more than 10% off


def _near_miss(value: Fraction, reference: Reference, tolerance: Fraction, unit: str) -> str:
    """The rounding rule, when a wrong value lies within NEAR_MISS tolerances of the reference:
    right is within the tolerance, or the reference rounded to the figures typed."""
    target = reference.value
    if target == 0 or reference.whole_count or abs(value - target) > \
            min(NEAR_MISS * tolerance, NEAR_MISS_AT_MOST) * abs(target):
        return ""
    off = format_number(abs(value - target) / abs(target) * 100, sig=2)
    # shortest first, then by text: the same sheet says the same thing on every run
    rounded = sorted({_rounded(target, figures, unit) for figures in (2, 3)},
                     key=lambda text: (len(text), text))
    return (f"Close ({off}% off), but outside {_percent(tolerance)}: an answer counts when it "
            f"is within {_percent(tolerance)} of {reference.display}, or is that figure "
            f"rounded to two or more figures ({' or '.join(rounded)}).")


def _rounded(value: Fraction, figures: int, unit: str) -> str:
    in_unit = value / unit_factor(unit).value if unit else value
    text = format_number(in_unit, sig=figures) if abs(in_unit) < 10 ** figures \
        else format_number(round(in_unit, -(len(str(int(abs(in_unit)))) - figures)))
    return f"{text}%" if unit == "%" else f"{text} {unit}".strip()


def _sentence(text: str) -> str:
    text = text.strip()
    return text[0].upper() + text[1:] + ("" if text.endswith(".") else ".")


def _unit_guessed(reading: ParsedAnswer, unit: str) -> str:
    """A bare number read in another unit than the step's, which made it right ("0.062" on a
    ms step, read as seconds): said, so the next one carries its unit."""
    if reading.had_unit or reading.unit == unit or not {reading.unit, unit} <= _TIMES:
        return ""  # (a product of the shape's figures is bytes, said by its unit column)
    return f"typed without a unit, it was read in {reading.unit}: write the unit ({unit})"


_TIMES = frozenset({"s", "ms", "µs"})


ROUNDED_ON_THE_WAY = Fraction(1, 400)


def _also_a_mistake(reading: ParsedAnswer, reference: Reference) -> str:
    """A right answer, within the step's tolerance, that is to its last digit what a listed
    mistake gives and not the reference rounded (3.85 ms, what leaving out the session's KV
    gives, where the step takes 3.92 within 2%): said, the verdict kept, so the slip is not
    carried on unseen."""
    value, grain = reading.quantity.value, reading.resolution
    if grain is None or abs(value - reference.value) <= 2 * grain:
        return ""  # two steps of its last digit from the reference, or no telling them apart
    # to its last digit, or as near as a figure rounded on the way gives (25.8 GB ÷ 6.7 TB/s
    # is 3.85 ms where 25.76 GB give 3.845), far nearer it than the reference; one mistake only
    paths = {path_id for path_id, wrong in reference.wrong
             if abs(value - wrong) <= max(grain / 2, ROUNDED_ON_THE_WAY * abs(wrong))
             and abs(value - reference.value) > 3 * abs(value - wrong)
             and path_id in WRONG_PATHS}
    if len(paths) != 1:
        return ""
    path = WRONG_PATHS[paths.pop()]
    return (f"right within the step's tolerance, though {reading.shown} is what you get if "
            f"you {path.mistake_in(None)}; the reference is {reference.display}")


def _carried_within(reading: ParsedAnswer, reference: Reference,
                    carried: Callable[[], tuple[Fraction, ...]],
                    carried_right: Callable[[], tuple[Fraction, ...]]) -> str:
    """A right answer, within a wide tolerance, that is an earlier wrong answer carried
    through (8.88 ms from one's own 18.2 GB, where 16.6 GB give 8.1): said, the verdict kept
    (the step's prompt promises its tolerance: review 15 read a carried-forward verdict there
    as wrong ten times). Not said where answers marked right give it."""
    value, grain = reading.quantity.value, reading.resolution
    if _agrees(value, reference.value, CARRY_TOLERANCE, grain):
        return ""
    if any(_agrees(value, c, CARRY_TOLERANCE, grain) for c in carried_right()):
        return ""
    # the nearest of the values one's answers give (103 from one's 424k tokens, not the 105
    # one's budget and bytes per token give)
    follows = min((c for c in carried() if _agrees(value, c, CARRY_TOLERANCE, grain)),
                  key=lambda c: abs(value - c), default=None)
    if follows is None:
        return ""
    return (f"right within the step's tolerance; it follows from your earlier answers "
            f"({show(follows, reference.unit)}); from the reference figures it is "
            f"{reference.display}")


def _before_rounding(reading: ParsedAnswer, reference: Reference, tolerance: Fraction,
                     unit: str) -> str:
    """Where a right answer is right only for the value before the counts were rounded (a
    ratio of 36.3 and 4.61 sessions, 7.87, where the whole counts give 9): say so."""
    value = reading.quantity.value
    past = next((a for a in reference.alternatives if a < value), None)
    if unit == "sequences" and past is not None and reference.value < value <= math.ceil(past):
        # 8 for 7.81: rounding a count up is no rounding the sheet did (7 whole ones fit);
        # 103 for 97.5 is no rounding at all, only a figure within the tolerance
        whole = math.floor(past)
        unfloored = show(past, unit)
        # 12.96 is not "13", and 106.1 not "106" beside the 106 that fit
        if unfloored.split()[0].replace(",", "") in (str(whole), str(whole + 1)):
            unfloored = f"{float(past):,.2f} {unit}"
        return (f"within the tolerance, though only {whole} whole "
                f"{'sequence' if whole == 1 else 'sequences'} fit ({unfloored} "
                "before the floor)")
    if close(value, reference.value, tolerance) or (
            reading.resolution is not None
            and 2 * abs(value - reference.value) <= reading.resolution):
        return ""
    before = next((a for a in reference.alternatives if close(value, a, tolerance)), None)
    if before is None:
        return ""
    if before == reference.own:
        # (309 ÷ 61 sessions, each right within its tolerance: nothing was rounded)
        return (f"right for the ratio of your own two answers, {show(before, unit)}; the "
                f"reference figures give {reference.display}")
    return (f"right for the value before rounding, {show(before, unit)}; the figures as "
            f"rounded give {reference.display}")


def _right(value: Fraction, reference: Reference, targets: tuple[Fraction, ...],
           tolerance: Fraction, resolution: Fraction | None = None) -> bool:
    """Within the step's tolerance of a target, or the target correctly rounded to the digits
    typed ("38 tok/s" for 38.4)."""
    if reference.edge is not None and value == reference.edge:
        return True  # a knife edge: the inputs as shown give this count
    if reference.whole_count and reference.value < value <= reference.value + 1:
        return False  # the partial sequence (or the one after the floor) is not served
    if reference.ceiling and reference.value - 1 <= value < reference.value:
        return False  # part of one more block (or replica) needs all of it
    counted = reference.unit == "sequences" or reference.whole_count
    return any(((close(value, target, tolerance) and (target != 0 or counted or value == 0))
                or (resolution is not None and 2 * abs(value - target) <= resolution))
               and not _past_what_fits(value, reference, target)
               for target in targets)


def _past_what_fits(value: Fraction, reference: Reference, target: Fraction) -> bool:
    """A count of sessions above the count before the floor, right only by that value's band
    (9 for 7.81 within 20%, where 7 fit: 9 of them need 57 GB of a 49.5 GB budget): the band
    of an estimate is the whole count's above it."""
    return reference.unit == "sequences" and target != reference.value and value > target


# Two mistakes give "the same value" when they agree to 0.1%: then the step's own comes first.
SAME_VALUE = Fraction(1, 1000)


def _mistakes(value: Fraction, reference: Reference, tolerance: Fraction) -> list[WrongPath]:
    """The known mistakes whose value this is: the nearest first; where several give the same
    value (within SAME_VALUE of the nearest), the step's own listed mistakes first, in the
    order it lists them (reference.wrong puts them first)."""
    matches = sorted((abs(value - wrong), order, path_id, wrong)
                     for order, (path_id, wrong) in enumerate(reference.wrong)
                     if close(value, wrong, tolerance))
    if matches:
        ties = [m for m in matches if close(m[3], matches[0][3], SAME_VALUE)]
        matches = sorted(ties, key=lambda m: m[1]) + [m for m in matches if m not in ties]
    named: list[str] = []
    for _, _, path_id, wrong in matches:
        # Another mistake is named beside the nearest only when it gives the same value, not
        # merely one inside a wide estimate band.
        if path_id not in named and (not named or close(wrong, matches[0][3], PAIR_TOLERANCE)):
            named.append(path_id)
    return [WRONG_PATHS[path_id] for path_id in named]


def _same_number(value: Fraction, resolution: Fraction | None, reference: Reference,
                 paths: list[WrongPath]) -> tuple[str, ...]:
    """The mistakes among `paths` whose value is the answer as typed (within half its last
    digit, not just within the step's tolerance): a slip of one input that gives the same
    number is said beside them, as a tie."""
    half = max((resolution or Fraction(0)) / 2, abs(value) * SAME_VALUE / 10)
    ids = {p.id for p in paths}
    return tuple(dict.fromkeys(path_id for path_id, wrong in reference.wrong
                               if path_id in ids and abs(wrong - value) <= half))


def _two_mistakes(value: Fraction, tolerance: Fraction,
                  pairs: Callable[[], tuple[tuple[tuple[str, str], Fraction], ...]]
                  ) -> list[WrongPath]:
    """Two mistakes made together whose value this is (the nearest pair), when no single
    mistake matched. Pairs are many, so they are matched within 1% even on an estimate."""
    tight = min(tolerance, PAIR_TOLERANCE)
    matches = sorted((abs(value - wrong), ids) for ids, wrong in pairs()
                     if close(value, wrong, tight))
    return [WRONG_PATHS[path_id] for path_id in matches[0][1]] if matches else []


def _check_span(base: Mark, span: tuple[ParsedAnswer, ParsedAnswer], reference: Reference,
                targets: tuple[Fraction, ...], tolerance: Fraction,
                carried: Callable[[], tuple[Fraction, ...]] = tuple,
                repeated: Repeated = tuple) -> Mark:
    low, high = (end.quantity.value for end in span)
    shown = f"{span[0].shown} to {span[1].shown}"
    marked = replace(base, parsed=(low + high) / 2, shown=shown, span=(low, high),
                     read_unit=span[1].unit)
    if _right(low, reference, targets, tolerance) and _right(high, reference, targets, tolerance):
        return replace(marked, verdict="correct",
                       feedback=f"read as the range {shown}: all of it within tolerance, correct")
    inside = any(low <= t <= high for t in targets)
    grain = max(span[0].resolution or 0, span[1].resolution or 0)
    if inside and 0 < high - low <= grain and _right((low + high) / 2, reference, targets,
                                                      tolerance):
        # "29-30 tok/s" for 29.3: two neighbours at the digits typed, around the answer, is
        # the answer to those digits (as "29.5" would be)
        return replace(marked, verdict="correct",
                       feedback=f"read as the range {shown}: it holds {reference.display} "
                                "between two neighbours at the digits typed, correct")
    if not inside and narrow_span(low, high, tolerance):
        # a narrow range (850-855 GB) around what the candidate's own numbers give is that
        # number written loosely: carried forward as the number would be
        holds = [(c, "what your earlier answers give") for c in carried()]
        holds += [(v, f"what {where} gives made again here ({what})")
                  for v, where, what, _ in repeated()]
        near = CARRY_TOLERANCE
        found = next(((c, said) for c, said in holds
                      if low * (1 - near) <= c <= high * (1 + near)), None)
        if found is not None:
            return replace(marked, verdict="wrong", carried_forward=True,
                           feedback=f"read as the range {shown}: expected {reference.display}. "
                                    f"It holds {show(found[0], reference.unit)}, {found[1]}; "
                                    "carried forward, but give one number next time.")
    advice = (f"give one number; your range spans {shown}, wider than the step's "
              f"{_percent(tolerance)} tolerance" if inside else f"read as the range {shown}")
    return replace(marked, verdict="wrong", feedback=f"{advice}; expected {reference.display}")


# An upper bound ("under 1%") is right when the reference is under it, and not so far under it
# that the bound says nothing (a tenth of it or more).
BOUND_FACTOR = 10


def _check_bound(base: Mark, top: ParsedAnswer, reference: Reference,
                 targets: tuple[Fraction, ...], tolerance: Fraction,
                 high: Fraction | None = None, shown: str | None = None) -> Mark:
    """An upper bound marked on a step that accepts one: `high` and `shown` where it is not
    the reading's own value (a "0%", which says "under half a percent")."""
    high = top.quantity.value if high is None else high
    shown = f"at most {top.shown}" if shown is None else shown
    marked = replace(base, parsed=high, shown=shown, span=(Fraction(0), high),
                     read_unit=top.unit)
    under = [t for t in targets if 0 <= t <= high * (1 + tolerance)]
    if any(t > 0 and high <= BOUND_FACTOR * t for t in under) or (0 in under and high == 0):
        return replace(marked, verdict="correct",
                       feedback=f"read as {shown}: {reference.display} is under it, correct")
    if under:
        return replace(marked, verdict="wrong",
                       feedback=f"read as {shown}: true, but more than {BOUND_FACTOR} times "
                                f"{reference.display}; give the figure")
    return replace(marked, verdict="wrong",
                   feedback=f"read as {shown}; expected {reference.display}, above it")


def _percent(tolerance: Fraction) -> str:
    return f"±{format_number(tolerance * 100)}%"


def _working_note(read: Answer, chosen: ParsedAnswer, tolerance: Fraction, unit: str,
                  whole: bool, right: bool = False) -> str:
    """Say so when the working shown just before an '=' gives the value after it in no unit
    it could mean (a number typed without a unit may be in any unit of its kind: bytes or
    KiB, seconds or ms). Working before '→' or "so" is the way to the result, not a claim that
    it equals it, and is left alone. Beside a `right` answer it is a remark, never a "not"."""
    if not _claims_equality(read) or _adds_bare_to_units(_last_working_text(read)):
        return ""
    target = chosen.quantity.value
    for part in _last_working(read, chosen):
        if part.quantity.dim != chosen.quantity.dim:
            continue
        if any(_agrees(meant, target, tolerance, chosen.resolution)
               or (whole and target in (math.floor(meant), math.ceil(meant)))
               for meant in _meanings(part, unit)):
            # (a whole count: the working's quotient, before its floor, gives it, or before
            # its ceiling: "30/29 = 2" replicas; a rounding the wrong way is said as such)
            continue
        working = _last_working_text(read)
        if working.lstrip()[:1] in ("-", "+", "*", "/", "×", "÷", "−"):
            return ""  # "= 72, -16 -4 = 52": it goes on from the result before it
        if right:
            return (f" The value you ended with was marked; your working ({working}) comes to "
                    f"{part.shown}.")
        return (f" Your working ({working}) gives {part.shown}, not {chosen.shown}; the value "
                "you ended with was marked.")
    return ""


def numeric_step_before(key: AnswerKey, step: Step) -> str:
    """The id of the numeric step just before this one ("" for the first)."""
    numeric = [s.id for s in key.drill.steps if s.kind == "numeric"]
    at = numeric.index(step.id) if step.id in numeric else 0
    return numeric[at - 1] if at > 0 else ""


def _near_an_earlier_answer(value: Fraction, stated: Iterable[tuple[Fraction, str]]) -> bool:
    """Whether `value` lies within CARRY_TOLERANCE of an earlier step's answer the drill has
    shown (stated_figures), as a kept answer typed again roughly does."""
    return any(what.startswith("the answer to ") and figure != 0
               and abs(figure - value) <= CARRY_TOLERANCE * abs(figure)
               for figure, what in stated)


def _copied(reading: ParsedAnswer, stated: Iterable[tuple[Fraction, str]]) -> str | None:
    """What the answer is, when it is a figure the drill shows (to the digits typed)."""
    value, resolution = reading.quantity.value, reading.resolution
    for figure, what in stated:
        if figure == value or (resolution is not None and 2 * abs(figure - value) <= resolution
                               and figure != 0):
            return what
    return None


# A figure with its unit in a drill's situation: "a 16.06 GB checkpoint", "3.4 TB/s measured"
_STATED = lazy(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?)\s?"
               r"(GB|GiB|MB|MiB|KB|KiB|TB|B|ms|TB/s|GB/s|tokens|sequences)(?![\w/])")
MAX_STATED = 40  # figures of a situation compared


def stated_figures(key: AnswerKey, step: Step, marks: Mapping[str, Mark] | None = None
                   ) -> tuple[tuple[Fraction, str], ...]:
    """The figures in the step's unit that the drill puts in front of the candidate: the
    earlier numeric steps' answers, and the situation's figures (each with what it is). A step
    the candidate answered wrong, with a figure of their own, gave them none to copy: 82 for
    Gemma's halved context is no copy of 4a's 82 where 4a was answered 15. A later step's
    answer is shown to no one yet: 97 sessions on the real card is the marketed count rounded,
    not the 70B follow-up's 97."""
    unit = step.unit or ""
    found: list[tuple[Fraction, str]] = []
    earlier = key.drill.steps[:[s.id for s in key.drill.steps].index(step.id)] \
        if step in key.drill.steps else key.drill.steps
    for other in earlier:
        # (another step's answer in a unit of the same kind: 128 KiB typed for 2 B per element;
        # a plain number is no kind of unit)
        same_kind = (other.unit or "") == unit or (
            bool(unit and other.unit) and dim_of_unit(other.unit) == dim_of_unit(unit))
        if other.id == step.id or other.kind != "numeric" or not same_kind:
            continue
        try:
            reference = key.reference(other.id)
        except KvdrillError:
            continue
        own = (marks or {}).get(other.id)
        if own is not None and own.verdict == "wrong" and own.parsed is not None:
            continue
        found.append((reference.value, f"the answer to {other.id} ({reference.display})"))
    if not unit:
        return tuple(found)
    try:
        situation = fill(key.drill.situation, key.display_givens())
    except KvdrillError:
        return tuple(found)
    for match in list(_STATED.finditer(situation))[:MAX_STATED]:
        try:
            read = read_answer(match.group(), unit)
        except AnswerParseError:
            continue
        if read.readings and read.readings[0].quantity.dim == dim_of_unit(unit):
            found.append((read.readings[0].quantity.value,
                          f"a figure the situation gives ({match.group()})"))
    return tuple(found)


def _adds_bare_to_units(working: str) -> bool:
    """Working that adds a bare number to a term with a unit ("15.01 + 4096 x 128 KiB"): the
    bare number's unit is in the candidate's head (GB here), so what the line comes to as
    typed says nothing about the working."""
    depth, terms, term = 0, [], ""
    for char in working:
        depth += (char == "(") - (char == ")")
        if depth == 0 and char in "+-−" and term.strip() and term.rstrip()[-1:] not in "eE":
            terms.append(term)
            term = ""
        else:
            term += char
    terms.append(term)
    if len(terms) < 2:
        return False
    with_units = [bool(re.search(r"[A-Za-wyzµ]", re.sub(r"\([^()]*\)", "", t))) for t in terms]
    return any(with_units) and not all(with_units)


_EQUALS = ("=", "≈", "≃", "~=")
# Figures that convert between decimal and binary prefixes, in working that does so.
CONVERSIONS = frozenset(Fraction(text) for text in (
    "1024", "1048576", "1073741824", "1099511627776", "1.024", "1.048576", "1.073741824",
    "1.0737", "1.074", "0.9766", "0.977", "0.9537", "0.954", "0.9313", "0.931"))


def _by_arithmetic(read: Answer, chosen: ParsedAnswer, tolerance: Fraction) -> bool:
    """The working's last step, read as typed (no unit changed), comes to the result."""
    if not _claims_equality(read):
        return False
    return any(part.quantity.dim == chosen.quantity.dim
               and _agrees(part.quantity.value, chosen.quantity.value, tolerance,
                           chosen.resolution)
               for part in _last_working(read, chosen))


def _claims_equality(read: Answer) -> bool:
    """The working ends in an equals sign before the result ("72 - 16 - 4 = 52 GB"), not
    in "→" or "so" (a step of reasoning: "2*182-138 = 226 -> 21"), and not after steps left
    out ("(160 - 70.55)*0.9 ... ≈ 150": what is shown is not what the result equals)."""
    text = read.working_text.rstrip().rstrip("~").rstrip()  # "= ~61 GB"
    sign = next((sign for sign in _EQUALS if text.endswith(sign)), None)
    return sign is not None and not text[: -len(sign)].rstrip().endswith(("...", "…"))


def _last_working_text(read: Answer) -> str:
    """The step of shown working just before the result: earlier ones are the way there
    ("80*0.9 = 72; 72-16-4 = 52 GB" ends "72-16-4")."""
    if not read.working_parts:
        return ""
    pieces = re.split(r";|,\s", read.working_parts[-1])
    last = pieces[-1].strip()
    if len(pieces) > 1 and OPERATOR_WORD.match(last):
        # "72, minus 16 GB weights": the step goes on from the figure before the comma
        last = f"{pieces[-2].strip()} {last}"
    return last.rstrip("=≈→ ")


def _last_working(read: Answer, chosen: ParsedAnswer) -> list[ParsedAnswer]:
    text = _last_working_text(read)
    return working_values(replace(read, working_parts=(text,)), chosen) if text else []


def _working_comes_to(read: Answer, chosen: ParsedAnswer, value: Fraction,
                      tolerance: Fraction, unit: str) -> bool:
    """Whether the shown working's last step gives the value typed after it."""
    return _working_gives_right(read, chosen, (value,), tolerance, unit) is not None


def _shown_working_comes_to(read: Answer, chosen: ParsedAnswer, value: Fraction,
                            tolerance: Fraction, unit: str) -> bool:
    """Whether working with every figure read ("12.9B*2" has one glued to its scale) comes to
    the value typed: then it shows whatever the candidate did."""
    working = read.working_text
    return bool(_figures(working)) and _all_figures_read(working) \
        and _working_comes_to(read, chosen, value, tolerance, unit)


def _working_gives_right(read: Answer, chosen: ParsedAnswer, targets: tuple[Fraction, ...],
                         tolerance: Fraction, unit: str) -> Fraction | None:
    """The right value the shown working's last step gives in some unit it could mean,
    though the result typed after it is wrong (a slip of the last line, not of the
    reasoning); None when it gives none."""
    if not _claims_equality(read):
        return None
    for part in _last_working(read, chosen):
        if part.quantity.dim != chosen.quantity.dim:
            continue
        for meant in _meanings(part, unit):
            if any(close(meant, target, tolerance) for target in targets):
                return meant
    return None


_TWINS = {"KB": ("KiB", 1), "MB": ("MiB", 2), "GB": ("GiB", 3), "TB": ("TiB", 4)}
_TWINS.update({binary: (decimal, power) for decimal, (binary, power) in list(_TWINS.items())})


def _prefix_mixed(reading: ParsedAnswer, right: Fraction) -> tuple[WrongPath, str] | None:
    """The unit mix of an answer whose number is the right value in its twin unit (128 KB
    for 128 KiB), and that twin: a mix said for sure."""
    twin = _TWINS.get(reading.unit or "")
    if twin is None:
        return None
    typed = reading.quantity.value / unit_factor(reading.unit or "").value
    meant = right / unit_factor(twin[0]).value
    scale = unit_factor(reading.unit or "").value
    # two figures agree with a twin by chance one time in tens: 48 GB is 52 GB in GiB, and
    # the reserve taken twice (72 - 16 - 8)
    few = chance.typed_figures(reading.quantity.value, reading.resolution, scale) < 3
    half = Fraction(0) if _round_guess(reading) or few else \
        (reading.resolution or Fraction(0)) / scale / 2
    if abs(typed - meant) > max(half, abs(meant) * SAME_VALUE):
        return None
    return WRONG_PATHS[UNIT_MIXES[twin[1]]], twin[0]


# A number of working typed without a unit may be in any unit of its kind: these apart.
_UNIT_STEPS = tuple(Fraction(base) ** power for base in (1000, 1024)
                    for power in (-4, -3, -2, -1, 1, 2, 3, 4))


def _meanings(part: ParsedAnswer, step_unit: str) -> list[Fraction]:
    """What a value of shown working may stand for, in base units: as read; and, typed with
    no unit, in the step's own unit or any other unit of its kind (131,072 is 128 KiB in
    bytes; 7,944 is 7.944 s in ms; 10.74 is 10 GiB in the step's GB; 46.7B × 2 is 93.4 GB;
    0.734 is 73.4%)."""
    meanings = [part.quantity.value]
    bare = not part.had_unit or part.unit == "B"  # ("46.7B": as often billions as bytes)
    if not bare or part.quantity.dim.is_dimensionless:
        return meanings + ([part.quantity.value * 100] if part.unit == "%" and not part.had_unit
                           else [])
    meanings += [part.quantity.value * step for step in _UNIT_STEPS]
    if step_unit and part.unit:
        typed = part.quantity.value / unit_factor(part.unit).value
        meanings.append(typed * unit_factor(step_unit).value)
    return meanings


def _last_digit(value: Fraction, unit: str) -> Fraction | None:
    """What the last digit of a number of one significant figure stands for, in base units
    ("~7x": 1, "0.04": 0.01, "5 GB/s": 1 GB/s): the candidate's own 7.2 rounds to it. The
    reader gives such a number no resolution (a round guess as often as a result); for a
    value the candidate's own numbers give, rounding to the digits typed is no guess. None for
    a whole number with trailing zeros (40 may be 40 ± 5) and anything else."""
    scale = unit_factor(unit).value if unit else Fraction(1)
    shown = value / scale if scale else value
    if shown <= 0:
        return None
    text = format(float(shown), ".6g")
    if "e" in text or Fraction(text) != shown:
        return None  # not a short decimal as typed (1/3)
    digits = text.replace(".", "").lstrip("0")
    if len(digits) != 1 or (shown.denominator == 1 and shown % 10 == 0):
        return None
    decimals = len(text.split(".")[1]) if "." in text else 0
    return Fraction(1, 10 ** decimals) * scale


def _approximate_figure(reading: ParsedAnswer, unit: str) -> Fraction | None:
    """What the one significant figure of an approximate round number stands for ("~300":
    100 tokens/s): said "about", it is the candidate's own 307 rounded, not 300 ± 5. None for
    anything else (a bare 300 may be 300 ± 5)."""
    if not reading.approximate:
        return None
    scale = unit_factor(reading.unit or unit).value if (reading.unit or unit) else Fraction(1)
    shown = reading.quantity.value / scale if scale else reading.quantity.value
    if shown <= 0 or shown.denominator != 1 or shown % 10:
        return None
    digits = str(shown.numerator)
    if len(digits.rstrip("0")) != 1:
        return None
    return Fraction(10 ** (len(digits) - 1)) * scale


def _agrees(working: Fraction, result: Fraction, tolerance: Fraction,
            resolution: Fraction | None) -> bool:
    """The working gives the result: within the step's tolerance, or rounded to the digits
    the result was typed to."""
    return close(working, result, tolerance) or (
        resolution is not None and 2 * abs(working - result) <= resolution)


# A dimension said in words where its symbol alone reads oddly ("the question asks for B")
_DIMENSION_WORDS = {"B": "bytes", "s": "a time", "B/s": "bytes per second",
                    "B/token": "bytes per token", "tokens/s": "tokens per second"}


def _dimension_words(dim: Dim) -> str:
    if dim == DIMENSIONLESS:
        return "a plain number"
    return _DIMENSION_WORDS.get(str(dim), str(dim))


def carried_values(key: AnswerKey, step: Step, marks: Mapping[str, Mark],
                   quotients: bool = False, rounded: bool = True) -> tuple[Fraction, ...]:
    """The step's values recomputed from the candidate's own earlier answers (see
    carried_sources)."""
    return tuple(carried_sources(key, step, marks, quotients, rounded))


def carried_sources(key: AnswerKey, step: Step, marks: Mapping[str, Mark],
                    quotients: bool = False, rounded: bool = True
                    ) -> Mapping[Fraction, tuple[tuple[str, ...], ...]]:
    """Each value of the step recomputed from the candidate's own earlier answers, where those
    were wrong but not absurd (within CARRY_FACTOR of their references), with the fewest of
    those answers it follows from (the ones feedback names; several where as few give it
    each): from all of them together, and from each alone. An earlier step stands for its
    quantity here when it depends_on it, or when it asks for a quantity this step's formula
    uses: as it is where the quantity has the same value here (1a's budget, used by a later
    count of another layout), else with its error carried over, as a share or as an amount
    (a budget 10 GB over the reference is 10 GB over where int8 weights change it; bytes per
    token twice the reference are twice it where the KV is fp8)."""
    if step.kind != "numeric":
        return {}
    # a quantity an earlier answer gave for this very step (Gemma's bytes per sequence,
    # depended on), right or wrong: no other step's answer to it (Mistral's, or the session
    # without its window) stands for it here, converted
    settled = {key.drill.step(earlier_id).answer for earlier_id, mark in marks.items()
               if mark.verdict in ("correct", "wrong") and mark.is_numeric
               and earlier_id in (step.ratio_of or step.depends_on)}
    forms: dict[str, tuple[Fraction, ...]] = {}
    setting = _setting(key, step)
    for earlier_id, mark in marks.items():
        if key.drill.step(earlier_id).answer in settled \
                and earlier_id not in (step.ratio_of or step.depends_on):
            continue
        if _setting(key, key.drill.step(earlier_id)) != setting \
                and earlier_id not in (step.ratio_of or step.depends_on):
            # a step pinned to another model or card (the co-located H100 case of a drill
            # re-targeted at an A100): an error made on the drill's card is none made there
            continue
        # a right answer within its tolerance is the candidate's own number too (120 ms for
        # 112): what follows from it follows from the sheet
        if mark.parsed is None or mark.verdict not in ("wrong", "correct"):
            continue
        if mark.span is not None and not narrow_span(*mark.span, tolerance_of(
                key.drill.step(earlier_id))):
            continue  # (a narrow range stands for its middle: 77-78 sequences for 77.5)
        truth = key.reference(earlier_id).value
        if mark.parsed <= 0 or truth <= 0 or (mark.verdict == "correct" and (
                mark.parsed == truth or mark.span is not None)):
            continue
        if not (truth / CARRY_FACTOR <= mark.parsed <= truth * CARRY_FACTOR):
            continue
        carried = _carried_forms(key, step, earlier_id, truth, mark.parsed,
                                 mark.verdict == "correct")
        if carried:
            forms[earlier_id] = carried
    if not forms:
        return {}
    # Two earlier steps may ask for one quantity (sessions on the card as given and on the
    # card as its driver reports it): where one asked it of this step's own setting, the
    # other's answer, converted, does not stand for it as well in the set of all at once.
    asks = {earlier_id: key.drill.step(earlier_id).answer for earlier_id in forms}
    as_typed = {earlier_id for earlier_id in forms if _stands_as_typed(key, step, earlier_id)}
    direct = {asks[earlier_id] for earlier_id in as_typed}
    together = {earlier_id: values for earlier_id, values in forms.items()
                if asks[earlier_id] not in direct or earlier_id in as_typed}
    # Every earlier error carried at once (each the same way), then each alone.
    sets = [{earlier: values[min(n, len(values) - 1)] for earlier, values in together.items()}
            for n in range(max(len(values) for values in together.values()))]
    if len(forms) > 1 and step.ratio_of is None:
        # (a ratio of two answers both wrong is of those two: not of one and the key's other)
        sets += [{earlier: value} for earlier, values in forms.items() for value in values]
    # ... unless the key's other is the candidate's own figure, typed for another step: the
    # MHA cache over "one copy of the latent", the 68.6 KiB typed as the node's sum, where the
    # per-GPU answer split it (expert pass 47, W5)
    if step.ratio_of is not None and len(forms) == 2:
        sets += [{kept: forms[kept][0]} for kept, other in (step.ratio_of, step.ratio_of[::-1])
                 if _typed_elsewhere(key, step, other, marks)]
    if len(together) > 2:
        # all at once but one: an answer the step states again itself ("about two-thirds
        # again" of the prompt), or one not used (the 18.3 ms target step typed wrong, where
        # the speed-up took the plain step), is not the one the candidate worked from
        sets += [{earlier: values[0] for earlier, values in together.items() if earlier != left}
                 for left in together]
    for earlier_id in forms:
        # an answer said "about" stands for what its digits allow ("~34 GB" for the 33.86
        # the candidate worked with): each end of that, alone
        truth = key.reference(earlier_id).value
        sets += [{earlier_id: value} for end in _loose_ends(key, earlier_id, marks[earlier_id])
                 for value in _carried_forms(key, step, earlier_id, truth, end,
                                             marks[earlier_id].verdict == "correct")]
    reference = key.reference(step.id)
    # an estimate of a count may be the quotient rounded (29.8 sessions typed as 30)
    # (`rounded` False: not from answers each right, where the count's floor is the truth:
    # 5 for 4.57 is one session that does not fit)
    relaxed = (False, True) if rounded and reference.whole_count is False \
        and reference.value % 1 == 0 and tolerance_of(step) >= ESTIMATE_TOLERANCE else (False,)
    if quotients:  # `quotients`: the counts before their floors, alone
        relaxed = (True,)
    found: dict[Fraction, list[tuple[dict[str, Fraction], bool]]] = {}
    for carried_set in sets:
        floored: Fraction | None = None
        for floors_left_out in relaxed:
            # a quotient rounded is an estimate of the count carried only from a wrong answer,
            # and only where its floor is within the step's tolerance of it (29.8 for 29
            # whole ones; not 1.84 for 1)
            estimate = floors_left_out and not quotients
            if estimate and all(marks[e].verdict != "wrong" for e in carried_set):
                continue
            value = key.recompute(step.id, carried_set, floors_left_out)
            if not floors_left_out:
                floored = value  # (relaxed runs the floor first)
            # A carried value that is the reference earns nothing (0 sequences may follow),
            # nor one the physics forbids (245% of the datasheet's bandwidth)
            if value is None or value == reference.value \
                    or (step.answer in AT_MOST_WHOLE and value > 1):
                continue
            if estimate and floored is not None and not close(value, floored,
                                                              tolerance_of(step)):
                continue
            found.setdefault(value, []).append((carried_set, floors_left_out))
    return _Sources(key, step.id, marks, found)


class _Sources(Mapping[Fraction, tuple[tuple[str, ...], ...]]):
    """carried_sources' answer: its values at once, the answers each follows from worked out
    when asked (most values are only compared with the answer typed; working out the sources
    of each was a third of what grading a wrong sheet cost)."""

    def __init__(self, key: AnswerKey, step_id: str, marks: Mapping[str, Mark],
                 sets: dict[Fraction, list[tuple[dict[str, Fraction], bool]]]) -> None:
        self._key, self._step_id, self._marks, self._sets = key, step_id, marks, sets
        self._made: dict[Fraction, tuple[tuple[str, ...], ...]] = {}

    def __getitem__(self, value: Fraction) -> tuple[tuple[str, ...], ...]:
        if value not in self._made:
            fewest: tuple[tuple[str, ...], ...] = ()
            for carried_set, floors_left_out in self._sets[value]:
                ids = _sources_in(self._key, self._step_id, carried_set, value,
                                  floors_left_out, self._marks)
                if not fewest or len(ids) < len(fewest[0]):
                    fewest = (ids,)
                elif len(ids) == len(fewest[0]) and ids not in fewest:
                    fewest = (*fewest, ids)
            self._made[value] = fewest
        return self._made[value]

    def __iter__(self) -> Iterator[Fraction]:
        return iter(self._sets)

    def __len__(self) -> int:
        return len(self._sets)


def _sources_in(key: AnswerKey, step_id: str, carried: Mapping[str, Fraction],
                value: Fraction, relaxed: bool, marks: Mapping[str, Mark]) -> tuple[str, ...]:
    """The answers of a carried set the value follows from: not one the others override (a
    sequence's bytes typed beside the bytes per token they would give: 95 is 51.1 GB over the
    512 MiB typed, whatever the 112 KiB per token gives; expert pass 47, W2); of those, the
    ones marked wrong where they give it alone (a right one's rounding is no source to name)."""
    if len(carried) == 1:
        return tuple(carried)

    def gives(subset: Mapping[str, Fraction]) -> bool:
        # (as good as: a right answer's last digit moves a ratio by less than SAME_VALUE)
        again = key.recompute(step_id, subset, relaxed)
        return again is not None and close(again, value, SAME_VALUE)

    # one at a time, the earlier answers first: of two that stand for each other (a per-GPU
    # and a whole-job byte count), the one nearer the step is kept (expert pass 49, W2)
    kept = dict(carried)
    for e in carried:
        if len(kept) > 1 and gives({o: v for o, v in kept.items() if o != e}):
            del kept[e]
    matter = tuple(kept)
    wrong = tuple(e for e in matter if marks[e].verdict == "wrong")
    if wrong and (wrong == matter or gives({e: carried[e] for e in wrong})):
        return wrong
    return matter


def _typed_elsewhere(key: AnswerKey, step: Step, earlier_id: str, marks: Mapping[str, Mark]
                     ) -> bool:
    """Whether another step's answer is the reference of `earlier_id` (within its tolerance):
    the candidate's own figure for it, typed where another step asked."""
    truth = key.reference(earlier_id).value
    tolerance = tolerance_of(key.drill.step(earlier_id))
    dim = dim_of_unit(key.reference(earlier_id).unit)
    for other_id, mark in marks.items():
        if other_id in (step.id, *(step.ratio_of or ())) or mark.parsed is None \
                or not mark.is_numeric or mark.parsed <= 0 \
                or dim_of_unit(key.reference(other_id).unit) != dim:
            continue
        if close(Fraction(mark.parsed), truth, tolerance):
            return True
    return False


# Shares of a whole (of a peak, of the experts, of a sequence's blocks): never above 1
OVER_THE_WHOLE = (" A share of a whole is at most 100%: above it, the bytes or the time it is "
                  "worked from cannot both be right.")
AT_MOST_WHOLE = frozenset({"achieved_bandwidth_fraction", "block_waste_fraction",
                           "decode_expert_share", "spec_verify_expert_share"})


def _loose_ends(key: AnswerKey, earlier_id: str, mark: Mark) -> tuple[Fraction, ...]:
    """The two ends of what an answer said "about" can stand for, to its last digit ("~34 GB":
    33.5 and 34.5 GB); () for an answer typed exactly."""
    if not mark.shown.startswith("~") or mark.answer is None or mark.parsed is None:
        return ()
    try:
        read = read_answer(mark.answer, key.reference(earlier_id).unit)
    except AnswerParseError:
        return ()
    reading = next((r for r in read.readings if r.quantity.value == mark.parsed), None)
    if reading is None or not reading.resolution:
        return ()
    half = reading.resolution / 2
    return tuple(end for end in (mark.parsed - half, mark.parsed + half) if end > 0)


def _stands_as_typed(key: AnswerKey, step: Step, earlier_id: str) -> bool:
    """Whether an earlier answer stands in this step for its quantity as typed (the step
    depends on it, or the quantity has the same value here), not converted."""
    return earlier_id in (step.ratio_of or step.depends_on) or _same_here(key, earlier_id, step)


def _carried_forms(key: AnswerKey, step: Step, earlier_id: str, truth: Fraction,
                   answered: Fraction, rounded: bool = False) -> tuple[Fraction, ...]:
    """What an earlier answer stands for in this step (see carried_values); () for none.
    `rounded`: the answer was right within its tolerance, so what sets it apart from the
    reference is its rounding, a share: carried as an amount onto a quantity eight times
    smaller (42.9 GB for 42.95, a sequence's bytes under MHA, taken 0.05 GB off GQA's 5.37)
    it would be eight times the error, and tip a count over its floor."""
    if earlier_id in (step.ratio_of or step.depends_on):
        return (answered,)
    if step.ratio_of is not None:
        return ()
    earlier = key.drill.step(earlier_id)
    if earlier.answer is None or earlier.answer == step.answer:
        return ()
    try:
        here = key.value(earlier.answer, key.deployment(step.id))
    except (KvdrillError, ArithmeticError, ValueError, AttributeError, TypeError):
        return ()
    if here == truth:
        return (answered,)
    if here <= 0:
        return ()
    if rounded:
        return (answered * here / truth,)
    return tuple(value for value in dict.fromkeys((answered * here / truth,
                                                  here + answered - truth)) if value > 0)


def _rules_out(key: AnswerKey, step_id: str, mark: Mark) -> frozenset[str]:
    """The mistakes a right answer shows were not made: each would have changed it beyond its
    tolerance. Momentary slips (a unit mixed, a count rounded, a per-GPU figure) never are."""
    reference = key.reference(step_id)
    tolerance = tolerance_of(key.drill.step(step_id))
    assert mark.parsed is not None
    return frozenset(path_id for path_id, wrong in reference.wrong
                     if path_id not in MOMENTARY and not close(wrong, reference.value, tolerance)
                     and not close(mark.parsed, wrong, tolerance))


def _union_of(parts: tuple[Callable[[], frozenset[str]], ...]) -> frozenset[str]:
    return frozenset().union(*(part() for part in parts))


def _shape(d: Deployment) -> tuple[object, ...]:
    return (d.layers, d.heads, d.hidden, d.head_dim, d.attention, d.params)


REVEALED = "answered after the answer was shown"


def unanswered(step: Step, answer: str | None, reference: Reference) -> Mark:
    """A numeric step left blank: the reference said."""
    return Mark(step.id, "numeric", answer, "unanswered", reference.value, reference.unit,
                feedback=f"no answer given; expected {reference.display}")


def mark_sheet(key: AnswerKey, answers: Mapping[str, str | None],
               revealed: frozenset[str] = frozenset()) -> dict[str, Mark]:
    """Every step of the drill marked, in order, each with its carried-forward value. A step in
    `revealed` was answered after its reference was shown (a skip in practice shows it): its
    answer is read and shown, and earns nothing."""
    kept_readings.use(key.drill.id)
    marks: dict[str, Mark] = {}
    # What each right answer so far rules out, by the model shape it was about: what one
    # model's answers show says nothing of another's (a follow-up on a bigger model).
    # (Each worked out the first time a wrong answer asks: a right sheet never does.)
    ruled: list[tuple[tuple[object, ...], Callable[[], frozenset[str]]]] = []
    made_before: set[str] = set()  # the mistakes named for sure so far
    for step in key.drill.steps:
        answer = answers.get(step.id)
        if step.kind == "text":
            mark = check_text(step, answer)
            if mark.verdict == "answered" and answer:
                mark = replace(mark, figures=figures_in(key, answer))
            marks[step.id] = mark
            continue
        reference = key.reference(step.id)
        if answer is None or not answer.strip():
            # (before the lazy questions below are set up: most steps of a sheet of text
            # answers are numeric and unanswered)
            marks[step.id] = unanswered(step, answer, reference)
            continue
        own = _own_ratio(step, marks)
        if own is not None and own not in (reference.value, *reference.alternatives):
            # the ratio of two answers each right within its tolerance is right too
            reference = replace(reference, alternatives=(*reference.alternatives, own), own=own)
        shape = _shape(key.deployment(step.id))
        ruled_out = functools.partial(_union_of, tuple(ids for other, ids in ruled
                                                       if other == shape))
        fed = _worked_from(fed_by_wrong(key, step, marks), marks, answer, reference.unit)
        fed_answers = {quantity: parsed for earlier_id in fed
                       if (quantity := key.drill.step(earlier_id).answer)
                       and (parsed := marks[earlier_id].parsed) is not None}
        so_far = dict(marks)  # what the lazy questions below are asked of (marks grows)
        carried = functools.cache(functools.partial(carried_sources, key, step, so_far))
        mark = check_numeric(step, answer, reference,
                             functools.partial(_values_of, carried),
                             functools.partial(key.paired_wrong, step.id),
                             # (a ratio of two answers each right is slipped in no input:
                             # 1.6 for their 82 ÷ 53 is a rounding, not a reserve of 4 GB)
                             None if step.ratio_of and all(
                                 earlier in marks and marks[earlier].verdict == "correct"
                                 for earlier in step.ratio_of)
                             else functools.partial(_diagnose, key, step.id,
                                                    known_inputs(key, step, marks)),
                             functools.partial(key.deployment, step.id),
                             ruled_out, functools.partial(_working_slip, key, step.id),
                             frozenset(made_before), fed, fed_answers,
                             functools.partial(repeated_slips, key, step, so_far),
                             functools.partial(carried_values, key, step, {
                                 earlier: m for earlier, m in marks.items()
                                 if m.verdict == "correct"}, rounded=False),
                             # (each asked of several readings and checks: worked out once)
                             functools.cache(functools.partial(stated_figures, key, step,
                                                               so_far)),
                             functools.cache(functools.partial(carried_values, key, step,
                                                               so_far, True)),
                             functools.partial(_sources_of, carried),
                             functools.partial(own_earlier_answers, key, step, so_far),
                             just_before=numeric_step_before(key, step))
        # (a unit the question does not ask for ends its sentence without a stop: "… asks
        # for a plain number; expected 32")
        ahead = None if mark.verdict != "wrong" or mark.misconceptions or mark.diagnosis \
            or not mark.feedback.rstrip(".").endswith(f"expected {reference.display}") \
            else later_answer(key, step, mark, answer)
        if ahead is not None:
            mark = replace(mark, feedback=f"{mark.feedback.rstrip('.')}. {ahead}")
        if step.id in revealed and mark.verdict in ("correct", "wrong"):
            mark = replace(mark, verdict="revealed", carried_forward=False, misconceptions=(),
                           diagnosis=None, feedback=f"read as {mark.shown}: {REVEALED} "
                           f"({reference.display}), so not credited")
        elif mark.verdict == "correct" and mark.parsed is not None and mark.span is None:
            ruled.append((shape, functools.cache(functools.partial(_rules_out, key, step.id,
                                                                     mark))))
        if mark.sure_mistake is not None:
            made_before.add(mark.sure_mistake)
        marks[step.id] = mark
    return marks


def later_answer(key: AnswerKey, step: Step, mark: Mark, answer: str) -> str | None:
    """Where a wrong answer is a later step's answer to the digit, the candidate ran ahead:
    the whole calculation typed at the first prompt ("2*32*8*128*2 = 131072" where only the
    layers are asked). Said only where it cannot be chance: the value runs to four figures,
    or the working shows this step's own answer among its operands; a later step that asks
    this step's quantity in another setting is no step run ahead to."""
    value = mark.parsed
    if value is None or mark.span is not None or value == 0:
        return None
    ids = [s.id for s in key.drill.steps]
    own = key.reference(step.id).value
    shows_own = len(answer) <= 200 and own in _operands(answer)
    if abs(value) < 1000 and not shows_own:
        return None
    for later in key.drill.steps[ids.index(step.id) + 1:]:
        if later.kind != "numeric" or later.answer == step.answer:
            continue
        try:
            reference = key.reference(later.id)
        except KvdrillError:
            continue
        if reference.value != value:
            continue
        if shows_own:
            return (f"It is the answer to {later.id}, a later step ({reference.display}); "
                    f"your working holds {show(own, step.unit or '')}, this step's answer.")
        return f"It is the answer to {later.id}, a later step ({reference.display})."
    return None


def own_earlier_answers(key: AnswerKey, step: Step, marks: Mapping[str, Mark]
                        ) -> tuple[tuple[Fraction, str, str], ...]:
    """The candidate's answers to earlier steps that ask for this step's quantity in another
    setting (the budget on the marketed card, then as the driver reports it; the sessions at
    one byte per parameter, then with the released checkpoint), each as (value, step id, as
    shown); not those whose reference is this one's (answered again, rightly), nor another
    quantity's that shares the number (32 layers, 32 query heads)."""
    reference = key.reference(step.id).value
    found = []
    for earlier_id, mark in marks.items():
        earlier = key.drill.step(earlier_id)
        if not mark.is_numeric or mark.parsed is None or mark.span is not None \
                or mark.verdict not in ("correct", "wrong") or earlier.answer != step.answer:
            continue
        if key.reference(earlier_id).value == reference:
            continue
        found.append((mark.parsed, earlier_id, mark.shown))
    return tuple(found)


def _values_of(carried: Callable[[], Mapping[Fraction, tuple[tuple[str, ...], ...]]]
               ) -> tuple[Fraction, ...]:
    return tuple(carried())


def _sources_of(carried: Callable[[], Mapping[Fraction, tuple[tuple[str, ...], ...]]],
                value: Fraction) -> tuple[tuple[str, ...], ...]:
    return carried().get(value, ())


def _sources_text(alternatives: tuple[tuple[str, ...], ...]) -> tuple[str, str]:
    """What a carried value follows from and the clause that quotes it: "your answer to 1a"
    ("which gives"), "your answers to 1a and 2b" ("which give"), "your answer to 1a or to 2b"
    ("either of which gives": either alone does, neither is named as the one)."""
    if not alternatives or len(alternatives) > 2:
        # (more ways than two to come to it: none is named)
        return "your earlier answers", "which give"
    first, *others = alternatives
    text = f"your answer{'s' if len(first) > 1 else ''} to {_in_words(first)}"
    if others:
        return text + f" or to {_in_words(others[0])}", "either of which gives"
    return text, "which give" if len(first) > 1 else "which gives"


def narrow_span(low: Fraction, high: Fraction, tolerance: Fraction) -> bool:
    """A range no wider than the step's tolerance (or CARRY_TOLERANCE): one figure written
    loosely, not an interval of guesses."""
    return 0 < low <= high and high - low <= max(tolerance, CARRY_TOLERANCE) * high


def repeated_slips(key: AnswerKey, step: Step, marks: Mapping[str, Mark]
                   ) -> tuple[tuple[Fraction, str, str, str], ...]:
    """This step's value with each mistake or input slip named at an earlier wrong step made
    again here (see Repeated). A slip is made again only where this step reads the same input
    at the same value (80 GB for an 85.52 GB card)."""
    from trainer.marking.diagnosis import value_with_slip

    if step.kind != "numeric" or step.ratio_of is not None:
        return ()
    reference = key.reference(step.id)
    d = key.deployment(step.id)
    found: list[tuple[Fraction, str, str, str]] = []
    for earlier_id, mark in marks.items():
        if not mark.is_numeric or mark.verdict != "wrong" or mark.carried_forward:
            continue
        for path_id in mark.misconceptions:
            what = f"you {WRONG_PATHS[path_id].mistake_in(d)}"
            found += [(value, f"the mistake named at {earlier_id}", what, path_id)
                      for other, value in reference.wrong
                      if other == path_id and value != reference.value]
        diagnosis = mark.diagnosis
        if diagnosis is None or diagnosis.kind != "input" or diagnosis.crowded:
            continue
        for slip in (diagnosis.slip, *diagnosis.others):
            value = value_with_slip(key, step.id, slip)
            if value is not None:
                found.append((value, f"the slip named at {earlier_id}", slip.change, ""))
    return tuple(found)


def _touches(d: Deployment, path: WrongPath, answered: Mapping[str, Fraction] | None) -> bool:
    """Whether the mistake moves one of these quantities (or inputs) the way the candidate's
    own wrong answer to it moved it: 32 query heads for 16 KV heads answered (both above the
    8), not K and V counted once beside 512 KiB a token answered (above the 128)."""
    changed = changed_by(d, path)
    if changed is None or not answered:
        return False
    try:
        for name, typed in answered.items():
            before, after = _value_of(d, name), _value_of(changed, name)
            if after != before and (after > before) == (typed > before):
                return True
    except (KvdrillError, ArithmeticError, ValueError, AttributeError, TypeError):
        return False
    return False


def _value_of(d: Deployment, name: str) -> Fraction:
    return Fraction(value_of(d, name) if name in FORMULAS else getattr(d, name))


def _rounded_down_own(value: Fraction, quotients: Iterable[Fraction], ceiling: bool
                      ) -> Fraction | None:
    """The candidate's own quotient that the answer rounds down where the step takes its
    ceiling (replicas, blocks)."""
    if not ceiling or value % 1:
        return None
    return next((q for q in quotients if q % 1 and math.floor(q) == value), None)


def _rounded_up_own(value: Fraction, quotients: Iterable[Fraction], counted: bool
                    ) -> Fraction | None:
    """The candidate's own quotient (before a count's floor) that the answer rounds up."""
    if not counted or value % 1:
        return None
    return next((q for q in quotients if q % 1 and math.floor(q) < value <= math.ceil(q)), None)


def _worked_from(fed: tuple[str, ...], marks: Mapping[str, Mark], answer: str | None,
                 unit: str) -> tuple[str, ...]:
    """The earlier wrong answers shown working may be worked from: where the working is
    shown, one whose value none of its figures is was not ("23.2/1.476" uses the right
    1.476 GB, not the 1.236 GB answered before)."""
    if not fed or not answer:
        return fed
    try:
        working = read_answer(answer, unit).working_text
    except KvdrillError:
        return fed
    figures = _figures(working)
    if not figures or not _all_figures_read(working):
        return fed
    return tuple(earlier for earlier in fed
                 if (typed := marks[earlier].parsed) is None
                 or any(typed_at_some_scale(f, Fraction(typed)) for f in figures))


def _working_hides(d: Deployment, path: WrongPath, figures: tuple[Fraction, ...]) -> bool:
    """Whether working that comes to the answer shows none of the values the mistake puts in
    its inputs' places: "2*16*8*128*2 = 64 KiB" has no 4 B of fp32, so it is no fp32 cache,
    whatever else gives 64 KiB. (A mistake that drops a factor, 1 or 0 in its place, or mixes
    units shows nothing to look for.)"""
    if path.id in UNIT_MIX_IDS or path.id in ROUNDINGS:
        return False
    changed = changed_by(d, path)
    if changed is None:
        return False
    inputs = {name: v for name, v in changed_inputs(d, changed).items()
              if isinstance(v, (int, Fraction)) and not isinstance(v, bool)}
    put = [v for v in inputs.values() if v not in (0, 1)]
    if put:
        return not any(typed_at_some_scale(f, Fraction(v)) for f in figures for v in put)
    # a term the mistake drops that the working keeps: "80*.9 - 4 - 16" has its 4 GB reserve
    kept = [before for name in inputs
            if isinstance(before := getattr(d, name, None), (int, Fraction))
            and not isinstance(before, bool) and before not in (0, 1, 2)]
    return bool(kept) and all(any(typed_at_some_scale(f, Fraction(b)) for f in figures)
                              for b in kept)


def _fed_note(fed_by: tuple[str, ...]) -> str:
    # "this step uses", not "you worked it from": the candidate may not have (review 9)
    steps = ", ".join(fed_by)
    many = len(fed_by) > 1
    return (f"This step uses your answer{'s' if many else ''} to {steps}, marked wrong, and "
            f"the value does not follow from {'them' if many else 'it'} alone: not diagnosed "
            "further.")


def fed_by_wrong(key: AnswerKey, step: Step, marks: Mapping[str, Mark]) -> tuple[str, ...]:
    """The earlier steps answered wrong whose value this step is worked from (the same value
    in its deployment: a follow-up on another model is not fed by the first model's budget)."""
    if step.ratio_of is not None:
        return tuple(i for i in step.ratio_of
                     if (m := marks.get(i)) is not None and m.verdict == "wrong")
    if step.answer is None or all(m.verdict != "wrong" for m in marks.values()):
        return ()  # a sheet right so far is fed by nothing wrong: no reads worked out
    order = list(marks)
    fed = []
    for index, (earlier_id, mark) in enumerate(marks.items()):
        if mark.verdict != "wrong" or not _feeds(key, step, earlier_id, mark):
            continue
        # a later answer that the wrong one would have moved, answered right, shows it was not
        # carried (2 MiB typed for the bytes per token, then every block count right)
        if any(marks[later].verdict == "correct" and key.drill.step(later).kind == "numeric"
               and _feeds(key, key.drill.step(later), earlier_id, mark)
               for later in order[index + 1:]):
            continue
        fed.append(earlier_id)
    return tuple(fed)


def _feeds(key: AnswerKey, step: Step, earlier_id: str, mark: Mark) -> bool:
    """Whether this step is worked from the earlier step's value (the same value in its
    deployment) and the earlier wrong answer would move it past its tolerance."""
    from trainer.capacity.solver import exact_reads

    earlier = key.drill.step(earlier_id)
    if earlier.answer is None or step.answer is None:
        return False
    if step.ratio_of is not None:
        return earlier_id in step.ratio_of
    if "model" in step.with_ and earlier.answer in _SHAPE:
        return False  # a follow-up on another model states that model's shape in its prompt
    try:
        reads = exact_reads(key.deployment(step.id), step.answer) or frozenset()
    except (KvdrillError, ArithmeticError, ValueError, AttributeError, TypeError):
        return False
    return (earlier_id in step.depends_on or (
        earlier.answer in reads and earlier.answer != step.answer
        and _same_here(key, earlier_id, step))) and _moves(key, step, earlier_id, mark)


_SHAPE = frozenset({"layers", "kv_heads", "heads", "head_dim", "hidden"})


def _moves(key: AnswerKey, step: Step, earlier_id: str, mark: Mark) -> bool:
    """Whether the earlier wrong answer, carried alone, moves this step's value out of its
    tolerance: 160 KiB per GPU where 80 KiB was right moves a TP step time by 0.5%, and a
    40 ms step is no more explained by it than by any other answer."""
    reference = key.reference(step.id).value
    if mark.parsed is None or mark.parsed <= 0 or not reference:
        return True
    truth = key.reference(earlier_id).value
    forms = _carried_forms(key, step, earlier_id, truth, mark.parsed) if truth > 0 else ()
    value = key.recompute(step.id, {earlier_id: forms[0]}) if forms else None
    return value is None or not close(value, reference, max(tolerance_of(step),
                                                             CARRY_TOLERANCE))


def _setting(key: AnswerKey, step: Step) -> tuple[object, object]:
    """The model and card a step is asked of."""
    givens = key.step_givens(step)
    return givens.get("model"), givens.get("gpu")


def _same_here(key: AnswerKey, earlier_id: str, step: Step) -> bool:
    """Whether the quantity an earlier step asks for has, in this step's deployment, the value
    it had there (a follow-up on another model has its own)."""
    answer = key.drill.step(earlier_id).answer
    assert answer is not None
    try:
        return bool(key.value(answer, key.deployment(step.id)) == key.reference(earlier_id).value)
    except (KvdrillError, ArithmeticError, ValueError, AttributeError, TypeError):
        return False


def _own_ratio(step: Step, marks: Mapping[str, Mark]) -> Fraction | None:
    """The ratio a step asks for, of the candidate's own answers to its two steps where both
    were marked right (309 ÷ 67 sessions: 4.61, where the references give 4.83)."""
    if step.ratio_of is None:
        return None
    top, bottom = (marks.get(step_id) for step_id in step.ratio_of)
    if top is None or bottom is None or top.verdict != "correct" \
            or bottom.verdict != "correct" or not top.parsed or not bottom.parsed:
        return None
    return Fraction(top.parsed) / Fraction(bottom.parsed)


def _working_slip(key: AnswerKey, step_id: str, reading: ParsedAnswer,
                  figures: tuple[Fraction, ...], tolerance: Fraction,
                  mistakes: tuple[str, ...], of_bytes: frozenset[Fraction] = frozenset()
                  ) -> Diagnosis | None:
    from trainer.marking.diagnosis import from_working

    return from_working(key, step_id, reading.quantity.value, figures, tolerance, mistakes,
                        of_bytes)


# A figure typed with a unit of bytes ("64 KiB" in "32768 * 64 KiB"): an amount of memory, no
# count of heads or layers
_BYTES_AFTER = lazy(r"(?<![\w.])(\d[\d,]*(?:\.\d+)?)\s?(?:[KMGT]i?B|B)(?![\w/])")


def _figures_of_bytes(working: str) -> frozenset[Fraction]:
    return frozenset(Fraction(m.group(1).replace(",", "")) for m in _BYTES_AFTER.finditer(working)
                     if m.group(1).count(".") <= 1)


def _diagnose(key: AnswerKey, step_id: str, known: frozenset[str], reading: ParsedAnswer,
              tolerance: Fraction, named: tuple[str, ...], ties: tuple[str, ...]
              ) -> Diagnosis | None:
    from trainer.marking.diagnosis import diagnose

    return diagnose(key, step_id, reading.quantity.value, reading.resolution, tolerance,
                    named, ties, _typed_exactly(reading), key.drill.step(step_id).misconceptions,
                    known)


def _in_words(names: tuple[str, ...]) -> str:
    """"1a", "1a and 2b", "1a, 2b and 3a"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _unless_contradicted(diagnosis: Diagnosis | None, figures: tuple[Fraction, ...],
                         comes_to: bool = False, typed: Fraction = Fraction(0)
                         ) -> Diagnosis | None:
    """The diagnosis, unless the working shows the input's true value and not the one the
    diagnosis reads (32 × 8 × 128 × 2 has its 32 layers: no "16 layers"), or, where the
    working comes to the answer (`comes_to`), shows none of the values the slips read
    (2*61*128*128*2 / 8 = 499,712 B has no latent 4,032 wide)."""
    if diagnosis is None or diagnosis.kind != "input" or not figures:
        return diagnosis
    slip = diagnosis.slip
    if slip.true in figures and slip.implied not in figures:
        return None
    if comes_to and not any(typed_at_some_scale(f, Fraction(s.implied)) for s in diagnosis.slips
                            for f in (*figures, typed)):
        return None
    return diagnosis


# A bare product of plain figures, a spaced unit after it at most: "2*80*64*128*2",
# "2 x 16 x 8 B" (not "2*80*8k", whose last figure is glued to its scale)
_BARE_PRODUCT = lazy(
    r"^\s*(?P<expression>\d[\d,.]*(?:\s*[*×x]\s*\d[\d,.]*){2,})(?:\s+[A-Za-z]{1,3})?\s*$")
_FIGURE = lazy(r"(?<![\w.])(?:\d[\d,]*(?:\.\d+)?|\.\d+)(?![\w.])")


_OTHER_ROUNDING = {"rounded-down": "rounded-up", "rounded-up": "rounded-down"}


def _rounded_otherwise(path_id: str, value: Fraction, figures: tuple[Fraction, ...]) -> bool:
    """Whether the working shows a fraction the answer is the other rounding of: its ceiling
    for "rounded-down", its floor for "rounded-up"."""
    if path_id not in ROUNDINGS or value.denominator != 1:
        return False
    other = math.ceil if path_id == "rounded-down" else math.floor
    return any(f.denominator != 1 and other(f) == value for f in figures)


def _all_figures_read(working: str) -> bool:
    """Whether `_figures` reads every number of the working: none is glued to a scale or a
    unit ("12.9B*2", "4k", "2.47GB"), whose value it leaves out."""
    return _GLUED_FIGURE.search(working) is None


_GLUED_FIGURE = lazy(r"\d[A-Za-z]")


def _figures(working: str) -> tuple[Fraction, ...]:
    """The plain numbers of shown working ("2 × 60 × 8 × 128 × 2": 2, 60, 8, 128, 2), each
    once; none from a working too long to be a line of arithmetic."""
    if not working or len(working) > 200:
        return ()
    found: dict[Fraction, None] = {}
    for match in _FIGURE.finditer(working):
        text = match.group().replace(",", "")
        if text.count(".") <= 1:
            found[Fraction(text)] = None
    return tuple(found)


def _operands(working: str) -> tuple[Fraction, ...]:
    """The figures of shown working that go into its arithmetic, not those that come out of
    it: in "51.6/18 = 2.9" the 2.9 is a quotient, no weights of 2.9 GB."""
    results = {match.start() for match in _FIGURE.finditer(working)
               if _RESULT_BEFORE.search(working[: match.start()])}
    return tuple(f for f in _figures(working)
                 if not any(Fraction(m.group().replace(",", "")) == f and m.start() in results
                            for m in _FIGURE.finditer(working)))


_RESULT_BEFORE = lazy(r"[\d)]\s*(?:[A-Za-z]+\s*)?(?:=|≈|~|→|->)\s*$")


def known_inputs(key: AnswerKey, step: Step, marks: Mapping[str, Mark]) -> frozenset[str]:
    """The inputs an earlier step asked for directly (layers, KV heads...) and the candidate
    answered right, with the same value as in this step: no slip of them is read here."""
    known: set[str] = set()
    if step.ratio_of is not None:
        return frozenset()
    for earlier_id, mark in marks.items():
        earlier = key.drill.step(earlier_id)
        if mark.verdict == "correct" and earlier.answer is not None \
                and earlier.answer not in FORMULAS and _same_here(key, earlier_id, step):
            known.add(earlier.answer)
    return frozenset(known)


def _typed_exactly(reading: ParsedAnswer) -> Fraction | None:
    """For a whole number typed with trailing zeros ("320 KiB", whose resolution is 10 KiB),
    the resolution its digits would have if the zeros were meant (1 KiB); else None."""
    if reading.resolution is None:
        return None
    unit = unit_factor(reading.unit).value if reading.unit else Fraction(1)
    typed, resolution = reading.quantity.value / unit, reading.resolution / unit
    if typed.denominator != 1 or resolution < 10 or resolution.denominator != 1:
        return None
    return unit
