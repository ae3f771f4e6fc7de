"""A wrong number solved backwards: which one input, set to a value it takes somewhere in the
world, gives exactly this answer at the precision typed?

For each input the step's value depends on, the value of that input that gives the answer
(every other input at its reference value) is solved for in closed form where the value is a
power of the input or a ratio of two affine functions of it (checked exactly, with Fractions;
almost always). The interval the typed digits allow is carried through, and the input's
candidates inside it are checked forward through the exact solver, floors included; where no
closed form holds (an MoE's expert share, a prefill's attention), each of the input's few
candidates is checked forward. Candidates are what that kind of input takes elsewhere
(trainer/marking/world.py: every preset's figure for the field, common settings, powers of two
and their decimal neighbours), the drill's own values of it (its other givens, its other
questions, its variant space), the classic slips, the true value doubled, halved, rounded or
read in the other unit, a slip of the keys; and factors people slip by (2 for K and V, 8 for
bits and bytes, GB and GiB, a unit prefix, the GPU count, the utilisation).

Many candidates would explain random answers, so a candidate counts only while chance stays
small at the precision typed (trainer/marking/chance.py): the likeliest first (the common
values of the strong kinds, then the rare, then the weaker kinds; the cheapest first within
each), each admitted while the candidates admitted so far would explain a few percent of random
wrong answers typed as precisely. Where several readings give the answer, all of them are named
(a tie): those that give it as typed first, what a deployment sets before the model's shape;
beside a listed mistake, the readings it does not already say.

The answer enters only as a Fraction, and every search is over bounded candidate lists. A
diagnosis is a likely cause, never a verdict.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, Literal

from trainer.capacity.deployment import GB, GIB, Deployment
from trainer.capacity.identity_cache import by_identity
from trainer.capacity.presets import find_gpu, find_model
from trainer.capacity.solver import (
    FORMULAS,
    Relaxed,
    Solution,
    exact_inputs,
    relaxed_reads,
    relaxed_value,
)
from trainer.capacity.wrong_paths import WRONG_PATHS
from trainer.drills.model import Derived
from trainer.drills.reference import AnswerKey
from trainer.errors import KvdrillError
from trainer.marking import chance, world
from trainer.reading.exact import Fraction
from trainer.reading.expression import unit_factor
from trainer.reading.numbers import format_number, typed_at_some_scale
from trainer.records import field_names, record, replace

# How strong a candidate's reason is, strongest first: the classic slips (the utilisation
# applied after the weights, the reserve once per node, the TP degree twice, the hidden size
# for head_dim, a dtype's bytes); the drill's own values of the input (its variants, its other
# questions); what the input takes in the world (another card's figure, another model's layer
# count or parameters, a common setting, a power of two or its decimal neighbour, the true
# value doubled or halved); a slip of the keys (digits swapped, dropped, doubled, or one typed
# again in its neighbour's place); the true value rounded or read in the other unit, or a
# single factor (GB for GiB, K and V twice); another model's other shape figures (its heads,
# head_dim, hidden size); any other digit typed wrong; two factors at once.
CLASSIC, OWN, WORLD, KEYS, DERIVED, SHAPES, TYPO, PAIR = range(8)
# The fields whose other models' figures are a world slip; another model's heads or head_dim
# in this one's place is a weaker one (SHAPES).
_WORLD_FIELDS = frozenset({"layers", "params", "active_params", "draft_params", "draft_layers",
                           "weights_gb"})
# Another model's size in this one's place is a likely slip only for a model of about the same
# size (Llama-3.1-70B's 141 GB for Llama-2-70B's 138 GB); this model's parameters at another
# dtype's bytes always are.
_SIZES = frozenset({"weights_gb", "params", "active_params"})
SAME_SIZE = Fraction(5, 4)
# An answer whose last typed digit is worth more than this share of it says too little.
NO_DIAGNOSIS_GRAIN = Fraction(1, 10)
WHOLE_NO_DIAGNOSIS_GRAIN = Fraction(1, 20)  # a whole count below 20
MIN_WINDOW = Fraction(1, 10**6)  # an answer typed to many digits: float rounding only
# A clean value of an input (a whole number of layers, a round GB figure) that the answer
# implies counts only when chance could not have put it there: the implied value's own
# uncertainty, both sides, at most this share of the spacing of clean values.
CLEAN_CHANCE = Fraction(2, 1000)
SLACK = Fraction(2, 100)  # around an implied value, for floors and branches
FLOOR_SHARE = Fraction(1, 8)  # how far above a whole count the value before its floors may be
TYPO_FIGURES = 4  # a digit replaced or repeated, another model's heads: from this many figures
FOLLOW_SIEVE = 8  # how far a batch that follows an input may move the step's value
# Bounds on the work: candidates per input, and readings named.
MAX_CANDIDATES = 96
MAX_READINGS = 2  # a second reading only as a tie: never three
FAR = 8  # a figure of the world more than this far from the true value is no likely slip
# Another reading ties with the first when it is as exact, or as strong (a slip of the keys at
# the weakest) and within half a window as close to the answer.
TIE_CLOSENESS = 0.5
EXACT = 0.25  # a reading this close to the answer, in windows, gives it as typed
ROUNDS = frozenset({"max_concurrency", "max_tokens", "num_blocks", "max_concurrency_with_prefix",
                    "shared_prefix_tokens", "blocks_per_sequence", "tokens_held_per_sequence",
                    "window_tokens_held_per_sequence", "spec_max_concurrency",
                    "cpu_tier_sessions", "latency_bound_batch", "operating_batch"})


@record
class Slip:
    """One input (or a factor) the answer implies, against its true value."""

    input: str
    implied: Fraction
    true: Fraction
    unit: str
    why: str  # "an H200's", "'k' read as 1,000"
    exact: bool = True  # gives the answer to its last digit (else only to the figures typed)

    @property
    def change(self) -> str:
        """The input as the answer implies it, against its true value ("hbm_gb = 80 GB
        instead of 85.52 GB")."""
        return f"{self.input} = {_value_text(self)} instead of {_true_text(self)}"

    def json(self) -> dict[str, Any]:
        return {"input": self.input, "implied": _plain(self.implied), "true": _plain(self.true),
                "unit": self.unit or None, "why": self.why}


@record
class Diagnosis:
    """The likely slip behind a wrong answer: one input the formula was fed, or one or two
    factors the answer is off by; with the other readings that give the same answer."""

    kind: Literal["input", "factor"]
    slips: tuple[Slip, ...]
    phrase: str
    others: tuple[Slip, ...] = ()  # other readings that give the same answer (a tie)
    tie: bool = False  # a listed mistake gives the same answer, and is named first
    shown: bool = False  # the candidate's working shows the slip: no guess
    # Three readings or more give the answer alike: none can be told apart, so none is said
    # (the one kept is for the record only).
    crowded: bool = False

    @property
    def slip(self) -> Slip:
        return self.slips[0]

    @property
    def sentence(self) -> str:
        said = self.phrase + (f"; {_also(self.others)}" if self.others else "")
        if self.shown:
            return f"Your working shows the slip: {said}."
        if self.tie:
            return f"A slip of one input gives the same number: {said}."
        return f"Likely slip (a guess, not a certainty): {said}."

    def alone(self) -> Diagnosis:
        """The first reading only (said beside a mistake already named: two in all)."""
        return replace(self, others=())

    def json(self) -> dict[str, Any]:
        first = self.slip.json()
        return {**first, "kind": self.kind, "phrase": self.sentence,
                "also": [s.json() for s in self.slips[1:]],
                "or": [s.json() for s in self.others],
                "readings": [first, *(s.json() for s in self.others)],
                "tie": self.tie, "shown": self.shown}


def _plain(value: Fraction) -> int | float:
    return value.numerator if value.denominator == 1 else float(value)


# ---------------------------------------------------------------------------------------------
# The inputs a diagnosis may name


@record
class _Input:
    name: str  # as the givens name it
    slot: str  # what is set in the solver's namespace (an input, or weights_bytes, batch_size)
    unit: str
    label: str
    as_if: str  # the slip in words: "the GPU had {}"
    whole: bool = False
    scale: int = 1  # slot value = shown value × scale
    family: str = ""


# In the order a tie names them: what a deployment sets (the context, the batch, the card,
# the settings) before the model's shape, which the givens state.
_INPUTS: tuple[_Input, ...] = (
    _Input("context", "context", "tokens", "the context", "the context were {}", True,
           family="tokens"),
    _Input("batch", "batch_size", "sequences", "the batch", "the batch were {} sequences", True,
           family="batch"),
    _Input("hbm_gb", "hbm_gb", "GB", "the HBM", "the GPU had {}", family="gb"),
    _Input("bandwidth_tbs", "bandwidth_tbs", "TB/s", "the bandwidth", "the bandwidth were {}"),
    _Input("tflops", "tflops", "TFLOPS", "the TFLOPS", "the GPU ran {}"),
    _Input("reserve_gb", "reserve_gb", "GB", "the reserve", "the headroom were {}",
           family="gb"),
    _Input("utilization", "utilization", "", "the utilisation", "the utilisation were {}"),
    _Input("weights_gb", "weights_bytes", "GB", "the weights", "the weights were {}",
           scale=GB, family="gb"),
    _Input("block_size", "block_size", "tokens", "the block size", "a block held {}", True,
           family="tokens"),
    _Input("gpus", "gpus", "", "the GPU count", "there were {} GPUs", True, family="gpus"),
    _Input("prompt_tokens", "prompt_tokens", "tokens", "the prompt", "the prompt were {}",
           True, family="tokens"),
    _Input("prefix_tokens", "prefix_tokens", "tokens", "the shared prefix",
           "the shared prefix were {}", True, family="tokens"),
    _Input("window", "window", "tokens", "the window", "the window were {}", True,
           family="tokens"),
    _Input("output_tokens", "output_tokens", "tokens", "the reply length",
           "a reply were {}", True, family="tokens"),
    _Input("long_prompt_tokens", "long_prompt_tokens", "tokens", "the long prompt",
           "the long prompt were {}", True, family="tokens"),
    _Input("link_gbs", "link_gbs", "GB/s", "the link", "the link carried {}"),
    _Input("tpot_ms", "tpot_ms", "ms", "the TPOT target", "the TPOT target were {}"),
    _Input("arrival_rate", "arrival_rate", "requests/s", "the arrival rate",
           "requests arrived at {}"),
    _Input("think_seconds", "think_seconds", "s", "the think time", "a user paused for {}"),
    _Input("reply_seconds", "reply_seconds", "s", "the reply time", "a reply took {}"),
    _Input("cpu_kv_gb", "cpu_kv_gb", "GB", "the host KV tier", "the host tier held {}",
           family="gb"),
    _Input("measured_step_ms", "measured_step_ms", "ms", "the measured step",
           "the measured step were {}"),
    _Input("spec_tokens", "spec_tokens", "", "the drafted tokens", "{} tokens were drafted",
           True),
    _Input("acceptance_rate", "acceptance_rate", "", "the acceptance rate",
           "the acceptance rate were {}"),
    _Input("layers", "layers", "", "the layer count", "the model had {} layers", True,
           family="shape"),
    _Input("kv_bytes_per_element", "kv_bytes_per_element", "B", "bytes per KV element",
           "a KV element took {}"),
    _Input("kv_heads", "kv_heads", "", "the KV heads", "the model had {} KV heads", True,
           family="shape"),
    _Input("head_dim", "head_dim", "", "head_dim", "head_dim were {}", True, family="shape"),
    _Input("heads", "heads", "", "the query heads", "the model had {} query heads", True,
           family="shape"),
    _Input("hidden", "hidden", "", "the hidden size", "the hidden size were {}", True,
           family="shape"),
    _Input("vocab", "vocab", "", "the vocabulary", "the vocabulary were {}", True),
    _Input("params", "params", "", "the parameter count", "the model had {} parameters"),
    _Input("active_params", "active_params", "", "the active parameters",
           "{} parameters were active"),
    _Input("windowed_layers", "windowed_layers", "", "the windowed layers",
           "{} layers were windowed", True, family="shape"),
    _Input("mla_latent", "mla_latent", "", "the MLA latent", "the MLA latent were {} wide",
           True, family="shape"),
    _Input("mla_rope", "mla_rope", "", "the rope dims", "the rope part were {} wide", True,
           family="shape"),
    _Input("experts", "experts", "", "the experts", "the model had {} experts", True,
           family="shape"),
    _Input("experts_per_token", "experts_per_token", "", "the experts per token",
           "each token went to {} experts", True, family="shape"),
    _Input("draft_params", "draft_params", "", "the draft's parameters",
           "the draft had {} parameters"),
    _Input("draft_layers", "draft_layers", "", "the draft's layers", "the draft had {} layers",
           True, family="shape"),
    _Input("draft_kv_heads", "draft_kv_heads", "", "the draft's KV heads",
           "the draft had {} KV heads", True, family="shape"),
    _Input("draft_head_dim", "draft_head_dim", "", "the draft's head_dim",
           "the draft's head_dim were {}", True, family="shape"),
    _Input("attention_layers", "attention_layers", "", "the attention layers",
           "{} layers held KV", True, family="shape"),
    _Input("state_elements", "state_elements", "", "the state per layer",
           "a recurrent layer kept {} values", True),
)
_BY_NAME = {i.name: i for i in _INPUTS}
# Which shape figure a person puts where another belongs (the hidden size for head_dim), and
# which of them are classic (the rest are no likelier than another model's figure).
_SHAPE_MIXUPS = {"head_dim": ("hidden", "hidden ÷ heads", "heads"),
                 "kv_heads": ("heads", "layers"), "layers": ("heads", "kv_heads"),
                 "heads": ("kv_heads", "layers")}
_CLASSIC_MIXUPS = {("head_dim", "hidden"), ("head_dim", "hidden ÷ heads"), ("kv_heads", "heads")}
_SHAPE_LABELS = {"layers": "the layer count", "heads": "the query heads",
                 "kv_heads": "the KV heads", "head_dim": "head_dim", "hidden": "the hidden size"}


@record
class _Candidate:
    value: Fraction  # as shown (GB for the weights)
    why: str
    tier: int
    # Within the strong tiers, a value people reach for less often (a rare card's figure, a
    # setting few use, a power of two far from the true one, a value only a variant of the
    # drill has): chance admits it after every strong tier's common values.
    rare: bool = False


@record
class _Problem:
    """What a diagnosis of one step needs, hashable so diagnoses are cached."""

    # The givens' deployment; None: a ratio of steps that are ratios themselves (factors only)
    deployment: Deployment | None
    quantity: str
    reference: Fraction
    relaxed: Fraction  # the reference with floors left out
    rounds: bool
    # (input, value as shown, why, tier, only a variant's): the drill's own values of its inputs
    figures: tuple[tuple[str, Fraction, str, int, bool], ...]
    has_unit: bool
    # Set in every continuous evaluation: the batch a step runs at stays the whole number of
    # sequences it is, rather than the unrounded quotient.
    pins: tuple[tuple[str, Fraction], ...] = ()
    tolerance: Fraction = Fraction(1, 100)
    scale: Fraction = Fraction(1)  # the step's unit in base units: answers are typed in it
    # A ratio of two steps: each step's deployment, quantity and pins. A slip of a given
    # changes each step whose deployment has the givens' value of it (a step's own `with:`
    # value is not the given's).
    parts: tuple[tuple[Deployment, str, tuple[tuple[str, Fraction], ...]], ...] = ()
    # An input the step sets from another given (`with: {context: prompt_tokens}`): a slip of
    # it is a slip of that given, and is named so.
    aliases: tuple[tuple[str, str], ...] = ()
    card: str = ""  # the drill's GPU preset: its datasheet figure is "this card's"
    # Inputs the step models rather than takes (`with: {hbm_gb: {of: hbm_gb, times: 2}}`: TP8
    # × PP2 as 8 GPUs of twice the memory): their slots hold no figure a candidate typed, so
    # no slip of them, or of the GPU count beside them, means anything.
    modelled: frozenset[str] = frozenset()

    def __hash__(self) -> int:
        # Kept: a problem keys the caches below, and hashing its deployment field by field on
        # every look-up cost more than many of the evaluations they keep.
        kept: int | None = self.__dict__.get("_hash")
        if kept is None:
            kept = hash(tuple(getattr(self, name) for name in field_names(self)))
            object.__setattr__(self, "_hash", kept)
        return kept


_PROBLEMS: weakref.WeakKeyDictionary[AnswerKey, dict[str, _Problem]] = \
    weakref.WeakKeyDictionary()
_VARIANTS: weakref.WeakKeyDictionary[AnswerKey, tuple[tuple[str, Fraction, str], ...]] = \
    weakref.WeakKeyDictionary()
_FIGURES: weakref.WeakKeyDictionary[
    AnswerKey, dict[int, tuple[Deployment, tuple[tuple[str, Fraction, str, int, bool], ...]]]] = \
    weakref.WeakKeyDictionary()


def diagnose(key: AnswerKey, step_id: str, value: Fraction,
             resolution: Fraction | None = None, tolerance: Fraction | None = None,
             named: tuple[str, ...] = (), ties: tuple[str, ...] = (),
             exact: Fraction | None = None, own: tuple[str, ...] = (),
             known: frozenset[str] = frozenset()) -> Diagnosis | None:
    """The likely slip behind `value` (base units) on a numeric step, or None when nothing
    plausible gives it. `resolution`: what the typed digits claim (1 for "52 GB" in GB, 10
    for "320 KiB"); `exact`: the resolution a whole number's trailing zeros would give if
    they were meant (1 for "320 KiB"), tried first; `tolerance`: the step's. `named`: the
    known mistakes already named for this answer (a reading that says the same is left out);
    `ties`: those that give its very number (the slip is then said as a tie); `own`: the
    step's listed mistakes (a strong reading that ties with one of them is said whatever
    chance allows); `known`: inputs the attempt's right answers gave (no slip of them is
    read)."""
    if value <= 0:
        return None
    problem = _problem_of(key, step_id, tolerance)
    found = None
    tie = bool(set(ties) & set(own))
    if exact is not None and resolution is not None and exact < resolution:
        found = _diagnose(problem, value, exact, exactly=True, tie=tie, known=known)
    if found is None:
        found = _diagnose(problem, value, resolution, tie=tie, known=known)
    if found is None or not named:
        return found
    return _beside_listed(problem, found, named, bool(ties))


MAX_WORKING_FIGURES = 12  # figures of shown working tried, each in every input's place
_BYTE_UNITS = frozenset({"B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB"})


def from_working(key: AnswerKey, step_id: str, value: Fraction, figures: tuple[Fraction, ...],
                 tolerance: Fraction, mistakes: tuple[str, ...] = (),
                 of_bytes: frozenset[Fraction] = frozenset()) -> Diagnosis | None:
    """The slip the candidate's own working shows: a figure of it, in exactly one input's
    place, gives the answer (2 × 60 × 8 × 128 × 2 = 240 KiB: layers = 60). None when no
    figure, or more than one reading, does, or when the reading is what one of `mistakes`
    sets (32 KV heads for Llama-3.1-8B is the query heads: the mistake is named instead)."""
    problem = _problem_of(key, step_id, tolerance)
    if problem.deployment is None or value <= 0:
        return None
    inputs = _inputs_of(problem)
    found: dict[str, tuple[_Input, Slip]] = {}
    for figure in figures[:MAX_WORKING_FIGURES]:
        if figure <= 0 or figure in _CONSTANTS:
            # (the 2 of "126 x 8 x 128 x 2 x 1" is K and V, the 1 a byte: no GPU count;
            # expert pass 53, W17)
            continue
        # A figure that is another input's true value stands for that input: 128 in
        # 2*80*64*128*1 is head_dim, not 128 KV heads, and the 2 of 28*4*128*2 the bytes;
        # so does one of an input the step does not read (the 8 GPUs of 576*2*61/8).
        if any(figure * spec.scale == x0 for spec, x0 in _settable(problem)):
            continue
        for spec, x0 in inputs:
            if spec.whole and figure.denominator != 1:
                continue  # 15.01 of 15.01 / 4.8 is no count of tokens
            if figure in of_bytes and spec.unit not in _BYTE_UNITS:
                continue  # the 64 of "32768 * 64 KiB" is an amount of memory, no head_dim
            if x0 and not 1 / _FAR <= figure * spec.scale / x0 <= _FAR:
                continue  # 172.8 is no count of a 1.2B draft's parameters
            result = _evaluate(problem, {spec.slot: figure * spec.scale}, relaxed=False)
            if result is None or abs(result - value) > tolerance * abs(value):
                continue
            found.setdefault(spec.name, (spec, Slip(spec.name, figure, x0 / spec.scale,
                                                    spec.unit, "the figure in your working")))
    if len(found) != 1:
        return None
    spec, slip = next(iter(found.values()))
    if (slip.input, slip.implied) in _listed_changes(problem, mistakes):
        return None
    if _a_right_figure(key, problem, slip.implied):
        # 0.839 in (172.8 − 4 − 29.3) / 0.839 is the KV of a request in GB, not a utilisation;
        # 15 in (15 + 64 × 0.512) / 3.4 the weights a step reads: the working's figure is one
        # the right working uses too, and it shows no slip of the input it happens to fit
        return None
    return Diagnosis("input", (slip,), _phrase(spec, slip), shown=True)


_FAR = 1000  # a figure this far from an input's true value is no slip of it
_CONSTANTS = frozenset({Fraction(1), Fraction(2)})  # in any working: K and V, one byte, × 1


def _a_right_figure(key: AnswerKey, problem: _Problem, figure: Fraction) -> bool:
    """Whether `figure`, at some scale, is a value the right working uses: a quantity of the
    step's deployment (the bytes a step reads, the KV of a request) or another step's key."""
    assert problem.deployment is not None
    values: list[Fraction] = []
    solution = Solution(problem.deployment, shared=True)
    for name in FORMULAS:
        try:
            values.append(Fraction(solution[name]))
        except (ZeroDivisionError, ValueError, OverflowError, TypeError, KvdrillError):
            continue
    for step in key.drill.steps:
        if step.kind == "numeric" and step.answer is not None:
            try:
                values.append(key.reference(step.id).value)
            except KvdrillError:
                continue
    d = problem.deployment
    if d.hbm_gb and d.utilization:  # the memory the cap leaves, before the reserve: 0.9 × 192
        values += [d.hbm_gb * d.utilization * GB, d.gpus * d.hbm_gb * d.utilization * GB]
    return any(typed_at_some_scale(figure, value) for value in values)


def value_with_slip(key: AnswerKey, step_id: str, slip: Slip) -> Fraction | None:
    """The step's value with an input slip named at an earlier step made again here (the GPU
    read as 80 GB again); None where the step does not read that input at the same true
    value (a follow-up on another card), or the slip does not move it."""
    spec = _BY_NAME.get(slip.input)
    if spec is None:
        return None
    problem = _problem_of(key, step_id, None)
    if problem.parts or problem.deployment is None:
        return None
    if _slot_value(problem.deployment, spec.slot) != slip.true * spec.scale:
        return None
    value = _evaluate(problem, {spec.slot: slip.implied * spec.scale}, relaxed=False)
    return None if value is None or value == problem.reference else value


def _problem_of(key: AnswerKey, step_id: str, tolerance: Fraction | None) -> _Problem:
    problems = _PROBLEMS.setdefault(key, {})
    if step_id not in problems:
        problems[step_id] = _problem(key, step_id, tolerance)
    return problems[step_id]


def _problem(key: AnswerKey, step_id: str, tolerance: Fraction | None = None) -> _Problem:
    step = key.drill.step(step_id)
    reference = key.reference(step_id).value
    has_unit = bool(step.unit)
    tolerance = Fraction(str(step.tolerance)) if tolerance is None else tolerance
    if step.ratio_of is not None:
        return _ratio_problem(key, step.ratio_of, reference, has_unit, tolerance)
    assert step.answer is not None
    deployment = key.deployment(step_id)
    pins = _pins(deployment)
    relaxed = relaxed_value(deployment, step.answer, pins=dict(pins))
    rounds = step.answer in ROUNDS
    scale = unit_factor(step.unit).value if step.unit else Fraction(1)
    aliases = tuple((name, value) for name, value in step.with_.items()
                    if isinstance(value, str) and name in _BY_NAME and value in _BY_NAME)
    gpu = step.with_.get("gpu") or key.givens.get("gpu")
    # (a card's memory or reserve scaled: a layout modelled, not a figure to slip on; a batch
    # scaled, "twice your step 3a batch", is the candidate's own to work out)
    modelled = frozenset(name for name, value in step.with_.items()
                         if isinstance(value, Derived) and value.times != 1
                         and name in _CARD_LAYOUT)
    return _Problem(deployment, step.answer, reference, relaxed, rounds,
                    _figures(key, deployment), has_unit, pins, tolerance, scale,
                    aliases=aliases, card=_card_id(gpu),
                    modelled=modelled | {"gpus"} if modelled else modelled)


def _card_id(gpu: object) -> str:
    from trainer.capacity.presets import find_gpu

    try:
        return find_gpu(str(gpu)).id if gpu else ""
    except KvdrillError:
        return ""


def _pins(deployment: Deployment) -> tuple[tuple[str, Fraction], ...]:
    """Set in every continuous evaluation: the batch the step runs at."""
    return (("batch_size", Solution(deployment, shared=True)["batch_size"]),)


def _ratio_problem(key: AnswerKey, ratio_of: tuple[str, str], reference: Fraction,
                   has_unit: bool, tolerance: Fraction) -> _Problem:
    """A step that divides one step's value by another's: a slip of a given moves either or
    both, and the ratio is evaluated from the two (a ratio of ratios: factors only)."""
    parts = []
    for step_id in ratio_of:
        answer = key.drill.step(step_id).answer
        if answer is None:
            return _Problem(None, "", reference, reference, False, (), has_unit,
                            tolerance=tolerance)
        deployment = key.deployment(step_id)
        parts.append((deployment, answer, _pins(deployment)))
    (d_top, q_top, p_top), (d_bottom, q_bottom, p_bottom) = parts
    relaxed = relaxed_value(d_top, q_top, pins=dict(p_top)) / relaxed_value(
        d_bottom, q_bottom, pins=dict(p_bottom))
    return _Problem(key.base, "", reference, relaxed, False, _figures(key, key.base), has_unit,
                    (), tolerance, parts=tuple(parts))


def _figures(key: AnswerKey, deployment: Deployment
             ) -> tuple[tuple[str, Fraction, str, int, bool], ...]:
    """The drill's own values a person might put in an input's place: the other shape figures
    of this model, the value the same input has in the givens, in another question of the
    drill, or in one of its variants. Kept per key and deployment: every step without its
    own `with` has the givens' deployment."""
    return by_identity(_FIGURES.setdefault(key, {}), deployment,
                lambda: _own_figures(key, deployment))


def _own_figures(key: AnswerKey, deployment: Deployment
                 ) -> tuple[tuple[str, Fraction, str, int, bool], ...]:
    found: list[tuple[str, Fraction, str, int, bool]] = []
    d = deployment
    shape = {name: getattr(d, name) for name in _SHAPE_LABELS if getattr(d, name) is not None}
    if d.hidden is not None:
        shape["hidden ÷ heads"] = Fraction(d.hidden, d.heads)
    for target, sources in _SHAPE_MIXUPS.items():
        for name in sources:
            if name in shape:
                tier = CLASSIC if (target, name) in _CLASSIC_MIXUPS else WORLD
                found.append((target, Fraction(shape[name]), _SHAPE_LABELS.get(name, name),
                              tier, False))
    own = _own_model_shape(key)
    if own is not None:
        # a drill re-targeted from its own model: that model's figure kept by habit (Qwen3-8B
        # sized with Llama-3.1-8B's 32 layers: not its 32 query heads; expert pass 49, M3)
        own_name, own_shape = own
        found += [(name, Fraction(value), f"{own_name}'s, {_OWN_MODEL}", CLASSIC, False)
                  for name, value in own_shape.items()
                  if name in shape and value is not None and value != shape[name]]
    if d.spec_tokens is not None:
        # the draft sized with the target's shape (its head_dim of 128 for the draft's 64)
        for draft, name in (("draft_head_dim", "head_dim"), ("draft_layers", "layers"),
                            ("draft_kv_heads", "kv_heads")):
            if name in shape:
                found.append((draft, Fraction(shape[name]),
                              f"the target's {_SHAPE_LABELS[name].removeprefix('the ')}",
                              CLASSIC, False))
    # Each shape mix-up is one (target, source); the questions' figures are another tier
    # (OWN) and made unique once per key (two equal figures have one value, so the filter
    # keeps both or neither); a variant's figure (marked True) is none of them. So the whole
    # is unique without a set: the same tuple as dict.fromkeys of it all.
    for spec, values in _question_values(key):
        mine = getattr(d, spec.name)
        found += [figure for value, figure in values if value != mine]
    return tuple(found) + _variant_owns(key)


def _own_model_shape(key: AnswerKey) -> tuple[str, dict[str, Any]] | None:
    """The drill's own model's name and shape figures, where the key is re-targeted at
    another model (None where it is not, or the drill's own model is no preset)."""
    own = key.drill.givens.get("model")
    if key.retargeted is None or not isinstance(own, str) or key.givens.get("model") == own:
        return None
    try:
        model = find_model(own)
    except KvdrillError:
        return None
    return model.name, {name: getattr(model, name, None) for name in _SHAPE_LABELS}


_VARIANT_OWNS: weakref.WeakKeyDictionary[
    AnswerKey, tuple[tuple[str, Fraction, str, int, bool], ...]] = weakref.WeakKeyDictionary()


def _variant_owns(key: AnswerKey) -> tuple[tuple[str, Fraction, str, int, bool], ...]:
    kept = _VARIANT_OWNS.get(key)
    if kept is None:
        kept = _VARIANT_OWNS[key] = tuple(dict.fromkeys(
            (name, value, why, OWN, True) for name, value, why in _variant_figures(key)))
    return kept


_QUESTION_VALUES: weakref.WeakKeyDictionary[
    AnswerKey, tuple[tuple[_Input, tuple[tuple[Any, tuple[str, Fraction, str, int, bool]],
                                         ...]], ...]] = weakref.WeakKeyDictionary()


def _question_values(key: AnswerKey
                     ) -> tuple[tuple[_Input, tuple[tuple[Any, tuple[str, Fraction, str, int,
                                                                        bool]], ...]], ...]:
    """Each input's values in the givens and in every question's own setting (`with:`), in
    order, each with its figure: worked out once per key, for every deployment of it."""
    kept = _QUESTION_VALUES.get(key)
    if kept is not None:
        return kept
    others: list[Deployment] = [key.base]
    for step in key.drill.steps:
        if step.kind == "numeric" and step.answer is not None and step.with_:
            others.append(key.deployment(step.id))
    found = []
    # a shape the givens take from a model preset is that model's (Mistral-7B's 32 layers in
    # a question about Gemma-2-9B)
    model = key.givens.get("model")
    try:
        owner = world.model_label(find_model(str(model))) + "'s" if model else None
    except KvdrillError:
        owner = None
    for spec in _INPUTS:
        if spec.slot != spec.name or spec.name == "kv_bytes_per_element":
            continue
        values: dict[tuple[str, Fraction, str, int, bool], Any] = {}
        for other in others:
            value = getattr(other, spec.name)
            if value is not None:
                label = "the givens' value" if other is key.base else "another question's value"
                if other is key.base and owner and spec.family == "shape":
                    values.setdefault((spec.name, Fraction(value), owner, OWN, False), value)
                    continue
                values.setdefault((spec.name, Fraction(value), f"{spec.label}: {label}", OWN,
                                   False), value)
        found.append((spec, tuple((value, figure) for figure, value in values.items())))
    _QUESTION_VALUES[key] = tuple(found)
    return _QUESTION_VALUES[key]


def _variant_figures(key: AnswerKey) -> tuple[tuple[str, Fraction, str], ...]:
    """The values each input takes in the drill's variants (its `vary` choices, one at a
    time), with the preset's name where a model or GPU was drawn."""
    if key in _VARIANTS:
        return _VARIANTS[key]
    found: list[tuple[str, Fraction, str]] = []
    base = key.base
    for names, choices in key.drill.vary.items():
        fields = [name.strip() for name in names.split(",")]
        if key.retargeted and "model" in fields:
            # a re-targeted sheet's model is the target's: the drill's own variants of it
            # (Llama-2-70B's 138 GB beside Qwen3-32B) are figures the candidate never saw
            continue
        for choice in choices:
            values = choice if isinstance(choice, tuple) else (choice,)
            givens = {**key.givens, **dict(zip(fields, values, strict=False))}
            variant = _built(key, givens)
            if variant is None:
                continue
            for spec in _INPUTS:
                if spec.slot != spec.name and spec.name != "weights_gb":
                    continue
                value = variant.weights_gb if spec.name == "weights_gb" else \
                    getattr(variant, spec.name, None)
                mine = base.weights_gb if spec.name == "weights_gb" else getattr(base, spec.name)
                if value is None or value == mine or isinstance(value, bool | str):
                    continue
                found.append((spec.name, Fraction(value),
                              _variant_why(spec, Fraction(value), fields, values)))
    _VARIANTS[key] = tuple(dict.fromkeys(found))
    return _VARIANTS[key]


# The deployments of givens, per drill: the variants of one drill, each with one choice
# changed, are mostly each other's.
_BUILT: dict[tuple[int, str], tuple[Any, Deployment | None]] = {}
MAX_BUILT = 4096
_PLAIN = (str, int, float, Fraction, type(None))


def _built(key: AnswerKey, givens: dict[str, Any]) -> Deployment | None:
    """key.build(givens), kept per drill and givens; None where the givens make none. Only
    givens of plain values are kept (their repr says all they are)."""
    plain = all(isinstance(v, _PLAIN) for v in givens.values())
    kept = (id(key.drill), repr(sorted(givens.items()))) if plain else None
    entry = None if kept is None else _BUILT.get(kept)
    if entry is not None and entry[0] is key.drill:
        return entry[1]
    try:
        variant: Deployment | None = key.build(givens)
    except KvdrillError:
        variant = None
    if kept is not None:
        if len(_BUILT) >= MAX_BUILT:
            _BUILT.clear()
        _BUILT[kept] = (key.drill, variant)
    return variant


_OTHER_VARIANT = "another variant of this drill"
_OWN_MODEL = "the drill's own model"  # a re-targeted drill's own model's figure


def _variant_why(spec: _Input, value: Fraction, fields: list[str], values: Sequence[Any]
                 ) -> str:
    chosen = dict(zip(fields, values, strict=False))
    try:
        if "gpu" in chosen and spec.name in ("hbm_gb", "bandwidth_tbs", "tflops"):
            return world.gpu_label(find_gpu(str(chosen["gpu"]))) + "'s"
        if "model" in chosen:
            return world.model_label(find_model(str(chosen["model"]))) + "'s"
    except KvdrillError:
        pass
    return f"{spec.label}: {_OTHER_VARIANT}"


# ---------------------------------------------------------------------------------------------
# Evaluating the step with one thing changed


def _evaluate(problem: _Problem, overrides: dict[str, Fraction], relaxed: bool
              ) -> Fraction | None:
    assert problem.deployment is not None
    if not problem.parts:
        return _value(problem.deployment, problem.quantity, problem.pins, overrides, relaxed)
    values = []
    for deployment, quantity, pins in problem.parts:
        # a slip of a given moves the step that uses the given's value
        mine = {slot: value for slot, value in overrides.items()
                if _slot_value(deployment, slot) == _slot_value(problem.deployment, slot)}
        values.append(_value(deployment, quantity, pins, mine, relaxed))
    top, bottom = values
    return None if top is None or not bottom else Fraction(top) / Fraction(bottom)


def _value(deployment: Deployment, quantity: str, pins: tuple[tuple[str, Fraction], ...],
           overrides: dict[str, Fraction], relaxed: bool) -> Fraction | None:
    """One step's value with `overrides` set: exact, or with the floors left out (`relaxed`,
    the batch pinned); None where the change makes it meaningless."""
    relaxed = relaxed or quantity not in FORMULAS
    kept = (id(deployment), relaxed, pins if relaxed else (),
            tuple((name, type(value), value) for name, value in overrides.items()))
    entry = _EVALUATIONS.get(kept)
    if entry is None or entry[0] is not deployment:
        # One evaluation per deployment and change, whichever steps ask it: the steps of a key
        # that share a deployment try the same candidates, each for its own quantity.
        if len(_EVALUATIONS) >= MAX_EVALUATIONS:
            _EVALUATIONS.clear()
        entry = _EVALUATIONS[kept] = (deployment, Relaxed(deployment, dict(overrides), dict(pins))
                                      if relaxed else Solution(deployment, dict(overrides)))
    try:
        value: Fraction = entry[1][quantity]
    except (ZeroDivisionError, ValueError, OverflowError, TypeError, KvdrillError):
        return None
    return value


_EVALUATIONS: dict[tuple[int, bool, tuple[tuple[str, Fraction], ...],
                         tuple[tuple[str, type, Fraction], ...]],
                   tuple[Deployment, Relaxed | Solution]] = {}
MAX_EVALUATIONS = 2048  # a key's few hundred, kept no longer: the collector walks what is kept


def _true_slot(problem: _Problem, spec: _Input) -> Fraction | None:
    assert problem.deployment is not None
    return _slot_value(problem.deployment, spec.slot)


# Kept per deployment object (its hash, field by field, costs more than most look-ups save).
_SLOTS: dict[int, tuple[Deployment, tuple[Mapping[str, Any], dict[str, Fraction | None]]]] = {}
MAX_SLOT_DEPLOYMENTS = 4096


def _slot_value(deployment: Deployment, slot: str) -> Fraction | None:
    """What the solver puts in `slot` for this deployment (an input, or a derived quantity
    such as the weights' bytes or the batch)."""
    inputs, values = by_identity(_SLOTS, deployment, lambda: (exact_inputs(deployment), {}),
                          MAX_SLOT_DEPLOYMENTS)
    if slot not in values:
        values[slot] = _slot_value_of(deployment, inputs, slot)
    return values[slot]


def _slot_value_of(deployment: Deployment, inputs: Mapping[str, Any], slot: str
                   ) -> Fraction | None:
    try:
        if slot in FORMULAS:
            value = Solution(deployment, shared=True)[slot]
        else:  # an input, as the solver reads it (relaxed_value of an input, without a namespace)
            if slot not in inputs:
                return None
            value = inputs[slot]
    except (AttributeError, ZeroDivisionError, TypeError, KvdrillError):
        return None
    return None if value is None or isinstance(value, bool | str) else Fraction(value)


def _depends(problem: _Problem, slot: str, x0: Fraction) -> bool:
    if not problem.parts:
        assert problem.deployment is not None
        # A name the step's value is not read from cannot move it: no evaluation needed.
        reads = relaxed_reads(problem.deployment, problem.quantity, dict(problem.pins))
        if reads is not None and slot not in reads:
            return False
    nudged = x0 * Fraction(9, 8) if x0 else Fraction(1)
    value = _evaluate(problem, {slot: nudged}, relaxed=True)
    return value is not None and value != problem.relaxed


@lru_cache(maxsize=4096)
def _inputs_of(problem: _Problem) -> tuple[tuple[_Input, Fraction], ...]:
    """The inputs the step's value depends on, each with its true value (slot units)."""
    return tuple((spec, x0) for spec, x0 in _settable(problem)
                 if _depends(problem, spec.slot, x0))


_CARD_LAYOUT = frozenset({"hbm_gb", "reserve_gb", "bandwidth_tbs", "tflops"})


@lru_cache(maxsize=4096)
def _settable(problem: _Problem) -> tuple[tuple[_Input, Fraction], ...]:
    """The inputs the step's value may depend on (each with its true value, in slot units),
    in the order of _INPUTS: _inputs_of before the check that it does."""
    if problem.deployment is None:
        return ()
    found = []
    aliases = dict(problem.aliases)
    for spec, x0 in _positive_slots(problem.deployment):
        if spec.slot == problem.quantity:
            continue  # the step asks for this input: a wrong value of it is no slip of it
        if spec.name in problem.modelled or spec.slot in problem.modelled:
            continue
        given = _BY_NAME.get(aliases.get(spec.name, ""))
        # the given's name, words and candidates, set in this input's slot
        found.append((spec if given is None else
                      replace(given, slot=spec.slot, scale=spec.scale), x0))
    return tuple(found)


_POSITIVE: dict[int, tuple[Deployment, tuple[tuple[_Input, Fraction], ...]]] = {}


def _positive_slots(deployment: Deployment) -> tuple[tuple[_Input, Fraction], ...]:
    """Each input whose slot holds a value above 0 in this deployment, with that value, in the
    order of _INPUTS: kept per deployment (every step of a key that shares one asks)."""
    def positive() -> tuple[tuple[_Input, Fraction], ...]:
        values = ((spec, _slot_value(deployment, spec.slot)) for spec in _INPUTS)
        return tuple((spec, x0) for spec, x0 in values if x0 is not None and x0 > 0)

    return by_identity(_POSITIVE, deployment, positive, MAX_SLOT_DEPLOYMENTS)


# ---------------------------------------------------------------------------------------------
# Candidates: what a person plausibly put in an input's place


# Kept by the deployment and the drill's figures a problem has, not by the problem: every
# step of a key that shares them (most share the givens' deployment) has the same candidates.
_CANDIDATES: dict[tuple[int, int, _Input, Fraction, bool, bool | None, bool],
                  tuple[Deployment | None, tuple[Any, ...], tuple[_Candidate, ...]]] = {}
MAX_CANDIDATE_LISTS = 16384


def _candidates(problem: _Problem, spec: _Input, true: Fraction, strong_only: bool = False
                ) -> tuple[_Candidate, ...]:
    """_candidates_of, kept: they read only the problem's deployment and figures."""
    budget = _reads_budget(problem) if spec.name == "weights_gb" else None  # _structural
    key = (id(problem.deployment), id(problem.figures), spec, true, strong_only, budget,
           _counts_flops(problem))
    entry = _CANDIDATES.get(key)
    if entry is not None and entry[0] is problem.deployment and entry[1] is problem.figures:
        return entry[2]
    # By what they read: a step's own setting (another context, a batch) leaves most inputs'
    # candidates as the givens' deployment has them.
    same = _reads_of_candidates(problem, spec, true, strong_only)
    found = _CANDIDATES_BY_READS.get(same)
    if found is None:
        found = _candidates_of(problem, spec, true, strong_only)
        if len(_CANDIDATES_BY_READS) >= MAX_CANDIDATE_LISTS:
            _CANDIDATES_BY_READS.clear()
        _CANDIDATES_BY_READS[same] = found
    if len(_CANDIDATES) >= MAX_CANDIDATE_LISTS:
        _CANDIDATES.clear()
    _CANDIDATES[key] = (problem.deployment, problem.figures, found)
    return found


_CANDIDATES_BY_READS: dict[tuple[Any, ...], tuple[_Candidate, ...]] = {}
# The deployment's fields _candidates_of reads (_possible, _structural, _world_figures).
_CANDIDATE_FIELDS = ("heads", "kv_heads", "attention", "gpus", "utilization", "weights_dtype",
                     "kv_dtype", "kv_bytes_override", "params", "active_params")


def _reads_of_candidates(problem: _Problem, spec: _Input, true: Fraction, strong_only: bool
                         ) -> tuple[Any, ...]:
    """Everything _candidates_of reads, each value with its type: two problems that agree on
    it have the same candidates."""
    d = problem.deployment
    assert d is not None
    fields = tuple((type(v), v) for v in (getattr(d, name) for name in _CANDIDATE_FIELDS))
    budget = _reads_budget(problem) if spec.name == "weights_gb" else None  # _structural
    return (spec, type(true), true, strong_only, fields, budget,
            tuple(_figures_of(problem.figures, spec.name, spec.slot)), _counts_flops(problem))


def _counts_flops(problem: _Problem) -> bool:
    """Whether the step counts FLOPs: a parameter halved is then a multiply-add counted once,
    not an 8-bit copy (so the candidates' reasons differ, as their cache keys must)."""
    return "flop" in problem.quantity


def _candidates_of(problem: _Problem, spec: _Input, true: Fraction, strong_only: bool = False
                   ) -> tuple[_Candidate, ...]:
    """Plausible values of an input (in the unit it is shown in), strongest first, each once;
    the true value is left out. `strong_only`: only the classic slips and the drill's own values
    (tiers CLASSIC and OWN), as the full list has them: the later kinds are all weaker, so
    they can neither add nor displace one of these, and are not gathered at all."""
    found: dict[Fraction, _Candidate] = {}
    shown = _shown(true, spec)
    d = problem.deployment
    assert d is not None

    def add(value: Fraction, why: str, tier: int, typed: bool = False,
            rare: bool = False) -> None:
        if value <= 0 or value == true or (spec.whole and value.denominator != 1) \
                or _shown(value, spec) == shown:  # 137.95 GB is no slip for 138 GB
            return
        # A typo is what the person typed, not a shape some model has: 126 for head_dim 128
        # need not be a multiple of 16, nor 3 KV heads divide the query heads.
        if not typed and not _possible(problem, spec.name, value):
            return
        if value in found and (found[value].tier, found[value].rare) <= (tier, rare):
            return
        found[value] = _Candidate(value, why, tier, rare)

    figures = _world_figures(problem, spec)
    world_why, by_value = _figure_index(figures)

    def common(value: Fraction) -> bool:
        """Whether one of the world's figures of this value is a common one."""
        return any(_common(spec, f, true) for f in by_value.get(value, ()))

    # an input a step sets from another given: the slot's own values (the givens' context
    # for the prompt it stands for) are as likely
    for _, value, why, tier, variant in _figures_of(problem.figures, spec.name, spec.slot):
        # a variant's or another question's figure is better named by what has it ("an
        # H200's"); the givens' own is this drill's (DeepSeek-V3's head_dim of 128 is not
        # Llama-3.1-8B's, though they share the number)
        generic = "another variant" in why or "another question's value" in why
        add(value, world_why.get(value, why) if generic else why, tier,
            rare=variant and not common(value))
    _structural(problem, spec, true, add)
    if strong_only:
        return tuple(sorted((c for c in found.values() if c.tier <= OWN),
                            key=lambda c: (c.tier, c.rare, abs(math.log(c.value / true))))
                     [:MAX_CANDIDATES])
    model_field = spec.family == "shape" or spec.name in ("vocab", "state_elements")
    card = world.card_of(spec.name, true)
    reported = world.card_of(spec.name, true, reported=True) if spec.name == "hbm_gb" else ""
    for figure in figures:
        if 1 / FAR <= figure.value / true <= FAR or figure.card == "self":
            # Another model's heads or head_dim, or another card's driver-reported memory or
            # sparse TFLOP/s, are weaker slips than its layer count or its datasheet figure.
            strong = (not model_field or spec.name in _WORLD_FIELDS) and \
                (not figure.alternate or figure.card == card) and \
                (spec.name not in _SIZES or figure.card == "self"
                 or abs(math.log(figure.value / true)) <= math.log(SAME_SIZE))
            why = figure.why
            if reported and figure.card == reported and not figure.alternate:
                why = "this card's datasheet figure; the engine reads what its driver reports"
            elif figure.card and figure.card == problem.card and not figure.alternate:
                # the drill's own card, whose figure here is what was measured or reported
                why = "this card's datasheet figure, not the one the drill gives"
            add(figure.value, why, WORLD if strong else SHAPES,
                rare=not common(figure.value))
    for factor, why in ((Fraction(2), "doubled"), (Fraction(1, 2), "halved")):
        # A setting doubled or halved is a slip; a model's shape doubled is one only by chance.
        # Half the parameters at 2 bytes are the bytes of all of them at 1 (an 8-bit copy).
        # (only where the step counts bytes: FLOPs are two a parameter whatever its dtype)
        if factor < 1 and spec.name in ("params", "draft_params", "active_params"):
            why = ("halved, or one FLOP counted a parameter where a multiply-add is two"
                   if _counts_flops(problem) else
                   "halved, or all of them at 1 byte each: an 8-bit copy")
        add(true * factor, f"{shown} {why}", SHAPES if spec.family == "shape" else WORLD)
    if spec.family == "tokens":
        add(true * Fraction(1000, 1024), f"{shown} with 'k' read as 1,000", WORLD)
        add(true * Fraction(1024, 1000), f"{shown} with 'k' read as 1,024", WORLD)
    if not spec.whole or spec.family in ("tokens", "gb"):
        for digits in (1, 2):
            add(_round_sig(true, digits), f"{shown} rounded", DERIVED)
    if spec.family == "gb":
        add(true * Fraction(GIB, GB), f"{shown} read as GiB", DERIVED)
        add(true * Fraction(GB, GIB), f"a GiB figure for {shown}", DERIVED)
    if spec.whole and spec.family not in ("batch", "gpus") and true > 0:
        typo_of = f"a typo for {format_number(true)}"
        for typo in _typos(int(true)):
            # A token count is copied from the question: its digits get swapped or dropped,
            # not replaced (4,096 as 7,096 is no slip anyone makes copying).
            kind = _key_slip(int(true), typo)
            if spec.family != "tokens" or kind == "keys":
                add(Fraction(typo), typo_of, KEYS if kind == "keys" else TYPO, typed=True)
    # Within a tier, the values nearest the true one first: an H200's memory is a likelier
    # slip for an H100's than an L4's, a 2 GB headroom for 4 GB likelier than 8 for 1.
    ordered = sorted(found.values(),
                     key=lambda c: (c.tier, c.rare, abs(math.log(c.value / true))))
    return tuple(ordered[:MAX_CANDIDATES])


# The cards most questions and most people name; another's figure is a rarer slip.
_COMMON_CARDS = frozenset({"h100", "h100-pcie", "h200", "a100-80gb", "a100-40gb", "b200", "mi300x",
                           "l40s", "l4"})
_COMMON_SETTINGS = {"utilization": frozenset({Fraction(n, 100) for n in (80, 85, 90, 95)}),
                    "reserve_gb": frozenset({Fraction(n) for n in (1, 2, 4, 8)})}
NEAR_POWERS = 4  # a power of two (or its decimal neighbour) this far from the true value


def _common(spec: _Input, figure: world.Figure, true: Fraction) -> bool:
    """Whether a figure of the world is one people reach for in this input's place: a common
    card's datasheet figure, a usual setting, a power of two near the true value."""
    if figure.card:
        return figure.card in _COMMON_CARDS or figure.card == "self"
    if spec.name == "weights_gb":
        return False  # another model's weights: this model's at another dtype are "self"
    if spec.name in _COMMON_SETTINGS:
        return figure.value in _COMMON_SETTINGS[spec.name]
    if spec.family in ("tokens", "batch") and spec.name != "block_size":
        return 1 / NEAR_POWERS <= figure.value / true <= NEAR_POWERS
    return True


Own = tuple[str, Fraction, str, int, bool]
_BY_INPUT: dict[int, tuple[tuple[Own, ...], dict[str, list[tuple[int, Own]]]]] = {}


def _figures_of(figures: tuple[Own, ...], name: str, slot: str) -> list[Own]:
    """The drill's own figures of an input (those named as it or as its slot), in order:
    from an index of the figures by name, kept with them."""
    def by_name() -> dict[str, list[tuple[int, Own]]]:
        made: dict[str, list[tuple[int, Own]]] = {}
        for position, figure in enumerate(figures):
            made.setdefault(figure[0], []).append((position, figure))
        return made

    index = by_identity(_BY_INPUT, figures, by_name, MAX_INDEXES)
    if name == slot:
        return [figure for _, figure in index.get(name, ())]
    return [figure for _, figure in sorted([*index.get(name, ()), *index.get(slot, ())])]


_INDEXES: dict[int, tuple[tuple[world.Figure, ...], tuple[
    dict[Fraction, str], dict[Fraction, tuple[world.Figure, ...]]]]] = {}
MAX_INDEXES = 1024


def _figure_index(figures: tuple[world.Figure, ...]
                  ) -> tuple[dict[Fraction, str], dict[Fraction, tuple[world.Figure, ...]]]:
    """The reason the world gives for each value (the last figure of it, as a dict built in
    order keeps), and the figures of each value; kept with the tuple (the world's, or the
    weights' of one model and dtype, are made once)."""
    def index() -> tuple[dict[Fraction, str], dict[Fraction, tuple[world.Figure, ...]]]:
        grouped: dict[Fraction, list[world.Figure]] = {}
        for figure in figures:
            grouped.setdefault(figure.value, []).append(figure)
        return ({f.value: f.why for f in figures},
                {value: tuple(group) for value, group in grouped.items()})

    return by_identity(_INDEXES, figures, index, MAX_INDEXES)


def _world_figures(problem: _Problem, spec: _Input) -> tuple[world.Figure, ...]:
    """What this input takes in the world; weights are another model's parameters at this
    drill's bytes per parameter, or this model's at another dtype's."""
    if spec.name != "weights_gb":
        return world.figures(spec.name)
    d = problem.deployment
    assert d is not None
    return _weight_figures(d.weight_bytes_per_param, d.params, d.active_params)


@lru_cache(maxsize=256, typed=True)
def _weight_figures(per_param: Fraction, params: Fraction | int | None,
                    active_params: Fraction | int | None) -> tuple[world.Figure, ...]:
    """The weights' figures of _world_figures: all a model's variants with one parameter count
    and dtype share them."""
    found = list(world.figures("weights_gb"))
    for figure in world.figures("params"):
        found.append(world.Figure(figure.value * per_param / GB,
                                  f"{figure.why} parameters at {format_number(per_param)} B"))
    if params is not None:
        for value, why in world.dtype_bytes():
            found.append(world.Figure(params * value / GB, f"the weights at {why}",
                                      "self"))
    if active_params is not None and active_params != params:
        # An MoE's weights from its active parameters (37B of DeepSeek-V3's 671B).
        found.append(world.Figure(active_params * per_param / GB,
                                  "the active parameters' weights, not all the experts'",
                                  "self"))
    return tuple(found)


def _reads_budget(problem: _Problem) -> bool:
    """Whether the step's value is read from the memory budget (the utilisation): a slip in
    what the utilisation means cannot move a figure that never reads it (one token's active
    weights). True when that cannot be told (a ratio of steps)."""
    if problem.parts or problem.deployment is None:
        return True
    reads = relaxed_reads(problem.deployment, problem.quantity, dict(problem.pins))
    return reads is None or "utilization" in reads


def _structural(problem: _Problem, spec: _Input, true: Fraction,
                add: Callable[..., None]) -> None:
    """The classic slips of one input: the parallelism left out or applied twice, the reserve
    once per node, the utilisation applied after the weights, a dtype's bytes."""
    d = problem.deployment
    assert d is not None
    if spec.name == "gpus":
        add(Fraction(1), "one GPU: the parallelism left out", CLASSIC)
        add(true * true, "the TP degree applied twice", CLASSIC)
        add(Fraction(8), "a whole 8-GPU node", DERIVED)
    elif spec.name == "reserve_gb" and d.gpus > 1:
        add(true / d.gpus, "the reserve counted once per node instead of per GPU", CLASSIC)
        add(true * d.gpus, "the reserve multiplied by the GPUs twice", DERIVED)
    elif spec.name == "weights_gb" and d.utilization != 1 and _reads_budget(problem):
        # vLLM's gpu_memory_utilization is a share of the whole card, weights included;
        # TensorRT-LLM's fraction is of the memory left after the weights load (source:
        # shared/reference/serving-engines.md, from both engines' docs and source).
        add(true * d.utilization, "the utilisation applied to the memory left after the "
            "weights, TensorRT-LLM's meaning of the fraction", CLASSIC)
    elif spec.name == "utilization":
        add(1 - true, "the headroom taken for the utilisation", DERIVED)
    elif spec.name == "kv_bytes_per_element":
        for figure in world.figures(spec.name):
            add(figure.value, figure.why, CLASSIC)
    elif spec.name == "kv_heads":
        add(Fraction(1), "one KV head (MQA)", SHAPES)
    elif spec.name == "window" and d.context and d.context > true:
        # the window ignored: every token of the context held (expert pass 47, N5)
        add(Fraction(d.context), "the whole context: no window at all", CLASSIC)
    elif spec.name == "batch":
        add(true + 1, "one sequence more", DERIVED)
        if true > 1:
            add(true - 1, "one sequence fewer", DERIVED)


# The inputs _structural gives a classic slip (or, for the utilisation, a derived one): the
# only strong candidates besides the drill's own figures.
_CLASSIC_INPUTS = frozenset({"gpus", "reserve_gb", "weights_gb", "utilization",
                             "kv_bytes_per_element", "kv_heads", "batch"})


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


def _possible(problem: _Problem, name: str, value: Fraction) -> bool:
    """Whether a model or a deployment could have this value at all: KV heads divide the
    query heads, head_dim comes in multiples of 16, GPUs split the KV heads evenly, a rate
    stays below 1."""
    d = problem.deployment
    assert d is not None
    if name == "kv_heads":
        return (d.heads / value).denominator == 1
    if name == "head_dim":
        return (value / 16).denominator == 1
    if name == "gpus" and d.attention != "mla":
        return (d.kv_heads / value).denominator == 1 or (value / d.kv_heads).denominator == 1
    if name in ("utilization", "acceptance_rate"):
        return value < 1 or (name == "utilization" and value == 1)
    return True


def _shown(value: Fraction, spec: _Input) -> str:
    return _shown_in(value, spec.unit)


@lru_cache(maxsize=65536, typed=True)
def _shown_in(value: Fraction, unit: str) -> str:
    number = format_number(value, sig=4)
    return f"{number} {unit}" if unit and unit != "sequences" else number


# ---------------------------------------------------------------------------------------------
# Solving backwards


@record
class _Curve:
    """The step's value (floors left out) as a function of one input, every other input
    fixed: f0 × (x ÷ x0)^power, or a Möbius map (ax + b) ÷ (cx + d) through three points."""

    x0: Fraction
    f0: Fraction
    power: int | None
    points: tuple[tuple[Fraction, Fraction], ...] = ()

    def forward(self, x: Fraction) -> Fraction | None:
        if self.power is not None:
            return self.f0 * (x / self.x0) ** self.power
        (x1, y1), (x2, y2), (x3, y3) = self.points
        if x == x1:
            return y1
        try:
            k = _cross_ratio(x1, x2, x3, x)
            return (y2 * (y3 - y1) - k * y1 * (y3 - y2)) / ((y3 - y1) - k * (y3 - y2))
        except ZeroDivisionError:
            return None

    def approximate(self, x: float) -> float | None:
        """`forward` in floats: what chance needs, for a few hundred candidates at once."""
        if self.power is not None:
            return float(self.f0) * (x / float(self.x0)) ** self.power
        (x1, y1), (x2, y2), (x3, y3) = ((float(a), float(b)) for a, b in self.points)
        try:
            k = (x3 - x1) * (x - x2) / ((x3 - x2) * (x - x1))
            return (y2 * (y3 - y1) - k * y1 * (y3 - y2)) / ((y3 - y1) - k * (y3 - y2))
        except ZeroDivisionError:
            return y1 if x == x1 else None

    def inverse(self, y: Fraction) -> float | None:
        if self.power is not None:
            if self.f0 == 0 or y / self.f0 <= 0:
                return None
            root: float = float(y / self.f0) ** (1 / self.power)
            return float(self.x0) * root
        (x1, y1), (x2, y2), (x3, y3) = self.points
        try:
            k = _cross_ratio(y1, y2, y3, y)
            return float((x2 * (x3 - x1) - k * x1 * (x3 - x2)) / ((x3 - x1) - k * (x3 - x2)))
        except ZeroDivisionError:
            return None


@lru_cache(maxsize=8192)
def _curve(problem: _Problem, slot: str, x0: Fraction) -> _Curve | None:
    """Exact tests at a few points: f(λx) = λ^p f(x) (a monomial), or f a ratio of two affine
    functions (ax + b) ÷ (cx + d), which covers the affine (a budget against the weights) and
    a rate over an affine cost (tokens/s against the batch). None when neither holds."""
    def f(x: Fraction) -> Fraction | None:
        return _evaluate(problem, {slot: x}, relaxed=True)

    f0 = problem.relaxed
    if x0 > 0 and f0 != 0:
        lams = (Fraction(9, 8), Fraction(5, 4))
        ratios = [f(x0 * lam) for lam in lams]
        if all(r is not None for r in ratios):
            for p in (1, -1, 2, -2):
                if all(r == f0 * lam**p for r, lam in zip(ratios, lams, strict=True)):
                    return _Curve(x0, f0, p)
    delta = x0 / 8 if x0 else Fraction(1)
    xs = [x0 - delta, x0, x0 + delta, x0 + 2 * delta]
    ys = [f(x) for x in xs]
    known = [y for y in ys if y is not None]
    if len(known) < 4:
        return None
    try:  # a Möbius map keeps cross-ratios: the fourth point checks
        if _cross_ratio(*xs) != _cross_ratio(*known):
            return None
    except ZeroDivisionError:
        return None
    return _Curve(x0, f0, None, tuple(zip(xs[:3], known[:3], strict=True)))


def _closed_form(problem: _Problem, slot: str, x0: Fraction,
                 targets: tuple[Fraction, ...]) -> list[float] | None:
    """The input's values (slot units) that give the targets, in closed form; None when the
    step is neither a power nor a Möbius map of the input."""
    curve = _curve(problem, slot, x0)
    if curve is None:
        return None
    return [x for x in (curve.inverse(t) for t in targets) if x is not None]


def _cross_ratio(a: Fraction, b: Fraction, c: Fraction, d: Fraction) -> Fraction:
    return (c - a) * (d - b) / ((c - b) * (d - a))


def _implied_range(problem: _Problem, spec: _Input, x0: Fraction,
                   targets: tuple[Fraction, Fraction]) -> tuple[float, float] | None:
    """The values of the input (slot units) that give the targets, every other input fixed,
    where the step is a power or a Möbius map of it; None elsewhere (its few candidates are
    then checked forward instead)."""
    roots = _closed_form(problem, spec.slot, x0, targets)
    if not roots:
        return None
    return min(roots), max(roots)


# ---------------------------------------------------------------------------------------------
# Factor slips


@record
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

    def scales(factor: _Factor) -> bool:
        # an input's slip multiplies the answer by its factor only where the answer is in
        # proportion to it: counting K and V once doubles a request rate that a KV byte
        # count divides, it does not halve it
        if factor.input not in _PROPORTIONAL_CHECKED:
            return True
        value = _evaluate(problem, {factor.input: factor.implied}, relaxed=True)
        return value is not None and value == problem.relaxed * factor.factor

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
    return [factor for factor in factors if scales(factor)]


# inputs of the step (not the answer's unit) whose factor slips are checked to scale it
_PROPORTIONAL_CHECKED = frozenset({"kv_factor", "kv_bytes_per_element", "gpus", "utilization"})


@lru_cache(maxsize=4096)
def _factor_sets(problem: _Problem) -> tuple[tuple[_Factor, ...], ...]:
    """Single factor slips, then two at once (never two of one input, nor a product that one
    factor already gives). None (empty) where the step asks for an input itself (a context, a layer
    count): a wrong value of it is just that."""
    if problem.reference == 0 or (problem.deployment is not None and not problem.parts
                                  and problem.quantity not in FORMULAS):
        return ()
    singles = _factors(problem)
    sets: list[tuple[_Factor, ...]] = [(one,) for one in singles]
    for i, one in enumerate(singles):
        for other in singles[i + 1:]:
            product = one.factor * other.factor
            if one.input == other.input or product == 1:
                continue
            if any(product == s.factor for s in singles):
                continue
            sets.append((one, other))
    return tuple(sets)


def _factor_diagnosis(factors: tuple[_Factor, ...]) -> Diagnosis:
    slips = tuple(Slip(f.input, f.implied, f.true, "", f.mistake) for f in factors)
    total = math.prod((f.factor for f in factors), start=Fraction(1))
    how = " and ".join(f.mistake for f in factors)
    phrase = (f"your answer is the reference × {format_number(total, sig=4)}, as if you "
              f"{how}")
    return Diagnosis("factor", slips, phrase)


def _scaled(problem: _Problem, factor: Fraction) -> tuple[Fraction, Fraction]:
    relaxed = problem.relaxed * factor
    exact = Fraction(math.floor(relaxed)) if problem.rounds else problem.reference * factor
    return exact, relaxed


# ---------------------------------------------------------------------------------------------
# What chance would explain: every candidate of the step, strongest first


@record
class _Entry:
    key: tuple[str, Fraction]  # (input name, candidate as shown) or ("×", factor product)
    tier: int
    rank: int  # within its tier: each input's strongest candidates first
    value: float | None  # the step's value with it, floors left out
    later: bool = True  # a rare value, or a tier weaker than the world's


@lru_cache(maxsize=1024)
def _pool(problem: _Problem) -> tuple[_Entry, ...]:
    """Every candidate slip of the step with the value it gives, strongest first."""
    entries: list[_Entry] = []
    for order, (spec, x0) in enumerate(_inputs_of(problem)):
        true = x0 / spec.scale
        curve = _curve(problem, spec.slot, x0)
        ranks: dict[tuple[int, bool], int] = {}
        for candidate in _candidates(problem, spec, true):
            group = (candidate.tier, candidate.rare)
            rank = ranks[group] = ranks.get(group, -1) + 1
            slot_value = candidate.value * spec.scale
            if curve is not None:
                value: float | None = curve.approximate(float(slot_value))
            else:
                exact = _evaluate(problem, {spec.slot: slot_value}, relaxed=True)
                value = None if exact is None else float(exact)
            entries.append(_Entry((spec.name, candidate.value), candidate.tier,
                                  rank * 64 + order, value,
                                  candidate.rare or candidate.tier > WORLD))
    for rank, factors in enumerate(_factor_sets(problem)):
        product = math.prod((f.factor for f in factors), start=Fraction(1))
        tier = DERIVED if len(factors) == 1 else PAIR
        entries.append(_Entry(("×", product), tier, rank * 64 + 63,
                              float(problem.relaxed * product)))
    # The common values of the strong tiers first, then the rare ones and the weaker tiers.
    entries.sort(key=lambda e: (e.later, e.tier, e.rank))
    return tuple(entries)  # the order chance admits them in


@lru_cache(maxsize=4096)
def _admitted(problem: _Problem, figures: int, whole: bool) -> frozenset[tuple[str, Fraction]]:
    pool = _pool(problem)
    scale = float(problem.scale)  # figures are counted in the unit answers are typed in
    # A digit typed wrong, another model's heads or head_dim: evidence only in an answer typed
    # to more figures than people usually type (a random three-figure answer is as likely to
    # be one of the many typos as the typo is).
    weak = (SHAPES, TYPO) if figures < TYPO_FIGURES else ()
    chosen = chance.admitted([None if e.value is None or e.tier in weak else e.value / scale
                              for e in pool],
                             figures, whole, float(problem.reference / problem.scale),
                             float(problem.tolerance),
                             classes=[(e.later, e.tier) for e in pool])
    return frozenset(pool[i].key for i in chosen)


# ---------------------------------------------------------------------------------------------
# The diagnosis


@record
class _Found:
    tier: int
    closeness: float  # how far from the answer, in windows: 0 is exact
    order: int
    key: tuple[str, Fraction]
    diagnosis: Diagnosis
    rare: bool = False  # a value people seldom reach for (a rare card, a setting few use)


@lru_cache(maxsize=1024)
def _diagnose(problem: _Problem, value: Fraction, resolution: Fraction | None,
              exactly: bool = False, tie: bool = False,
              known: frozenset[str] = frozenset()) -> Diagnosis | None:
    """`exactly`: the number taken as typed to the last digit (a whole number's trailing
    zeros meant: 320 KiB is what 80 layers give, not 315 to 325 KiB), so a reading must give
    it exactly, and only the strong readings count (round numbers are what random answers
    typed to two figures are). `tie`: a listed mistake gives this very number, so it is named
    whatever chance says; a strong reading that gives it just as exactly is said beside it."""
    whole = problem.rounds and value.denominator == 1 and (resolution or 0) <= 1
    # A number of one significant figure (100, 0.5, 3,000) is a round guess as often as a
    # slip: it is read exactly, never within a rounding window (a random "100 KiB" is not
    # "96 KiB, as if the model had 24 layers").
    round_guess = chance.typed_figures(value, resolution, problem.scale) <= 1
    exactly = exactly or round_guess
    if resolution is None and not whole:
        # A whole number in the step's unit with no resolution read ("3", "7", "2 GB") says
        # as much as its digits: one digit is no evidence of anything.
        shown = value / problem.scale
        if shown.denominator == 1:
            resolution = problem.scale
    # How much the answer says: the share of its value its last typed digit is worth.
    grain = 1 / value if whole else (resolution or Fraction(0)) / value
    if grain > (WHOLE_NO_DIAGNOSIS_GRAIN if whole else NO_DIAGNOSIS_GRAIN):
        return None
    # What chance allows is judged for answers typed to as many figures; a number with no
    # figures to count (an expression's exact result) as one typed to three.
    if whole or resolution is None:
        figures = chance.figures_of(value, Fraction(1)) if whole else 3
    else:
        figures = chance.figures_of(value, resolution)
    typed = max((resolution or Fraction(0)) / 2, MIN_WINDOW * value)
    window = MIN_WINDOW * value if exactly else max(typed, chance.ROUNDING * value)

    def closeness(exact: Fraction | None, relaxed: Fraction | None) -> float | None:
        """How far the candidate's value lies from the answer, in windows; None: no match."""
        if whole:
            if exact == value:
                return 0.0
            if problem.rounds and relaxed is not None and abs(relaxed - value) <= Fraction(1, 2):
                return float(abs(relaxed - value)) + 0.5
            # A large count worked out by hand with rounded figures (156,272 for 156,283)
            slack = value * chance.ROUNDING
            if exact is not None and slack > 1 and not round_guess \
                    and abs(exact - value) <= slack:
                return float(abs(exact - value) / slack)
            return None
        gaps = [abs(v - value) for v in (exact, relaxed) if v is not None]
        gap = min(gaps, default=None)
        return None if gap is None or gap > window else float(gap / window)

    if closeness(problem.reference, problem.relaxed) is not None:
        return None  # the formula unchanged gives it (unrounded, say): no slip says more
    found = _factor_slips(problem, closeness)
    if whole:
        # Two unrelated factors at once fit a floored count by coincidence more often than
        # by a slip (a random 37 for 4 sessions is "× 8.59: bits for bytes and GB as GiB"):
        # a count is told of one factor slip, never of a pair.
        found = [f for f in found if f.tier != PAIR or f.diagnosis.kind != "factor"]
    if problem.deployment is not None:
        found += _input_slips(problem, value, window, whole, closeness,
                              None if exactly else typed)
    if not found:
        return None
    strongest = WORLD if exactly else PAIR
    found = [f for f in found if f.tier <= strongest and f.key[0] not in known]
    if not found:
        return None
    # What chance admits (every candidate of the step evaluated, most of a diagnosis's
    # cost) is worked out only for an answer some reading gives.
    admitted = _admitted(problem, figures, whole)
    chosen = [f for f in found if f.key in admitted or f.key[0] == "clean"
              or (tie and f.tier <= WORLD and f.closeness <= EXACT)]
    if not chosen:
        return None
    # An exact reading before one the typed digits only allow (54 GB is a 2 GB headroom
    # before it is the 53.6 GB of another setting), then the stronger reason.
    def order(f: _Found) -> tuple[bool, int, bool, bool, float, int]:
        # Readings that give the number as typed, each a strong one (a classic slip, the
        # drill's own value, the world's common figures): what a deployment sets first (the
        # context, the batch, the card, the settings), then the dtype and the model's shape.
        exact = f.closeness <= EXACT
        tier = max(f.tier, WORLD) if exact else f.tier
        return (not exact, tier, f.rare, f.diagnosis.kind == "factor",
                0 if exact else round(f.closeness, 2), f.order)

    chosen.sort(key=order)
    # A strong, common reading chance did not admit, giving the answer as exactly as the one
    # it did, is said with it: the answer is explained either way, so saying it costs nothing
    # (and, what a deployment sets first, it may be said first).
    if chosen[0].closeness <= EXACT:
        chosen = sorted([*chosen, *(f for f in found if f not in chosen and not f.rare
                                    and f.tier <= WORLD and f.closeness <= EXACT)], key=order)
    return _with_ties(chosen)


def _with_ties(found: list[_Found]) -> Diagnosis:
    """The first reading, with the other reading that gives the answer as well as it does (as
    exactly, or as strong as a slip of the keys and as close), one per input; `crowded` when
    more than two do (a number many slips give is explained by none of them)."""
    best = found[0]
    seen = {best.diagnosis.slip.input}
    others: list[Slip] = []
    for other in found[1:]:
        slip = other.diagnosis.slip
        exact_tie = other.closeness <= EXACT and best.closeness <= EXACT \
            and other.tier <= DERIVED
        if other.diagnosis.kind != "input" or slip.input in seen or (not exact_tie and (
                other.tier > max(best.tier, KEYS)
                or other.closeness > best.closeness + TIE_CLOSENESS)):
            continue
        seen.add(slip.input)
        others.append(slip)
        if len(others) == MAX_READINGS:
            # More readings give the number than can be told apart: none of them is said.
            return replace(best.diagnosis, crowded=True)
    if not others:
        return best.diagnosis
    first = best.diagnosis
    return Diagnosis(first.kind, first.slips, first.phrase, tuple(others))


def _also(others: Sequence[Slip]) -> str:
    """The other reading (a tie), in words, after the first."""
    return "; ".join(f"or, as likely, with {s.change} ({s.why})" for s in others)


def _value_text(slip: Slip) -> str:
    number = format_number(slip.implied, sig=4)
    return f"{number} {slip.unit}" if slip.unit and slip.unit != "sequences" else number


def _true_text(slip: Slip) -> str:
    number = format_number(slip.true, sig=4)
    return f"{number} {slip.unit}" if slip.unit and slip.unit != "sequences" else number


Closeness = Callable[[Fraction | None, Fraction | None], float | None]


def _factor_slips(problem: _Problem, closeness: Closeness) -> list[_Found]:
    found: list[_Found] = []
    for order, factors in enumerate(_factor_sets(problem)):
        product = math.prod((f.factor for f in factors), start=Fraction(1))
        near = closeness(*_scaled(problem, product))
        if near is None:
            continue
        tier = DERIVED if len(factors) == 1 else PAIR
        found.append(_Found(tier, near, order, ("×", product), _factor_diagnosis(factors)))
    return found


def _input_slips(problem: _Problem, value: Fraction, window: Fraction, whole: bool,
                 closeness: Closeness, typed: Fraction | None) -> list[_Found]:
    """Every candidate of every input that gives the answer; where none does, a clean value
    the typed digits (`typed`: half their resolution; None: no clean values) pin down."""
    found: list[_Found] = []
    # A whole count is a floor, sometimes of a share per GPU times the GPUs (DP attention's
    # 8 × 23 = 184 from 8 × 23.9): the value before the floors lies up to a share above it.
    targets = (value - 1, value * (1 + FLOOR_SHARE) + 1) if whole else \
        (value - window, value + window)
    # A ratio's two steps may each floor: every candidate is checked forward.
    follows = _batch_follows(problem) or bool(problem.parts)
    for order, (spec, x0) in enumerate(_inputs_of(problem)):
        true = x0 / spec.scale
        candidates = _candidates(problem, spec, true)
        # Where the batch follows an input through a floor, or the step is no closed form
        # of it (an MoE's expert share, a prefill's attention), every candidate is checked
        # forward: a few dozen exact evaluations, far cheaper than solving.
        span = None if follows else _implied_range(problem, spec, x0, targets)
        closed = span is not None
        low, high = (0.0, math.inf) if span is None else \
            (span[0] * float(1 - SLACK), span[1] * float(1 + SLACK))
        # With the batch following, the value with the batch pinned is still within a few
        # times the exact one (a batch of 4 falls to 1 at most): a cheap first sieve.
        pinned = _curve(problem, spec.slot, x0) if follows else None
        matched = False
        for candidate in candidates:
            slot_value = candidate.value * spec.scale
            if not low <= float(slot_value) <= high:
                continue
            guess = None if pinned is None else pinned.approximate(float(slot_value))
            if guess is not None and not float(value) / FOLLOW_SIEVE <= guess \
                    <= float(value) * FOLLOW_SIEVE:
                continue
            overrides = {spec.slot: slot_value}
            exact = _evaluate(problem, overrides, relaxed=False)
            near = closeness(exact, None)
            if near is None:  # the floors left out, only when the exact value misses
                near = closeness(exact, _evaluate(problem, overrides, relaxed=True))
            if near is None:
                continue
            matched = True
            # Another model's shape, no model the drill names: which model has that figure is
            # a story the answer does not tell (a random 96 KiB is no "GPT-OSS-20B's" layers)
            why = "another model's" if spec.family == "shape" and \
                candidate.tier in (WORLD, SHAPES) and candidate.why.endswith("'s") \
                else candidate.why
            slip = Slip(spec.name, candidate.value, true, spec.unit, why, exact=near <= EXACT)
            # Of two typos that give the same answer, the one a model could have (3 KV heads
            # do not divide 64 query heads; 36 layers could be) is the likelier.
            rank = order if _possible(problem, spec.name, candidate.value) else 100 + order
            found.append(_Found(candidate.tier, near, rank, (spec.name, candidate.value),
                                Diagnosis("input", (slip,), _phrase(spec, slip)),
                                candidate.rare))
        if not matched and not whole and closed and typed is not None \
                and typed > MIN_WINDOW * value:
            clean = _clean_slip(problem, spec, x0, value, typed)
            if clean is not None:
                found.append(_Found(TYPO, 0.5, 200 + order, ("clean", clean.slip.implied),
                                    clean))
    return found


def _phrase(spec: _Input, slip: Slip) -> str:
    words = spec.as_if.format(_value_text(slip))
    matches = "is" if slip.exact else "matches, to the figures you typed,"
    # "(another acceptance rate)", "(another model's)" say nothing the words do not
    why = "" if slip.why.startswith("another ") else f" ({slip.why})"
    return (f"your answer {matches} what the formula gives with {slip.change}: "
            f"as if {words}{why}")


def _batch_follows(problem: _Problem) -> bool:
    """Whether the step runs at the maximum concurrency (a full batch's tokens/s): the batch
    then follows an input through a floor that the inversion, batch pinned, cannot see, so
    every candidate is checked forward instead (a few dozen exact evaluations, cheap)."""
    assert problem.deployment is not None
    batch = dict(problem.pins).get("batch_size")
    return problem.deployment.batch is None and batch is not None and \
        _depends(problem, "batch_size", batch)


def _clean_slip(problem: _Problem, spec: _Input, x0: Fraction, value: Fraction,
                window: Fraction) -> Diagnosis | None:
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
    exact = _evaluate(problem, overrides, relaxed=False)
    relaxed = _evaluate(problem, overrides, relaxed=True)
    if not any(v is not None and abs(v - value) <= window for v in (exact, relaxed)):
        return None
    true = x0 / spec.scale
    why = "a whole number" if spec.whole else "a round figure"
    slip = Slip(spec.name, clean, true, spec.unit, why)
    return Diagnosis("input", (slip,), _phrase(spec, slip))


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


# ---------------------------------------------------------------------------------------------
# Beside a listed mistake: the readings that tie with it


def _beside_listed(problem: _Problem, found: Diagnosis, named: tuple[str, ...], tie: bool
                   ) -> Diagnosis | None:
    """The input readings the mistakes already named do not say: fp32 KV is the known
    `fp32-kv`, not a second reading, but a doubled context is. `tie`: one of them gives the
    very number typed."""
    if found.crowded:
        return found  # many slips give it: whatever the mistake says, it is not alone
    said = _listed_changes(problem, named)
    readings = [s for s in (found.slip, *found.others)
                if found.kind == "input" and (s.input, s.implied) not in said]
    if not readings:
        return None
    first, *others = readings
    spec = _BY_NAME[first.input]
    return Diagnosis("input", (first,), _phrase(spec, first), tuple(others), tie=tie)


def _listed_changes(problem: _Problem, explained: tuple[str, ...]
                    ) -> set[tuple[str, Fraction]]:
    """(input, value) that each listed mistake sets: forgot-reserve is reserve_gb = 0."""
    d = problem.deployment
    said: set[tuple[str, Fraction]] = set()
    if d is None:
        return said
    for path_id in explained:
        path = WRONG_PATHS.get(path_id)
        changed = None if path is None else path.change(d)
        if changed is None:
            continue
        for spec in _INPUTS:
            if spec.slot != spec.name:
                continue
            before, after = getattr(d, spec.name), getattr(changed, spec.name)
            if before != after and after is not None and not isinstance(after, bool | str):
                said.add((spec.name, Fraction(after)))
    return said


# ---------------------------------------------------------------------------------------------
# For the interviewer's key: the values that betray each slip


def slip_values(key: AnswerKey, step_id: str, limit: int = 4,
                tolerance: Fraction = Fraction(0)) -> list[tuple[Fraction, str]]:
    """(value, what it betrays) for a numeric step: the classic slips and the drill's own
    values of each input, evaluated forward, strongest first, leaving out the reference, the
    values within `tolerance` of it (they are marked right) and the listed wrong values."""
    step = key.drill.step(step_id)
    if step.answer is None:
        return []
    problem = _problem_of(key, step_id, None)
    reference = key.reference(step_id)
    # Every input's strong candidates, strongest first, each input in its place among the
    # inputs: whether the step depends on the input is asked only of those reached (a
    # stable sort, then a filter, keeps the order of the filter, then the sort).
    strongest: list[tuple[int, int, _Input, Fraction, _Candidate]] = []
    own = {name for name, *_ in problem.figures}
    # A name the step's value is not read from cannot move it (_depends says so without an
    # evaluation): its candidates are not worked out at all.
    reads = None if problem.parts or problem.deployment is None else \
        relaxed_reads(problem.deployment, problem.quantity, dict(problem.pins))
    for order, (spec, x0) in enumerate(_settable(problem)):
        if spec.name not in _CLASSIC_INPUTS and spec.name not in own and spec.slot not in own:
            continue  # no classic slip, no value of the drill's own: no strong candidate
        if reads is not None and spec.slot not in reads:
            continue
        # (a value only another variant of the drill gives means nothing to the interviewer
        # reading this variant's key: the candidate never saw it)
        strongest += [(candidate.tier, order, spec, x0, candidate)
                      for candidate in _candidates(problem, spec, x0 / spec.scale, True)
                      if candidate.tier <= OWN and not candidate.why.endswith(_OTHER_VARIANT)
                      # (nor, in a re-targeted key, the drill's own model's figure: a habit a
                      # grade may name, no slip an interviewer needs listed: expert pass 20)
                      and not candidate.why.endswith(_OWN_MODEL)]
    strongest.sort(key=lambda item: item[:2])
    depends: dict[str, bool] = {}
    taken = {reference.value, *(v for _, v in reference.wrong)}
    found: list[tuple[Fraction, str]] = []
    for _, _, spec, x0, candidate in strongest:
        if spec.slot not in depends:
            depends[spec.slot] = _depends(problem, spec.slot, x0)
        if not depends[spec.slot]:
            continue
        value = _evaluate(problem, {spec.slot: candidate.value * spec.scale}, relaxed=False)
        if value is None or value <= 0 or value in taken or \
                abs(value - reference.value) <= tolerance * abs(reference.value):
            continue
        taken.add(value)
        found.append((value, f"{spec.name} = {_shown(candidate.value, spec)} ({candidate.why})"))
        if len(found) == limit:
            break
    return found
