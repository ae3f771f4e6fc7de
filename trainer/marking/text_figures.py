"""Figures stated in a text answer, read with the answer reader and set beside the drill's keys.

"128 KiB per token", "~97 sessions", "34 ms a step": a figure with a unit is read as a numeric
answer is, and compared with every numeric step's reference of the same kind (bytes, tokens,
sequences, time, rates). A figure within 2% of a reference (or the step's tolerance, up to 5%)
states that step's value, and the arithmetic dimension sees it.

A figure nearer one of the drill's givens than to any reference restates that given ("the
20 ms TPOT" beside a step of 19.9 ms) and states no step. A figure that matches no reference
is not called wrong. Measured on 129 right answers written
blind (tests/corpus/blind_text_answers_all.yaml), reading such a figure as a known mistake's
value called 18 right figures wrong (47 GB is the weights per GPU, not the whole model's
halved; 5 tokens is the draft length, not the accepted tokens): a text states many quantities
no step asks for. Wrong figures are claimed by the drill's own `wrong_claims`, whose parts may
hold a figure beside the words that make it a claim.
"""

from __future__ import annotations

import re

from trainer.drills.reference import AnswerKey, dim_of_unit
from trainer.errors import KvdrillError
from trainer.reading.exact import Fraction
from trainer.reading.patterns import lazy
from trainer.reading.reader import parse_answer
from trainer.records import record

MAX_FIGURES = 40  # figures read from one answer; the rest are not looked at
RIGHT_BAND = Fraction(2, 100)
RIGHT_BAND_AT_MOST = Fraction(5, 100)
SAME_VALUE = Fraction(1, 1000)  # references this much apart are one value stated

_FIGURE = lazy(
    r"(?<![\w.,/])(?P<number>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s?"
    r"(?P<unit>[kK]\s?tokens?|KiB|MiB|GiB|TiB|KB|MB|GB|TB|ms|µs|tokens?/s|tok/s|tokens?|"
    r"sessions?|sequences?|seqs?)(?![\w/])")


@record
class Figure:
    shown: str  # as typed
    value: Fraction  # base units
    right_for: tuple[str, ...]  # the steps whose reference it states


def figures_in(key: AnswerKey, text: str) -> tuple[Figure, ...]:
    """Every figure of the text that states a numeric step's value."""
    matches = list(_FIGURE.finditer(text[:8000]))[:MAX_FIGURES]
    if not matches:
        return ()  # (most text answers: no reference or given is worked out for them)
    references = _references(key)
    givens: list[tuple[str, Fraction]] | None = None  # read only when a figure is near a step
    found = []
    for match in matches:
        read = _read(match)
        if read is None:
            continue
        value, dim, half_digit = read
        near = {step_id: min(abs(value - v) / v for v in values)
                for step_id, ref_dim, values, band in references
                if ref_dim == dim
                and any(abs(value - v) <= max(band, half_digit) * v for v in values)}
        if near:
            # one figure states one quantity: the nearest of those it is within reach of
            # ("255 tok/s" is the rate with the KV, 254.8, not the 260 ceiling beside it;
            # expert pass 69), or each of several that share its value
            nearest = min(near.values())
            if givens is None:
                givens = _givens(key)
            if any(given_dim == dim and abs(value - given) / given + SAME_VALUE < nearest
                   for given_dim, given in givens):
                continue  # a given, stated ("the 20 ms TPOT" beside a 19.9 ms step: pass 73)
            right = tuple(step_id for step_id, distance in near.items()
                          if distance <= nearest + SAME_VALUE)
            found.append(Figure(match.group(), value, right))
    return tuple(found)


def _read(match: re.Match[str]) -> tuple[Fraction, str, Fraction] | None:
    try:
        parsed = parse_answer(match.group())
    except KvdrillError:
        return None
    number = match.group("number")
    decimals = len(number.split(".")[1]) if "." in number else 0
    value = Fraction(parsed.quantity.value)
    typed = Fraction(number.replace(",", ""))
    if value <= 0 or typed <= 0:
        return None
    half_digit = Fraction(1, 2 * 10**decimals) / typed  # what the digits claim, relative
    return value, str(parsed.quantity.dim), half_digit


# The givens a text may restate, with the unit each is shown in: a figure nearer one of them
# than any reference restates the situation, it works nothing out.
_GIVEN_UNITS = {"tpot_ms": "ms", "hbm_gb": "GB", "hbm_reported_gb": "GB", "weights_gb": "GB",
                "reserve_gb": "GB", "weights_read_gb": "GB", "fp8_weights_gb": "GB",
                "fp8_checkpoint_gb": "GB", "cpu_kv_gb": "GB", "context": "tokens",
                "output_tokens": "tokens", "long_prompt_tokens": "tokens",
                "prefix_tokens": "tokens", "window": "tokens"}


def _givens(key: AnswerKey) -> list[tuple[str, Fraction]]:
    """(dimension, value in base units) of each given the text may restate."""
    found = []
    shown = key.display_givens()
    for name, unit in _GIVEN_UNITS.items():
        figure = shown.get(name, "")
        if not figure[:1].isdigit():
            continue  # "unknown", "no window": not given as a figure
        try:
            parsed = parse_answer(f"{figure} {unit}")
        except KvdrillError:
            continue
        value = Fraction(parsed.quantity.value)
        if value > 0:
            found.append((str(parsed.quantity.dim), value))
    return found


def _references(key: AnswerKey) -> list[tuple[str, str, tuple[Fraction, ...], Fraction]]:
    found = []
    for step in key.drill.steps:
        if step.kind != "numeric":
            continue
        try:
            reference = key.reference(step.id)
        except KvdrillError:
            continue
        band = min(max(RIGHT_BAND, Fraction(str(step.tolerance))), RIGHT_BAND_AT_MOST)
        found.append((step.id, str(dim_of_unit(reference.unit)),
                      (reference.value, *reference.alternatives), band))
    return found
