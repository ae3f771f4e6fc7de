"""A wrong number that no listed mistake explains, solved backwards: which slip, or which one
input set to a value a person plausibly used, gives exactly this answer?

Two checks, in this order:

1. Factors people slip by: the answer ÷ the reference against 2 (K and V), 8 (bits and
   bytes), 1.0737 and 0.9313 (GB and GiB), 1,000 and 1,024 (a unit prefix), the GPU count and
   the utilisation, alone or two at once.
2. Solve backwards: for each input the step's value depends on, the value of that input that
   gives the answer, every other input at its reference value. Where the value is a monomial
   or affine in the input (checked exactly, with Fractions; almost always) the inversion is
   closed form; otherwise sympy solves the step's own formula in that one unknown (the roots
   of a polynomial of degree four at most, else nsolve with a bounded number of steps). An
   implied value is kept only when it is plausible for the input (a figure of the givens or
   the preset, a round form of the true value, a dtype's byte count, a typo of a count ...),
   and the candidate is then checked forward through the exact solver, floors included.

The answer enters only as a Fraction; sympy sees only the solver's formulas with numbers in
them. A diagnosis is a likely cause, never a verdict. The less an answer says (a count of 12
fits many slips; 94,208 B fits few), the stronger the reason a candidate needs, so that random
numbers are not explained: each candidate must match within the digits typed, and weak reasons
(a typo) need more digits than strong ones (the hidden size where head_dim belongs).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any, Literal

from trainer.capacity.deployment import GB, GIB, Deployment
from trainer.capacity.solver import FORMULAS, Solution, expression_in, relaxed_value
from trainer.drills.reference import AnswerKey
from trainer.reading.numbers import format_number

# Strength of a candidate's reason, and the widest relative gap it may leave to the answer
# (the answer's own digits decide below that).
FIGURE, ROUND, TYPO = 3, 2, 1
CAPS = {FIGURE: Fraction(5, 1000), ROUND: Fraction(3, 1000), TYPO: Fraction(2, 1000)}
THREE_FIGURES = Fraction(5, 1000)  # half the last place of a number typed to 3 figures, at most
FOUR_FIGURES = Fraction(1, 1000)  # the grain of an answer typed to 4 figures, at most
# Near the reference, weak reasons crowd: 30 to 39 for 32 layers each give an answer there, so
# a random answer typed to 3 figures would often match one. Within this ratio to the reference
# (either side) a typo needs 4 figures; so does another utilisation setting, or a factor
# near 1 (GB for GiB), closer in.
NEAR_TYPO = Fraction(5, 4)
NEAR_SETTING = Fraction(10, 9)
MIN_WINDOW = Fraction(1, 10**6)  # an answer typed to many digits: float rounding only
# A clean value of an input (a whole number of layers, a round GB figure) that the answer
# implies counts only when chance could not have put it there: the implied value's own
# uncertainty, both sides, at most this share of the spacing of clean values.
CLEAN_CHANCE = Fraction(2, 1000)
# A whole count on a floored step says little: 1 in 12 is no evidence of any slip, 1 in 60
# only of a strong one.
NO_DIAGNOSIS_GRAIN = Fraction(1, 20)
STRONG_ONLY_GRAIN = Fraction(1, 30)
ROUND_GRAIN = Fraction(1, 50)
SLACK = Fraction(2, 100)  # around an implied value, for floors and branches
# Bounds on the work: candidates per input, and sympy's steps where no closed form applies.
MAX_CANDIDATES = 64
MAX_DEGREE = 4
MAX_NSOLVE_STEPS = 40
ROUNDS = frozenset({"max_concurrency", "max_tokens", "num_blocks", "max_concurrency_with_prefix",
                    "shared_prefix_tokens", "blocks_per_sequence", "tokens_held_per_sequence",
                    "window_tokens_held_per_sequence"})


@dataclass(frozen=True)
class Slip:
    """One input (or a factor) the answer implies, against its true value."""

    input: str
    implied: Fraction
    true: Fraction
    unit: str
    why: str  # "the hidden size", "'k' read as 1,000"

    def json(self) -> dict[str, Any]:
        return {"input": self.input, "implied": _plain(self.implied), "true": _plain(self.true),
                "unit": self.unit or None, "why": self.why}


@dataclass(frozen=True)
class Diagnosis:
    """The likely slip behind a wrong answer: one input the formula was fed, or one or two
    factors the answer is off by."""

    kind: Literal["input", "factor"]
    slips: tuple[Slip, ...]
    phrase: str
    others: tuple[Slip, ...] = ()  # other inputs that would give the same answer, as strong

    @property
    def slip(self) -> Slip:
        return self.slips[0]

    @property
    def sentence(self) -> str:
        return f"Likely slip (a guess, not a certainty): {self.phrase}."

    def json(self) -> dict[str, Any]:
        first = self.slip.json()
        return {**first, "kind": self.kind, "phrase": self.sentence,
                "also": [s.json() for s in self.slips[1:]],
                "or": [s.json() for s in self.others]}


def _plain(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


# ---------------------------------------------------------------------------------------------
# The inputs a diagnosis may name


@dataclass(frozen=True)
class _Input:
    name: str  # as the givens name it
    slot: str  # what is set in the solver's namespace (an input, or weights_bytes, batch_size)
    unit: str
    label: str
    whole: bool = False
    scale: int = 1  # slot value = shown value × scale
    family: str = ""


_INPUTS: tuple[_Input, ...] = (
    _Input("head_dim", "head_dim", "", "head_dim", True, family="shape"),
    _Input("kv_heads", "kv_heads", "", "the KV heads", True, family="shape"),
    _Input("layers", "layers", "", "the layer count", True, family="shape"),
    _Input("context", "context", "tokens", "the context", True, family="tokens"),
    _Input("kv_bytes_per_element", "kv_bytes_per_element", "B", "bytes per KV element"),
    _Input("gpus", "gpus", "", "the GPU count", True, family="gpus"),
    _Input("reserve_gb", "reserve_gb", "GB", "the reserve", family="gb"),
    _Input("weights_gb", "weights_bytes", "GB", "the weights", scale=GB, family="gb"),
    _Input("utilization", "utilization", "", "the utilisation"),
    _Input("hbm_gb", "hbm_gb", "GB", "the HBM", family="gb"),
    _Input("batch", "batch_size", "sequences", "the batch", True, family="batch"),
    _Input("bandwidth_tbs", "bandwidth_tbs", "TB/s", "the bandwidth"),
    _Input("block_size", "block_size", "tokens", "the block size", True, family="tokens"),
    _Input("prompt_tokens", "prompt_tokens", "tokens", "the prompt", True, family="tokens"),
    _Input("prefix_tokens", "prefix_tokens", "tokens", "the shared prefix", True,
           family="tokens"),
    _Input("window", "window", "tokens", "the window", True, family="tokens"),
    _Input("windowed_layers", "windowed_layers", "", "the windowed layers", True,
           family="shape"),
    _Input("heads", "heads", "", "the query heads", True, family="shape"),
    _Input("mla_latent", "mla_latent", "", "the MLA latent", True, family="shape"),
    _Input("mla_rope", "mla_rope", "", "the rope dims", True, family="shape"),
    _Input("experts", "experts", "", "the experts", True, family="shape"),
    _Input("experts_per_token", "experts_per_token", "", "the experts per token", True,
           family="shape"),
    _Input("tflops", "tflops", "TFLOPS", "the TFLOPS"),
    _Input("measured_step_ms", "measured_step_ms", "ms", "the measured step"),
    _Input("params", "params", "", "the parameter count"),
    _Input("active_params", "active_params", "", "the active parameters"),
)
_BY_NAME = {i.name: i for i in _INPUTS}
# Which shape figure a person puts where another belongs (the hidden size for head_dim).
_SHAPE_MIXUPS = {"head_dim": ("hidden", "hidden ÷ heads", "heads"),
                 "kv_heads": ("heads", "layers"), "layers": ("heads", "kv_heads"),
                 "heads": ("kv_heads", "layers")}
_SHAPE_LABELS = {"layers": "the layer count", "heads": "the query heads",
                 "kv_heads": "the KV heads", "head_dim": "head_dim", "hidden": "the hidden size"}
_DTYPE_BYTES = {Fraction(1, 2): "int4's half byte", Fraction(1): "fp8's 1 byte",
                Fraction(2): "bf16's 2 bytes", Fraction(4): "fp32's 4 bytes"}
SETTING = "another utilisation setting"
_UTILIZATIONS = tuple(Fraction(n, 100) for n in (80, 85, 90, 92, 95, 98))

Candidates = dict[Fraction, tuple[str, int]]  # value (as shown) → (why, strength)


@dataclass(frozen=True)
class _Problem:
    """What a diagnosis of one step needs, hashable so diagnoses are cached."""

    deployment: Deployment | None  # None: a ratio step (factors only)
    quantity: str
    reference: Fraction
    relaxed: Fraction  # the reference with floors left out
    rounds: bool
    figures: tuple[tuple[str, Fraction, str], ...]  # (input, value as shown, why)
    has_unit: bool
    # Set in every continuous evaluation: the batch a step runs at stays the whole number of
    # sequences it is, rather than the unrounded quotient.
    pins: tuple[tuple[str, Fraction], ...] = ()


_PROBLEMS: weakref.WeakKeyDictionary[AnswerKey, dict[str, _Problem]] = \
    weakref.WeakKeyDictionary()


def diagnose(key: AnswerKey, step_id: str, value: Fraction,
             resolution: Fraction | None = None) -> Diagnosis | None:
    """The likely slip behind `value` (base units) on a numeric step, or None when nothing
    plausible gives it. `resolution`: what the typed digits claim (1 for "52 GB" in GB)."""
    if value <= 0:
        return None
    problems = _PROBLEMS.setdefault(key, {})
    if step_id not in problems:
        problems[step_id] = _problem(key, step_id)
    return _diagnose(problems[step_id], value, resolution)


def _problem(key: AnswerKey, step_id: str) -> _Problem:
    step = key.drill.step(step_id)
    reference = key.reference(step_id).value
    has_unit = bool(step.unit)
    if step.answer is None:  # a ratio of two steps: only factors apply
        return _Problem(None, "", reference, reference, False, (), has_unit)
    deployment = key.deployment(step_id)
    pins = (("batch_size", Solution(deployment)["batch_size"]),)
    relaxed = relaxed_value(deployment, step.answer, dict(pins))
    rounds = step.answer in ROUNDS
    return _Problem(deployment, step.answer, reference, relaxed, rounds,
                    _figures(key, deployment), has_unit, pins)


def _figures(key: AnswerKey, deployment: Deployment) -> tuple[tuple[str, Fraction, str], ...]:
    """Figures a person might put in an input's place: the other shape figures of this model,
    and the value the same input has in the givens or in another question of the drill."""
    found: list[tuple[str, Fraction, str]] = []
    d = deployment
    shape = {name: getattr(d, name) for name in _SHAPE_LABELS if getattr(d, name) is not None}
    if d.hidden is not None:
        shape["hidden ÷ heads"] = Fraction(d.hidden, d.heads)
    for target, sources in _SHAPE_MIXUPS.items():
        for name in sources:
            if name in shape:
                found.append((target, Fraction(shape[name]), _SHAPE_LABELS.get(name, name)))
    others: list[Deployment] = [key.base]
    for step in key.drill.steps:
        if step.kind == "numeric" and step.answer is not None and step.with_:
            others.append(key.deployment(step.id))
    for spec in _INPUTS:
        if spec.slot != spec.name or spec.name == "kv_bytes_per_element":
            continue
        mine = getattr(d, spec.name)
        for other in others:
            value = getattr(other, spec.name)
            if value is not None and value != mine:
                label = "the givens' value" if other is key.base else "another question's value"
                found.append((spec.name, Fraction(value), f"{spec.label}: {label}"))
    return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------
# Evaluating the step with one thing changed


def _evaluate(problem: _Problem, overrides: dict[str, Fraction], relaxed: bool
              ) -> Fraction | None:
    assert problem.deployment is not None
    try:
        if relaxed or problem.quantity not in FORMULAS:
            return relaxed_value(problem.deployment, problem.quantity,
                                 {**dict(problem.pins), **overrides})
        return Solution(problem.deployment, overrides)[problem.quantity]
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None


def _true_slot(problem: _Problem, spec: _Input) -> Fraction | None:
    assert problem.deployment is not None
    try:
        if spec.slot in FORMULAS:
            value = Solution(problem.deployment)[spec.slot]
        else:
            value = relaxed_value(problem.deployment, spec.slot)
    except (AttributeError, ZeroDivisionError, TypeError):
        return None
    return None if value is None else Fraction(value)


def _depends(problem: _Problem, slot: str, x0: Fraction) -> bool:
    nudged = x0 * Fraction(9, 8) if x0 else Fraction(1)
    value = _evaluate(problem, {slot: nudged}, relaxed=True)
    return value is not None and value != problem.relaxed


# ---------------------------------------------------------------------------------------------
# Candidates: what a person plausibly put in an input's place


def _candidates(problem: _Problem, spec: _Input, true: Fraction, least: int = TYPO
                ) -> Candidates:
    """Plausible values of an input (in the unit it is shown in), each with why and how
    strongly (at least `least`); the true value is left out."""
    found: Candidates = {}
    shown = _shown(true, spec)

    def add(value: Fraction, why: str, strength: int, typed: bool = False) -> None:
        if strength < least:
            return
        if value <= 0 or value == true or (spec.whole and value.denominator != 1):
            return
        # A typo is what the person typed, not a shape some model has: 126 for head_dim 128
        # need not be a multiple of 16, nor 3 KV heads divide the query heads.
        if not typed and not _possible(problem, spec.name, value):
            return
        if value not in found or found[value][1] < strength:
            found[value] = (why, strength)

    for name, value, why in problem.figures:
        if name == spec.name:
            add(value, why, FIGURE)
    d = problem.deployment
    assert d is not None
    if spec.family == "tokens":
        add(true * Fraction(1000, 1024), f"{shown} with 'k' read as 1,000", ROUND)
        add(true * Fraction(1024, 1000), f"{shown} with 'k' read as 1,024", ROUND)
    if spec.family in ("tokens", "gb") or spec.name in (
            "bandwidth_tbs", "tflops", "measured_step_ms", "params", "active_params"):
        for digits in (1, 2):
            add(_round_sig(true, digits), f"{shown} rounded", ROUND)
    if spec.family == "gb":
        add(true * Fraction(GIB, GB), f"{shown} read as GiB", ROUND)
        add(true * Fraction(GB, GIB), f"a GiB figure for {shown}", ROUND)
    if spec.whole and spec.family != "batch" and least <= TYPO and true > 0:
        typo_of = f"a typo for {format_number(true)}"
        for typo in _typos(int(true)):
            # A token count is copied from the question: its digits get swapped or dropped,
            # not replaced (4,096 as 7,096 is no slip anyone makes copying).
            if spec.family != "tokens" or _key_slip(int(true), typo) == "keys":
                add(Fraction(typo), typo_of, TYPO, typed=True)
    if spec.name == "gpus":
        add(Fraction(1), "one GPU: the parallelism left out", FIGURE)
        add(true * true, "the TP degree applied twice", FIGURE)
        add(Fraction(8), "a whole 8-GPU node", ROUND)
        for power in range(7):
            add(Fraction(2**power), "another GPU count", TYPO)
    elif spec.name == "reserve_gb" and d.gpus > 1:
        add(true / d.gpus, "the reserve counted once per node instead of per GPU", FIGURE)
        add(true * d.gpus, "the reserve multiplied by the GPUs twice", ROUND)
    elif spec.name == "weights_gb":
        # vLLM's gpu_memory_utilization is a share of the whole card, weights included;
        # TensorRT-LLM's fraction is of the memory left after the weights load (source:
        # shared/reference/serving-engines.md, from both engines' docs and source).
        if d.utilization != 1:
            add(true * d.utilization, "the utilisation applied to the memory left after the "
                "weights, TensorRT-LLM's meaning of the fraction", FIGURE)
        add(true * 2, "the weights at twice the bytes per parameter", ROUND)
        add(true / 2, "the weights at half the bytes per parameter", ROUND)
    elif spec.name == "utilization":
        for value in _UTILIZATIONS:
            add(value, SETTING, ROUND)
        add(1 - true, "the headroom taken for the utilisation", ROUND)
    elif spec.name == "kv_bytes_per_element":
        for value, why in _DTYPE_BYTES.items():
            add(value, why, FIGURE)
    elif spec.name == "head_dim":
        for width in (64, 128, 256):
            add(Fraction(width), "another common head_dim", ROUND)
    elif spec.name == "kv_heads":
        add(Fraction(1), "one KV head (MQA)", ROUND)
    elif spec.name == "batch":
        add(true + 1, "one sequence more", ROUND)
        if true > 1:
            add(true - 1, "one sequence fewer", ROUND)
    return dict(list(found.items())[:MAX_CANDIDATES])


def _near(spec: _Input, true: Fraction, candidate: Fraction, strength: int, why: str,
          to_the_unit: bool) -> Fraction:
    """How close to the reference an answer this candidate explains may lie and still count
    at 3 significant figures (see NEAR_TYPO). A slip of the keys in a shape count (32 typed
    23, 128 typed 12) is its own kind of evidence; a digit typed in its neighbour's place
    (80 as 88) is, when the answer is the candidate's value to the unit; any other wrong
    digit is not."""
    if why == SETTING:
        return NEAR_SETTING
    if strength != TYPO:
        return Fraction(1)
    if spec.family == "shape" and candidate.denominator == 1:
        kind = _key_slip(int(true), int(candidate))
        if kind == "keys" or (kind == "repeated" and to_the_unit):
            return Fraction(1)
    return NEAR_TYPO


def _key_slip(true: int, typed: int) -> Literal["keys", "repeated"] | None:
    """"keys" when `typed` is `true` with two neighbouring digits swapped or one dropped or
    doubled; "repeated" when one digit was typed again in its neighbour's place (80 as 88)."""
    text = str(true)
    keys, repeated = set(), set()
    for i in range(len(text)):
        keys.add(text[:i] + text[i + 1:])
        keys.add(text[:i] + text[i] + text[i:])
        if i + 1 < len(text):
            keys.add(text[:i] + text[i + 1] + text[i] + text[i + 2:])
            repeated.add(text[:i + 1] + text[i] + text[i + 2:])
            repeated.add(text[:i] + text[i + 1] + text[i + 1:])
    return "keys" if str(typed) in keys else "repeated" if str(typed) in repeated else None


def _round_sig(value: Fraction, digits: int) -> Fraction:
    if value <= 0:
        return value
    exponent = math.floor(math.log10(value)) - digits + 1
    step = Fraction(10) ** exponent
    return round(value / step) * step


def _typos(value: int) -> Iterator[int]:
    """A count with one of its two leading digits changed, two neighbours swapped, one digit
    dropped or doubled, or (below 100) one off. A changed low digit of a large count (32,768
    typed 32,718) moves the answer less than the typed digits can tell apart, so it is no
    evidence of anything."""
    text = str(value)
    if value < 100:
        yield value - 1
        yield value + 1
    for i in range(len(text)):
        for digit in "0123456789" if i < 2 else "":
            yield int(text[:i] + digit + text[i + 1:])
        if len(text) > 1:
            yield int(text[:i] + text[i + 1:])
        yield int(text[:i] + text[i] + text[i:])
        if i + 1 < len(text):
            yield int(text[:i] + text[i + 1] + text[i] + text[i + 2:])


def _shown(value: Fraction, spec: _Input) -> str:
    number = format_number(value, sig=4)
    return f"{number} {spec.unit}" if spec.unit and spec.unit != "sequences" else number


# ---------------------------------------------------------------------------------------------
# Solving backwards


def _implied_range(problem: _Problem, spec: _Input, x0: Fraction,
                   targets: tuple[Fraction, Fraction]) -> tuple[float, float] | None:
    """The values of the input (slot units) that give the targets, every other input fixed:
    closed form when the step is a monomial or affine in it, else sympy."""
    roots = _closed_form(problem, spec.slot, x0, targets)
    if roots is None:
        roots = _solve_symbolic(problem, spec.slot, x0, targets)
    if not roots:
        return None
    return min(roots), max(roots)


def _closed_form(problem: _Problem, slot: str, x0: Fraction,
                 targets: tuple[Fraction, ...]) -> list[float] | None:
    """Exact tests at a few points: f(λx) = λ^p f(x) (a monomial), or f a ratio of two affine
    functions (ax + b) ÷ (cx + d), which covers the affine (a budget against the weights) and
    a rate over an affine cost (tokens/s against the batch). None when none holds."""
    def f(x: Fraction) -> Fraction | None:
        return _evaluate(problem, {slot: x}, relaxed=True)

    f0 = problem.relaxed
    if x0 > 0 and f0 != 0:
        ratios = [f(x0 * lam) for lam in (Fraction(9, 8), Fraction(5, 4))]
        if all(r is not None for r in ratios):
            for p in (1, -1, 2, -2):
                if all(r == f0 * lam**p for r, lam in
                       zip(ratios, (Fraction(9, 8), Fraction(5, 4)), strict=True)):
                    return [float(x0) * (float(t / f0)) ** (1 / p)
                            for t in targets if t / f0 > 0]
    delta = x0 / 8 if x0 else Fraction(1)
    xs = [x0 - delta, x0, x0 + delta, x0 + 2 * delta]
    ys = [f(x) for x in xs]
    if any(y is None for y in ys):
        return None
    known = [y for y in ys if y is not None]
    try:  # a Möbius map keeps cross-ratios: the fourth point checks, a target is solved
        x1, x2, x3, x4 = xs
        y1, y2, y3, y4 = known
        if _cross_ratio(x1, x2, x3, x4) != _cross_ratio(y1, y2, y3, y4):
            return None
        roots = []
        for target in targets:
            k = _cross_ratio(y1, y2, y3, target)
            roots.append(float((x2 * (x3 - x1) - k * x1 * (x3 - x2))
                               / ((x3 - x1) - k * (x3 - x2))))
        return roots
    except ZeroDivisionError:
        return None


def _cross_ratio(a: Fraction, b: Fraction, c: Fraction, d: Fraction) -> Fraction:
    return (c - a) * (d - b) / ((c - b) * (d - a))


def _solve_symbolic(problem: _Problem, slot: str, x0: Fraction,
                    targets: tuple[Fraction, ...]) -> list[float]:
    """The step's formula in one unknown, solved by sympy: a polynomial's real positive roots
    (degree four at most), else nsolve from the true value with a bounded number of steps."""
    import sympy  # only here: most inversions are closed form

    assert problem.deployment is not None
    try:
        expression, x = expression_in(problem.quantity, problem.deployment, slot,
                                      dict(problem.pins))
    except (ZeroDivisionError, TypeError, ValueError, AttributeError):
        return []
    expression = _resolve_branches(expression, x, x0)
    try:
        numerator, denominator = sympy.fraction(sympy.together(expression))
        polys = _low_degree(sympy, (numerator, denominator), x)
    except (ValueError, ZeroDivisionError, TypeError, sympy.PolynomialError):
        return []
    roots: list[float] = []
    for target in targets:
        value = sympy.Rational(target.numerator, target.denominator)
        try:
            if polys is not None:  # expression = target: numerator − target × denominator = 0
                found = (polys[0] - polys[1] * value).nroots(n=15, maxsteps=50)
                roots += [float(sympy.re(r)) for r in found
                          if abs(sympy.im(r)) < 1e-9 and sympy.re(r) > 0]
                continue
            root = sympy.nsolve(expression - value, x, float(x0), maxsteps=MAX_NSOLVE_STEPS)
            if root.is_real and root > 0:
                roots.append(float(root))
        except (ValueError, ZeroDivisionError, TypeError, sympy.PolynomialError):
            continue
    return roots


def _low_degree(sympy: Any, parts: tuple[Any, Any], x: Any) -> tuple[Any, Any] | None:
    """Both parts as polynomials in x of degree MAX_DEGREE at most, or None (then nsolve).
    A power above that degree is refused before anything is expanded: the MoE expert share
    (1 − k/E)^batch would otherwise expand into a thousand terms."""
    for part in parts:
        if not part.is_polynomial(x):
            return None
        for power in part.atoms(sympy.Pow):
            if power.has(x) and (not power.exp.is_Integer or abs(power.exp) > MAX_DEGREE):
                return None
    polys = tuple(sympy.Poly(part, x) for part in parts)
    if max(p.degree() for p in polys) > MAX_DEGREE or polys[0].degree() + polys[1].degree() == 0:
        return None
    return polys[0], polys[1]


def _resolve_branches(expression: Any, x: Any, x0: Fraction) -> Any:
    """Max and Min replaced by the branch that holds at the true value (a KV head per GPU at
    least; the MoE batch cap), so the rest is a plain function of x."""
    import sympy

    at = {x: sympy.Rational(x0.numerator, x0.denominator)}

    def branch(node: Any) -> Any:
        values = [(float(arg.xreplace(at)), arg) for arg in node.args]
        pick = max if isinstance(node, sympy.Max) else min
        return pick(values, key=lambda pair: pair[0])[1]

    return expression.replace(lambda node: isinstance(node, sympy.Max | sympy.Min), branch)


# ---------------------------------------------------------------------------------------------
# The diagnosis


@dataclass(frozen=True)
class _Found:
    strength: int
    order: int
    diagnosis: Diagnosis


@lru_cache(maxsize=1024)
def _diagnose(problem: _Problem, value: Fraction, resolution: Fraction | None
              ) -> Diagnosis | None:
    whole = problem.rounds and value.denominator == 1 and (resolution or 0) <= 1
    # How much the answer says: the share of its value its last typed digit is worth.
    grain = 1 / value if whole else (resolution or Fraction(0)) / value
    if grain > NO_DIAGNOSIS_GRAIN:
        return None
    least = FIGURE if grain > STRONG_ONLY_GRAIN else ROUND if grain > ROUND_GRAIN else TYPO
    if resolution is None and not whole:
        least = max(least, ROUND)  # one significant figure ("3e4"): not enough for a typo
    half = (resolution or Fraction(0)) / 2

    ratio = value / problem.reference if problem.reference > 0 else Fraction(0)

    def window_of(strength: int) -> Fraction:
        # The typed digits' own rounding, down to 3 significant figures, is never held
        # against a candidate: "228 KiB" is what 227.5 KiB looks like typed.
        cap = max(CAPS[strength], THREE_FIGURES)
        return min(max(half, MIN_WINDOW * value), cap * value)

    def matches(exact: Fraction | None, relaxed: Fraction | None, strength: int,
                near: Fraction = Fraction(1)) -> bool:
        if grain > FOUR_FIGURES and 1 / near <= ratio <= near:
            return False
        if whole:
            return exact == value
        window = window_of(strength)
        return any(v is not None and abs(v - value) <= window for v in (exact, relaxed))

    found = _factor_slips(problem, value, least, matches)
    if problem.deployment is not None:
        found += _input_slips(problem, value, least, matches, whole, window_of)
    if not found:
        return None
    found.sort(key=lambda f: (-f.strength, f.order))
    best = found[0]
    others = tuple(f.diagnosis.slip for f in found[1:3]
                   if f.strength == best.strength and f.diagnosis.kind == "input"
                   and f.diagnosis.slip.input != best.diagnosis.slip.input)
    if others:
        names = " or ".join(f"{s.input} = {_value_text(s)}" for s in others)
        return Diagnosis(best.diagnosis.kind, best.diagnosis.slips,
                         f"{best.diagnosis.phrase} (or with {names})", others)
    return best.diagnosis


def _value_text(slip: Slip) -> str:
    number = format_number(slip.implied, sig=4)
    return f"{number} {slip.unit}" if slip.unit and slip.unit != "sequences" else number


# (exact, relaxed, strength, near): `near`, the ratio to the reference (either side) within
# which the answer needs 4 significant figures for this candidate; 1 for none.
Matcher = Callable[[Fraction | None, Fraction | None, int, Fraction], bool]


def _input_slips(problem: _Problem, value: Fraction, least: int, matches: Matcher,
                 whole: bool, window_of: Callable[[int], Fraction]) -> list[_Found]:
    found: list[_Found] = []
    if whole:
        targets = (value - 1, value + 1)
    else:
        targets = (value * (1 - CAPS[FIGURE]), value * (1 + CAPS[FIGURE]))
    follows = _batch_follows(problem)
    for order, spec in enumerate(_INPUTS):
        x0 = _true_slot(problem, spec)
        if x0 is None or not _depends(problem, spec.slot, x0):
            continue
        true = x0 / spec.scale
        candidates = _candidates(problem, spec, true, least)
        if not candidates:
            continue
        span = None if follows else _implied_range(problem, spec, x0, targets)
        if span is None and not follows:
            continue
        low, high = (0.0, math.inf) if span is None else \
            (span[0] * float(1 - SLACK), span[1] * float(1 + SLACK))
        for candidate, (why, strength) in sorted(candidates.items(), key=lambda c: -c[1][1]):
            slot_value = candidate * spec.scale
            if not low <= float(slot_value) <= high:
                continue
            overrides = {spec.slot: slot_value}
            exact = _evaluate(problem, overrides, relaxed=False)
            near = _near(spec, true, candidate, strength, why, to_the_unit=exact == value)
            if not matches(exact, _evaluate(problem, overrides, relaxed=True), strength, near):
                continue
            slip = Slip(spec.name, candidate, true, spec.unit, why)
            phrase = (f"your answer is what the formula gives with {spec.name} = "
                      f"{_value_text(slip)} instead of {_shown(true, spec)} ({why})")
            # Of two typos that give the same answer, the one a model could have (3 KV heads
            # do not divide 64 query heads; 36 layers could be) is the likelier.
            rank = 10 + order if _possible(problem, spec.name, candidate) else 30 + order
            found.append(_Found(strength, rank, Diagnosis("input", (slip,), phrase)))
            break
        else:
            if least <= TYPO and not whole:
                clean = _clean_slip(problem, spec, x0, value, window_of(TYPO), matches)
                if clean is not None:
                    found.append(_Found(TYPO, 50 + order, clean))
    return found


def _batch_follows(problem: _Problem) -> bool:
    """Whether the step runs at the maximum concurrency (a full batch's tokens/s): the batch
    then follows an input through a floor that the inversion, batch pinned, cannot see, so
    every candidate is checked forward instead (a few dozen exact evaluations, cheap)."""
    assert problem.deployment is not None
    batch = dict(problem.pins).get("batch_size")
    return problem.deployment.batch is None and batch is not None and \
        _depends(problem, "batch_size", batch)


def _clean_slip(problem: _Problem, spec: _Input, x0: Fraction, value: Fraction,
                window: Fraction, matches: Matcher) -> Diagnosis | None:
    """A clean value of the input (a whole count, a round figure) the answer implies so
    precisely that chance is ruled out (CLEAN_CHANCE), checked forward."""
    span = _implied_range(problem, spec, x0, (value - window, value + window))
    if span is None:
        return None
    low, high = (Fraction(v) / spec.scale for v in span)
    implied = (low + high) / 2
    spacing = _clean_spacing(spec, implied)
    if spacing is None or implied <= 0:
        return None
    clean = round(implied / spacing) * spacing
    uncertainty = (high - low) / 2
    if clean <= 0 or clean == x0 / spec.scale:
        return None
    if abs(clean - implied) > uncertainty + spacing / 1000:
        return None
    if not _possible(problem, spec.name, clean):
        return None
    grid = _clean_grid(spec, clean, spacing)
    if 2 * max(uncertainty, abs(clean - implied)) > CLEAN_CHANCE * grid:
        return None
    overrides = {spec.slot: clean * spec.scale}
    if not matches(_evaluate(problem, overrides, relaxed=False),
                   _evaluate(problem, overrides, relaxed=True), TYPO, NEAR_TYPO):
        return None
    true = x0 / spec.scale
    why = "a whole number" if spec.whole else "a round figure"
    slip = Slip(spec.name, clean, true, spec.unit, why)
    return Diagnosis("input", (slip,), f"your answer is what the formula gives with "
                     f"{spec.name} = {_value_text(slip)} instead of {_shown(true, spec)} "
                     f"({why})")


def _possible(problem: _Problem, name: str, value: Fraction) -> bool:
    """Whether a model or a deployment could have this value at all: KV heads divide the
    query heads, head_dim comes in multiples of 16, GPUs split the KV heads evenly."""
    d = problem.deployment
    assert d is not None
    if name == "kv_heads":
        return (d.heads / value).denominator == 1
    if name == "head_dim":
        return (value / 16).denominator == 1
    if name == "gpus" and d.attention != "mla":
        return (d.kv_heads / value).denominator == 1 or (value / d.kv_heads).denominator == 1
    return True


def _clean_spacing(spec: _Input, implied: Fraction) -> Fraction | None:
    """The finest step clean values of this input come in."""
    if spec.whole:
        return Fraction(1)
    if spec.family == "gb":
        return Fraction(1, 2)
    return {"utilization": Fraction(1, 100), "bandwidth_tbs": Fraction(1, 20),
            "measured_step_ms": Fraction(1, 10), "tflops": Fraction(1)}.get(spec.name)


def _clean_grid(spec: _Input, clean: Fraction, spacing: Fraction) -> Fraction:
    """How coarse a grid `clean` lies on (4,000 tokens: 1,000; 6 GB: 1 GB): the rounder, the
    less a coincidence."""
    grid = spacing
    for step in (2, 5, 10, 16, 20, 50, 64, 100, 128, 256, 500, 512, 1000, 1024):
        if step * spacing <= clean and (clean / (step * spacing)).denominator == 1:
            grid = max(grid, step * spacing)
    return grid


@dataclass(frozen=True)
class _Factor:
    input: str
    factor: Fraction
    implied: Fraction
    true: Fraction
    mistake: str


def _factors(problem: _Problem) -> list[_Factor]:
    """The factor slips that apply to this step."""
    factors: list[_Factor] = []
    d = problem.deployment

    def depends(slot: str, x0: Fraction) -> bool:
        return d is not None and _depends(problem, slot, x0)

    if depends("kv_factor", Fraction(2)):
        factors.append(_Factor("kv_factor", Fraction(2), Fraction(4), Fraction(2),
                               "counted K and V twice over"))
        factors.append(_Factor("kv_factor", Fraction(1, 2), Fraction(1), Fraction(2),
                               "counted K and V once"))
    bits = "kv_bytes_per_element" if d is not None and depends(
        "kv_bytes_per_element", d.kv_bytes_per_element) else "bytes"
    if problem.has_unit or bits != "bytes":
        true = d.kv_bytes_per_element if bits != "bytes" and d is not None else Fraction(1)
        factors.append(_Factor(bits, Fraction(8), true * 8, true, "took bits for bytes"))
        factors.append(_Factor(bits, Fraction(1, 8), true / 8, true, "took bytes for bits"))
        gib = Fraction(GIB, GB)
        factors.append(_Factor("gb_bytes", gib, Fraction(GIB), Fraction(GB),
                               "took a GB figure as GiB"))
        factors.append(_Factor("gb_bytes", 1 / gib, Fraction(GB * GB, GIB), Fraction(GB),
                               "took a GiB figure as GB"))
        for prefix in (1000, 1024):
            factors.append(_Factor("unit_prefix", Fraction(prefix), Fraction(prefix),
                                   Fraction(1), f"slipped a unit prefix (×{prefix:,})"))
            factors.append(_Factor("unit_prefix", Fraction(1, prefix), Fraction(1, prefix),
                                   Fraction(1), f"slipped a unit prefix (÷{prefix:,})"))
    if d is not None and d.gpus > 1 and depends("gpus", Fraction(d.gpus)):
        g = Fraction(d.gpus)
        factors.append(_Factor("gpus", g, g * g, g, f"multiplied by the {d.gpus} GPUs again"))
        factors.append(_Factor("gpus", 1 / g, Fraction(1), g, f"divided by the {d.gpus} GPUs"))
    if d is not None and d.utilization != 1 and depends("utilization", d.utilization):
        u = d.utilization
        factors.append(_Factor("utilization", u, u * u, u, "applied the utilisation twice"))
        factors.append(_Factor("utilization", 1 / u, Fraction(1), u,
                               "left the utilisation out"))
    return factors


def _factor_slips(problem: _Problem, value: Fraction, least: int, matches: Matcher
                  ) -> list[_Found]:
    if problem.reference == 0:
        return []
    singles = _factors(problem)
    found: list[_Found] = []

    def scaled(factor: Fraction) -> tuple[Fraction, Fraction]:
        relaxed = problem.relaxed * factor
        exact = Fraction(math.floor(relaxed)) if problem.rounds else problem.reference * factor
        return exact, relaxed

    if least <= FIGURE:
        for order, one in enumerate(singles):
            # A factor within 10% of 1 (GB for GiB: 1.074) moves the answer no more than a
            # random answer near the reference: at 3 figures that is no evidence.
            near = NEAR_SETTING if 1 / NEAR_SETTING <= one.factor <= NEAR_SETTING \
                else Fraction(1)
            if matches(*scaled(one.factor), FIGURE, near):
                found.append(_Found(FIGURE, order, _factor_diagnosis((one,))))
                break
    if least <= ROUND and not found:
        for i, one in enumerate(singles):
            for other in singles[i + 1:]:
                product = one.factor * other.factor
                if one.input == other.input or product == 1:
                    continue
                if any(product == s.factor for s in singles):
                    continue
                if matches(*scaled(product), ROUND, Fraction(1)):
                    # Matched as a round slip, but ranked below any single typo that gives
                    # the same answer: one slip is likelier than two at once.
                    found.append(_Found(TYPO, 45, _factor_diagnosis((one, other))))
                    return found
    return found


def _factor_diagnosis(factors: tuple[_Factor, ...]) -> Diagnosis:
    slips = tuple(Slip(f.input, f.implied, f.true, "", f.mistake) for f in factors)
    total = math.prod((f.factor for f in factors), start=Fraction(1))
    how = " and ".join(f.mistake for f in factors)
    phrase = (f"your answer is the reference × {format_number(total, sig=4)}, as if you "
              f"{how}")
    return Diagnosis("factor", slips, phrase)


# ---------------------------------------------------------------------------------------------
# For the interviewer's key: the values that betray each slip


def slip_values(key: AnswerKey, step_id: str, limit: int = 4) -> list[tuple[Fraction, str]]:
    """(value, what it betrays) for a numeric step: the strongest plausible slips of each
    input, evaluated forward, leaving out the reference and the listed wrong values."""
    step = key.drill.step(step_id)
    if step.answer is None:
        return []
    problems = _PROBLEMS.setdefault(key, {})
    if step_id not in problems:
        problems[step_id] = _problem(key, step_id)
    problem = problems[step_id]
    reference = key.reference(step_id)
    taken = {reference.value, *(v for _, v in reference.wrong)}
    found: list[tuple[int, Fraction, str]] = []
    for spec in _INPUTS:
        x0 = _true_slot(problem, spec)
        if x0 is None or not _depends(problem, spec.slot, x0):
            continue
        true = x0 / spec.scale
        for candidate, (why, strength) in _candidates(problem, spec, true, FIGURE).items():
            value = _evaluate(problem, {spec.slot: candidate * spec.scale}, relaxed=False)
            if value is None or value <= 0 or value in taken:
                continue
            taken.add(value)
            found.append((strength, value, f"{spec.name} = {_shown(candidate, spec)} ({why})"))
    found.sort(key=lambda item: -item[0])
    return [(value, what) for _, value, what in found[:limit]]
