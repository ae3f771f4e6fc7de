"""Seeded, physically sensible parameter draws from a drill's variant space.

The same drill and seed always give the same givens (string seeds hash deterministically), so
an interviewer's sheet, the candidate's practice and the grading all see one variant."""

from __future__ import annotations

import random
from typing import Any

from trainer.capacity.solver import value_of
from trainer.drills.model import Drill, linked_names
from trainer.drills.reference import AnswerKey
from trainer.errors import KvdrillError, UsageError

MAX_SEED = 2**63 - 1
DRAW_ATTEMPTS = 64


def draw(drill: Drill, seed: int, known: dict[str, bool] | None = None) -> dict[str, Any]:
    """The givens of variant `seed`: the drill's givens with each varied one drawn from its
    choices, redrawn until the main configuration fits at least one sequence and every step's
    reference can be computed. `known` remembers which givens were found sensible, for callers
    that draw many variants."""
    if not 0 <= seed <= MAX_SEED:
        raise UsageError(f"variant seed {seed} is out of range: use 0 to {MAX_SEED}")
    if not drill.vary:
        raise UsageError(f"drill {drill.id} has no variant space (no 'vary' in its file)")
    rng = random.Random(f"{drill.id}:{seed}")
    for _ in range(DRAW_ATTEMPTS):
        givens = dict(drill.givens)
        for key in sorted(drill.vary):
            choice = rng.choice(drill.vary[key])
            names = linked_names(key)
            values = choice if len(names) > 1 else (choice,)
            givens.update(zip(names, values, strict=True))
        fingerprint = repr(sorted(givens.items()))
        if known is None:
            if sensible(drill, givens):
                return givens
            continue
        if fingerprint not in known:
            known[fingerprint] = sensible(drill, givens)
        if known[fingerprint]:
            return givens
    raise KvdrillError(
        f"drill {drill.id}: no sensible variant found for seed {seed} in {DRAW_ATTEMPTS} draws: "
        "widen its 'vary' choices"
    )


def sensible(drill: Drill, givens: dict[str, Any]) -> bool:
    """Weights fit, the main configuration holds a sequence, every reference computes."""
    try:
        key = AnswerKey(drill, givens)
        if value_of(key.base, "kv_budget_bytes") <= 0:
            return False
        if value_of(key.base, "max_concurrency") < 1:
            return False
        for step in drill.steps:
            if step.kind == "numeric":
                key.reference(step.id)
    except (KvdrillError, ZeroDivisionError):
        return False
    return True


def space_size(drill: Drill) -> int:
    """How many combinations the variant space has (sensible or not)."""
    size = 1
    for choices in drill.vary.values():
        size *= len(set(choices))
    return size


def answer_key(drill: Drill, variant: int | None) -> AnswerKey:
    """The key of the drill's own givens (variant None) or of a drawn variant."""
    return AnswerKey(drill) if variant is None else AnswerKey(drill, draw(drill, variant))
