"""Plain numbers for display: 131,072; 34.1; 0.0341; 1.23e-7. Integers exactly with thousands
commas, other values to a number of significant figures."""

from __future__ import annotations

import math

from trainer.reading.exact import Fraction
from trainer.reading.units import as_fraction

Number = int | Fraction | float


def to_fraction(x: Number) -> Fraction | str:
    """A Fraction, or the display text of a non-finite float."""
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        if math.isnan(x):
            return "nan"
        if math.isinf(x):
            return "inf" if x > 0 else "-inf"
        return Fraction(x)
    f = as_fraction(x)
    if f is None:
        raise TypeError(f"not a number: {x!r}")
    return f


def round_half_up(x: Fraction) -> int:
    """Nearest integer, halves away from zero."""
    r = math.floor(abs(x) + Fraction(1, 2))
    return r if x >= 0 else -r


def round_sig(x: Fraction, sig: int) -> tuple[int, int]:
    """For x > 0: (m, e) with 10^(sig-1) <= m < 10^sig and x ≈ m * 10^(e - sig + 1)."""
    e = math.floor((x.numerator.bit_length() - x.denominator.bit_length()) * 0.30103)
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    m = round_half_up(x / Fraction(10) ** (e - sig + 1))
    if m >= 10**sig:
        m //= 10
        e += 1
    return m, e


def _group(int_digits: str) -> str:
    return f"{int(int_digits):,}"


def _fixed(m: int, e: int, sig: int) -> str:
    shift = e - sig + 1
    if shift >= 0:
        return _group(str(m * 10**shift))
    digits = str(m).rjust(-shift + 1, "0")
    int_part, frac = digits[:shift], digits[shift:].rstrip("0")
    return _group(int_part) + ("." + frac if frac else "")


def _scientific(m: int, e: int) -> str:
    digits = str(m).rstrip("0") or "0"
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    return f"{mantissa}e{e}"


def format_number(x: Number, sig: int = 3) -> str:
    """131072 → "131,072"; 34.1; 0.0341; 396728.5 → "396,729" (sig=3); 1.23e-7; 1e18.

    Integers below 10^15 print exactly with thousands commas. Other values print with `sig`
    significant figures (halves rounded away from zero, trailing zeros dropped), except that
    a non-integer of at least 10^(sig-1) is rounded to a whole number. Scientific notation only
    outside 1e-6 <= |x| < 1e15.
    """
    if sig < 1:
        raise ValueError("sig must be at least 1")
    f = to_fraction(x)
    if isinstance(f, str):
        return f
    if f < 0:
        return "-" + format_number(-f, sig)
    if f == 0:
        return "0"
    big = f >= 10**15
    if f.denominator == 1 and not big:
        return f"{f.numerator:,}"
    if big or f < Fraction(1, 10**6):
        return _scientific(*round_sig(f, sig))
    if f >= 10 ** (sig - 1):
        return f"{round_half_up(f):,}"
    m, e = round_sig(f, sig)
    return _fixed(m, e, sig)


def exact_text(x: Fraction) -> str:
    """A value as typed: exact when it has at most 6 decimals, else 6 significant figures."""
    if x < 0:
        return "-" + exact_text(-x)
    for k in range(7):
        scaled = x * 10**k
        if scaled.denominator == 1 and scaled < 10**15:
            s = str(scaled.numerator).rjust(k + 1, "0")
            int_part, frac = (s[:-k], s[-k:]) if k else (s, "")
            return _group(int_part) + ("." + frac if frac else "")
    return format_number(x, 6)


def significant_figures(shown: Fraction) -> int:
    """The significant figures of a number as it would be typed in its unit (100: 1, 96: 2,
    0.05: 1, 12.5: 3); trailing zeros of a whole number do not count."""
    text = f"{float(abs(shown)):.12g}"
    if "e" in text:
        text = text.split("e")[0]
    digits = text.replace(".", "").lstrip("0").rstrip("0")
    return len(digits) if digits else 1


# The scales a figure of working may be typed at: GB, MB, KB, TB, ms, µs, GiB, MiB, KiB, %
FIGURE_SCALES = tuple(Fraction(10) ** k for k in (-6, -3, -2, 0, 3, 6, 9, 12)) + \
    tuple(Fraction(2) ** k for k in (10, 20, 30, 40))
SAME_FIGURE = Fraction(1, 200)  # a figure typed to three digits


def typed_at_some_scale(figure: Fraction, value: Fraction) -> bool:
    """Whether `figure`, as typed in working, is `value` at one of the scales a person types
    it at (1.476 for 1.476 GB; 26.6 for 26.6 ms), to three digits."""
    return bool(value) and any(abs(figure * scale - value) <= SAME_FIGURE * abs(value)
                               for scale in FIGURE_SCALES)
