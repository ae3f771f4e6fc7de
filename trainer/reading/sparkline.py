"""A row of scores as one line of block characters (▁ to █), for trends in history and review.
Standard library only, so the store's trend lines need none of the number formatting."""

from __future__ import annotations

import math

SPARK_BLOCKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], top: float) -> str:
    """One block character per value, ▁ for 0 (or less) up to █ for `top` (or more)."""
    if not values:
        return ""
    if not math.isfinite(top) or top <= 0:
        return SPARK_BLOCKS[0] * len(values)
    line = []
    for value in values:
        share = value / top if math.isfinite(value) else 0.0
        share = min(max(share, 0.0), 1.0)
        line.append(SPARK_BLOCKS[round(share * (len(SPARK_BLOCKS) - 1))])
    return "".join(line)
