"""How often the "solve backwards" diagnosis names a one-input slip drawn from the world, how
often it names something else, and how often it explains a random wrong answer.

Run inside the project's virtual environment:
    python benchmarks/diagnosis_recall.py [--slips N] [--random N] [--all] [--misses]

Slips (issue 26): for every numeric step of the drills (the fourteen below; --all: every
drill), every input the step's value depends on, and every kind of value that input takes
elsewhere: another GPU preset's figure (memory as marketed and as the driver reports it,
bandwidth, dense BF16 and FP8 TFLOP/s and their sparse doubles), another model preset's
(layers, query and KV heads, head_dim, hidden size, parameters, the weights those parameters
make at the drill's bytes per parameter), the drill's own other values of it (its variants,
its other questions), a common setting (utilisation 0.8–0.95, headroom 1–8 GB, blocks of
8–128 tokens, batches in powers of two, contexts in powers of two and their decimal
neighbours), the true value doubled or halved, or rounded to one or two figures; within a
factor of 8 of the true value (a 512-token context in a 32k question is no slip). The list is
built here from the presets, not taken from the diagnosis. N of them are drawn (seeded), each
computed forward through the exact solver with that one input changed, typed to 2, 3 or 4
significant figures in the step's unit ("~" and "about" now and then), and marked as `kvdrill
grade` marks it. Counted: named (the diagnosis's readings hold the changed input at its value,
or a known mistake named alone makes that very change; "first" when it is the first reading),
wrongly named (a diagnosis that does not hold it), mistake (a known mistake named that gives
the number but is not the slip: a true word, not the slip made) and none. A slip that leaves
the answer right, or gives back a value already in the key, is left out.

Random answers: the reference × U(0.3, 3) and × U(0.8, 1.25), typed to 2, 3 and 4
significant figures, over every numeric step of every drill; the share of the wrong ones that
get a diagnosis (a slip named alone, or beside a listed mistake), and the share that get a
known mistake named and no slip: both are words said of a number that has no cause.
Everything is seeded; the same run prints the same numbers. Not part of the test run.
"""

from __future__ import annotations

import argparse
import math
import random
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass

from trainer.capacity.deployment import GB, Deployment
from trainer.capacity.presets import build_deployment, gpus, models
from trainer.capacity.solver import FORMULAS, Solution, relaxed_value
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills.loader import find_drill, load_drill_file
from trainer.drills.model import Drill, Step
from trainer.drills.reference import AnswerKey
from trainer.drills.variants import answer_key
from trainer.errors import KvdrillError
from trainer.files.paths import drill_paths
from trainer.marking.checker import mark_sheet
from trainer.marking.diagnosis import ROUNDS
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor

DRILLS = ("llama31-8b-h100", "llama2-70b-mi300x", "llama31-70b-tp2-h100",
          "deepseek-v3-mla-h200", "llama31-405b-h200-tp", "long-context-tier",
          "multi-turn-growth", "paged-blocks-vllm", "prefix-caching", "sliding-window-kv",
          "mixtral-moe-decode", "prefill-vs-decode", "decode-roofline-vs-measured",
          "littles-law-capacity")
SEED = 2026
LARGE_COUNT = 20  # counts below this say too little for any diagnosis
FAR = 8  # a value more than this far from the true one is no slip anyone makes
COUNT_STEPS = ROUNDS  # the steps whose answer is a whole count


@dataclass(frozen=True)
class Input:
    name: str  # as the diagnosis names it
    slot: str  # what the solver is given
    scale: int = 1  # slot value = value as shown × scale


INPUTS = (
    Input("context", "context"), Input("batch", "batch_size"), Input("hbm_gb", "hbm_gb"),
    Input("bandwidth_tbs", "bandwidth_tbs"), Input("tflops", "tflops"),
    Input("reserve_gb", "reserve_gb"), Input("utilization", "utilization"),
    Input("weights_gb", "weights_bytes", GB), Input("block_size", "block_size"),
    Input("gpus", "gpus"), Input("prefix_tokens", "prefix_tokens"), Input("window", "window"),
    Input("link_gbs", "link_gbs"), Input("tpot_ms", "tpot_ms"),
    Input("output_tokens", "output_tokens"), Input("layers", "layers"),
    Input("kv_heads", "kv_heads"), Input("head_dim", "head_dim"), Input("heads", "heads"),
)
WHOLE = {"context", "batch", "block_size", "gpus", "prefix_tokens", "window", "output_tokens",
         "layers", "kv_heads", "head_dim", "heads"}


@dataclass(frozen=True)
class Slip:
    kind: str
    input: str
    value: Fraction  # as shown


def world(name: str, true: Fraction, d: Deployment, key: AnswerKey) -> Iterator[Slip]:
    """Every value of the input `name` the world offers, with its kind."""
    gpu_field = {"hbm_gb": ("hbm_gb", "reported_gb"), "bandwidth_tbs": ("bandwidth_tbs",),
                 "tflops": ("bf16_tflops", "fp8_tflops")}.get(name, ())
    for gpu in gpus().values():
        for field in gpu_field:
            value = getattr(gpu, field)
            if value is not None:
                yield Slip("another GPU's figure", name, Fraction(value))
                if name == "tflops":
                    yield Slip("TFLOP/s with sparsity", name, 2 * Fraction(value))
    if name in ("layers", "kv_heads", "head_dim", "heads"):
        for model in models().values():
            yield Slip("another model's shape", name, Fraction(getattr(model, name)))
    if name == "weights_gb":
        for model in models().values():
            yield Slip("another model's parameters", name,
                       model.params * d.weight_bytes_per_param / GB)
    settings = {"utilization": [Fraction(n, 100) for n in (80, 85, 88, 90, 92, 95)],
                "reserve_gb": [Fraction(n) for n in range(1, 9)],
                "block_size": [Fraction(2**n) for n in range(3, 8)],
                "batch": [Fraction(2**n) for n in range(11)],
                "gpus": [Fraction(2**n) for n in range(5)],
                "link_gbs": [Fraction(v) for v in ("12.5", "25", "50", "64", "100", "450")],
                "tpot_ms": [Fraction(n) for n in (20, 25, 30, 40, 50)]}
    for value in settings.get(name, ()):
        yield Slip("a common setting", name, value)
    if name in ("context", "prefix_tokens", "window", "output_tokens"):
        for power in range(9, 19):
            yield Slip("a power of two", name, Fraction(2**power))
            yield Slip("its decimal neighbour", name, Fraction(2**power // 1024 * 1000))
    for names, choices in key.drill.vary.items():
        fields = [n.strip() for n in names.split(",")]
        for choice in choices:
            values = choice if isinstance(choice, tuple) else (choice,)
            try:
                variant = build({**key.givens, **dict(zip(fields, values, strict=False))})
            except KvdrillError:
                continue
            other = variant.weights_gb if name == "weights_gb" else getattr(variant, name, None)
            if isinstance(other, int | Fraction) and not isinstance(other, bool):
                yield Slip("a variant of the drill", name, Fraction(other))
    yield Slip("doubled", name, true * 2)
    yield Slip("halved", name, true / 2)
    for digits in (1, 2):
        exponent = math.floor(math.log10(true)) - digits + 1
        step = Fraction(10) ** exponent
        yield Slip("rounded", name, round(true / step) * step)


def build(givens: dict[str, object]) -> Deployment:
    """The deployment a drill's givens make, as its answer key builds it."""
    values = {name: Fraction(str(value)) if isinstance(value, float) else value
              for name, value in givens.items() if name not in ("model", "gpu")}
    deployment, _ = build_deployment(givens.get("model"), givens.get("gpu"), values)  # type: ignore[arg-type]
    return deployment


def evaluate(d: Deployment, quantity: str, overrides: dict[str, Fraction]) -> Fraction | None:
    try:
        if quantity in FORMULAS:
            return Solution(d, overrides)[quantity]
        return relaxed_value(d, quantity, overrides)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError, AttributeError,
            KvdrillError):
        return None


def true_value(d: Deployment, spec: Input) -> Fraction | None:
    try:
        value = Solution(d)[spec.slot] if spec.slot in FORMULAS else getattr(d, spec.slot)
    except (KvdrillError, ZeroDivisionError, TypeError):
        return None
    return Fraction(value) if isinstance(value, int | Fraction) and value else None


def typed(value: Fraction, unit: str, sig: int, count: bool, rng: random.Random) -> str:
    """The value in the step's unit to `sig` significant figures, as a person types it; a
    whole count as the whole number it is."""
    exact = Fraction(value) / (unit_factor(unit).value if unit else 1)
    if count and exact.denominator == 1:
        text = f"{exact.numerator:,}"
    else:
        rounded = float(f"{float(exact):.{sig}g}")
        if rounded == 0:
            return f"0 {unit}".strip()
        if abs(rounded) >= 10 ** (sig - 1):
            text = f"{round(rounded):,}"
        else:
            decimals = sig - 1 - math.floor(math.log10(abs(rounded)))
            text = f"{rounded:,.{decimals}f}"
    lead = rng.choice(("", "", "", "~", "about "))
    return f"{lead}{text} {unit}".strip()


def slips_of(drill: Drill, key: AnswerKey) -> Iterator[tuple[str, Slip, Fraction]]:
    """(step id, slip, the answer it gives) for every step, input and value."""
    for step in drill.steps:
        if step.kind != "numeric" or step.answer is None:
            continue
        d = key.deployment(step.id)
        reference = key.reference(step.id)
        taken = {reference.value, *(v for _, v in reference.wrong)}
        for spec in INPUTS:
            true = true_value(d, spec)
            if true is None:
                continue
            true /= spec.scale
            seen: set[Fraction] = set()
            for slip in world(spec.name, true, d, key):
                if slip.value <= 0 or slip.value == true or slip.value in seen or (
                        spec.name in WHOLE and slip.value.denominator != 1) or (
                        spec.name == "utilization" and slip.value > 1) or not (
                        1 / FAR <= slip.value / true <= FAR):
                    continue
                seen.add(slip.value)
                wrong = evaluate(d, step.answer, {spec.slot: slip.value * spec.scale})
                if wrong is not None and wrong > 0 and wrong not in taken:
                    yield step.id, slip, wrong


def outcome(key: AnswerKey, step_id: str, answer: str, slip: Slip) -> str:
    mark = mark_sheet(key, {step_id: answer})[step_id]
    if mark.verdict != "wrong":
        return "right"
    if mark.diagnosis is None:
        if not mark.misconceptions:
            return "none"
        # A known mistake named instead: the slip itself when the mistake makes that very
        # change (the query heads are kv_heads = heads), else a true word that is not the slip.
        spec = next(i for i in INPUTS if i.name == slip.input)
        for path_id in mark.misconceptions:
            changed = WRONG_PATHS[path_id].change(key.deployment(step_id))
            if changed is not None and \
                    getattr(changed, spec.slot, None) == slip.value * spec.scale:
                return "first"
        return "mistake"
    found = mark.diagnosis.json()
    readings = found.get("readings") or [found, *found["or"]]
    for n, reading in enumerate(readings):
        if reading["input"] == slip.input and \
                abs(Fraction(reading["implied"]) - slip.value) <= slip.value / 200:
            return "first" if n == 0 else "named"
    return "wrong"


def simulate(drills: list[Drill], count: int, show: bool, figures: tuple[int, ...]) -> None:
    rng = random.Random(SEED)
    pool = []
    for drill in drills:
        key = answer_key(drill, None)
        pool += [(key, step_id, slip, wrong) for step_id, slip, wrong in slips_of(drill, key)]
    drawn = rng.sample(pool, min(count, len(pool)))
    by_kind: dict[str, Counter[str]] = {}
    by_sig: dict[int, Counter[str]] = {}
    started = time.perf_counter()
    for key, step_id, slip, wrong in drawn:
        step = key.drill.step(step_id)
        sig = rng.choice(figures)
        answer = typed(wrong, step.unit or "", sig, step.answer in COUNT_STEPS, rng)
        result = outcome(key, step_id, answer, slip)
        if result == "right":
            continue
        by_kind.setdefault(slip.kind, Counter())[result] += 1
        by_sig.setdefault(sig, Counter())[result] += 1
        if show and result in ("none", "wrong", "mistake"):
            print(f"  {result:5} {key.drill.id}:{step_id} {slip.input} = "
                  f"{float(slip.value):g} ({slip.kind}) -> {answer!r}")
    seconds = time.perf_counter() - started
    print(f"{'one-input slips':<28}{'asked':>7}{'named':>9}{'first':>9}{'wrongly':>9}"
          f"{'mistake':>9}{'none':>8}")
    for label, tally in [*sorted(by_kind.items()),
                         *((f"typed to {sig} figures", t) for sig, t in sorted(by_sig.items()))]:
        print(row(label, tally))
    total: Counter[str] = Counter()
    for tally in by_kind.values():
        total.update(tally)
    print(row("all", total))
    print(f"({len(pool)} slips in the space, {len(drawn)} drawn, {seconds / len(drawn) * 1000:.0f} "
          "ms a mark)")


def row(label: str, tally: Counter[str]) -> str:
    asked = sum(tally.values())
    named = tally["first"] + tally["named"]
    return (f"{label:<28}{asked:>7}{percent(named, asked):>9}{percent(tally['first'], asked):>9}"
            f"{percent(tally['wrong'], asked):>9}{percent(tally['mistake'], asked):>9}"
            f"{percent(tally['none'], asked):>8}")


def percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def every_step(counts: bool = False) -> tuple[dict[str, AnswerKey], list[tuple[str, Step]]]:
    """Every drill's key, and its numeric steps (`counts`: those asking for a whole count)."""
    drills = [load_drill_file(path) for path in sorted(drill_paths())]
    keys = {drill.id: answer_key(drill, None) for drill in drills}
    items = [(drill.id, step) for drill in drills for step in drill.steps
             if step.kind == "numeric" and (not counts or step.answer in COUNT_STEPS)]
    return keys, items


def explained(key: AnswerKey, step: Step, answer: str, show: bool) -> str | None:
    """What the marking says a wrong answer is: "slip" (a diagnosis), "mistake" (a known
    mistake named, no slip) or "" (nothing); None when the answer is not wrong."""
    mark = mark_sheet(key, {step.id: answer})[step.id]
    if mark.verdict != "wrong":
        return None
    if show and (mark.diagnosis is not None or mark.misconceptions):
        what = mark.misconceptions if mark.diagnosis is None else \
            f"{mark.diagnosis.slip.input} = {float(mark.diagnosis.slip.implied):g}"
        print(f"  explained {key.drill.id}:{step.id} {answer!r}: {what}")
    return "slip" if mark.diagnosis is not None else "mistake" if mark.misconceptions else ""


def shares(tally: Counter[str]) -> str:
    """"4/187 slip (2.1%), 9 mistake (4.8%)" of the wrong answers tallied."""
    wrong = sum(tally.values())
    return (f"{tally['slip']}/{wrong} a slip ({percent(tally['slip'], wrong)}), "
            f"{tally['mistake']} a mistake ({percent(tally['mistake'], wrong)})")


def random_answers(count: int, show: bool) -> None:
    keys, items = every_step()
    for low, high in ((0.3, 3.0), (0.8, 1.25)):
        cells = []
        for sig in (2, 3, 4):
            rng = random.Random(SEED)
            tally: Counter[str] = Counter()
            for _ in range(count):
                drill_id, step = rng.choice(items)
                key = keys[drill_id]
                value = key.reference(step.id).value * Fraction(rng.uniform(low, high))
                found = explained(key, step, typed(value, step.unit or "", sig, False, rng),
                                  show)
                if found is not None:
                    tally[found] += 1
            cells.append(f"{sig} s.f. {shares(tally)}")
        print(f"random × U({low}, {high}) explained: " + "; ".join(cells))


def random_counts(count: int, show: bool) -> None:
    """Random wrong counts on the steps that ask for a whole count (sessions, blocks), typed
    whole as people type them ("about 48")."""
    keys, items = every_step(counts=True)
    cells = []
    for low, high in ((0.3, 3.0), (0.8, 1.25)):
        rng = random.Random(SEED)
        tally: Counter[str] = Counter()
        large: Counter[str] = Counter()
        for _ in range(count):
            drill_id, step = rng.choice(items)
            key = keys[drill_id]
            value = math.floor(key.reference(step.id).value * Fraction(rng.uniform(low, high)))
            if value <= 0:
                continue
            answer = f"{rng.choice(('', '~', 'about '))}{value:,}"
            found = explained(key, step, answer, show)
            if found is None:
                continue
            tally[found] += 1
            if value >= LARGE_COUNT:  # a smaller count is never diagnosed
                large[found] += 1
        cells.append(f"× U({low}, {high}) {shares(tally)}; of {LARGE_COUNT} or more "
                     f"{shares(large)}")
    print("random whole counts explained: " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--all", action="store_true", help="every drill, not the fourteen")
    parser.add_argument("--slips", type=int, default=1200, help="slips drawn")
    parser.add_argument("--random", type=int, default=500, help="random answers per cell")
    parser.add_argument("--figures", type=int, choices=(2, 3, 4), action="append",
                        help="type slips to this many figures only (again for more)")
    parser.add_argument("--misses", action="store_true",
                        help="print each miss and each diagnosed random answer")
    args = parser.parse_args()
    if args.all:
        drills = [load_drill_file(path) for path in sorted(drill_paths())]
    else:
        drills = [find_drill(drill_id)[0] for drill_id in DRILLS]
    if args.slips:
        simulate(drills, args.slips, args.misses, tuple(args.figures or (2, 3, 4)))
    if args.random:
        random_answers(args.random, args.misses)
        random_counts(args.random, args.misses)


if __name__ == "__main__":
    main()
