"""`kvdrill practice --weak`: a short timed session on the skills you miss.

The skills to practise are ranked from their cards (schedule.SkillCard): missed at their last
rating first, then the most overdue, then the most often wrong. Each step of the session is a
numeric step of a shipped drill tagged with one of them, asked with a fresh variant of that drill
(so the numbers are new). A question names its drill and variant in one line, gives inline the
figures of the earlier steps of its drill that it builds on (they are not asked here), and
`:givens` shows its givens. A ratio step brings the two steps it divides along, and steps whose
prompts stand alone are preferred.

The session is written as an ordinary drill file (id `weak-skills`) whose steps carry their own
givens in `with`, loaded through the same loader as any drill, and stored with its text like any
attempt: it is marked, exported, reviewed and resumed as any other. `advice` says when such a
session would help more than a whole drill."""

from __future__ import annotations

import math
import random
import re
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from trainer.drills.skills import SKILLS
from trainer.errors import KvdrillError
from trainer.reading.exact import Fraction
from trainer.records import record
from trainer.store.schedule import SkillCard

if TYPE_CHECKING:  # `next` reads only the advice: the solver is imported when a session is built
    from trainer.drills.model import Drill, Step
    from trainer.drills.reference import AnswerKey

DRILL_ID = "weak-skills"
DEFAULT_STEPS = 6
MAX_STEPS = 20
SKILLS_PER_SESSION = 3  # a short session aims at a few skills, not all of them
SEED_TRIES = 12  # variants tried for numbers that differ from the drill's own
RUBRIC = "kv-capacity"
MAX_PROMPT_CHARS = 4000


class NothingWeak(KvdrillError):
    """No skill has been rated yet."""


@record
class Chosen:
    """One step of a weak-skill session: where it comes from and its givens."""

    skill: str
    drill: Drill
    step: Step
    key: AnswerKey  # the drill with the variant's givens
    variant: int | None  # None: the drill has no variants, so its own numbers


def rank(cards: Iterable[SkillCard], now: datetime | None = None) -> list[SkillCard]:
    """Rated skills, weakest first: missed at their last rating, then most overdue, then most
    often wrong."""
    now = now or datetime.now(UTC)

    def overdue_days(card: SkillCard) -> float:
        return 0.0 if card.due is None else (now - card.due).total_seconds() / 86400

    rated = [card for card in cards if card.reviews and card.skill in SKILLS]
    return sorted(rated, key=lambda c: (c.last_rating != "Again", -overdue_days(c),
                                        -c.wrong_share, c.skill))


def missed(cards: Iterable[SkillCard]) -> list[SkillCard]:
    """The skills whose last rating was Again (a wrong answer, a hint, a skip)."""
    return [card for card in rank(cards) if card.last_rating == "Again"]


def mistake_text(card: SkillCard) -> str:
    """"last time: used the query (attention) heads where the KV heads belong (query-heads,
    in llama31-8b-h100)" when the last answer was wrong; else the last rating, and the last
    mistake if there was one."""
    from trainer.capacity.wrong_paths import WRONG_PATHS

    path = WRONG_PATHS.get(card.last_mistake or "")
    if path is not None:
        where = f", in {card.last_drill}" if card.last_drill else ""
        if card.last_rating == "Again":
            return f"last time: {path.mistake} ({path.id}{where})"
        return (f"right at its last answer ({card.last_rating}); the last mistake: "
                f"{path.mistake} ({path.id}{where})")
    if card.last_rating == "Again":
        return "last time: wrong, skipped or with a hint"
    return f"last rated {card.last_rating}; {card.wrong} of {card.steps} steps wrong so far"


def advice(cards: list[SkillCard], drill_due: bool,
           now: datetime | None = None) -> dict[str, Any] | None:
    """Whether a weak-skill session would help more than a whole drill now, and why; None when
    no skill has been rated. It does when two or more skills were missed at their last rating
    (a short session covers them all), or when one was and no drill is due."""
    now = now or datetime.now(UTC)
    ranked = rank(cards, now)
    if not ranked:
        return None
    weak = missed(ranked)
    names = ", ".join(card.skill for card in weak[:SKILLS_PER_SESSION])
    if len(weak) > SKILLS_PER_SESSION:
        names += f" and {len(weak) - SKILLS_PER_SESSION} more"
    if len(weak) >= 2:
        reason = (f"{len(weak)} skills were missed at their last answer ({names}); a "
                  f"{DEFAULT_STEPS}-step session on them takes a few minutes and asks each "
                  "with new numbers, where a whole drill would spend most of its time on "
                  "what you already get right")
    elif weak and not drill_due:
        reason = (f"no drill is due, and {names} was missed at its last answer; a short "
                  "session on it is the most useful practice now")
    elif weak:
        reason = f"{names} was missed at its last answer, but a drill is due first"
    else:
        reason = "every skill was right at its last answer"
    return {"recommended": len(weak) >= 2 or (bool(weak) and not drill_due),
            "reason": reason, "skills": [card.skill for card in weak]}


# -- building a session ----------------------------------------------------------------------

def choose_skills(cards: list[SkillCard], steps: int) -> list[SkillCard]:
    """The skills a session of `steps` steps asks, weakest first (at most SKILLS_PER_SESSION)."""
    ranked = rank(cards)
    if not ranked:
        raise NothingWeak("no skill has been rated yet: practise a drill first "
                          "(kvdrill next says which), then kvdrill practice --weak")
    return ranked[:max(1, min(steps, SKILLS_PER_SESSION))]


def _steps_by_skill(drills: list[Drill]) -> dict[str, list[tuple[Drill, Step]]]:
    found: dict[str, list[tuple[Drill, Step]]] = {}
    for drill in drills:
        for step in drill.steps:
            if step.kind == "numeric" and step.skill:
                found.setdefault(step.skill, []).append((drill, step))
    return found


# Words by which a prompt may point at an earlier step of its own drill ("that budget").
# A prompt that opens with a joining word ("And at the measured 550 TFLOP/s?") continues the one
# before it, whatever else it says.
_REFERS_BACK = re.compile(r"^\W*(and|also|but|so|or|plus)\b|"
                          r"\b(that|those|this|these|it|same|again|above|before|earlier|"
                          r"instead|back|now|then)\b", re.IGNORECASE)


def stands_alone(step: Step) -> bool:
    """Whether a step's prompt reads without the steps before it in its drill."""
    return not step.depends_on and not _REFERS_BACK.search(step.prompt)


def _fresh_key(drill: Drill, step: Step,
               rng: random.Random) -> tuple[AnswerKey, int | None, bool]:
    """A variant of `drill` whose reference for `step` differs from the drill's own, and True;
    else (the drill has no variants, or none changes this step's answer) a variant or the
    drill's own givens, and False."""
    from trainer.drills.reference import AnswerKey
    from trainer.drills.variants import draw

    own = AnswerKey(drill)
    if not drill.vary:
        return own, None, False
    own_value = own.reference(step.id).value
    fallback: tuple[AnswerKey, int | None, bool] = (own, None, False)
    for _ in range(SEED_TRIES):
        seed = rng.randrange(1, 10**6)
        try:
            key = AnswerKey(drill, draw(drill, seed))
            value = key.reference(step.id).value
        except KvdrillError:
            continue
        if value != own_value:
            return key, seed, True
        fallback = (key, seed, False)
    return fallback


def pick(cards: list[SkillCard], drills: list[Drill], steps: int,
         rng: random.Random) -> list[Chosen]:
    """`steps` steps over the weakest skills, each from a drill that exercises it, no step
    twice; a ratio step comes with the two steps it divides, when they fit. Every skill is asked
    once first; the rest go in turn to the skills that still have a step a variant asks with
    new numbers, and only then to steps whose numbers no variant changes (a model's shape)."""
    skills = choose_skills(cards, steps)
    pool = _steps_by_skill(drills)
    for options in pool.values():
        rng.shuffle(options)
        options.sort(key=lambda option: not stands_alone(option[1]))  # stable: still shuffled
    fresh: dict[tuple[str, str], tuple[AnswerKey, int | None, bool]] = {}

    def key_for(drill: Drill, step: Step) -> tuple[AnswerKey, int | None, bool]:
        if (drill.id, step.id) not in fresh:
            fresh[(drill.id, step.id)] = _fresh_key(drill, step, rng)
        return fresh[(drill.id, step.id)]

    chosen: list[Chosen] = []
    used: set[tuple[str, str]] = set()

    def take(skill: str, new_only: bool) -> bool:
        room = steps - len(chosen)
        options = [(d, s) for d, s in pool.get(skill, []) if (d.id, s.id) not in used
                   and len(s.ratio_of or ()) + 1 <= room]
        found = None
        for drill, step in options:
            key, variant, new = key_for(drill, step)
            if new or (found is None and not new_only):
                found = (drill, step, key, variant)
            if new:
                break
        if found is None:
            return False
        drill, step, key, variant = found
        for member in [drill.step(i) for i in step.ratio_of or ()] + [step]:
            if (drill.id, member.id) not in used:
                used.add((drill.id, member.id))
                chosen.append(Chosen(member.skill or skill, drill, member, key, variant))
        return True

    for card in skills:
        if len(chosen) < steps:
            take(card.skill, new_only=False)
    for new_only in (True, False):
        while len(chosen) < steps and any([take(card.skill, new_only) for card in skills
                                           if len(chosen) < steps]):
            pass
    if not chosen:
        names = ", ".join(card.skill for card in skills)
        raise NothingWeak(f"no drill has a step tagged with {names}: kvdrill lint names the "
                          "steps without a skill")
    return chosen


def _plain(value: Any) -> Any:
    """A given as YAML writes it: whole numbers as int, other fractions as float."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value


def _step_givens(chosen: Chosen) -> dict[str, Any]:
    return {k: _plain(v) for k, v in chosen.key.step_givens(chosen.step).items()
            if v is not None}


def _earlier_figures(chosen: Chosen, members: set[str]) -> str:
    """The figures of the earlier steps of its drill that a step builds on, with its own
    numbers (those steps are not asked here, or are asked with other numbers): "From earlier
    in that drill: kv-budget = 52 GB; bytes-per-token = 131,072 B (128 KiB)." Empty when it
    builds on none, or only on steps that come with it (a ratio's)."""
    figures = [f"{other} = {chosen.key.reference(other).display}"
               for other in chosen.step.depends_on
               if other not in members and chosen.drill.step(other).kind == "numeric"]
    return f"From earlier in that drill: {'; '.join(figures)}." if figures else ""


def _skill_lines(cards: list[SkillCard], skills: list[str]) -> list[str]:
    """The session's skills: those with a recorded miss under "Missed", the others apart, so
    a skill never practised is never called one you miss."""
    by_skill = {card.skill: card for card in cards if card.reviews}
    missed = [s for s in skills if s in by_skill and by_skill[s].last_rating == "Again"]
    right = [s for s in skills if s in by_skill and s not in missed]
    new = [s for s in skills if s not in by_skill]
    lines: list[str] = []
    for title, group in (("Missed at the last answer:", missed),
                         ("Right at the last answer:", right), ("Not practised yet:", new)):
        if not group:
            continue
        lines.append(title)
        for skill in group:
            card = by_skill.get(skill)
            # a skill answered right last time says its earlier mistake only as history
            told = f": {mistake_text(card)}" if card is not None and (
                skill in missed or card.last_mistake) else ""
            lines.append(f"- {skill} ({SKILLS[skill]}){told}")
    return lines


def _clip(text: str, size: int) -> str:
    return text if len(text) <= size else text[: size - 1] + "…"


def session_text(cards: list[SkillCard], chosen: list[Chosen], steps: int) -> str:
    """The drill file of a weak-skill session (YAML), which the loader then checks like any."""
    import yaml

    from trainer.drills.placeholders import fill
    from trainer.views.sheets import prompt_of

    ids = {(c.drill.id, c.step.id): _clip(f"{n}-{c.step.id}", 64)
           for n, c in enumerate(chosen, 1)}
    all_givens = [_step_givens(c) for c in chosen]
    base = all_givens[0]
    skills = list(dict.fromkeys(c.skill for c in chosen))
    intro = [f"A short timed session of {len(chosen)} steps, each from a drill that exercises "
             "its skill, with new numbers. Each question names its drill; :givens shows its "
             "givens.", "", *_skill_lines(cards, skills)]
    rows = []
    for c, givens in zip(chosen, all_givens, strict=True):
        variant = f"variant {c.variant}" if c.variant is not None else "its own givens"
        display = c.key.display_givens()
        earlier = _earlier_figures(c, set(c.step.ratio_of or ()))
        prompt = "\n".join(part for part in (
            f"[{c.skill} · {c.drill.id}, {variant}]",
            f"{display['model_name']} on {display['gpus']} × {display['gpu_name']}.", earlier,
            prompt_of(c.key, c.step.id).strip()) if part)
        row: dict[str, Any] = {
            "id": ids[(c.drill.id, c.step.id)],
            "prompt": _clip(prompt, MAX_PROMPT_CHARS),
        }
        if c.step.ratio_of is not None:
            row["ratio_of"] = [ids[(c.drill.id, other)] for other in c.step.ratio_of]
        else:
            row["answer"] = c.step.answer
        row["skill"] = c.skill
        changes = {k: v for k, v in givens.items() if base.get(k) != v}
        changes.update({k: None for k in base if k not in givens})
        if changes:
            row["with"] = changes
        row.update({"unit": c.step.unit, "tolerance": c.step.tolerance,
                    "estimate": c.step.estimate, "seconds": c.step.seconds,
                    "hints": [fill(h, display) for h in c.step.hints],
                    "misconceptions": list(c.step.misconceptions)})
        if c.step.formula:
            row["formula"] = fill(c.step.formula, display)
        rows.append(row)
    seconds = sum(c.step.seconds for c in chosen)
    drills = ", ".join(dict.fromkeys(c.drill.id for c in chosen))
    data = {
        "id": DRILL_ID,
        "title": _clip(f"Weak skills: {', '.join(skills)}", 200),
        "target_minutes": max(1, math.ceil(seconds / 60)),
        "tags": ["weak-skills"],
        "rubric": RUBRIC,
        "solution": f"{DRILL_ID}.md.j2",
        "source": _clip(f"kvdrill practice --weak --steps {steps}: steps from {drills}", 1000),
        "situation": _clip("\n".join(intro), 8000),
        "givens": base,
        "steps": rows,
    }
    return yaml.dump(data, Dumper=_no_aliases(), sort_keys=False, allow_unicode=True,
                     width=100)


def _no_aliases() -> Any:
    """A safe dumper that writes no anchors or aliases (the loader refuses them)."""
    import yaml

    class NoAliases(yaml.SafeDumper):
        def ignore_aliases(self, data: Any) -> bool:
            return True

    return NoAliases


def build(cards: list[SkillCard], steps: int, rng: random.Random) -> str:
    """The drill file (YAML) of a weak-skill session of `steps` steps over the shipped drills."""
    from trainer.drills import catalog
    from trainer.drills.loader import find_drill

    drills = []
    for drill_id in catalog.usable_drill_ids():
        try:
            drills.append(find_drill(drill_id)[0])
        except KvdrillError:
            continue  # kvdrill lint names it
    return session_text(cards, pick(cards, drills, steps, rng), steps)
