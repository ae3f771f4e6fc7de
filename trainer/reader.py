"""Reading an answer the way a person typed it."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from trainer.errors import AnswerParseError
from trainer.expression import (
    _NUM,
    _UNIT,
    MAX_CHARS,
    MAX_MAGNITUDE,
    MIN_MAGNITUDE,
    evaluate_with_trailing_unit,
    show_char,
    split_trailing_unit,
)
from trainer.formatting import exact_text, format_natural
from trainer.units import Quantity, in_unit, unit_factor

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
                f"{show_char(c)} is a special number character; type plain digits "
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



def reread_with_trailing_unit(text: str) -> ParsedAnswer | None:
    """A second reading of an answer whose unit closes a division or product of plain numbers:
    `52e9 / 131072 tokens` as (52e9 / 131072) tokens rather than 52e9 per (131072 tokens).
    None when the answer has no such reading."""
    body, approximate = _strip_noise(_screen(text))
    split = split_trailing_unit(body) if body else None
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
    v, toks = evaluate_with_trailing_unit(body)
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


def _shown(q: Quantity, unit_text: str | None) -> str:
    """How an answer was read: the value in the unit typed, then a natural form if it differs."""
    natural = format_natural(q)
    if unit_text is None:
        return exact_text(q.value) if q.dim.is_dimensionless else natural
    try:
        typed_value = in_unit(q, unit_text)
    except AnswerParseError:
        return natural
    number = exact_text(typed_value)
    left = f"{number}%" if unit_text == "%" else f"{number} {unit_text}"
    if natural.split(" ")[0] == number:
        return left
    return f"{left} = {natural}"

