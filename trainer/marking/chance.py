"""How often chance alone would explain a wrong answer, and which candidate slips a diagnosis may
name at a given precision without explaining random answers.

Every candidate slip of a step gives one value; a random wrong answer typed to as many
significant figures as the one being diagnosed matches it when it rounds to the same typed
number (a whole count: when it is the value's floor or its rounding). A random wrong answer,
the reference × U(0.3, 3), or near it × U(0.8, 1.25), lands on one of those typed numbers with
a probability that is their share of the range (the answers within the step's tolerance of
the reference, right, left out; a slip named beside a listed mistake counts). The
candidates are taken strongest first, and one is admitted only while the share stays within
the budget in both ranges; the rest are not evidence at that precision. So an answer typed to
two figures is explained only by the few strongest candidates, and one typed to four by almost
any."""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

from trainer.reading.exact import Fraction
from trainer.reading.numbers import significant_figures

WINDOWS = ((0.3, 3.0), (0.8, 1.25))
BUDGET = 0.05  # of the wrong answers in the whole range that chance may explain, at most
NEAR_BUDGET = 0.045  # and of those near the reference, where the likeliest slips land
# Near the reference an answer typed to two figures (54 GB for 52) matches one candidate in a
# few dozen neighbours: the drill's strongest readings there may explain this share of such
# answers, which are themselves a small share (a number typed to three figures ends in 0 one
# time in ten).
COARSE_BUDGETS = (0.05, 0.14)  # two figures or fewer: the whole range, near the reference
WHOLE_BUDGETS = (0.04, 0.04)  # a whole count typed whole ("about 48"): the same two ranges
# A value worked out with rounded intermediate figures lands this close (relative) to the
# exact one: no answer's digits are held to less.
ROUNDING = Fraction(1, 10000)


def figures_of(value: Fraction, resolution: Fraction) -> int:
    """How many significant figures a number typed to `resolution` has (88 to 1: 2)."""
    return max(1, math.floor(math.log10(value / resolution) + 1e-9) + 1)


def typed_figures(value: Fraction, resolution: Fraction | None, scale: Fraction) -> int:
    """The significant figures of a number as typed in a unit worth `scale`: its decimals
    count ("8.00 KiB": 3), a whole number's trailing zeros do not ("100 KiB": 1)."""
    if resolution is not None and 0 < resolution < scale:
        return figures_of(abs(value), resolution)
    return significant_figures(value / scale)


def reach(value: float, figures: int, whole: bool) -> tuple[float, float]:
    """The answers typed to `figures` significant figures that match a candidate giving
    `value`: those it rounds to (with the rounding slack); a whole count (typed whole, to as
    many digits as it has), its floor or its rounding."""
    if value <= 0:
        return value, value
    if whole:  # counts are typed whole, however many digits they take
        slack = value * float(ROUNDING)
        return value - max(1.0, slack), value + max(0.5, slack)
    magnitude = math.floor(math.log10(value))
    place = 10.0 ** (magnitude - figures + 1)
    half = max(place / 2, value * float(ROUNDING))
    high = value + half
    if value + 5 * place >= 10.0 ** (magnitude + 1):
        high = value + 5 * place  # just below a power of ten: the next decade's coarser digits
    return value - half, high


def admitted(values: Sequence[float | None], figures: int, whole: bool, reference: float,
             tolerance: float, budget: float = BUDGET,
             classes: Sequence[tuple[int, ...]] | None = None) -> frozenset[int]:
    """The indices of the candidate values (strongest first) admitted for answers typed to
    `figures` significant figures: each in turn while the answers they cover stay within the
    budget; one that would overrun it is left out and the next one tried. Answers within the
    tolerance of the reference (right) cost nothing. `classes` (one per value, the groups in
    the order they are tried) groups candidates equally likely: within a group the cheapest
    are tried first, so the budget covers as many of them as it can."""
    if reference <= 0:
        return frozenset()  # no range to measure chance in: no reading is evidence
    spared = [(reference * (1 - tolerance), reference * (1 + tolerance))]
    ranges = [(low * reference, high * reference) for low, high in WINDOWS]
    budgets = WHOLE_BUDGETS if whole else COARSE_BUDGETS if figures <= 2 else \
        (budget, NEAR_BUDGET)
    room = [share * _measure(window, spared) for share, window in zip(budgets, ranges,
                                                                       strict=True)]
    covered: list[_Union] = [_Union() for _ in ranges]
    chosen = []
    tried: list[tuple[tuple[int, ...], float, int, list[list[tuple[float, float]]]]] = []
    for index, value in enumerate(values):
        if value is None or value <= 0 or not math.isfinite(value):
            continue
        pieces = [_clipped(reach(value, figures, whole), window, spared) for window in ranges]
        # its share of the budget, in the window it spends most of
        cost = max(sum(high - low for low, high in parts) / limit if limit > 0 else math.inf
                   for parts, limit in zip(pieces, room, strict=True))
        group = () if classes is None else classes[index]
        tried.append((group, 0.0 if classes is None else cost, index, pieces))
    tried.sort(key=lambda item: item[:3])
    for _, _, index, pieces in tried:
        added = [union.gain(parts) for union, parts in zip(covered, pieces, strict=True)]
        if all(union.total + gain <= limit + 1e-12
               for union, gain, limit in zip(covered, added, room, strict=True)):
            for union, parts in zip(covered, pieces, strict=True):
                union.add(parts)
            chosen.append(index)
    return frozenset(chosen)


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    merged: list[tuple[float, float]] = []
    for low, high in sorted(spans):
        if merged and low <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(high, merged[-1][1]))
        else:
            merged.append((low, high))
    return merged


def _measure(window: tuple[float, float], spared: list[tuple[float, float]]) -> float:
    return sum(high - low for low, high in _clipped(window, window, spared))


def _clipped(span: tuple[float, float], window: tuple[float, float],
             spared: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """`span` within `window`, less the answers spared (disjoint, sorted)."""
    low, high = max(span[0], window[0]), min(span[1], window[1])
    parts = []
    for gap_low, gap_high in spared:
        if gap_high <= low or gap_low >= high:
            continue
        if gap_low > low:
            parts.append((low, gap_low))
        low = max(low, gap_high)
    if low < high:
        parts.append((low, high))
    return parts


class _Union:
    """Disjoint sorted intervals and their total length."""

    def __init__(self) -> None:
        self.lows: list[float] = []
        self.highs: list[float] = []
        self.total = 0.0

    def gain(self, parts: list[tuple[float, float]]) -> float:
        return sum(high - low - self._overlap(low, high) for low, high in parts)

    def _overlap(self, low: float, high: float) -> float:
        start = max(bisect.bisect_right(self.highs, low), 0)
        overlap = 0.0
        for i in range(start, len(self.lows)):
            if self.lows[i] >= high:
                break
            overlap += min(high, self.highs[i]) - max(low, self.lows[i])
        return overlap

    def add(self, parts: list[tuple[float, float]]) -> None:
        for low, high in parts:
            self.total += high - low - self._overlap(low, high)
            start = bisect.bisect_left(self.highs, low)
            end = start
            while end < len(self.lows) and self.lows[end] <= high:
                low, high = min(low, self.lows[end]), max(high, self.highs[end])
                end += 1
            self.lows[start:end] = [low]
            self.highs[start:end] = [high]
