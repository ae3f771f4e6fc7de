"""Quantities with dimensions and the unit table: exact values in bytes, tokens, sequences,
seconds and FLOP, and what each unit name ("GB", "token", "ms") is worth.

Everything here is exact (``reading.exact.Fraction``: the standard library's class, compiled).
Arithmetic on typed text, and so compound units such as "tokens/s" (`unit_factor`), lives in
expression.py; the human forms of an answer in reader.py; display in numbers.py and formatting.py.

Base units: bytes, tokens, sequences, seconds, FLOP. GB = 10^9 B, GiB = 2^30 B.
"""

from __future__ import annotations

from trainer.errors import AnswerParseError
from trainer.reading.exact import Fraction
from trainer.records import record

__all__ = [
    "BYTES",
    "DIMENSIONLESS",
    "FLOPS",
    "SECONDS",
    "SEQUENCES",
    "TOKENS",
    "Dim",
    "Quantity",
    "UnitError",
]

MAX_UNIT_CHARS = 200


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


@record(slots=True)
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


def as_fraction(x: object) -> Fraction | None:
    if isinstance(x, bool):
        return None
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    return None


def dim_label(dim: Dim) -> str:
    return "a plain number" if dim.is_dimensionless else str(dim)


@record(slots=True)
class Quantity:
    """An exact value in base units (bytes, tokens, sequences, seconds, FLOP) and its dimension.

    `value` accepts int or Fraction (stored as Fraction); floats are refused, so nothing inexact
    slips in. Use `expression.quantity_of(52, "GB")` to build one from a unit.
    """

    value: Fraction
    dim: Dim = DIMENSIONLESS

    def __post_init__(self) -> None:
        v = as_fraction(self.value)
        if v is None:
            raise TypeError(
                f"Quantity value must be an int or Fraction, not {type(self.value).__name__}"
            )
        object.__setattr__(self, "value", v)
        if not isinstance(self.dim, Dim):
            raise TypeError("Quantity dim must be a Dim")

    def _other(self, other: object) -> Quantity | None:
        if isinstance(other, Quantity):
            return other
        v = as_fraction(other)
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
            a, b = dim_label(self.dim), dim_label(o.dim)
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


# --------------------------------------------------------------------------------------------
# Unit table
# --------------------------------------------------------------------------------------------


def _build_units() -> dict[str, Quantity]:
    table: dict[str, Quantity] = {}

    def add(names: str, factor: int | Fraction, dim: Dim) -> None:
        for name in names.split():
            table[name] = Quantity(Fraction(factor), dim)

    # A size typed all in lower case ("52gb", "128 kb") means bytes to nearly everyone who
    # types it; bits are written Gb or Gbit.
    add("B byte bytes", 1, BYTES)
    add("KB kB kb kilobyte kilobytes", 10**3, BYTES)
    add("MB mb megabyte megabytes", 10**6, BYTES)
    add("GB gb gigabyte gigabytes gig gigs", 10**9, BYTES)
    add("TB tb terabyte terabytes", 10**12, BYTES)
    add("PB", 10**15, BYTES)
    add("KiB Ki kibibyte kibibytes", 2**10, BYTES)
    add("MiB Mi mebibyte mebibytes", 2**20, BYTES)
    add("GiB Gi gibibyte gibibytes", 2**30, BYTES)
    add("TiB Ti tebibyte tebibytes", 2**40, BYTES)
    add("PiB", 2**50, BYTES)
    add("b bit bits", Fraction(1, 8), BYTES)
    add("Kb kbit Kbit", Fraction(10**3, 8), BYTES)
    add("Mb Mbit", Fraction(10**6, 8), BYTES)
    add("Gb Gbit", Fraction(10**9, 8), BYTES)
    add("Tb Tbit", Fraction(10**12, 8), BYTES)
    add("token tokens tok toks", 1, TOKENS)
    add(
        "sequence sequences seq seqs session sessions user users request requests req reqs "
        "conversation conversations convo convos chat chats stream streams",
        1,
        SEQUENCES,
    )
    add("s sec secs second seconds", 1, SECONDS)
    add("rps qps", 1, SEQUENCES / SECONDS)  # requests (queries) per second
    add("tps", 1, TOKENS / SECONDS)  # tokens per second, as serving dashboards say
    add("ms msec msecs millisecond milliseconds", Fraction(1, 10**3), SECONDS)
    add("us µs μs microsecond microseconds", Fraction(1, 10**6), SECONDS)
    add("ns nanosecond nanoseconds", Fraction(1, 10**9), SECONDS)
    add("min mins minute minutes", 60, SECONDS)
    add("FLOP FLOPs flop flops", 1, FLOPS)
    add("kFLOP kFLOPs", 10**3, FLOPS)
    add("MFLOP MFLOPs", 10**6, FLOPS)
    add("GFLOP GFLOPs", 10**9, FLOPS)
    add("TFLOP TFLOPs", 10**12, FLOPS)
    add("PFLOP PFLOPs", 10**15, FLOPS)
    add("% percent pct", Fraction(1, 100), DIMENSIONLESS)
    return table


UNITS: dict[str, Quantity] = _build_units()

# Long unit words, accepted in any letter case ("Tokens", "SECONDS").
CASELESS_UNITS: dict[str, str] = {
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
        "percent",
        "conversation",
        "conversations",
        "convo",
        "convos",
        "chat",
        "chats",
        "stream",
        "streams",
        "kilobyte",
        "kilobytes",
        "megabyte",
        "megabytes",
        "gigabyte",
        "gigabytes",
        "terabyte",
        "terabytes",
        "kibibyte",
        "kibibytes",
        "mebibyte",
        "mebibytes",
        "gibibyte",
        "gibibytes",
        "tebibyte",
        "tebibytes",
        "millisecond",
        "milliseconds",
        "microsecond",
        "microseconds",
        "nanosecond",
        "nanoseconds",
        "KiB",
        "MiB",
        "GiB",
        "TiB",
    ]
}

MULTIPLIERS: dict[str, int] = {"k": 10**3, "K": 10**3, "M": 10**6}
MULTIPLIER_WORDS: dict[str, int] = {"thousand": 10**3, "million": 10**6, "billion": 10**9}

APPROX_WORDS = frozenset(
    ["about", "approx", "approximately", "around", "roughly", "ca", "circa", "nearly", "almost"]
)
NOT_NUMBERS = frozenset(["nan", "inf", "infinity", "infinite"])

KNOWN_UNITS_HINT = (
    "known units: B, KB, MB, GB, TB, KiB, MiB, GiB, bits, tokens, sequences, s, ms, µs, "
    "FLOP, % (rates like GB/s, tokens/s, B/token)"
)
