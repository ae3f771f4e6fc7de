"""A whole attempt against its rubric: the four dimensions with their evidence, the level the
attempt sounds like, and the red flags it raised. How a text is read is trainer/marking/prose.py;
what a text claims wrongly, trainer/marking/claims.py.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from trainer.drills.model import Dimension, Drill, Level, Rubric, Step
from trainer.errors import KvdrillError
from trainer.marking import kept_readings
from trainer.marking.checker import Mark
from trainer.marking.claims import ClaimMade, asserts, claims_made, general_part
from trainer.marking.prose import (
    affirms,
    concept_credit,
    contains,
    is_number,
    numbers_in,
    phrase_words,
    read_text,
)
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor
from trainer.reading.numbers import format_number
from trainer.reading.patterns import lazy
from trainer.records import field, record

__all__ = [
    "DimensionScore",
    "RubricScore",
    "affirms",
    "concept_credit",
    "contains",
    "depth",
    "phrase_words",
    "score_attempt",
    "step_credit",
]

def step_credit(step: Step, rubric: Rubric, text: str) -> Fraction:
    """The credit a text answer earns for its own step's concepts (each 0 to 1), summed."""
    total = Fraction(0)
    for concept_id in step.concepts:
        concept = rubric.concept(concept_id)
        if concept is not None:
            total += concept_credit(concept, text)[0]
    return total


# Depth: two answers can name the same levers while one of them explains and quantifies far
# more. Each reasoned clause (an item that reasons and is not part of a list) and each distinct
# figure inside one adds to an answer's depth, full at DEPTH_POINTS of each. A concept dimension
# is DEPTH_SHARE depth (of the answers that earned its concepts) and the rest concepts. Levels
# read the concepts alone: depth orders answers, it does not promote them.
DEPTH_POINTS = 16
DEPTH_SHARE = Fraction(1, 2)


def depth(text: str) -> Fraction:
    """From 0 (a list of terms, or nothing reasoned) to 1 (sixteen or more reasoned clauses and
    sixteen distinct figures used in them)."""
    reading = read_text(text)
    reasoned: set[int] = set()
    figures: set[str] = set()
    for position, token in enumerate(reading.tokens):
        item = reading.item[position]
        if item not in reading.reasoned_items or item in reading.listed_items:
            continue
        reasoned.add(item)
        if is_number(token):
            figures.add(token)
    points = min(len(reasoned), DEPTH_POINTS) + min(len(figures), DEPTH_POINTS)
    return Fraction(points, 2 * DEPTH_POINTS)


@record
class DimensionScore:
    id: str
    title: str
    score: Fraction
    max: int
    evidence: tuple[str, ...]
    concepts_score: Fraction | None = None  # what the concepts alone earn, out of max; levels
    # read it (None: the score is all concepts or all numeric steps)

    @property
    def level_score(self) -> Fraction:
        return self.score if self.concepts_score is None else self.concepts_score


@record
class RubricScore:
    dimensions: tuple[DimensionScore, ...]
    level: str | None
    level_title: str | None
    red_flags: tuple[tuple[str, str], ...] = field(default=())  # (id, what it says + where)
    short_of: str | None = None  # with no level: the first level and what it needs
    wrong_claims: tuple[ClaimMade, ...] = ()  # what the text answers claimed wrongly
    next_level: str | None = None  # with a level below the top: the next and what it needs
    # each wrong claim's correction as said: on a re-targeted drill, without the drill's own
    # figures (a GPT-OSS grade quoting Mixtral's 93.4 GB: expert pass 53, W18)
    claim_says: tuple[str, ...] = ()

    @property
    def sounds_like(self) -> str:
        if self.level_title and self.next_level:
            return f"{self.level_title}; {self.next_level}"
        return self.level_title or self.short_of or "no level (the rubric names none)"

    def dimension(self, dimension_id: str) -> DimensionScore:
        return next(d for d in self.dimensions if d.id == dimension_id)


def _numeric_score(dimension: Dimension, drill: Drill, marks: Mapping[str, Mark],
                   credit_carried: float, made: Mapping[str, object]) -> DimensionScore:
    numeric = [m for m in marks.values() if m.is_numeric]
    correct = [m.step_id for m in numeric if m.verdict == "correct"]
    carried = [m.step_id for m in numeric if m.carried_forward]
    # A step left unanswered whose value a text answer states (with its unit) shows the
    # arithmetic was done: credited as an answer carried forward is. Only a step asked before
    # the text (a text restates what was worked out: "96 sessions" in the 8B policy is no
    # answer to the 70B follow-up after it, whose key is 97), and not by a text that makes a
    # wrong claim (the colleague's "about 48 sessions" is no answer to the bf16-KV step that
    # also comes to 48: expert pass 57, W3 and W4).
    # A figure that is the value of several such steps (8 sequences with FP8 KV, and with the
    # context halved) states one of them, which the text does not say: credited once, and
    # named as either (expert pass 79).
    order = {step.id: index for index, step in enumerate(drill.steps)}
    unanswered = {m.step_id for m in numeric if m.verdict == "unanswered"}
    stated_in: dict[tuple[str, ...], str] = {}
    for m in marks.values():
        if m.is_numeric or m.step_id in made:
            continue
        for figure in m.figures:
            steps = tuple(step_id for step_id in figure.right_for if step_id in unanswered
                          and order.get(step_id, len(order)) < order.get(m.step_id, 0))
            if steps:
                stated_in.setdefault(steps, m.step_id)
    singly = {steps[0] for steps in stated_in if len(steps) == 1}
    stated = sorted((steps for steps in stated_in
                     if len(steps) == 1 or singly.isdisjoint(steps)),
                    key=lambda steps: order.get(steps[0], 0))
    earned = len(correct) + Fraction(str(credit_carried)) * (len(carried) + len(stated))
    score = _round_half(dimension.max * earned / len(numeric)) if numeric else Fraction(0)
    evidence = [f"{len(correct)} of {len(numeric)} numeric steps correct"]
    if carried:
        evidence.append(f"carried forward ({credit_carried:g} credit): {', '.join(carried)}")
    if stated:
        evidence.append(f"stated in a text answer ({credit_carried:g} credit): "
                        + ", ".join(f"{' or '.join(steps)} in {stated_in[steps]}"
                                    for steps in stated))
    wrong = [m.step_id for m in numeric if m.verdict == "wrong" and not m.carried_forward]
    if wrong:
        evidence.append(f"wrong: {', '.join(wrong)}")
    return DimensionScore(dimension.id, dimension.title, score, dimension.max, tuple(evidence))


LIST_CAP = Fraction(1, 2)


def _concept_score(dimension: Dimension, drill: Drill, marks: Mapping[str, Mark],
                   list_budget: dict[str, Fraction] | None = None,
                   made: Mapping[str, tuple[ClaimMade, ...]] | None = None,
                   figures: tuple[float, ...] = (), retargeted: bool = False,
                   moe: bool = False) -> DimensionScore | None:
    """`list_budget`: what each bare-list answer may still earn, shared by every dimension of
    the rubric (a list earns at most LIST_CAP of one concept in all). `made`: the wrong claims
    each text answer makes; a concept one of them contradicts earns nothing in the attempt,
    and an answer making one earns nothing of any concept, and no depth. `retargeted`: a
    concept's label is said without the drill's own figures ("(12 sessions)" is the H100's)."""
    made = made or {}
    contradicted = {concept_id for claims in made.values() for c in claims
                    for concept_id in c.claim.contradicts}
    answered = [(m.step_id, m.answer) for m in marks.values()
                if not m.is_numeric and m.answer and m.answer.strip()]
    asks = {step.id: set(step.concepts) for step in drill.steps}
    asked = {c for step in drill.steps for c in step.concepts}
    concepts = [c for c in dimension.concepts if c.id in asked]
    if not concepts:
        return None  # this drill does not ask for this dimension
    earned = Fraction(0)
    evidence: list[str] = []
    earning: set[str] = set()  # the steps whose answers earned something here
    # An answer that reasons nothing (a bare list of terms) shows it knows the words, not the
    # ideas: all it names earns at most LIST_CAP of one concept, over the whole rubric.
    budget = {} if list_budget is None else list_budget
    for step_id, text in answered:
        if step_id not in budget and not depth(text):
            budget[step_id] = LIST_CAP
    held_to_nothing = False  # a concept said but held to nothing beside a wrong claim
    for concept in concepts:
        best, where, source = Fraction(0), "", ""
        label = _without_figures(concept.label) if retargeted else concept.label
        if moe and concept.dense_target_only:
            # (an MoE target's verification touches more experts than a decode step: the idea
            # is not true of it, so saying it earns nothing; expert pass 50)
            continue
        if concept.id in contradicted:
            said = next(c for claims in made.values() for c in claims
                        if concept.id in c.claim.contradicts)
            # the idea itself said right beside the claim ("KV usage p95 under 85% … and
            # nvidia-smi utilisation") is not "contradicted": it is held, as a claim holds all
            claim_words = " ".join(phrase for part in said.claim.parts for phrase in part)
            stated = [note for _, text in answered
                      for credit, note in [concept_credit(concept, text, figures,
                                                          retargeted)]
                      # (not the claim's own words: "both are compute-bound" states no
                      # "decode is memory-bound")
                      if credit and note.split("'")[1:2] != [""]
                      and note.split("'")[1] not in claim_words]
            evidence.append(
                f"{label}: {stated[0]}, no credit beside the wrong claim in {said.step_id} "
                "(the red flag says why)" if stated else
                f"{label}: no credit, contradicted by the wrong claim in {said.step_id} "
                "(the red flag says why)")
            held_to_nothing = True  # (said: no "nothing earned this dimension" after it)
            continue
        # The step that asks for the concept first: of two answers that earn it alike, the
        # one written for it is the evidence, not a clause of another step's
        texts = dict(sorted(answered, key=lambda a: concept.id not in asks.get(a[0], ())))
        withheld = ""  # said, but held to nothing beside a wrong claim: said so, not "nothing"
        for step_id, text in texts.items():
            credit, note = concept_credit(concept, text, figures, retargeted)
            if made.get(step_id) and credit > 0:
                # a wrong claim in the step leaves its concepts nothing: an answer that makes
                # one scores at most what any junior answer does (measured over 35 corpora:
                # a quarter of a concept kept nine caught wrong answers above a junior at 0)
                withheld = withheld or \
                    f"{label}: {note}, no credit beside a wrong claim in {step_id}"
                continue
            if credit > best:
                best, where, source = credit, f"{label}: {note} in {step_id}", step_id
        if not where and withheld:
            where, held_to_nothing = withheld, True
        if source in budget:
            best = min(best, budget[source])
            budget[source] -= best
        earned += best
        if source:
            earning.add(source)
        if where:
            # (a concept only negated is not evidence of anything: "'acceptance' negated"
            # read as an accusation of a claim nobody made)
            evidence.append(where)
    share = earned / len(concepts)
    deep = max((depth(text) for step_id, text in answered
                if step_id in earning and not made.get(step_id)), default=Fraction(0))
    score = _round_fine(dimension.max * ((1 - DEPTH_SHARE) * share + DEPTH_SHARE * deep))
    concepts_alone = _round_fine(dimension.max * share)
    if not earned and not held_to_nothing:
        evidence.append("nothing in the text answers earned this dimension")
    else:
        # (how fully the answers explain is half the score: said once under the rubric, not
        # on every line, where three reviews read it as noise)
        if _round_half(concepts_alone) != _round_half(score):
            # the level reads the concepts alone: said where they and the score part ways,
            # so "Staff" beside a printed 1.33/4 is not a contradiction
            evidence.append(f"for the level, the ideas alone count: "
                            f"{format_number(_round_half(concepts_alone))}/{dimension.max}")
    return DimensionScore(dimension.id, dimension.title, score, dimension.max, tuple(evidence),
                          concepts_alone)


MANY_FLAGS = 2  # red flags that keep an attempt below the first level
# A parenthesis of a concept's label that states the drill's own figures: "(12 sessions)",
# "(~11% at 10 GB)"; not a formula's: "(1 − α^(k+1)) ÷ (1 − α)" keeps its parentheses
_FIGURED_ASIDE = lazy(r"\s*\([^()]*\d[^()]*\)")
_FORMULA = lazy(r"^\(\s*[\w\s+−\-×÷*/^α.]*\)$")


def _without_figures(label: str) -> str:
    def aside(match: re.Match[str]) -> str:
        text = match.group().strip()
        formula = _FORMULA.match(text) and not re.search(r"[A-Za-z]{2,}|\d\d|\d\.\d", text)
        after_power = label[: match.start()].endswith("^")
        return match.group() if formula or after_power else ""
    return _FIGURED_ASIDE.sub(aside, label)


def drill_figures(drill: Drill, marks: Mapping[str, Mark],
                  retargeted: bool = False) -> tuple[float, ...]:
    """The figures a drill's answers use: each numeric step's value in the unit it is shown
    in, and every number of its model answers (small counts too: "8 sequences" is the
    drill's, though it quantifies nothing; prose.meaningful tells them apart). Re-targeted,
    the values only: the model answers are written for the drill's own model and card (the
    H200's 174 sessions are no figure of a B200's: expert pass 54)."""
    found: set[float] = set()
    for mark in marks.values():
        if mark.is_numeric and mark.expected is not None:
            try:
                found.add(float(mark.expected / unit_factor(mark.unit).value))
            except (KvdrillError, ZeroDivisionError):
                continue
    for step in drill.steps:
        if step.model_answer and not retargeted:
            found.update(numbers_in(step.model_answer))
    return tuple(sorted(found))


def claims_in(drill: Drill, marks: Mapping[str, Mark], retargeted: bool = False,
              moe: bool = False) -> dict[str, tuple[ClaimMade, ...]]:
    """The wrong claims each text answer of the attempt makes. On a drill re-targeted at
    another model or card, a claim wrong only of the drill's own ("one card holds the FP8
    weights": one MI300X does) is not looked for; on an MoE model (`moe`), one wrong only of
    a dense model ("turn speculation off at batch 1": an MoE target's may lose there), and
    on a dense one, one wrong only of an MoE ("verifying 5 tokens costs one step")."""
    found = {}
    for mark in marks.values():
        if mark.is_numeric or not mark.answer:
            continue
        try:
            step = drill.step(mark.step_id)
        except KeyError:
            continue
        claims = claims_made(step, mark.answer)
        if retargeted:
            claims = tuple(c for c in claims if not c.claim.own_target_only)
        claims = tuple(c for c in claims if not (
            c.claim.dense_target_only if moe else c.claim.moe_target_only))
        if claims:
            found[mark.step_id] = claims
    return found


def _round_half(value: Fraction) -> Fraction:
    return Fraction(round(value * 2), 2)


def _round_fine(value: Fraction) -> Fraction:
    """Concept dimensions add halves and quarters of many concepts: shown to 0.01, so a
    better answer never ties a weaker one by rounding."""
    return Fraction(round(value * 100), 100)


def score_attempt(drill: Drill, rubric: Rubric, marks: Mapping[str, Mark],
                  retargeted: bool = False, moe: bool = False) -> RubricScore:
    """`retargeted`: the drill was marked against another model or card, so a correction
    written with the drill's own figures says only what holds without them; `moe`: its
    model is a mixture of experts (claims_in)."""
    list_budget: dict[str, Fraction] = {}
    made = claims_in(drill, marks, retargeted, moe)
    # (the figures are for text answers only: a sheet of numbers reads no prose)
    figures = drill_figures(drill, marks, retargeted) if any(
        not m.is_numeric and m.answer for m in marks.values()) else ()
    scored = (
        _numeric_score(d, drill, marks, rubric.carried_forward_credit, made)
        if d.scored_from == "numeric"
        else _concept_score(d, drill, marks, list_budget, made, figures, retargeted, moe)
        for d in rubric.dimensions
    )
    dimensions = tuple(d for d in scored if d is not None)
    # Levels read whole and half points of what the concepts earned, depth left out.
    by_id = {d.id: _round_half(d.level_score) for d in dimensions}
    level_id = level_title = None
    above: Level | None = None  # the first level the attempt does not reach
    for level in rubric.levels:
        if all(by_id.get(dim, minimum) >= minimum for dim, minimum in level.requires.items()) \
                and not _not_right(drill, level, marks):
            level_id, level_title = level.id, level.title
        else:
            # levels build on each other: one not reached holds the attempt below the rest
            # (Senior's dimensions beside a Solid that needs the bytes per token computed)
            above = level
            break
    short_of = None if level_id or not rubric.levels else _short_of(
        rubric.levels[0], dimensions, by_id, not_right=_not_right(drill, rubric.levels[0], marks))
    if rubric.levels and (partial := _text_only(drill, marks)):
        # "not yet Solid: it needs Arithmetic 3/4" said of one explanation practised alone
        # reads as a verdict on it (expert pass 61, L0): a level reads a whole attempt; so
        # does "Solid" reached by the figures one text answer states (expert pass 95, A121)
        short_of, level_id, level_title, above = partial, None, None, None
    next_level = None if level_id is None or above is None else \
        _short_of(above, dimensions, by_id, reached=True,
                  not_right=_not_right(drill, above, marks))
    rubric_flags = _red_flags(drill, rubric, marks, frozenset(made), retargeted)
    claim_flags = _claim_flags(made, retargeted, rubric)
    flags = rubric_flags + claim_flags
    # One text answer's wrong claims are one thing heard: a sentence that blames fragmentation
    # and reservations at once does not count as two, beside fourteen right numbers
    heard = len(rubric_flags) + len({c.step_id for claims in made.values() for c in claims})
    first = rubric.levels[0] if rubric.levels else None
    if heard >= MANY_FLAGS and first is not None and level_id is not None:
        # Several red flags: an interviewer who heard them does not call the attempt even
        # Solid, whatever the arithmetic (right numbers beside "MoE saves memory" and "half a
        # KV head per GPU")
        # (the level the ideas reached without the flags: the printed scores add depth, which
        # levels do not read, so "the dimensions say" read as a contradiction beside them)
        said = "without them, " + (level_title or first.title)
        level_id, level_title, next_level = None, None, None
        short_of = f"not yet {first.title}: {len(flags)} red flags ({said})"
    elif flags and first is not None and level_id not in (None, first.id):
        # An interviewer who heard a red flag does not rate the attempt above the first
        # level, however the dimensions add up (a hybrid's KV counted on every layer, and
        # Staff for the rest, read as Staff)
        level_title = f"{first.title} (a red flag holds it there; without it, {level_title})"
        level_id, next_level = first.id, None
    kept_readings.keep_new()  # the stems and phrase tokens worked out for the next run
    claims = tuple(c for claims in made.values() for c in claims)
    return RubricScore(dimensions, level_id, level_title, flags, short_of, claims, next_level,
                       tuple(_said(c, retargeted, rubric).removesuffix(
                           f" (a wrong claim in {c.step_id})") for c in claims))


def _text_only(drill: Drill, marks: Mapping[str, Mark]) -> str | None:
    """What to say instead of a level for an attempt that answered text steps and no numeric
    one, in a drill that has them; None for any other attempt."""
    numeric = [s for s in drill.steps if s.kind == "numeric"]
    answered = [m for m in marks.values() if m.answer and m.answer.strip()]
    if not numeric or not answered or any(m.is_numeric for m in answered):
        return None
    return (f"no level: {len(answered)} of {len(drill.steps)} steps answered, none of them "
            "numeric (a level reads a whole attempt; the dimensions above score these "
            "answers)")


def _not_right(drill: Drill, level: Level, marks: Mapping[str, Mark]) -> tuple[str, ...]:
    """The steps the level needs right (its `right` quantities, each at the drill's own
    setting) that this attempt did not get right itself."""
    missing = []
    for quantity in level.right:
        step = next((s for s in drill.steps
                     if s.answer == quantity and not s.with_ and s.kind == "numeric"), None)
        mark = marks.get(step.id) if step is not None else None
        if step is not None and (mark is None or mark.verdict != "correct"):
            missing.append(step.id)
    return tuple(missing)


def _short_of(first: Level, dimensions: tuple[DimensionScore, ...],
              by_id: Mapping[str, Fraction], reached: bool = False,
              not_right: tuple[str, ...] = ()) -> str:
    """"not yet Solid: it needs Arithmetic 3/4 (this attempt 1)"; `reached` (a level below
    it was): "Senior needs Assumptions 3/4 (this attempt 2)". A dimension whose printed score
    holds depth is read by its concepts alone, and says so."""
    titles = {d.id: (d.title, d.max) for d in dimensions}
    depth_in = {d.id for d in dimensions if d.concepts_score is not None
                and _round_half(d.score) != by_id[d.id]}
    needs = [f"{titles[dim][0]} {minimum}/{titles[dim][1]} (this attempt "
             f"{float(by_id[dim]):g}{', its ideas alone' if dim in depth_in else ''})"
             for dim, minimum in first.requires.items()
             if dim in titles and by_id[dim] < minimum]
    # "and bytes-per-token and sessions answered right": steps the level needs right, said
    # apart from the scores so that they do not read as a list of what was right
    steps = " and ".join(not_right)
    said = ", ".join(needs) + (", and " if needs and steps else "") + \
        (f"{steps} answered right" if steps else "") or "what its rubric lists"
    return f"{first.title} needs {said}" if reached else \
        f"not yet {first.title}: it needs {said}"


def _red_flags(drill: Drill, rubric: Rubric, marks: Mapping[str, Mark],
               claimed: frozenset[str] = frozenset(), retargeted: bool = False
               ) -> tuple[tuple[str, str], ...]:
    """The rubric's red flags the attempt raised: by a sure mistake of a numeric step, or by
    a phrase of a text answer. A text answer that made one of its step's wrong claims
    (`claimed`) has that claim's red flag, with its correction: the same sentence does not
    raise a second one in the rubric's words."""
    raised: list[tuple[str, str]] = []
    listened = set(drill.red_flags) if drill.red_flags else {f.id for f in rubric.red_flags}
    for flag in rubric.red_flags:
        if flag.id not in listened:
            continue
        steps = [m.step_id for m in marks.values()
                 if m.sure_mistake in flag.misconceptions]
        for m in marks.values():
            if m.is_numeric or not m.answer or m.step_id in claimed:
                continue
            if flag.id in _claim_ids(drill, m.step_id):
                # (the step's own wrong claim of that name reads the answer, with its
                # excuses: "raising max_model_len globally lets a 128k session take 16 GiB"
                # argues against it; the rubric's bare phrase flagged 37 such right answers
                # over 57 corpora, stop 64)
                continue
            if any(asserts(m.answer, p) for p in flag.phrases) and not any(
                contains(m.answer, u) for u in flag.unless
            ):
                steps.append(m.step_id)
        if steps:
            # on a re-targeted drill, what the flag says before the drill's own figures
            says = (general_part(flag.says) or flag.says) if retargeted else flag.says
            raised.append((flag.id, f"{says} (in {', '.join(steps)})"))
    return tuple(raised)


def _claim_ids(drill: Drill, step_id: str) -> frozenset[str]:
    """The ids of the wrong claims a step lists."""
    try:
        step = drill.step(step_id)
    except KeyError:
        return frozenset()
    return frozenset(claim.id for claim in step.wrong_claims or ())


def _claim_flags(made: Mapping[str, tuple[ClaimMade, ...]], retargeted: bool = False,
                 rubric: Rubric | None = None) -> tuple[tuple[str, str], ...]:
    """A wrong claim is a red flag to an interviewer, with its correction. One answer's
    claims are one thing heard (review 13: "fp8 KV improves both" said two ways in 4f read as
    two red flags): its red flag is its most specific claim's, the one of the most parts; the
    others still cost the concepts they contradict. On a re-targeted drill a correction
    written with the drill's own figures is cut to what holds without them, or else said as
    the rubric's concept the claim contradicts."""
    flags = []
    for claims in made.values():
        if not claims:
            continue
        c = max(claims, key=lambda made: len(made.claim.parts))
        flags.append((c.claim.id, _said(c, retargeted, rubric)))
    return tuple(flags)


def _said(made: ClaimMade, retargeted: bool, rubric: Rubric | None) -> str:
    """A wrong claim's correction, with where it was made; re-targeted, cut to what holds
    without the drill's own figures, or said as the concept it contradicts."""
    if not retargeted:
        return made.sentence
    contradicted = (rubric.concept(i) for i in made.claim.contradicts) if rubric else ()
    instead = next((concept.label for concept in contradicted if concept is not None), None)
    return made.retargeted_sentence(instead)
