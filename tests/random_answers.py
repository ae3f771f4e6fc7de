"""Random wrong answers for the diagnosis tests: a numeric step of any drill, its reference ×
uniform(low, high), written to three significant figures in the step's unit, seeded."""

from __future__ import annotations

import random
from collections.abc import Callable

from trainer.drills.loader import load_drill_file
from trainer.drills.reference import AnswerKey
from trainer.files.paths import drill_paths
from trainer.reading.expression import unit_factor


def random_answers(key_of: Callable[[str], AnswerKey], count: int, seed: int,
                   low: float = 0.3, high: float = 3) -> list[tuple[str, str, str]]:
    """(drill, step, answer), `count` of them."""
    drills = [load_drill_file(path) for path in sorted(drill_paths())]
    items = [(drill.id, step) for drill in drills for step in drill.steps
             if step.kind == "numeric"]
    rng = random.Random(seed)
    answers = []
    for _ in range(count):
        drill_id, step = rng.choice(items)
        unit = step.unit or ""
        scale = unit_factor(unit).value if unit else 1
        value = float(key_of(drill_id).reference(step.id).value / scale) * rng.uniform(low, high)
        answers.append((drill_id, step.id, f"{value:.3g} {unit}".strip()))
    return answers
