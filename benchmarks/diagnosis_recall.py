"""How often the "solve backwards" diagnosis names the one input a person got wrong, and how
often it explains a random wrong answer it should not.

Run inside the project's virtual environment:
    python benchmarks/diagnosis_recall.py [--all] [--random N] [--misses]

Slips: for every numeric step of the eight most common drills (--all: every drill), ONE input
at a time is changed to a value a person plausibly uses (a count typo: one digit changed, two
swapped, one dropped; head_dim = hidden; the query heads for the KV heads; a round reading of a
context; bytes per element 1/2/4 swapped; the utilisation after the weights; the reserve once
per node; the TP degree twice; one GB figure read as GiB). The wrong answer is computed through
the solver with that input changed, typed to 3 and to 4 significant figures in the step's unit,
marked as `kvdrill grade` marks it, and counted as named when the diagnosis names the changed
input (or a listed mistake matches it). Slips that leave the answer right (within the step's
tolerance) are not counted.

Random answers: the reference × U(0.3, 3) and × U(0.8, 1.25), typed to 3 significant figures,
over every numeric step of every drill; the share of wrong ones that get a diagnosis.
Everything is seeded; the same run prints the same numbers. Not part of the test run.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from fractions import Fraction

from trainer.capacity.deployment import GB, GIB, Deployment
from trainer.capacity.solver import FORMULAS, Solution, relaxed_value
from trainer.drills.loader import find_drill, load_drill_file
from trainer.drills.model import Drill
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.files.paths import drill_paths
from trainer.marking.checker import mark_sheet
from trainer.marking.diagnosis import ROUNDS
from trainer.reading.expression import unit_factor

COMMON_DRILLS = ("llama31-8b-h100", "llama2-70b-mi300x", "llama31-70b-tp2-h100",
                 "deepseek-v3-mla-h200", "llama31-405b-h200-tp", "long-context-tier",
                 "multi-turn-growth", "paged-blocks-vllm")
COUNTS = ("layers", "kv_heads", "heads", "head_dim", "mla_latent", "mla_rope",
          "windowed_layers", "experts", "experts_per_token")
TOKENS = ("context", "prompt_tokens", "prefix_tokens", "window")
SEED = 2026


@dataclass(frozen=True)
class Slip:
    kind: str
    input: str  # as the diagnosis names it
    slot: str  # what the solver is given
    value: Fraction  # in slot units


def typos(value: int, rng: random.Random) -> list[int]:
    """Two digits swapped, one dropped (all of them), and two single digits changed (drawn)."""
    text = str(value)
    found = set()
    for i in range(len(text) - 1):
        found.add(text[:i] + text[i + 1] + text[i] + text[i + 2:])
    if len(text) > 1:
        for i in range(len(text)):
            found.add(text[:i] + text[i + 1:])
    changed = [text[:i] + d + text[i + 1:] for i in range(len(text)) for d in "0123456789"]
    found.update(rng.sample(changed, 2))
    return sorted({int(t) for t in found if not t.startswith("0") and int(t) != value})


def slips(d: Deployment, true_weights: Fraction | None, rng: random.Random) -> Iterator[Slip]:
    for name in COUNTS:
        value = getattr(d, name)
        if value:
            for typo in typos(int(value), rng):
                yield Slip("count typo", name, name, Fraction(typo))
    if d.hidden:
        yield Slip("head_dim = hidden", "head_dim", "head_dim", Fraction(d.hidden))
    if d.heads != d.kv_heads:
        yield Slip("query heads for KV heads", "kv_heads", "kv_heads", Fraction(d.heads))
    for name in TOKENS:
        value = getattr(d, name)
        if value and value >= 1000:
            readings = {Fraction(value // 1000 * 1000), Fraction(value, 1024) * 1000}
            for reading in readings - {Fraction(value)}:
                if reading.denominator == 1:
                    yield Slip("round context", name, name, reading)
    for width in (Fraction(1), Fraction(2), Fraction(4)):
        if width != d.kv_bytes_per_element:
            yield Slip("bytes/element swapped", "kv_bytes_per_element", "kv_bytes_per_element",
                       width)
    if true_weights is not None and d.utilization != 1:
        yield Slip("utilisation after weights", "weights_gb", "weights_bytes",
                   true_weights * d.utilization)
    if d.gpus > 1 and d.reserve_gb:
        yield Slip("reserve per node", "reserve_gb", "reserve_gb", d.reserve_gb / d.gpus)
    if d.gpus > 1:
        yield Slip("TP applied twice", "gpus", "gpus", Fraction(d.gpus * d.gpus))
    gib = Fraction(GIB, GB)
    for name in ("hbm_gb", "reserve_gb"):
        if getattr(d, name):
            yield Slip("GB read as GiB", name, name, getattr(d, name) * gib)
    if true_weights is not None:
        yield Slip("GB read as GiB", "weights_gb", "weights_bytes", true_weights * gib)


def evaluate(d: Deployment, quantity: str, overrides: dict[str, Fraction]) -> Fraction | None:
    try:
        if quantity in FORMULAS:
            return Solution(d, overrides)[quantity]
        return relaxed_value(d, quantity, overrides)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError, AttributeError):
        return None


def typed(value: Fraction, unit: str, sig: int, count: bool = False) -> str:
    """The value in the step's unit to `sig` significant figures, as a person types it; a
    whole count (sequences, blocks) as it is when it has no more digits than that."""
    exact = Fraction(value) / (unit_factor(unit).value if unit else 1)
    if count and exact.denominator == 1 and exact < 10**sig:
        return f"{exact.numerator:,} {unit}".strip()
    shown = float(exact)
    if shown == 0:
        return f"0 {unit}".strip()
    rounded = float(f"{shown:.{sig}g}")
    if abs(rounded) >= 10 ** (sig - 1):
        text = f"{round(rounded):,}"
    else:
        decimals = sig - 1 - int(f"{abs(rounded):e}".split("e")[1])
        text = f"{rounded:,.{decimals}f}"
    return f"{text} {unit}".strip()


def named(key: AnswerKey, step_id: str, answer: str, slip: Slip) -> str:
    """'right' (the slip made no difference), 'named', 'misconception', 'other' or 'none'."""
    mark = mark_sheet(key, {step_id: answer})[step_id]
    if mark.verdict != "wrong":
        return "right"
    if mark.misconceptions:
        return "misconception"
    if mark.diagnosis is None:
        return "none"
    return "named" if mark.diagnosis.slip.input == slip.input else "other"


def simulate(drills: list[Drill], show_misses: bool) -> None:
    rng = random.Random(SEED)
    tallies = {sig: Counter[tuple[str, str]]() for sig in (3, 4)}
    for drill in drills:
        key = answer_key(drill, None)
        for step in drill.steps:
            if step.kind != "numeric" or step.answer is None:
                continue
            d = key.deployment(step.id)
            reference = key.reference(step.id).value
            try:
                true_weights: Fraction | None = Solution(d)["weights_bytes"]
            except (KeyError, AttributeError, TypeError, ZeroDivisionError):
                true_weights = None
            for slip in slips(d, true_weights, rng):
                wrong = evaluate(d, step.answer, {slip.slot: slip.value})
                if wrong is None or wrong <= 0 or wrong == reference:
                    continue
                for sig, tally in tallies.items():
                    answer = typed(wrong, step.unit or "", sig, step.answer in ROUNDS)
                    outcome = named(key, step.id, answer, slip)
                    tally[(slip.kind, outcome)] += 1
                    if show_misses and sig == 3 and outcome in ("none", "other"):
                        print(f"  miss[{outcome}] {drill.id}:{step.id} {slip.kind} "
                              f"{slip.input}={float(slip.value):g} -> {answer!r}")
    kinds = sorted({kind for tally in tallies.values() for kind, _ in tally})
    print(f"{'slip kind':<28}{'3 s.f. named':>16}{'4 s.f. named':>16}")
    totals = {sig: [0, 0] for sig in tallies}
    for kind in kinds:
        cells = []
        for sig, tally in tallies.items():
            hit = tally[(kind, "named")] + tally[(kind, "misconception")]
            counted = sum(n for (k, outcome), n in tally.items()
                          if k == kind and outcome != "right")
            totals[sig][0] += hit
            totals[sig][1] += counted
            cells.append(f"{hit:>5}/{counted:<4} {percent(hit, counted):>5}")
        print(f"{kind:<28}" + "".join(f"{c:>16}" for c in cells))
    print(f"{'all one-input slips':<28}" + "".join(
        f"{f'{hit:>5}/{n:<4} {percent(hit, n):>5}':>16}" for hit, n in totals.values()))


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def random_answers(count: int, show: bool) -> None:
    drills = [load_drill_file(path) for path in sorted(drill_paths())]
    keys = {drill.id: answer_key(drill, None) for drill in drills}
    items = [(drill.id, step) for drill in drills for step in drill.steps
             if step.kind == "numeric"]
    for low, high in ((0.3, 3.0), (0.8, 1.25)):
        rng = random.Random(SEED)
        wrong = diagnosed = 0
        for _ in range(count):
            drill_id, step = rng.choice(items)
            key = keys[drill_id]
            value = key.reference(step.id).value * Fraction(rng.uniform(low, high))
            answer = typed(value, step.unit or "", 3)
            mark = mark_sheet(key, {step.id: answer})[step.id]
            if mark.verdict != "wrong" or mark.misconceptions:
                continue
            wrong += 1
            diagnosed += mark.diagnosis is not None
            if show and mark.diagnosis is not None:
                slip = mark.diagnosis.slip
                print(f"  diagnosed {drill_id}:{step.id} {answer!r}: {slip.input} = "
                      f"{float(slip.implied):g} ({slip.why})")
        print(f"random × U({low}, {high}), 3 s.f.: {diagnosed}/{wrong} diagnosed "
              f"({percent(diagnosed, wrong)}) of the wrong ones no listed mistake explains")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every drill, not the eight common")
    parser.add_argument("--random", type=int, default=1000, help="random answers per range")
    parser.add_argument("--misses", action="store_true",
                        help="print each 3 s.f. miss and each diagnosed random answer")
    parser.add_argument("--only-random", action="store_true", help="skip the slips")
    args = parser.parse_args()
    if args.all:
        drills = [load_drill_file(path) for path in sorted(drill_paths())]
    else:
        drills = [find_drill(drill_id)[0] for drill_id in COMMON_DRILLS]
    if not args.only_random:
        simulate(drills, args.misses)
    if args.random:
        random_answers(args.random, args.misses)


if __name__ == "__main__":
    main()
