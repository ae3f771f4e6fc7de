"""Arithmetic on typed text: a tokenizer and a small recursive-descent parser of this module's
own for numbers, units, + − × ÷, bounded powers and parentheses. Nothing a person types ever
reaches eval, exec, compile or sympy. Sizes are bounded before anything is computed (input
length, token count, nesting depth, digits, exponents, power results), so every expression is
read or refused in well under a millisecond, whatever it contains.

A unit a drill names ("tokens/s", "B/token") is read by the same grammar (`unit_factor`), so
every unit a drill can name is one a person can type. The human forms around an answer
(approximation marks, working, ranges, labels, ratios) are read by reader.py, which calls
`evaluate` on what is left.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata

from trainer.errors import AnswerParseError
from trainer.reading.exact import Fraction
from trainer.reading.numbers import format_number
from trainer.reading.patterns import lazy
from trainer.reading.units import (
    APPROX_WORDS,
    BYTES,
    CASELESS_UNITS,
    KNOWN_UNITS_HINT,
    MAX_UNIT_CHARS,
    MULTIPLIER_WORDS,
    MULTIPLIERS,
    NOT_NUMBERS,
    UNITS,
    Quantity,
    UnitError,
    as_fraction,
    dim_label,
)
from trainer.records import record

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


_MINUS = "-−–‒"
_TIMES = "*×·⋅∗"
_DIVIDE = "/÷∕⁄"

_SPACE_GROUPED = lazy(r"(\d{1,3}(?: \d{3})+)(?![\d,_])(?:\.(\d+))?(?:[eE]([+-]?\d+))?", re.A)
_NUMBER = lazy(r"(\d+(?:[,_]\d+)*)?(?:\.(\d+))?(?:[eE]([+-]?\d+))?", re.A)
_COMMA_GROUPS = lazy(r"[1-9]\d{0,2}(?:,\d{3})+", re.A)  # "0,125" is no thousands: a decimal comma


def show_char(c: str) -> str:
    code = f"U+{ord(c):04X}"
    if c.isprintable() and not c.isspace() and unicodedata.category(c)[0] != "C":
        return f"'{c}'" if c.isascii() else f"'{c}' ({code})"
    return code


def show_word(w: str) -> str:
    return f"'{w}'" if len(w) <= 24 else f"'{w[:24]}…'"


# --------------------------------------------------------------------------------------------
# Tokenizer
# --------------------------------------------------------------------------------------------

_NUM, _UNIT, _MULT, _OP, _END = "number", "unit", "multiplier", "operator", "end"

# Binary prefixes written before a count rather than bytes
_BINARY_COUNTS = {"ki": 2**10, "mi": 2**20, "gi": 2**30}
_COUNTED = lazy(r"\s*(?:tokens?|toks?|sequences?|seqs?|sessions?|requests?|users?)\b",
                re.IGNORECASE)


@record(slots=True)
class _Tok:
    kind: str
    text: str
    start: int
    end: int
    value: Fraction = Fraction(0)  # a number's value, a multiplier's factor
    unit: Quantity | None = None  # a unit's factor
    op: str = ""  # normalised operator: + - * / ^ ( )


def _plural_of_size(w: str) -> str:
    """The byte unit that `w` + "s" is a plural of ("GBs", "KiBs"), or ""."""
    name = w if w in UNITS else CASELESS_UNITS.get(w.lower(), "")
    return name if name and UNITS[name].dim == BYTES and UNITS[name].value >= 1 else ""


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
                f"the number {show_word(text)} has more than {MAX_DIGITS} digits; "
                "use an exponent such as 1.3e5",
            )
        exp = 0
        if exp_text is not None:
            digits = exp_text.lstrip("+-")
            if len(digits.lstrip("0")) > 2 or int(digits) > MAX_EXP10:
                raise self.fail(
                    i,
                    f"the exponent in {show_word(text)} is out of range "
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
        if low in _BINARY_COUNTS and _COUNTED.match(s, j):
            # "128 Ki tokens" is 131,072 tokens, not 128 KiB
            self.push(_Tok(_MULT, w, i, j, value=Fraction(_BINARY_COUNTS[low])))
        elif w in UNITS:
            self.push(_Tok(_UNIT, w, i, j, unit=UNITS[w]))
        elif low == "per":
            self.push(_Tok(_OP, w, i, j, op="/"))
        elif w in ("x", "X"):
            self.push(_Tok(_OP, w, i, j, op="*"))
        elif w in MULTIPLIERS or low in MULTIPLIER_WORDS:
            factor = MULTIPLIERS.get(w) or MULTIPLIER_WORDS[low]
            self.push(_Tok(_MULT, w, i, j, value=Fraction(factor)))
        elif low in CASELESS_UNITS:
            self.push(_Tok(_UNIT, w, i, j, unit=UNITS[CASELESS_UNITS[low]]))
        elif len(w) > 2 and w.endswith("s") and _plural_of_size(w[:-1]):
            self.push(_Tok(_UNIT, w, i, j, unit=UNITS[_plural_of_size(w[:-1])]))
        elif low in NOT_NUMBERS:
            raise self.fail(i, f"{show_word(w)} is not accepted: type a finite number")
        elif low in APPROX_WORDS:
            raise self.fail(
                i, f"{show_word(w)} can only come first, as in 'about 100' or '~34 ms'"
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
            near = [u for u in UNITS if u.lower() == low]
            if near:
                hint = "did you mean " + " or ".join(f"'{u}'" for u in sorted(near)) + "?"
            elif after_number and low in ("e", "E"):
                hint = "an exponent needs digits, as in 1.3e5"
            else:
                hint = KNOWN_UNITS_HINT
            raise self.fail(i, f"unknown word {show_word(w)}; {hint}")
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
            self.push(_Tok(_UNIT, "%", i, i + 1, unit=UNITS["%"]))
            return i + 1
        if op:
            self.push(_Tok(_OP, s[i : i + length], i, i + length, op=op))
            return i + length
        raise self.fail(i, self.char_message(c))

    @staticmethod
    def char_message(c: str) -> str:
        shown = show_char(c)
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


@record(slots=True)
class _V:
    q: Quantity
    text: str | None = None  # the unit as the person wrote it, when it still applies
    bare: bool = False  # a unit written without a number ("/ s", "per second")


def _label(v: _V) -> str:
    return v.text if v.text is not None else dim_label(v.q.dim)


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



def evaluate(text: str) -> tuple[_V, list[_Tok]]:
    toks = _Lexer(text).run()
    v = _Parser(text, toks).parse()
    return v, toks


def split_trailing_unit(text: str) -> tuple[_V, str] | None:
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
        head, _ = evaluate(head_text)
        unit = unit_factor(unit_text)
    except AnswerParseError:
        return None
    if not head.q.dim.is_dimensionless:
        return None
    return _V(head.q * unit, unit_text), unit_text


def evaluate_with_trailing_unit(text: str) -> tuple[_V, list[_Tok]]:
    """Like evaluate, but a unit closing a sum of plain numbers applies to all of it, as
    people mean it: `192 - 138 - 10 GB` is 44 GB, not an error."""
    try:
        return evaluate(text)
    except UnitError:
        split = split_trailing_unit(text)
        if split is None:
            raise
        return split[0], _Lexer(text).run()


# --------------------------------------------------------------------------------------------
# Units named in text: the unit grammar is the answer grammar
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=512)
def unit_factor(unit: str) -> Quantity:
    """The quantity that one `unit` is: "GB" → 10^9 B, "tokens/s", "B/token", "ms", "%", "1".

    Raises UnitError (an AnswerParseError and a ValueError) for an unknown or malformed unit.
    """
    if not isinstance(unit, str) or not unit.strip() or len(unit) > MAX_UNIT_CHARS:
        raise UnitError(f"not a unit: {unit!r}; {KNOWN_UNITS_HINT}")
    try:
        v, _ = evaluate(unicodedata.normalize("NFKC", unit.strip()))
    except UnitError:
        raise
    except AnswerParseError as exc:
        raise UnitError(f"not a unit: {unit!r} ({exc})", understood=exc.understood) from None
    if v.q.value == 0:
        raise UnitError(f"not a unit: {unit!r} is zero")
    return v.q


def quantity_of(value: int | Fraction, unit: str) -> Quantity:
    """`value` in `unit`: quantity_of(52, "GB") is 52e9 B; quantity_of(117, "tokens/s")."""
    v = as_fraction(value)
    if v is None:
        raise TypeError(f"value must be an int or Fraction, not {type(value).__name__}")
    f = unit_factor(unit)
    return Quantity(v * f.value, f.dim)


def in_unit(q: Quantity, unit: str) -> Fraction:
    """The value of `q` expressed in `unit` (exact). UnitError if the dimensions differ."""
    f = unit_factor(unit)
    if q.dim != f.dim:
        raise UnitError(
            f"a value in {dim_label(q.dim)} cannot be expressed in {unit} ({dim_label(f.dim)})"
        )
    return q.value / f.value

