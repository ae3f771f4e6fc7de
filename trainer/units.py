"""Quantities with dimensions, safe parsing of typed answers, and number formatting.

Everything here is exact (``fractions.Fraction``) and pure standard library. Typed answers are
read by a tokenizer and a small recursive-descent parser of this module's own: nothing a person
types ever reaches eval, exec, compile or sympy. Sizes are bounded before anything is computed
(input length, token count, nesting depth, digits, exponents, power results), so every answer is
read or refused in well under a millisecond or so, whatever it contains.

Base units: bytes, tokens, sequences, seconds, FLOP. GB = 10^9 B, GiB = 2^30 B.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from trainer.errors import AnswerParseError

__all__ = [
    "BYTES",
    "DIMENSIONLESS",
    "FLOPS",
    "SECONDS",
    "SEQUENCES",
    "TOKENS",
    "Dim",
    "ParsedAnswer",
    "Quantity",
    "UnitError",
    "format_bytes",
    "format_number",
    "format_quantity",
    "format_seconds",
    "in_unit",
    "parse_answer",
    "reread_with_trailing_unit",
    "unit_factor",
]

Number = int | Fraction | float


class UnitError(AnswerParseError, ValueError):
    """An unknown unit, or quantities whose dimensions do not match (GB + tokens, GB in s).

    It is an AnswerParseError (so a typed answer that mixes units is refused like any other
    unreadable answer) and a ValueError (so code that converts values can catch it as one).
    """


# --------------------------------------------------------------------------------------------
# Dimensions
# --------------------------------------------------------------------------------------------

# (field, name in a numerator, name in a denominator or with an exponent)
_DIM_NAMES: tuple[tuple[str, str, str], ...] = (
    ("bytes", "B", "B"),
    ("flops", "FLOP", "FLOP"),
    ("tokens", "tokens", "token"),
    ("sequences", "sequences", "sequence"),
    ("seconds", "s", "s"),
)


@dataclass(frozen=True, slots=True)
class Dim:
    """Integer exponents of the five base dimensions."""

    bytes: int = 0
    tokens: int = 0
    sequences: int = 0
    seconds: int = 0
    flops: int = 0

    def _exps(self) -> tuple[int, int, int, int, int]:
        return (self.bytes, self.tokens, self.sequences, self.seconds, self.flops)

    def __mul__(self, other: Dim) -> Dim:
        if not isinstance(other, Dim):
            return NotImplemented
        return Dim(*(a + b for a, b in zip(self._exps(), other._exps(), strict=True)))

    def __truediv__(self, other: Dim) -> Dim:
        if not isinstance(other, Dim):
            return NotImplemented
        return Dim(*(a - b for a, b in zip(self._exps(), other._exps(), strict=True)))

    def __pow__(self, n: int) -> Dim:
        if isinstance(n, bool) or not isinstance(n, int):
            return NotImplemented
        return Dim(*(a * n for a in self._exps()))

    @property
    def is_dimensionless(self) -> bool:
        return not any(self._exps())

    def _parts(self) -> tuple[list[str], list[str]]:
        num: list[str] = []
        den: list[str] = []
        for field, plural, singular in _DIM_NAMES:
            e = getattr(self, field)
            if e == 1:
                num.append(plural)
            elif e > 1:
                num.append(f"{singular}^{e}")
            elif e == -1:
                den.append(singular)
            elif e < -1:
                den.append(f"{singular}^{-e}")
        return num, den

    def __str__(self) -> str:
        """Readable and parseable by `unit_factor`: "B/s", "tokens/s", "B/token", "1"."""
        num, den = self._parts()
        top = "·".join(num) if num else "1"
        if not den:
            return top
        bottom = den[0] if len(den) == 1 else "(" + "·".join(den) + ")"
        return f"{top}/{bottom}"


DIMENSIONLESS = Dim()
BYTES = Dim(bytes=1)
TOKENS = Dim(tokens=1)
SEQUENCES = Dim(sequences=1)
SECONDS = Dim(seconds=1)
FLOPS = Dim(flops=1)


# --------------------------------------------------------------------------------------------
# Quantities
# --------------------------------------------------------------------------------------------


def _as_fraction(x: object) -> Fraction | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return None


def _dim_label(dim: Dim) -> str:
    return "a plain number" if dim.is_dimensionless else str(dim)


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact value in base units (bytes, tokens, sequences, seconds, FLOP) and its dimension.

    `value` accepts int or Fraction (stored as Fraction); floats are refused, so nothing inexact
    slips in. Use `Quantity.of(52, "GB")` to build one from a unit.
    """

    value: Fraction
    dim: Dim = DIMENSIONLESS

    def __post_init__(self) -> None:
        v = _as_fraction(self.value)
        if v is None:
            raise TypeError(
                f"Quantity value must be an int or Fraction, not {type(self.value).__name__}"
            )
        object.__setattr__(self, "value", v)
        if not isinstance(self.dim, Dim):
            raise TypeError("Quantity dim must be a Dim")

    @classmethod
    def of(cls, value: int | Fraction, unit: str) -> Quantity:
        """`value` in `unit`: Quantity.of(52, "GB") is 52e9 B; Quantity.of(117, "tokens/s")."""
        v = _as_fraction(value)
        if v is None:
            raise TypeError(f"value must be an int or Fraction, not {type(value).__name__}")
        f = unit_factor(unit)
        return Quantity(v * f.value, f.dim)

    def to(self, unit: str) -> Fraction:
        """The value expressed in `unit` (same as `in_unit(self, unit)`)."""
        return in_unit(self, unit)

    def _other(self, other: object) -> Quantity | None:
        if isinstance(other, Quantity):
            return other
        v = _as_fraction(other)
        return None if v is None else Quantity(v)

    def __mul__(self, other: Quantity | int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return Quantity(self.value * o.value, self.dim * o.dim)

    __rmul__ = __mul__

    def __truediv__(self, other: Quantity | int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        if o.value == 0:
            raise ZeroDivisionError("division of a quantity by zero")
        return Quantity(self.value / o.value, self.dim / o.dim)

    def __rtruediv__(self, other: int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return o / self

    def _same_dim(self, o: Quantity, verb: str) -> None:
        if self.dim != o.dim:
            a, b = _dim_label(self.dim), _dim_label(o.dim)
            if verb == "add":
                raise UnitError(
                    f"cannot add {a} to {b}: both sides must be in the same kind of unit"
                )
            raise UnitError(f"cannot {verb} {a} and {b}: they are different kinds of unit")

    def __add__(self, other: Quantity | int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        self._same_dim(o, "add")
        return Quantity(self.value + o.value, self.dim)

    __radd__ = __add__

    def __sub__(self, other: Quantity | int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        self._same_dim(o, "subtract")
        return Quantity(self.value - o.value, self.dim)

    def __rsub__(self, other: int | Fraction) -> Quantity:
        o = self._other(other)
        if o is None:
            return NotImplemented
        return o - self

    def __neg__(self) -> Quantity:
        return Quantity(-self.value, self.dim)

    def __pos__(self) -> Quantity:
        return self

    def __abs__(self) -> Quantity:
        return Quantity(abs(self.value), self.dim)

    def __pow__(self, n: int) -> Quantity:
        if isinstance(n, bool) or not isinstance(n, int):
            return NotImplemented
        return Quantity(self.value**n, self.dim**n)

    def _cmp(self, other: object) -> tuple[Fraction, Fraction] | None:
        o = self._other(other)
        if o is None:
            return None
        self._same_dim(o, "compare")
        return self.value, o.value

    def __lt__(self, other: Quantity | int | Fraction) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c[0] < c[1]

    def __le__(self, other: Quantity | int | Fraction) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c[0] <= c[1]

    def __gt__(self, other: Quantity | int | Fraction) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c[0] > c[1]

    def __ge__(self, other: Quantity | int | Fraction) -> bool:
        c = self._cmp(other)
        return NotImplemented if c is None else c[0] >= c[1]

    def __str__(self) -> str:
        return format_quantity(self)


# --------------------------------------------------------------------------------------------
# Unit table
# --------------------------------------------------------------------------------------------


def _build_units() -> dict[str, Quantity]:
    table: dict[str, Quantity] = {}

    def add(names: str, factor: int | Fraction, dim: Dim) -> None:
        for name in names.split():
            table[name] = Quantity(Fraction(factor), dim)

    add("B byte bytes", 1, BYTES)
    add("KB kB", 10**3, BYTES)
    add("MB", 10**6, BYTES)
    add("GB", 10**9, BYTES)
    add("TB", 10**12, BYTES)
    add("PB", 10**15, BYTES)
    add("KiB", 2**10, BYTES)
    add("MiB", 2**20, BYTES)
    add("GiB", 2**30, BYTES)
    add("TiB", 2**40, BYTES)
    add("PiB", 2**50, BYTES)
    add("b bit bits", Fraction(1, 8), BYTES)
    add("kb Kb kbit Kbit", Fraction(10**3, 8), BYTES)
    add("Mb Mbit", Fraction(10**6, 8), BYTES)
    add("Gb Gbit", Fraction(10**9, 8), BYTES)
    add("Tb Tbit", Fraction(10**12, 8), BYTES)
    add("token tokens tok toks", 1, TOKENS)
    add(
        "sequence sequences seq seqs session sessions user users request requests req reqs",
        1,
        SEQUENCES,
    )
    add("s sec secs second seconds", 1, SECONDS)
    add("ms msec msecs", Fraction(1, 10**3), SECONDS)
    add("us µs μs", Fraction(1, 10**6), SECONDS)
    add("ns", Fraction(1, 10**9), SECONDS)
    add("min mins minute minutes", 60, SECONDS)
    add("FLOP FLOPs flop flops", 1, FLOPS)
    add("kFLOP kFLOPs", 10**3, FLOPS)
    add("MFLOP MFLOPs", 10**6, FLOPS)
    add("GFLOP GFLOPs", 10**9, FLOPS)
    add("TFLOP TFLOPs", 10**12, FLOPS)
    add("PFLOP PFLOPs", 10**15, FLOPS)
    add("%", Fraction(1, 100), DIMENSIONLESS)
    return table


_UNITS: dict[str, Quantity] = _build_units()

# Long unit words, accepted in any letter case ("Tokens", "SECONDS").
_CASELESS_UNITS: dict[str, str] = {
    w.lower(): w
    for w in [
        "byte",
        "bytes",
        "token",
        "tokens",
        "sequence",
        "sequences",
        "session",
        "sessions",
        "user",
        "users",
        "request",
        "requests",
        "second",
        "seconds",
        "minute",
        "minutes",
    ]
}

_MULTIPLIERS: dict[str, int] = {"k": 10**3, "K": 10**3, "M": 10**6}
_MULTIPLIER_WORDS: dict[str, int] = {"thousand": 10**3, "million": 10**6, "billion": 10**9}

_APPROX_WORDS = frozenset(
    ["about", "approx", "approximately", "around", "roughly", "ca", "circa", "nearly", "almost"]
)
_NOT_NUMBERS = frozenset(["nan", "inf", "infinity", "infinite"])

_KNOWN_UNITS_HINT = (
    "known units: B, KB, MB, GB, TB, KiB, MiB, GiB, bits, tokens, sequences, s, ms, µs, "
    "FLOP, % (rates like GB/s, tokens/s, B/token)"
)

# --------------------------------------------------------------------------------------------
# Limits
# --------------------------------------------------------------------------------------------

MAX_CHARS = 200
MAX_TOKENS = 64
MAX_DEPTH = 16
MAX_DIGITS = 30
MAX_EXP10 = 30  # |e| in 1e30
MAX_POWER = 64  # |n| in x^n
MAX_MAGNITUDE = Fraction(10) ** 40
MIN_MAGNITUDE = Fraction(1, 10**40)
_MAX_BITS = 8192  # numerator/denominator size of any intermediate value
_MAX_UNIT_POWER = 16

_BIDI = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\u200e", "\u200f", "\u061c"]
)
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = re.compile("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_APPROX_PREFIX = re.compile(
    r"(?:~=|~|≈|≃|approximately|approx\.?|about|around|roughly|nearly|almost|circa|ca\.|ca\b)\s*",
    re.IGNORECASE,
)

_MINUS = "-−–‒"
_TIMES = "*×·⋅∗"
_DIVIDE = "/÷∕⁄"

_SPACE_GROUPED = re.compile(r"(\d{1,3}(?: \d{3})+)(?![\d,_])(?:\.(\d+))?(?:[eE]([+-]?\d+))?", re.A)
_NUMBER = re.compile(r"(\d+(?:[,_]\d+)*)?(?:\.(\d+))?(?:[eE]([+-]?\d+))?", re.A)
_COMMA_GROUPS = re.compile(r"\d{1,3}(?:,\d{3})+", re.A)


def _show_char(c: str) -> str:
    code = f"U+{ord(c):04X}"
    if c.isprintable() and not c.isspace() and unicodedata.category(c)[0] != "C":
        return f"'{c}'" if c.isascii() else f"'{c}' ({code})"
    return code


def _show_word(w: str) -> str:
    return f"'{w}'" if len(w) <= 24 else f"'{w[:24]}…'"


# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------

_NUM, _UNIT, _MULT, _OP, _END = "number", "unit", "multiplier", "operator", "end"


@dataclass(frozen=True, slots=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int
    value: Fraction = Fraction(0)  # a number's value, a multiplier's factor
    unit: Quantity | None = None  # a unit's factor
    op: str = ""  # normalised operator: + - * / ^ ( )


class _Lexer:
    def __init__(self, text: str) -> None:
        self.s = text
        self.toks: list[_Tok] = []
        self.depth = 0

    def fail(self, pos: int, message: str) -> AnswerParseError:
        return AnswerParseError(message, understood=self.s[:pos].rstrip())

    def push(self, tok: _Tok) -> None:
        if len(self.toks) >= MAX_TOKENS:
            raise self.fail(
                tok.start,
                f"the answer has more than {MAX_TOKENS} parts (numbers, units, operators); "
                "simplify it or type the result",
            )
        self.toks.append(tok)

    def run(self) -> list[_Tok]:
        s, n, i = self.s, len(self.s), 0
        while i < n:
            c = s[i]
            if c.isspace():
                i += 1
            elif c in "0123456789" or (c == "." and i + 1 < n and s[i + 1] in "0123456789"):
                i = self.number(i)
            elif c.isalpha() or c == "_":
                i = self.word(i)
            else:
                i = self.symbol(i)
        if self.depth > 0:
            raise self.fail(n, "unbalanced parentheses: a '(' is never closed; add the ')'")
        self.toks.append(_Tok(_END, "", n, n))
        return self.toks

    def number(self, i: int) -> int:
        s = self.s
        m = _SPACE_GROUPED.match(s, i)
        if m:
            int_part = m.group(1).replace(" ", "")
        else:
            m = _NUMBER.match(s, i)
            assert m is not None  # at least one digit is there
            raw = m.group(1) or ""
            if "," in raw and "_" in raw:
                raise self.fail(i, f"'{m.group(0)}' mixes ',' and '_'; group digits one way")
            if "," in raw and not _COMMA_GROUPS.fullmatch(raw):
                hint = (
                    f"for a decimal point write {raw.replace(',', '.')}"
                    if raw.count(",") == 1
                    else "group digits in threes, as in 131,072"
                )
                raise self.fail(
                    i, f"'{m.group(0)}': a comma can only group thousands (131,072); {hint}"
                )
            int_part = raw.replace(",", "").replace("_", "")
        frac = m.group(2) or ""
        exp_text = m.group(3)
        end = m.end()
        text = s[i:end]
        if len(int_part) + len(frac) > MAX_DIGITS:
            raise self.fail(
                i,
                f"the number {_show_word(text)} has more than {MAX_DIGITS} digits; "
                "use an exponent such as 1.3e5",
            )
        exp = 0
        if exp_text is not None:
            digits = exp_text.lstrip("+-")
            if len(digits.lstrip("0")) > 2 or int(digits) > MAX_EXP10:
                raise self.fail(
                    i,
                    f"the exponent in {_show_word(text)} is out of range "
                    f"(at most e{MAX_EXP10} and e-{MAX_EXP10})",
                )
            exp = -int(digits) if exp_text.startswith("-") else int(digits)
        if text == "0" and s[end : end + 1] in ("x", "X") and s[end + 1 : end + 2].isalnum():
            raise self.fail(
                i, "hexadecimal numbers such as 0x10 are not accepted; type the decimal value"
            )
        value = Fraction(int(int_part or "0") * 10 ** len(frac) + int(frac or "0"), 10 ** len(frac))
        value *= Fraction(10) ** exp
        self.push(_Tok(_NUM, text, i, end, value=value))
        return end

    def word(self, i: int) -> int:
        s, j = self.s, i
        while j < len(s) and (s[j].isalpha() or s[j] == "_"):
            j += 1
        w = s[i:j]
        low = w.lower()
        prev = self.toks[-1] if self.toks else None
        after_number = prev is not None and prev.kind == _NUM
        if w in _UNITS:
            self.push(_Tok(_UNIT, w, i, j, unit=_UNITS[w]))
        elif low == "per":
            self.push(_Tok(_OP, w, i, j, op="/"))
        elif w in ("x", "X"):
            self.push(_Tok(_OP, w, i, j, op="*"))
        elif w in _MULTIPLIERS or low in _MULTIPLIER_WORDS:
            factor = _MULTIPLIERS.get(w) or _MULTIPLIER_WORDS[low]
            self.push(_Tok(_MULT, w, i, j, value=Fraction(factor)))
        elif low in _CASELESS_UNITS:
            self.push(_Tok(_UNIT, w, i, j, unit=_UNITS[_CASELESS_UNITS[low]]))
        elif low in _NOT_NUMBERS:
            raise self.fail(i, f"{_show_word(w)} is not accepted: type a finite number")
        elif low in _APPROX_WORDS:
            raise self.fail(
                i, f"{_show_word(w)} can only come first, as in 'about 100' or '~34 ms'"
            )
        elif w in ("FLOPS", "kFLOPS", "MFLOPS", "GFLOPS", "TFLOPS", "PFLOPS"):
            base = w[:-1]
            raise self.fail(
                i, f"'{w}' is ambiguous: write {base}/s for a rate or {base} for a count"
            )
        elif w == "m":
            raise self.fail(
                i, "'m' is ambiguous: write min for minutes, ms for milliseconds, M for million"
            )
        else:
            near = [u for u in _UNITS if u.lower() == low]
            if near:
                hint = "did you mean " + " or ".join(f"'{u}'" for u in sorted(near)) + "?"
            elif after_number and low in ("e", "E"):
                hint = "an exponent needs digits, as in 1.3e5"
            else:
                hint = _KNOWN_UNITS_HINT
            raise self.fail(i, f"unknown word {_show_word(w)}; {hint}")
        return j

    def symbol(self, i: int) -> int:
        s, c = self.s, self.s[i]
        op = ""
        length = 1
        if c == "+":
            op = "+"
        elif c in _MINUS:
            op = "-"
        elif c == "*" and s.startswith("**", i):
            op, length = "^", 2
        elif c in _TIMES:
            op = "*"
        elif c in _DIVIDE:
            op = "/"
        elif c == "^":
            op = "^"
        elif c == "(":
            self.depth += 1
            if self.depth > MAX_DEPTH:
                raise self.fail(
                    i, f"parentheses are nested deeper than {MAX_DEPTH} levels; simplify"
                )
            op = "("
        elif c == ")":
            self.depth -= 1
            if self.depth < 0:
                raise self.fail(i, "unbalanced parentheses: a ')' has no matching '('")
            op = ")"
        elif c == "%":
            self.push(_Tok(_UNIT, "%", i, i + 1, unit=_UNITS["%"]))
            return i + 1
        if op:
            self.push(_Tok(_OP, s[i : i + length], i, i + length, op=op))
            return i + length
        raise self.fail(i, self.char_message(c))

    @staticmethod
    def char_message(c: str) -> str:
        shown = _show_char(c)
        if c == "!":
            return "'!' is not accepted (no factorials); type the number itself"
        if c in "'\"`‘’“”«»":
            return f"unexpected quote {shown}: type a number, without quotes"
        if c in "~≈≃=":
            return f"{shown} can only come first, as in '~34 ms' or '= 131072'"
        if c == ",":
            return "unexpected ',': a comma can only sit between digit groups, as in 131,072"
        if c == ".":
            return "unexpected '.': a decimal point needs digits after it, as in 0.5"
        if c == "∞":
            return "infinity is not accepted: type a finite number"
        if c in "0123456789" or unicodedata.category(c) == "Nd":
            return f"{shown} is not a plain digit: type digits 0-9"
        return (
            f"unknown character {shown}: use digits, units (GB, tokens, ms), "
            "+ - × / ^ and parentheses"
        )


# --------------------------------------------------------------------------------------------
# Parser and evaluator
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _V:
    q: Quantity
    text: str | None = None  # the unit as the person wrote it, when it still applies
    bare: bool = False  # a unit written without a number ("/ s", "per second")


def _label(v: _V) -> str:
    return v.text if v.text is not None else _dim_label(v.q.dim)


def _log10_abs(x: Fraction) -> float:
    return math.log10(abs(x.numerator)) - math.log10(x.denominator)


class _Parser:
    def __init__(self, text: str, toks: list[_Tok]) -> None:
        self.s = text
        self.toks = toks
        self.i = 0

    # -- helpers ---------------------------------------------------------------------------
    def peek(self) -> _Tok:
        return self.toks[self.i]

    def take(self) -> _Tok:
        t = self.toks[self.i]
        self.i += 1
        return t

    def is_op(self, *ops: str) -> bool:
        t = self.toks[self.i]
        return t.kind == _OP and t.op in ops

    def fail(self, tok: _Tok, message: str, *, upto: int | None = None) -> AnswerParseError:
        pos = tok.start if upto is None else upto
        return AnswerParseError(message, understood=self.s[:pos].rstrip())

    def checked(self, v: _V, tok: _Tok) -> _V:
        x = v.q.value
        if x.numerator.bit_length() > _MAX_BITS or x.denominator.bit_length() > _MAX_BITS:
            raise self.fail(tok, "a number in this expression grows too large; simplify it")
        return v

    # -- grammar ---------------------------------------------------------------------------
    def parse(self) -> _V:
        v = self.additive()
        t = self.peek()
        if t.kind != _END:
            raise self.fail(t, self.juxtaposed(t))
        return v

    def juxtaposed(self, t: _Tok) -> str:
        prev = self.toks[self.i - 1] if self.i > 0 else None
        if t.kind == _NUM and prev is not None and prev.kind == _NUM and prev.end == t.start:
            return f"'{prev.text}{t.text}' has two decimal points; a number can have only one"
        if t.kind == _NUM and prev is not None and prev.kind == _NUM:
            return (
                f"two numbers side by side ('{prev.text} {t.text}'): put an operator between "
                "them, or group digits in threes (131 072)"
            )
        if t.kind == _NUM and prev is not None and prev.kind == _UNIT:
            return (
                f"a number after a unit ('{prev.text} {t.text}'): write the number first, "
                "as in 52 GB, or add an operator"
            )
        if t.kind == _UNIT and prev is not None and prev.kind == _UNIT:
            return (
                f"two units side by side ('{prev.text} {t.text}'): write one unit, "
                "or a rate with '/' as in tokens/s"
            )
        if t.kind == _UNIT:
            return f"the unit '{t.text}' cannot go here; put it right after a number"
        if t.kind == _MULT:
            return f"'{t.text}' must follow a number directly, as in 397k or 1.2 million"
        if t.kind == _OP and t.op == "^":
            return "a unit cannot be raised to a power here; put the power before the unit"
        return f"missing operator before '{t.text}'; add one of + - × /"

    def additive(self) -> _V:
        left = self.term()
        while self.is_op("+", "-"):
            op = self.take()
            right = self.term()
            if left.q.dim != right.q.dim:
                a, b = _label(left), _label(right)
                msg = f"cannot add {a} to {b}" if op.op == "+" else f"cannot subtract {b} from {a}"
                raise UnitError(
                    msg + ": both sides must be in the same kind of unit",
                    understood=self.s[: op.start].rstrip(),
                )
            q = Quantity(
                left.q.value + right.q.value if op.op == "+" else left.q.value - right.q.value,
                left.q.dim,
            )
            left = self.checked(_V(q, left.text if left.text is not None else right.text), op)
        return left

    def term(self) -> _V:
        left = self.unary()
        while self.is_op("*", "/"):
            op = self.take()
            right = self.unary()
            a, b = left.q, right.q
            if op.op == "*":
                q = Quantity(a.value * b.value, a.dim * b.dim)
                if b.dim.is_dimensionless:
                    text = left.text if left.text is not None else right.text
                elif a.dim.is_dimensionless:
                    text = right.text
                else:
                    text = None
            else:
                if b.value == 0:
                    raise self.fail(op, "division by zero")
                q = Quantity(a.value / b.value, a.dim / b.dim)
                if right.bare and left.text is not None and right.text is not None:
                    rt = right.text
                    text = f"{left.text}/{rt}" if rt.isalpha() else None
                elif b.dim.is_dimensionless and not a.dim.is_dimensionless:
                    text = left.text
                else:
                    text = None
            left = self.checked(_V(q, text), op)
        return left

    def unary(self) -> _V:
        if self.is_op("-", "+"):
            op = self.take()
            v = self.unary()
            return _V(-v.q, v.text) if op.op == "-" else v
        return self.power()

    def power(self) -> _V:
        t = self.peek()
        if t.kind == _UNIT:
            return self.unit_group(bare=True)
        if t.kind == _NUM:
            self.take()
            base = _V(Quantity(t.value))
        elif t.kind == _OP and t.op == "(":
            self.take()
            base = self.additive()
            if not self.is_op(")"):
                raise self.fail(self.peek(), self.juxtaposed(self.peek()))
            self.take()
        else:
            raise self.fail(t, self.expected(t))
        if self.peek().kind == _MULT:
            m = self.take()
            base = _V(base.q * m.value, base.text)
            if self.peek().kind == _MULT:
                raise self.fail(self.peek(), "two multipliers in a row; use one, as in 1.2M")
        if self.is_op("^"):
            op = self.take()
            e = self.exponent()
            base = _V(self.pow(base.q, e, op))
        if self.peek().kind == _UNIT:
            u = self.unit_group(bare=False)
            q, text = u.q, u.text or ""
            # A compound unit stays with its number: "6.7 TB/s" in "26.3 GB / 6.7 TB/s".
            while (self.is_op("/") and self.i + 1 < len(self.toks)
                   and self.toks[self.i + 1].kind == _UNIT):
                self.take()
                d = self.unit_group(bare=False)
                q, text = q / d.q, f"{text}/{d.text}"
            base = _V(base.q * q, text)
        return self.checked(base, t)

    def expected(self, t: _Tok) -> str:
        if t.kind == _END:
            prev = self.toks[self.i - 1] if self.i > 0 else None
            after = f" after '{prev.text}'" if prev is not None else ""
            return f"the answer ends too early: a number is missing{after}"
        if t.kind == _MULT:
            return f"'{t.text}' must follow a number directly, as in 397k or 1.2 million"
        if t.kind == _OP and t.op == ")":
            return "empty parentheses or a missing number before ')'"
        return f"a number is missing before '{t.text}'"

    def unit_group(self, *, bare: bool) -> _V:
        t = self.take()
        assert t.unit is not None
        q, text = t.unit, t.text
        if self.is_op("^"):
            op = self.take()
            sign = 1
            if self.is_op("-", "+"):
                sign = -1 if self.take().op == "-" else 1
            n = self.peek()
            if n.kind != _NUM or n.value.denominator != 1:
                raise self.fail(n, f"the power of the unit '{text}' must be a whole number")
            self.take()
            k = sign * int(n.value)
            if abs(k) > _MAX_UNIT_POWER:
                raise self.fail(n, f"the power of a unit must be at most {_MAX_UNIT_POWER}")
            if q.value == 0:  # pragma: no cover - no unit has a zero factor
                raise self.fail(op, "division by zero")
            q = q**k
            text = f"{text}^{k}"
        return _V(q, text, bare=bare)

    def exponent(self) -> Quantity:
        sign = 1
        while self.is_op("-", "+"):
            if self.take().op == "-":
                sign = -sign
        t = self.peek()
        if t.kind == _NUM:
            self.take()
            base = Quantity(t.value)
        elif t.kind == _OP and t.op == "(":
            self.take()
            base = self.additive().q
            if not self.is_op(")"):
                raise self.fail(self.peek(), self.juxtaposed(self.peek()))
            self.take()
        else:
            raise self.fail(t, self.expected(t))
        if self.is_op("^"):
            op = self.take()
            base = self.pow(base, self.exponent(), op)
        return base if sign == 1 else -base

    def pow(self, base: Quantity, e: Quantity, op: _Tok) -> Quantity:
        if not e.dim.is_dimensionless:
            raise self.fail(op, "an exponent must be a plain number, without a unit")
        if e.value.denominator != 1:
            raise self.fail(
                op, f"the exponent must be a whole number (got {format_number(e.value)})"
            )
        n = int(e.value)
        if abs(n) > MAX_POWER:
            raise self.fail(op, f"the exponent {n} is too large (at most {MAX_POWER})")
        b = base.value
        if b == 0:
            if n < 0:
                raise self.fail(op, "division by zero (0 to a negative power)")
            return Quantity(Fraction(1 if n == 0 else 0), base.dim**n)
        size = max(b.numerator.bit_length(), b.denominator.bit_length()) * abs(n)
        mag = _log10_abs(b) * n
        if mag > 40 + 1e-9:
            raise self.fail(op, "this power is larger than 10^40; check the numbers")
        if size > _MAX_BITS:
            raise self.fail(op, "this power has too many digits to compute; simplify it")
        if mag < -40 - 1e-9:
            raise self.fail(op, "this power is smaller than 10^-40; check the numbers")
        dim = base.dim**n
        if any(abs(x) > _MAX_UNIT_POWER for x in dim._exps()):
            raise self.fail(op, "a unit raised to too high a power")
        return Quantity(b**n, dim)


def _screen(text: str) -> str:
    """Refuse control, bidi and other invisible characters; NFKC-normalise the rest."""
    for pos, c in enumerate(text):
        cat = unicodedata.category(c)
        if c in _BIDI:
            raise AnswerParseError(
                f"the answer contains a bidirectional control character (U+{ord(c):04X}) that "
                "can make text display in a misleading order; retype the answer",
                understood=text[:pos].strip(),
            )
        if cat == "Cc" and c not in "\t\n\r":
            raise AnswerParseError(
                f"the answer contains a control character (U+{ord(c):04X}); retype the answer",
                understood=text[:pos].strip(),
            )
        if cat in ("Cf", "Cs", "Co", "Cn"):
            kind = "an invisible formatting" if cat == "Cf" else "an unknown"
            raise AnswerParseError(
                f"the answer contains {kind} character (U+{ord(c):04X}); retype the answer",
                understood=text[:pos].strip(),
            )
        if cat == "No" and c not in "⁰¹²³⁴⁵⁶⁷⁸⁹":
            raise AnswerParseError(
                f"{_show_char(c)} is a special number character; type plain digits "
                "(for ½ write 0.5 or 1/2)",
                understood=text[:pos].strip(),
            )
    text = _SUPERSCRIPT_RUN.sub(lambda m: "^" + m.group(0).translate(_SUPERSCRIPTS), text)
    return unicodedata.normalize("NFKC", text)


def _strip_noise(text: str) -> tuple[str, bool]:
    """Drop surrounding space, a trailing period, and a leading '=' or approximation mark."""
    s = text.strip()
    if s.endswith(".") and not s.endswith(".."):
        s = s[:-1].rstrip()
    approximate = False
    while True:
        if s.startswith("="):
            s = s[1:].lstrip()
            continue
        m = _APPROX_PREFIX.match(s)
        if m and m.end() > 0:
            approximate = True
            s = s[m.end() :]
            continue
        return s, approximate


def _evaluate(text: str) -> tuple[_V, list[_Tok]]:
    toks = _Lexer(text).run()
    v = _Parser(text, toks).parse()
    return v, toks


def _split_trailing_unit(text: str) -> tuple[_V, str] | None:
    """`52e9 / 131072 tokens` → (the plain value of `52e9 / 131072`, "tokens"): the unit that
    closes an expression of plain numbers, applied to all of it. None when there is no such
    split (no unit, a unit first, or units inside the expression)."""
    toks = _Lexer(text).run()
    first_unit = next((i for i, t in enumerate(toks) if t.kind == _UNIT), None)
    if first_unit is None or first_unit == 0:
        return None
    head_text = text[: toks[first_unit].start].strip()
    unit_text = text[toks[first_unit].start :].strip()
    try:
        head, _ = _evaluate(head_text)
        unit = unit_factor(unit_text)
    except AnswerParseError:
        return None
    if not head.q.dim.is_dimensionless:
        return None
    return _V(head.q * unit, unit_text), unit_text


def _evaluate_with_trailing_unit(text: str) -> tuple[_V, list[_Tok]]:
    """Like _evaluate, but a unit closing a sum of plain numbers applies to all of it, as
    people mean it: `192 - 138 - 10 GB` is 44 GB, not an error."""
    try:
        return _evaluate(text)
    except UnitError:
        split = _split_trailing_unit(text)
        if split is None:
            raise
        return split[0], _Lexer(text).run()


def reread_with_trailing_unit(text: str) -> ParsedAnswer | None:
    """A second reading of an answer whose unit closes a division or product of plain numbers:
    `52e9 / 131072 tokens` as (52e9 / 131072) tokens rather than 52e9 per (131072 tokens).
    None when the answer has no such reading."""
    body, approximate = _strip_noise(_screen(text))
    split = _split_trailing_unit(body) if body else None
    if split is None:
        return None
    v, unit_text = split
    _check_magnitude(v.q, body)
    shown = _shown(v.q, unit_text)
    return ParsedAnswer(v.q, approximate, True, ("~" + shown) if approximate else shown)


def _check_magnitude(q: Quantity, text: str) -> None:
    x = abs(q.value)
    if x > MAX_MAGNITUDE:
        raise AnswerParseError(
            "the value is larger than 10^40 (in bytes, tokens or seconds); check the numbers",
            understood=text,
        )
    if 0 < x < MIN_MAGNITUDE:
        raise AnswerParseError(
            "the value is smaller than 10^-40 (in bytes, tokens or seconds); check the numbers",
            understood=text,
        )


@dataclass(frozen=True, slots=True)
class ParsedAnswer:
    """A typed answer as read: its exact quantity, whether it was marked approximate ("~97",
    "about 100"), whether a unit was typed, and `shown`, how it was read ("131,072 B = 128 KiB")."""

    quantity: Quantity
    approximate: bool
    had_unit: bool
    shown: str


def parse_answer(text: str, default_unit: str | None = None) -> ParsedAnswer:
    """Read an answer typed by a person; raise AnswerParseError (only) when it cannot be read.

    A number typed without any unit is taken in `default_unit` (had_unit False), or as a plain
    number when there is none.
    """
    if not isinstance(text, str):
        raise AnswerParseError(f"the answer must be text, not {type(text).__name__}")
    if not text.strip():
        raise AnswerParseError("the answer is empty: type a number, such as 131072 or 52 GB")
    if len(text) > MAX_CHARS:
        raise AnswerParseError(
            f"the answer is longer than {MAX_CHARS} characters; type just the number and unit"
        )
    normal = _screen(text)
    if len(normal) > 4 * MAX_CHARS:
        raise AnswerParseError("the answer is too long once normalised; type plain characters")
    body, approximate = _strip_noise(normal)
    if not body:
        raise AnswerParseError(
            "no number found: type a number, such as 131072 or 52 GB",
            understood=normal.strip(),
        )
    v, toks = _evaluate_with_trailing_unit(body)
    if not any(t.kind == _NUM for t in toks):
        raise AnswerParseError(
            f"no number found in '{body}': type a number before the unit, as in 52 GB",
            understood=body,
        )
    had_unit = any(t.kind == _UNIT for t in toks)
    q, unit_text = v.q, v.text
    if not had_unit and default_unit is not None:
        q = q * unit_factor(default_unit)
        unit_text = default_unit
    _check_magnitude(q, body)
    shown = _shown(q, unit_text)
    return ParsedAnswer(
        quantity=q,
        approximate=approximate,
        had_unit=had_unit,
        shown=("~" + shown) if approximate else shown,
    )


@functools.lru_cache(maxsize=512)
def unit_factor(unit: str) -> Quantity:
    """The quantity that one `unit` is: "GB" → 10^9 B, "tokens/s", "B/token", "ms", "%", "1".

    Raises UnitError (an AnswerParseError and a ValueError) for an unknown or malformed unit.
    """
    if not isinstance(unit, str) or not unit.strip() or len(unit) > MAX_CHARS:
        raise UnitError(f"not a unit: {unit!r}; {_KNOWN_UNITS_HINT}")
    try:
        v, _ = _evaluate(unicodedata.normalize("NFKC", unit.strip()))
    except UnitError:
        raise
    except AnswerParseError as exc:
        raise UnitError(f"not a unit: {unit!r} ({exc})", understood=exc.understood) from None
    if v.q.value == 0:
        raise UnitError(f"not a unit: {unit!r} is zero")
    return v.q


def in_unit(q: Quantity, unit: str) -> Fraction:
    """The value of `q` expressed in `unit` (exact). UnitError if the dimensions differ."""
    f = unit_factor(unit)
    if q.dim != f.dim:
        raise UnitError(
            f"a value in {_dim_label(q.dim)} cannot be expressed in {unit} ({_dim_label(f.dim)})"
        )
    return q.value / f.value


# --------------------------------------------------------------------------------------------
# Formatting
# --------------------------------------------------------------------------------------------


def _to_fraction(x: Number) -> Fraction | str:
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
    f = _as_fraction(x)
    if f is None:
        raise TypeError(f"not a number: {x!r}")
    return f


def _round_half_up(x: Fraction) -> int:
    """Nearest integer, halves away from zero."""
    r = math.floor(abs(x) + Fraction(1, 2))
    return r if x >= 0 else -r


def _round_sig(x: Fraction, sig: int) -> tuple[int, int]:
    """For x > 0: (m, e) with 10^(sig-1) <= m < 10^sig and x ≈ m * 10^(e - sig + 1)."""
    e = math.floor((x.numerator.bit_length() - x.denominator.bit_length()) * 0.30103)
    while Fraction(10) ** e > x:
        e -= 1
    while Fraction(10) ** (e + 1) <= x:
        e += 1
    m = _round_half_up(x / Fraction(10) ** (e - sig + 1))
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
    f = _to_fraction(x)
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
        return _scientific(*_round_sig(f, sig))
    if f >= 10 ** (sig - 1):
        return f"{_round_half_up(f):,}"
    m, e = _round_sig(f, sig)
    return _fixed(m, e, sig)


def _exact_text(x: Fraction) -> str:
    """A value as typed: exact when it has at most 6 decimals, else 6 significant figures."""
    if x < 0:
        return "-" + _exact_text(-x)
    for k in range(7):
        scaled = x * 10**k
        if scaled.denominator == 1 and scaled < 10**15:
            s = str(scaled.numerator).rjust(k + 1, "0")
            int_part, frac = (s[:-k], s[-k:]) if k else (s, "")
            return _group(int_part) + ("." + frac if frac else "")
    return format_number(x, 6)


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
        if abs(_round_half_up(v)) >= ratio:  # 999.96 KB rounds up to the next unit
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
    m, e = _round_sig(v, sig)
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
    f = _to_fraction(n)
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
        exact = f"{f.numerator:,} B" if f.denominator == 1 else f"{_exact_text(f)} B"
        if f < 1000:
            return exact
        if f >= 1024 and _exact_in(f, _BIN_BYTES):
            return f"{exact} ({_scaled(f, _BIN_BYTES)})"
        return f"{exact} ({_scaled(f, _SI_BYTES)})"
    raise ValueError(f"unknown byte system {system!r}: use si, binary, both or auto")


def format_seconds(s: Number) -> str:
    """34.1 ms, 3.2 ms, 120 µs, 500 ns, 1.5 s, 59 s; from 120 s "2 min 5 s"; 2 h up "2 h 5 min"."""
    f = _to_fraction(s)
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
    total = _round_half_up(f)
    if total < 7200:
        minutes, secs = divmod(total, 60)
        return f"{minutes} min {secs} s" if secs else f"{minutes} min"
    total_min = _round_half_up(f / 60)
    hours, minutes = divmod(total_min, 60)
    return f"{hours:,} h {minutes} min" if minutes else f"{hours:,} h"


def _format_natural(q: Quantity, sig: int = 3) -> str:
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
        return _format_natural(q, sig)
    text = format_number(in_unit(q, unit), sig)
    return f"{text}%" if unit == "%" else f"{text} {unit}"


def _shown(q: Quantity, unit_text: str | None) -> str:
    """How an answer was read: the value in the unit typed, then a natural form if it differs."""
    natural = _format_natural(q)
    if unit_text is None:
        return _exact_text(q.value) if q.dim.is_dimensionless else natural
    try:
        typed_value = in_unit(q, unit_text)
    except AnswerParseError:
        return natural
    number = _exact_text(typed_value)
    left = f"{number}%" if unit_text == "%" else f"{number} {unit_text}"
    if natural.split(" ")[0] == number:
        return left
    return f"{left} = {natural}"
