"""Numbers, byte counts, durations and quantities for display: 131,072; 128 KiB; 52 GB;
34.1 ms; 117 tokens/s. Exact where the value is a whole multiple of the unit, else 3
significant figures."""

from __future__ import annotations

from typing import Literal

from trainer.reading.exact import Fraction
from trainer.reading.expression import in_unit
from trainer.reading.numbers import (
    Number,
    exact_text,
    format_number,
    round_half_up,
    round_sig,
    to_fraction,
)
from trainer.reading.units import (
    BYTES,
    FLOPS,
    SECONDS,
    SEQUENCES,
    TOKENS,
    Quantity,
)

_SI_BYTES = (("B", 1), ("KB", 10**3), ("MB", 10**6), ("GB", 10**9), ("TB", 10**12))
_BIN_BYTES = (("B", 1), ("KiB", 2**10), ("MiB", 2**20), ("GiB", 2**30), ("TiB", 2**40))
_SI_FLOP = (
    ("FLOP", 1),
    ("kFLOP", 10**3),
    ("MFLOP", 10**6),
    ("GFLOP", 10**9),
    ("TFLOP", 10**12),
    ("PFLOP", 10**15),
)
_SECONDS = (("ns", Fraction(1, 10**9)), ("µs", Fraction(1, 10**6)), ("ms", Fraction(1, 1000)))


def _pick(x: Fraction, units: tuple[tuple[str, int | Fraction], ...]) -> int:
    """Index of the largest unit keeping |x| >= 1 (the smallest when none does)."""
    idx = 0
    for k, (_, factor) in enumerate(units):
        if abs(x) >= factor:
            idx = k
    return idx


def _scaled(x: Fraction, units: tuple[tuple[str, int | Fraction], ...], sig: int = 3) -> str:
    """x in the largest unit keeping it >= 1: exact when a whole multiple, else `sig` figures."""
    idx = _pick(x, units)
    name, factor = units[idx]
    v = x / factor
    if v.denominator != 1 and idx + 1 < len(units):
        ratio = Fraction(units[idx + 1][1]) / Fraction(factor)
        if abs(round_half_up(v)) >= ratio:  # 999.96 KB rounds up to the next unit
            idx += 1
            name, factor = units[idx]
            v = x / factor
    if v.denominator == 1:
        return f"{v.numerator:,} {name}"
    return f"{format_number(v, sig)} {name}"


def _shows_exactly(v: Fraction, sig: int = 3) -> bool:
    """Whether format_number(v, sig) prints v exactly (131,072; 51.9; 1.5 but not 1.54)."""
    v = abs(v)
    if v.denominator == 1:
        return True
    if v >= 10 ** (sig - 1) or v < Fraction(1, 10**6):
        return False
    m, e = round_sig(v, sig)
    return m * Fraction(10) ** (e - sig + 1) == v


def _exact_in(x: Fraction, units: tuple[tuple[str, int | Fraction], ...]) -> bool:
    """Whether x prints exactly in the unit that `_scaled` picks (52 GB, 51.9 GB, 1.5 KiB)."""
    return _shows_exactly(x / units[_pick(x, units)][1])


ByteSystem = Literal["si", "binary", "both", "auto"]


def format_bytes(n: Number, system: ByteSystem = "si") -> str:
    """A byte count for display.

    "si": B, KB, MB, GB, TB (52 GB, 51.9 GB); "binary": B, KiB, MiB, GiB, TiB (128 KiB);
    exact when the value is a whole multiple of the unit chosen, else 3 significant figures.
    "both": the exact count and one short form: "131,072 B (128 KiB)", "52,000,000,000 B (52 GB)"
    (the binary form when it prints exactly, from 1 KiB up; else the SI form).
    "auto": whichever of SI and binary prints exactly (SI first), else SI: 52 GB, 128 KiB,
    51.9 GB, 1.5 KiB, 10.7 GB for 10.7e9 B.
    """
    f = to_fraction(n)
    if isinstance(f, str):
        return f"{f} B"
    if f < 0:
        return "-" + format_bytes(-f, system)
    if system == "si":
        return _scaled(f, _SI_BYTES)
    if system == "binary":
        return _scaled(f, _BIN_BYTES)
    if system == "auto":
        if _exact_in(f, _SI_BYTES) or not _exact_in(f, _BIN_BYTES):
            return _scaled(f, _SI_BYTES)
        return _scaled(f, _BIN_BYTES)
    if system == "both":
        exact = f"{f.numerator:,} B" if f.denominator == 1 else f"{exact_text(f)} B"
        if f < 1000:
            return exact
        if f >= 1024 and _exact_in(f, _BIN_BYTES):
            return f"{exact} ({_scaled(f, _BIN_BYTES)})"
        return f"{exact} ({_scaled(f, _SI_BYTES)})"
    raise ValueError(f"unknown byte system {system!r}: use si, binary, both or auto")


def format_seconds(s: Number) -> str:
    """34.1 ms, 3.2 ms, 120 µs, 500 ns, 1.5 s, 59 s; from 120 s "2 min 5 s"; 2 h up "2 h 5 min"."""
    f = to_fraction(s)
    if isinstance(f, str):
        return f"{f} s"
    if f < 0:
        return "-" + format_seconds(-f)
    if f == 0:
        return "0 s"
    if f < 1:
        text = _scaled(f, (*_SECONDS, ("s", 1)))
        return text
    if f < 120:
        return f"{format_number(f, 3)} s"
    total = round_half_up(f)
    if total < 7200:
        minutes, secs = divmod(total, 60)
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    total_min = round_half_up(f / 60)
    hours, minutes = divmod(total_min, 60)
    return f"{hours:,} h {minutes} min" if minutes else f"{hours:,} h"


def format_natural(q: Quantity, sig: int = 3) -> str:
    x, dim = q.value, q.dim
    if dim.is_dimensionless:
        return format_number(x, sig)
    if dim == BYTES:
        return format_bytes(x, "auto")
    if dim == SECONDS:
        return format_seconds(x)
    if dim == FLOPS:
        return _scaled(x, _SI_FLOP, sig)
    if dim in (TOKENS, SEQUENCES):
        plural, singular = ("tokens", "token") if dim == TOKENS else ("sequences", "sequence")
        return f"{format_number(x, sig)} {singular if x == 1 else plural}"
    for base, exponent in ((BYTES, dim.bytes), (FLOPS, dim.flops)):
        num, den = (dim / base)._parts()
        if exponent == 1 and not num and den:
            per = den[0] if len(den) == 1 else "(" + "·".join(den) + ")"
            head = format_bytes(x, "auto") if base == BYTES else _scaled(x, _SI_FLOP, sig)
            return f"{head}/{per}"
    return f"{format_number(x, sig)} {dim}"


def format_quantity(q: Quantity, unit: str | None = None, sig: int = 3) -> str:
    """`q` in `unit` ("44 GB", "117 tokens/s", "90%"), or in a natural unit for its dimension:
    bytes 52 GB / 128 KiB (format_bytes "auto"), seconds 34.1 ms, 396,728 tokens, 96 sequences,
    117 tokens/s, 5.3 TB/s, 128 KiB/token, 1.6 TFLOP, 989 TFLOP/s; plain numbers format_number.
    """
    if unit is None:
        return format_natural(q, sig)
    text = format_number(in_unit(q, unit), sig)
    return f"{text}%" if unit == "%" else f"{text} {unit}"


