"""Reading an answer the way a person typed it.

`parse_answer` reads one expression with units (after screening out control characters and a
leading '=' or '~'). `read_answer` does what a patient marker does with what people really type
at a step: the value after the last '=' of shown working, a range (90-100, 90 to 100), a ratio
(8x, 8:1, 8-fold), a noun that labels a count (8 KV heads, 97 concurrent users), words after the
number (52 GB for KV), hesitation (52GB?, 52 GB (approx)) and, on a byte step, a bare 128k read
both as 128 KB and as 128 KiB. It returns every plausible reading, most likely first, each with
a note saying how a human form was read; the checker picks among them.

Nothing here evaluates code: every value comes from trainer/reading/expression.py's bounded parser.
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata

from trainer.errors import AnswerParseError, KvdrillError
from trainer.reading.emphasis import without_emphasis
from trainer.reading.exact import Fraction
from trainer.reading.expression import (
    _NUM,
    _OP,
    _UNIT,
    _V,
    MAX_CHARS,
    MAX_MAGNITUDE,
    MIN_MAGNITUDE,
    _Tok,
    evaluate_with_trailing_unit,
    in_unit,
    show_char,
    show_word,
    split_trailing_unit,
    unit_factor,
)
from trainer.reading.formatting import format_natural
from trainer.reading.numbers import exact_text
from trainer.reading.patterns import lazy
from trainer.reading.units import (
    CASELESS_UNITS,
    DIMENSIONLESS,
    MULTIPLIER_WORDS,
    SEQUENCES,
    TOKENS,
    UNITS,
    Dim,
    Quantity,
)
from trainer.records import record

_BIDI = frozenset(
    [chr(c) for c in range(0x202A, 0x202F)]
    + [chr(c) for c in range(0x2066, 0x206A)]
    + ["\u200e", "\u200f", "\u061c"]
)
_SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
_SUPERSCRIPT_RUN = lazy("[⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺]+")
_APPROX_PREFIX = lazy(
    r"(?:~=|~|≈|≃|approximately|approx\.?|about|around|roughly|nearly|almost|circa|ca\.|ca\b)\s*",
    re.IGNORECASE,
)


# Sizes typed in lower case or spelled out, shown the way the step would write them.
_CANONICAL = {"kb": "KB", "mb": "MB", "gb": "GB", "tb": "TB", "kib": "KiB", "mib": "MiB",
              "gib": "GiB", "tib": "TiB", "gig": "GB", "gigs": "GB", "ki": "KiB", "mi": "MiB",
              "gi": "GiB", "ti": "TiB"}
_SPELLED_UNIT = lazy(r"\b(?:" + "|".join(_CANONICAL) + r")\b", re.IGNORECASE)


def _canonical_unit(m: re.Match[str]) -> str:
    word = m.group(0)
    canonical = _CANONICAL[word.lower()]
    same = word not in UNITS or UNITS[word] == UNITS[canonical]  # "Gb" is gigabits: kept
    return canonical if same else word


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


@record(slots=True)
class ParsedAnswer:
    """A typed answer as read: its exact quantity, whether it was marked approximate ("~97",
    "about 100"), whether a unit was typed, and `shown`, how it was read ("131,072 B = 128 KiB")."""

    quantity: Quantity
    approximate: bool
    had_unit: bool
    shown: str
    unit: str | None = None  # the unit it was read in (typed, or the step's for a bare number)
    note: str = ""  # how a human form was read ("128k read as 128 KiB (binary)")
    # Half of this either side of the value is what its typed digits claim ("38 tok/s": 1
    # tok/s, so 37.5 to 38.5), for a single number of two or more significant figures.
    resolution: Fraction | None = None


def _evaluate_number(text: str) -> tuple[_V, list[_Tok]]:
    """`text` evaluated; refused when it holds a unit but no number ("GB")."""
    v, toks = evaluate_with_trailing_unit(text)
    if not any(t.kind == _NUM for t in toks):
        raise AnswerParseError(
            f"no number found in '{text}': type a number before the unit, as in 12 GB",
            understood=text,
        )
    return v, toks


def _check_typed(text: object, limit: int) -> None:
    if not isinstance(text, str):
        raise AnswerParseError(f"the answer must be text, not {type(text).__name__}")
    if not text.strip():
        raise AnswerParseError("the answer is empty: type a number, with its unit if any (12 GB)")
    if len(text) > limit:
        raise AnswerParseError(
            f"the answer is longer than {limit} characters; type just the number and unit"
        )


def parse_answer(text: str, default_unit: str | None = None) -> ParsedAnswer:
    """Read an answer typed by a person; raise AnswerParseError (only) when it cannot be read.

    A number typed without any unit is taken in `default_unit` (had_unit False), or as a plain
    number when there is none.
    """
    _check_typed(text, MAX_CHARS)
    normal = _screen(text)
    if len(normal) > 4 * MAX_CHARS:
        raise AnswerParseError("the answer is too long once normalised; type plain characters")
    body, approximate = _strip_noise(normal)
    if not body:
        raise AnswerParseError(
            "no number found: type a number, with its unit if any (12 GB)",
            understood=normal.strip(),
        )
    v, toks = _evaluate_number(body)
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
        unit=unit_text,
    )


def _counted(unit_text: str, number: str) -> str:
    """A count's unit in the grammar of its number: 1 sequence, 2 sequences."""
    return unit_text[:-1] if number == "1" and unit_text in _SINGULAR_OK else unit_text


_SINGULAR_OK = frozenset({"sequences", "tokens", "blocks", "requests", "GPUs", "steps"})


def _shown(q: Quantity, unit_text: str | None) -> str:
    """How an answer was read: the value in the unit typed, then a natural form if it differs."""
    if unit_text is not None:
        unit_text = _SPELLED_UNIT.sub(_canonical_unit, unit_text)
    natural = format_natural(q)
    if unit_text is None:
        return exact_text(q.value) if q.dim.is_dimensionless else natural
    try:
        typed_value = in_unit(q, unit_text)
    except AnswerParseError:
        return natural
    number = exact_text(typed_value)
    left = f"{number}%" if unit_text == "%" else f"{number} {_counted(unit_text, number)}"
    number_shown, _, unit_shown = natural.partition(" ")
    if number_shown == number or (unit_shown and unit_shown == left.partition(" ")[2]):
        return left  # (in the unit typed, its natural form is only the figure rounded)
    return f"{left} = {natural}"


# --------------------------------------------------------------------------------------------
# The human forms around an answer
# --------------------------------------------------------------------------------------------

MAX_ANSWER_CHARS = 400  # a whole typed answer with its working; one expression stays ≤ MAX_CHARS


@record
class Answer:
    """Everything a typed answer could mean at a step: `readings`, most likely first (for a
    range, its two ends); `span` when it is a range (low, high); `working_parts`, the working
    shown before the last '=' (`working_values` reads it); `notes`, what was set aside around
    the result ("ignored the aside '(16 GiB each)'"); each reading has its own note."""

    readings: tuple[ParsedAnswer, ...]
    span: tuple[ParsedAnswer, ParsedAnswer] | None = None
    working_parts: tuple[str, ...] = ()
    working_text: str = ""
    notes: tuple[str, ...] = ()
    unit: str = ""  # the step's unit
    bound: bool = False  # "< 1%", "under 1%": the span runs from zero up to the bound


_TRAILING_PUNCT = lazy(r"[\s.?!…,;:]+$")
_TRAILING_APPROX = lazy(
    r"\s*(?:\(\s*(?:approx\.?|approximately|roughly|about|around|est\.?|estimated|estimate|ish"
    r"|rounded|rough|ballpark|give or take|or so)\s*\)|,?\s*(?:approx\.?|approximately|roughly"
    r"|or so|-?ish|give or take|ballpark|more or less|or thereabouts|tops))$",
    re.IGNORECASE,
)
_TRAILING_PAREN = lazy(r"\s*\(([^()]*)\)$")
_GLUED_ISH = lazy(r"(?<=\d)-?ish\b", re.IGNORECASE)
# "8× (64/8)": a × glued to its number and spaced from the group is the ratio's sign, as
# "8x (64/8)" is; "8 × (64/8)" and "8×(64/8)" multiply
_RATIO_BEFORE_ASIDE = lazy(r"\d×$")
_ENDS_IN_OPERATOR = lazy(r"(?:[-+*/×÷^(·−]|\bper|\bx|\bof)\s*$", re.IGNORECASE)
_SHORTHAND = lazy(r"(?<=[\d\s])(?:tps|t/s|tok/sec|tokens/sec)\b", re.IGNORECASE)
_LEADING_LABEL = lazy(r"^[A-Za-z][A-Za-z _/'’.()-]{0,40}:\s*(?=\S)")
_LEADING_FILLER = lazy(
    r"^(?:so|thus|hence|therefore|ok|okay|answer|ans|result|that'?s|that is|it'?s|it is"
    r"|i get|i got|i'?d say|i think|i guess|maybe|probably|we get|you get|gives|giving"
    r"|just under|just over|a bit under|a bit over|a little under|a little over|under|over"
    r"|est\.?|estimate|just|only|still|same|exactly|precisely|basically|also|again|now|then"
    r"|unchanged|stays|remains|overall|at most|up to|max|maximum|yes|yeah|ok)\b[\s,:]*",
    re.IGNORECASE,
)
# A few words before the first number ("ratio 8", "roughly about 52 GB") are dropped, unless
# one of them changes what the number means ("not 52", "x8", "between 90 and 100").
_KEEP_LEADING = frozenset({"x", "not", "minus", "negative", "between", "from"})
# A few words before the number, a comma or colon after them allowed: "about 96",
# "same as before, ~181 GB", "double: 192".
_LEADING_WORDS = lazy(r"^((?:[A-Za-z][A-Za-z'’-]*[,:]?\s+){1,4})(?=[~≈]?\s*\d)")
# What separates shown working from the result: the value after the last one is the answer.
_WORKING_SEPARATOR = lazy(
    r"\s*(?:=>|->|→|⇒|~=|=|≈|≃|\b(?:so|gives|giving|hence|thus|therefore|i\.e\.|ie|which is"
    r"|that'?s|that is|making|equals|is"
    # the value settled on: "about 97, call it 96", "190ish, let's say 185", and a value
    # corrected: "96/8 = 12 ... actually 24" (expert pass 54), "12, make that 24"
    r"|call it|let'?s say|round(?:ed)? (?:it )?(?:down |up )?to"
    r"|actually|make (?:it|that)|correction"
    # and the value picked from a range: "90-100, say 96", "90 - 100, probably 96", or the
    # round figure a quotient with decimals comes to: "44 / 10.7 = 4.1, about 4" (expert pass
    # 56, W14; "96, roughly 100" keeps 96: a whole figure rounded for the ear)
    r"|(?<=,\s)(?:say|probably|likely)"
    r"|(?:(?<=\.\d,\s)|(?<=\.\d\d,\s)|(?<=\.\d\d\d,\s))(?:about|roughly|around)"
    r"(?=\s*[~≈]?\s*\d))\b)\s*",
    re.IGNORECASE,
)
_UNITS_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
    "nineteen",
)
_TENS_WORDS = (
    "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety",
)
_NUMBER_WORDS = {
    **{w: n for n, w in enumerate(_UNITS_WORDS)},
    **{w: 20 + 10 * n for n, w in enumerate(_TENS_WORDS)},
    "hundred": 100,
    "dozen": 12,
}
_NUMBER_WORD = lazy(
    r"^(?:a\s+)?(" + "|".join(_NUMBER_WORDS) + r")(?:[- ](" + "|".join(_UNITS_WORDS[1:10])
    + r"))?(?=\b|fold\b)",
    re.IGNORECASE,
)
_NONE_FIT = lazy(
    # ("no limit", "no cap": unbounded, the opposite of none)
    r"^(?:none|nothing|nil|no(?!\s+(?:limit|cap|bound|ceiling|upper|max))|"
    r"not\s+(?:a\s+single(?:\s+one)?|even\s+one|one))\b",
    re.IGNORECASE,
)
_NUM_TEXT = r"\d[\d,_]*(?:\.\d+)?(?:[eE][+-]?\d+)?"
_RATIO = lazy(
    r"^(?:(?:by\s+)?a\s+)?(?:factor\s+(?:of\s+)?)?(?:"
    r"(?:[x×]\s*(?P<pre>" + _NUM_TEXT + r"))"
    # A ratio's x is not followed by a number: "8x", "8x more", but "64 x 128" is a product.
    r"|(?:(?P<n>" + _NUM_TEXT + r")\s*(?:x|×|-?\s*fold|\s+times|(?::|\s+to)\s*1)"
    r"(?![\d.])(?!\s*[(\d.])"
    r"(?P<tail>.*))"
    r"|(?:1\s*(?::|\s+to\s+)\s*(?P<inv>" + _NUM_TEXT + r")))$",
    re.IGNORECASE,
)
_RANGE_SEPARATOR = lazy(r"\s*(?:-|–|—|‒|−|~|\bto\b|\band\b|\bor\b)\s*", re.IGNORECASE)
_RANGE_END = lazy(
    r"^" + _NUM_TEXT + r"\s*(?:[kKMG](?![A-Za-z])|thousand|million)?\s*[A-Za-zµμ%/ ]*$"
)
_RANGE_LEAD = lazy(r"^(?:between|from)\s+", re.IGNORECASE)
_BARE_SUFFIX = lazy(
    r"^(?P<n>" + _NUM_TEXT + r")\s*(?P<m>[kKMGT])\s*(?P<per>(?:/|per\s+)\s*(?:tokens?|toks?))?$"
)
_SUFFIX_POWER = {"k": 1, "K": 1, "M": 2, "G": 3, "T": 4}
_COUNT_LABEL = lazy(
    r"^(?P<n>.*?\d[\d.,]*(?:\s*[kKM](?![A-Za-z]))?)\s*(?:of\s+)?"
    r"(?P<words>(?:[A-Za-z][\w-]*\s+){0,2}?)"
    r"(?:(?:kv|k/v|key[- /]?value|query|q|attention|attn)\s+)?"
    r"(?:heads?|(?:transformer\s+|decoder\s+|hidden\s+)?layers?|dims?|dimensions?"
    r"|elements?|elems?|blocks?|pages?|gpus?|cards?|devices?|experts?|replicas?|nodes?"
    r"|instances?|servers?|machines?|pods?|workers?|chunks?|steps?)\b.*$",
    re.IGNORECASE,
)
_PER_THING = lazy(
    r"\s*(?:/|\bper\b|\ba\b|\ban\b)\s*(?:decode\s+)?(?:element|elem|value|entry|gpu|card"
    r"|device|rank|step|iteration|iter|forward|pass)s?\b"
    r"|\s+each$",
    re.IGNORECASE,
)
# Adjectives between a number and what it counts ("96 concurrent live sessions"); only right
# after the number, so "keep more headroom" later in a remark keeps its words.
_ADJECTIVE = lazy(
    r"(?<=[\dkKM])(?:\s*\b(?:concurrent|simultaneous|active|live|parallel|total|max|maximum"
    r"|full|whole|complete|such|more|ongoing|in-flight|inflight|running|batched|chat"
    r"|long-context|cached|resident|kv|kv-cache)\b)+\s+(?=[A-Za-z])",
    re.IGNORECASE,
)
_PLAIN_WORDS = frozenset((
    "for", "at", "of", "in", "on", "with", "per", "each", "left", "free", "available",
    "total", "fit", "fits", "fitting", "max", "maximum", "across", "when", "since",
    "because", "as", "to", "from", "which", "that", "if", "so", "and", "or", "but", "ie",
    "eg", "i", "e", "approx", "roughly", "about", "concurrent", "simultaneous", "active",
    "live", "parallel", "at", "once", "sequence", "sequences", "rounded", "down", "floor",
    "is", "are", "would", "could", "should", "will", "can", "cannot", "can't", "won't",
    "doesn't", "don't", "not", "only", "just", "then", "this", "the", "a", "an", "plus",
    "minus", "give", "or", "take", "after", "before", "under", "over", "by", "using",
    "bf16", "fp16", "fp8", "int8", "kv", "mha", "gqa", "mqa", "tp", "dp", "batch",
    "context", "ctx", "tokens", "users", "sessions",
))
_MAX_CUTS = 16  # places to try cutting words off, so a long answer stays cheap to refuse
_WORD_AFTER = lazy(
    r"(?:\s+|\s*[—–;,]\s*|\s+--?\s+)(?=[A-Za-z(])|[;,]\s+(?=[\d~≈])|\s*—\s*(?=\S)"
)


def _trailing_group(body: str) -> tuple[int, str] | None:
    """Where the parenthesised group that ends `body` opens (its spaces before included) and
    what it holds, groups inside it included; None when `body` does not end in one."""
    stripped = body.rstrip()
    if not stripped.endswith(")"):
        return None
    depth = 0
    for index in range(len(stripped) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(stripped[index], 0)
        if depth == 0:
            return len(body[:index].rstrip()), stripped[index + 1:-1]
    return None  # unbalanced: the reader says so


_SHARE_OF = lazy(r"^\s*(?P<part>\d[\d,]*(?:\.\d+)?)\s+(?:out\s+)?of\s+"
                 r"(?P<whole>\d[\d,]*(?:\.\d+)?)(?:\s+[A-Za-z]+)?\s*$", re.IGNORECASE)


# A figure with at most one unit, as a key or a sheet writes it ("36.9 GB", "8,192", "13
# sequences"): every stage before the final one leaves such text as it is, so it is read by
# that stage alone (tests/test_reader_plain_figures.py holds the two readings equal for every
# unit here, with and without its space, at every step's unit), and the patterns of shown
# working, remarks and ranges are not compiled for a sheet of plain figures (ASCII digits
# only: others are normalised first)
_PLAIN_FIGURE = lazy(r"(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?"
                     r"(?: ?(?P<unit>[A-Za-z%/]+))?")
PLAIN_UNITS = frozenset({
    "", "%", "x", "B", "KB", "KiB", "MB", "MiB", "GB", "GiB", "TB", "TiB", "bytes", "s", "ms",
    "us", "tokens", "tokens/s", "tok/s", "sequences", "seqs", "sessions", "users", "requests",
    "GPUs", "blocks", "steps", "FLOP", "GFLOP", "TFLOP", "PFLOP"})


@functools.lru_cache(maxsize=1024)
def read_answer(text: str, unit: str = "") -> Answer:
    """Read an answer typed at a step whose reference is in `unit` ("" for a plain number).

    Raises AnswerParseError (only) when no reading is possible; its message says why. Kept:
    marking reads one answer again for the figures it carries and the working it shows.
    """
    _check_typed(text, MAX_ANSWER_CHARS)
    plain = _PLAIN_FIGURE.fullmatch(text)
    if plain is not None and (plain.group("unit") or "") in PLAIN_UNITS:
        return read_plain_figure(text, unit)
    return read_fully(text, unit)


def read_plain_figure(text: str, unit: str) -> Answer:
    """A figure with at most one of PLAIN_UNITS, read by the final stage alone."""
    expected = unit_factor(unit).dim if unit else DIMENSIONLESS
    span, readings = _read_final(text, unit, expected, False)
    return Answer(readings, span, (), "", (), unit, bound=False)


def read_fully(text: str, unit: str) -> Answer:
    """read_answer through every stage: screening, remarks, working, ranges and bounds."""
    expected = unit_factor(unit).dim if unit else DIMENSIONLESS
    screened = _SHORTHAND.sub("tokens/s", without_emphasis(_screen(text)))
    if unit == "%":
        # a share said as a count of a whole ("4 of 1504", "12 out of 512 slots"): their ratio
        screened = _SHARE_OF.sub(r"\g<part>/\g<whole>", screened)
    bounded = _UPPER_BOUND.match(screened.strip())
    body, approximate, notes = _tidy(bounded.group("rest") if bounded else screened)
    aside = _trailing_group(body)
    if aside and re.search(r"\d", body[: aside[0]]) \
            and (not _ENDS_IN_OPERATOR.search(body[: aside[0]])
                 or (_RATIO_BEFORE_ASIDE.search(body[: aside[0]])
                     and body[aside[0]].isspace() and expected == DIMENSIONLESS)):
        # "3 (16 GiB each)", "3.36 (=(1-.8^5)/.2)": the answer comes first, the aside explains
        notes.append(f"ignored the aside '({aside[1].strip()})'")
        body, more_approx, _ = _tidy(body[: aside[0]])
        approximate = approximate or more_approx
    remark = _VALUE_THEN_WORKING.match(body) or _VALUE_THEN_WORDS.match(body)
    if remark and (head := _read_quietly(remark.group("head"), unit, expected)) is not None \
            and head.quantity.dim == expected:
        # "112 ms: (5.72e13 + …) / 550 TFLOP/s", "1, heads get duplicated": the value first,
        # then how it came or what it means
        notes.append(f"ignored what follows the value: '{remark.group('rest').strip()}'")
        body = remark.group("head").strip()
    dash = _DASH_REMARK.search(body)
    head = None if dash is None or _WORKING_SEPARATOR.search(body[: dash.start()]) else \
        _read_quietly(body[: dash.start()], unit, expected)
    # (a remark whose own last figure has a unit is working that ends in the answer:
    # "141 GB -- weights = 125 GB")
    tail_result = None if dash is None else _read_quietly(
        _WORKING_SEPARATOR.split(body[dash.end():])[-1], unit, expected)
    if dash and head is not None and head.had_unit and not (
            tail_result is not None and tail_result.had_unit):
        # "~93 GB — P(expert unused) = (6/8)^64 ≈ 1e-8": a value with its unit, then a dash
        # and a remark of its own working; the value is the answer, not the remark's last figure
        notes.append(f"ignored the words after the dash: '{body[dash.end():].strip()}'")
        body = body[: dash.start()]
    leading = _LEADING_DENIAL.match(body)
    if leading:
        # "not 80 but 96", "not 80, 96": the figure denied first is a remark (expert pass 57)
        notes.append(f"ignored '{leading.group('denied').strip()}'")
        body = body[leading.end():]
    denial = _TRAILING_DENIAL.search(body)
    if denial and re.search(r"\d", body[: denial.start()]):
        # "4096 (the window), not 32768": the figure it is not is a remark
        notes.append(f"ignored '{denial.group().strip(' ,;')}'")
        body, more_approx, more_notes = _tidy(body[: denial.start()])
        approximate, notes = approximate or more_approx, notes + more_notes
    # "2 * 8B * 4096 ~ 61.6 TFLOP": a "~" after working that computes is its "≈", not a range
    body = _rounded_after(_APPROX_AFTER_WORKING.sub(r"\1 ≈ ", body))
    parts = _WORKING_SEPARATOR.split(body)
    final_figure = _FINAL_FIGURE.match(parts[-1].strip())
    final_reading = None if final_figure is None else _read_quietly(
        final_figure.group("final"), unit, expected)
    if final_figure and _WORKING_WORDS.search(final_figure.group("working")) \
            and final_reading is not None and final_reading.quantity.dim == expected:
        # "8 of 1008 slots empty, ~0.8%", "21 layers x 32768 …: 6.34 GB": working in words
        # or arithmetic, then after a comma or colon the figure it comes to
        parts[-1:] = [final_figure.group("working"), final_figure.group("final")]
    factor_then_result = _FACTOR_THEN_RESULT.match(parts[-1].strip())
    if factor_then_result:  # "so 2x, ~190": the factor is working, the figure after it the result
        parts[-1:] = [factor_then_result.group("factor"), factor_then_result.group("result")]
    first_error: AnswerParseError | None = None
    while parts:
        # The result is the last part that reads: words after it ("96, so one card is
        # enough") are commentary, and working before it is checked, not marked.
        part = parts.pop()
        final, more_approx, more_notes = _tidy(part)
        if not _has_number(final):
            continue
        if parts and _REFERRED_FIGURE.match(part):
            # "roughly 30 sessions, so one card is enough for the 80": a figure the words
            # after the value refer to ("the 80", "for 80 users", "than 100") is no result
            # of working; the value before them is the answer (expert pass 57, W22)
            notes.append(f"ignored what follows the value: '{part.strip()}'")
            continue
        try:
            if bounded and not parts:
                top = _read_value(final, unit, expected, approximate or more_approx)[0]
                zero = _reading(Quantity(Fraction(0), top.quantity.dim), top.unit,
                                approximate, had_unit=top.had_unit)
                span: tuple[ParsedAnswer, ParsedAnswer] | None = (zero, top)
                readings: tuple[ParsedAnswer, ...] = (zero, top)
                more_notes = [*more_notes, f"read '{screened.strip()}' as at most {top.shown}"]
            else:
                span, readings = _read_final(final, unit, expected, approximate or more_approx)
        except AnswerParseError as error:
            first_error = first_error or error
            continue
        notes += more_notes
        if len(parts) == 1 and _estimate_range(parts[0]):
            # "90-100, say 96", "between 150 and 170, say 163": a range the value is picked
            # from is an estimate, not working (150 is no head_dim typed in it)
            notes.append(f"read '{parts[0].strip(' ,')}' as the range it was picked from")
            parts = []
        working_text = body[: body.rfind(final)].strip() if parts else ""
        return Answer(readings, span, tuple(parts), working_text, tuple(notes), unit,
                      bound=bool(bounded) and not parts)
    if first_error is not None:
        raise first_error
    raise AnswerParseError(
        f"no number found in {show_word(body)}: type a number, with its unit if any"
    )


# Words, then a figure they refer to rather than state: "(so) one card is enough for the 80",
# "more than 100", "against the expected 80" (an article or a preposition of comparison just
# before the figure)
_REFERRED_FIGURE = lazy(
    r"^\s*(?:[A-Za-z][\w'’-]*[,;]?\s+)*(?:the|for|than|versus|vs\.?|against)\s+"
    r"(?:(?:expected|required|needed|target|promised|planned|original|same|other)\s+)?"
    r"[~≈]?\s*\d", re.IGNORECASE)


def _estimate_range(text: str) -> bool:
    """Whether working is only a range ("90-100", "150 to 170", "between 150 and 170 GB"):
    a dash between a smaller figure and a larger one is no subtraction."""
    found = _RANGE_ONLY.match(text.strip(" ,;:"))
    if found is None:
        return False
    low, high = (float(found.group(name).replace(",", "")) for name in ("low", "high"))
    return low < high


_RANGE_ONLY = lazy(
    r"^(?:between\s+|from\s+)?[~≈]?\s*(?P<low>\d[\d,]*(?:\.\d+)?)\s*[A-Za-z%/]{0,12}\s*"
    r"(?:-|–|—|to|and)\s*[~≈]?\s*(?P<high>\d[\d,]*(?:\.\d+)?)\s*[A-Za-z%/]{0,12}$",
    re.IGNORECASE)


# A spaced dash before words (or a bracket): what follows is a remark on the value before it
# One figure, with its unit at most ("≈112 ms", "94 seqs", "1"), then a colon and working that
# computes, with no result of its own ("112 ms: (5.72e13 + …) / 550 TFLOP/s"), or a comma and
# words with no figure ("1, heads get duplicated"); "72 - 16: 52 GB" and "4096 tokens each, so
# about 96" are working and its result, read as such elsewhere
_ONE_FIGURE = r"[~≈]?\s*\d[\d,]*(?:\.\d+)?(?:\s*[A-Za-z][A-Za-z/]{0,12})?"
_VALUE_THEN_WORKING = lazy(
    rf"^(?P<head>\s*{_ONE_FIGURE})\s*:\s+(?P<rest>[^=]*[-+*/×÷][^=]*)$", re.DOTALL)
_VALUE_THEN_WORDS = lazy(rf"^(?P<head>\s*{_ONE_FIGURE}),\s+(?P<rest>[A-Za-z][^\d]*)$",
                         re.DOTALL)
_DASH_REMARK = lazy(r"\s+(?:—|–|--)\s+(?=[A-Za-z(])")  # (a spaced "-" is a minus)
# A figure the answer says it is not, after it: "4096, not 32768", "12 rather than 13"
# A figure denied before the answer: "not 80 but 96", "not 80 sessions, 96", "not 80: 96"
_LEADING_DENIAL = lazy(
    r"^\s*(?P<denied>not\s+[~≈]?\s*\d[\d,]*(?:\.\d+)?(?:\s*[A-Za-z/%]+)?)"
    r"\s*(?:[,;:]\s*(?:but\s+)?|\s[-–—]\s*|\s+but\s+)"
    r"(?=(?:about\s+|roughly\s+|around\s+|approx\.?\s+|~|≈)?\s*\d)", re.IGNORECASE)
_TRAILING_DENIAL = lazy(r"\s*[,;]?\s*\b(?:not|rather\s+than|instead\s+of)\s+[~≈]?\s*\d[^=]*$",
                        re.IGNORECASE)
# Working, then a comma, colon or semicolon and the bare figure it comes to (a unit at most)
_FINAL_FIGURE = lazy(
    r"^(?P<working>.*\d.*?)\s*[,:;]\s+(?P<final>(?:[~≈]\s*|(?:about|approx\.?|roughly|around)\s+)?"
    r"\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?\s*(?:%|[kmgt]i?b|b|bytes|ms|µs|us|s|tok(?:en)?s?(?:/s)?"
    r"|sequences|sessions|seqs|users|blocks|steps|x|×))$", re.IGNORECASE)  # (its unit: a
# bare figure after a comma, "44 GB, 8", is a remark, as it always was)
# What makes the part before such a figure working, not a list of figures ("29, 30")
_WORKING_WORDS = lazy(r"[A-Za-z]{2,}|[-+*/×÷^]")


# A "~" between an expression that computes (an operator in it) and a figure
# ("+ 537MB kv ~ 16.6 GB": an operand may carry its unit and a word; "…/(2*8.03e9) ~ 206")
_APPROX_AFTER_WORKING = lazy(
    r"((?:[*×·/+−-]|\s[xX])\s?\d[\d.,]{0,11}(?:\s?[A-Za-z]{1,5}){0,2}|[*×·/+]\s?[\w.,]{1,12}"
    r"|\w\))\s+~\s*(?=[\d.])")
# "94.9 ~ 95": a figure, then "~" and the same figure rounded: the rounding, not a range
_ROUNDED_AFTER = lazy(r"(?:^|(?<=[=≈→:]\s)|(?<=[=≈→:]))\s*(?P<exact>\d[\d,]*\.\d+)\s+~\s*"
                      r"(?P<rounded>\d[\d,]*(?:\.\d+)?)\s*[A-Za-z%/]*\s*$")


# "301056 B ~ 294 KiB": one quantity written in two units
_SAME_IN_TWO_UNITS = lazy(r"(?P<a>\d[\d,]*(?:\.\d+)?)\s?(?P<ua>[A-Za-z]{1,3})\s+~\s*"
                          r"(?P<b>\d[\d,]*(?:\.\d+)?)\s?(?P<ub>[A-Za-z]{1,3})\s*$")


def _rounded_after(body: str) -> str:
    """ "94.9 ~ 95 sequences" as "94.9 ≈ 95 sequences": the second figure is the first rounded
    (a count of ten or more to a whole number either way, or within 0.5%: "1.5 ~ 2 GB" stays a
    range); "301056 B ~ 294 KiB" as one quantity in two units, the last its result."""
    two = _SAME_IN_TWO_UNITS.search(body)
    if two is not None and two.group("ua") != two.group("ub"):
        try:
            a = float(two.group("a").replace(",", "")) * float(unit_factor(two.group("ua")).value)
            b = float(two.group("b").replace(",", "")) * float(unit_factor(two.group("ub")).value)
        except (KvdrillError, ValueError):
            a = b = 0.0
        if a and abs(a - b) <= abs(a) / 200:
            return f"{body[: two.end('ua')]} ≈ {body[two.start('b'):]}"
    match = _ROUNDED_AFTER.search(body)
    if match is None:
        return body
    exact = float(match.group("exact").replace(",", ""))
    rounded = float(match.group("rounded").replace(",", ""))
    whole = rounded.is_integer() and exact >= 10 \
        and math.floor(exact) <= rounded <= math.ceil(exact)
    if not whole and abs(rounded - exact) > abs(exact) / 200:
        return body
    return f"{body[: match.end('exact')]} ≈ {body[match.start('rounded'):]}"


# A factor, then after a comma the figure it gives: "2x, ~190", "×2, about 190 seqs".
_FACTOR_THEN_RESULT = lazy(
    r"^(?P<factor>(?:[x×]\s*\d+(?:\.\d+)?|\d+(?:\.\d+)?\s*[x×]))\s*,\s*(?P<result>\S.*\d.*)$",
    re.IGNORECASE)


# An upper bound: "< 1%", "under 1%", "below 0.5 ms", "less than 1%", "at most 2%".
_UPPER_BOUND = lazy(
    r"^(?:<|≤|<=|(?:well\s+)?(?:under|below|less\s+than|lower\s+than|at\s+most"
    r"|no\s+more\s+than)\b)\s*(?P<rest>.*\d.*)$", re.IGNORECASE)


def _read_final(text: str, unit: str, expected: Dim, approximate: bool
                ) -> tuple[tuple[ParsedAnswer, ParsedAnswer] | None, tuple[ParsedAnswer, ...]]:
    """The result part of an answer: a range (its two ends as the readings), or a value."""
    ratio = _RATIO.match(text)
    is_ratio = expected == DIMENSIONLESS and ratio is not None
    if ratio is not None and not is_ratio and not (ratio.group("tail") or "").strip():
        asked = f"a number in {unit}" if unit else "a number"
        raise AnswerParseError(
            f"{show_word(text)} is a ratio, and this step asks for {asked}: work the number "
            "out from the ratio (the factor times the figure it scales) and type it")
    span = None if is_ratio else _read_range(text, unit, expected, approximate)
    if span is not None:
        return span, span
    return None, _read_value(text, unit, expected, approximate)


def _has_number(text: str) -> bool:
    return bool(re.search(r"\d", text) or _NUMBER_WORD.match(text) or _NONE_FIT.match(text))


# An operator said in words in shown working
OPERATOR_WORD = lazy(r"\b(?:minus|plus|times|divided by)\b", re.IGNORECASE)
_OPERATOR_SIGNS = {"minus": "-", "plus": "+", "times": "×", "divided by": "/"}


def working_values(answer: Answer, chosen: ParsedAnswer) -> list[ParsedAnswer]:
    """The values of the working shown before the last '=', a bare number in it taken in the
    unit the answer was read in ("72 - 16 - 4 = 52 GB": 52 GB); parts that are words
    ("budget = 52 GB") are left out."""
    expected = unit_factor(answer.unit).dim if answer.unit else DIMENSIONLESS
    unit = chosen.unit if chosen.unit is not None else answer.unit
    found = []
    for part in answer.working_parts:
        # "72 minus 16 GB weights" is 72 - 16 GB (expert pass 56, W16)
        part = OPERATOR_WORD.sub(lambda word: _OPERATOR_SIGNS[word.group().lower()], part)
        reading = _read_quietly(part, unit, expected)
        if reading is not None:
            found.append(reading)
    return found


def _tidy(s: str) -> tuple[str, bool, list[str]]:
    """Strip what surrounds the number: punctuation and hesitation after it, a label, filler
    words, '=' and approximation marks before it."""
    approximate = False
    notes: list[str] = []
    while True:
        before = s
        s = s.strip()
        s = _TRAILING_PUNCT.sub("", s)
        m = _TRAILING_APPROX.search(s)
        if m:
            approximate, s = True, s[: m.start()]
        if _GLUED_ISH.search(s):  # "20ish seqs", "6-ish GB": about that figure
            approximate, s = True, _GLUED_ISH.sub("", s, count=1)
        m = _TRAILING_PAREN.search(s)
        if m and not re.search(r"\d", m.group(1)):
            notes.append(f"ignored '({m.group(1).strip()})'")
            s = s[: m.start()]
        body, approx = _strip_noise(s)
        approximate = approximate or approx
        s = _LEADING_LABEL.sub("", body, count=1)
        s = _LEADING_FILLER.sub("", s, count=1)
        m = _LEADING_WORDS.match(s)
        if m and not any(w.lower().rstrip(",:") in _KEEP_LEADING for w in m.group(1).split()):
            s = s[m.end():]
        if s == before:
            return s, approximate, notes


def _read_quietly(text: str, unit: str, expected: Dim) -> ParsedAnswer | None:
    body, approximate, _ = _tidy(text)
    if not body or not re.search(r"\d", body):
        return None
    try:
        reading = _read_value(body, unit, expected, approximate)[0]
    except AnswerParseError:
        return None
    # a step of working read only in part ("8,814 blocks / 8,192" as 8,814, the words and what
    # follows them dropped; "16.06GB weights + 537MB kv" as 16.06 GB) is no value of that step
    dropped = reading.note.startswith("read '") or (
        reading.note.startswith(_AFTER_THE_NUMBER) and re.search(r"\d", reading.note))
    return None if dropped else reading


def _read_range(text: str, unit: str, expected: Dim,
                approximate: bool) -> tuple[ParsedAnswer, ParsedAnswer] | None:
    body = _RANGE_LEAD.sub("", text)
    for m in _RANGE_SEPARATOR.finditer(body):
        a_text, b_text = body[: m.start()].strip(), body[m.end():].strip()
        if not (_RANGE_END.match(a_text) and _RANGE_END.match(b_text)):
            continue
        # "38-39k": the high end's thousands are the low end's too, where the low end's
        # digits stand below the high end's own ("500-1k" runs from 500)
        scaled = _SCALED_END.match(b_text)
        if scaled and _PLAIN_END.match(a_text) \
                and float(a_text.replace(",", "")) < float(scaled.group(1).replace(",", "")):
            a_text = f"{a_text}{scaled.group(2)}"
        try:
            b = _read_value(b_text, unit, expected, approximate)[0]
            a_full = a_text if _has_unit(a_text) or not b.had_unit or b.unit is None \
                else f"{a_text} {b.unit}"
            a = _read_value(a_full, unit, expected, approximate)[0]
        except AnswerParseError:
            continue
        if a.quantity.dim != b.quantity.dim:
            continue
        is_dash = m.group(0).strip() in ("-", "–", "—", "‒", "−")
        if is_dash and a.quantity.value >= b.quantity.value:
            continue  # "100-4" is a subtraction; only a span that rises is a range
        low, high = sorted((a, b), key=lambda r: r.quantity.value)
        return low, high
    return None


_SCALED_END = lazy(r"^[~≈]?\s*(\d[\d,]*(?:\.\d+)?)\s*([kK]|M)(?![A-Za-z])")
_PLAIN_END = lazy(r"^\d[\d,]*(?:\.\d+)?$")


def _has_unit(text: str) -> bool:
    try:
        _, toks = evaluate_with_trailing_unit(text)
    except AnswerParseError:
        return False
    return any(t.kind == _UNIT for t in toks)


def _read_value(text: str, unit: str, expected: Dim, approximate: bool
                ) -> tuple[ParsedAnswer, ...]:
    """Every reading of one value (no range), most likely first."""
    note = ""
    m = _NUMBER_WORD.match(text)
    if m:
        tens, ones = m.group(1).lower(), (m.group(2) or "zero").lower()
        if ones != "zero" and tens not in _TENS_WORDS:
            raise AnswerParseError(f"'{m.group(0)}' is not a number; type it in digits")
        text = str(_NUMBER_WORDS[tens] + _NUMBER_WORDS[ones]) + text[m.end():]
    text, note = _respelled(text)
    respelled = note
    sized = _SIZED_ONE.search(text)
    if sized:
        # "16 GiB per 128k session": the 128k says which session, it divides nothing
        text = text[:sized.start("size")] + text[sized.end("size"):]
        noun = sized.group("noun")
        note = "; ".join(part for part in (
            note, f"read 'per {sized.group('size').strip()} {noun}' as per {noun}") if part)
    if expected in (SEQUENCES, DIMENSIONLESS) and _NONE_FIT.match(text):
        note = f"read '{text}' as 0"
        text = "0"
    m = _RATIO.match(text)
    if m and expected == DIMENSIONLESS:
        # "1:8" names both sides of the ratio; the question asks how many times, so 8.
        number = m.group("pre") or m.group("n") or m.group("inv")
        note = f"read '{text}' as a ratio of {number}"
        text = number
    suffixed = (_byte_suffix_readings if expected.bytes == 1 else _count_suffix_readings)(
        text, unit, expected, approximate) or _rate_suffix_readings(text, expected, approximate)
    if suffixed:
        return suffixed
    if expected == DIMENSIONLESS:
        m = _COUNT_LABEL.match(text)
        # A few words may describe the things counted ("0.95 prefill GPUs per decode GPU"),
        # but never a unit: "8 GB heads" is not 8.
        if m and not any(_is_unit_word(w) for w in m.group("words").split()):
            note = note or f"read '{text}' as {m.group('n').strip()}"
            text = m.group("n")
    else:
        text = _PER_THING.sub("", text)
    text = _ADJECTIVE.sub(" ", text)
    if not _reads(text):
        labelled = _without_labels_in_products(text)
        if labelled is not None:
            note = note or f"read '{text}' as {labelled}"
            text = labelled
    if not _reads(text):
        text, note = _without_extra_words(text, note)
        if note.startswith(respelled) and respelled:
            # a word respelled among the words cut off after the number was not read: its
            # note goes with it ("8192 -- n_kv x d_head" read no "heads")
            kept = [part for part in respelled.split("; ")
                    if re.search(rf"\b{re.escape(part.rsplit(chr(39), 2)[-2])}\b", text)]
            note = "; ".join([*kept, note[len(respelled):].lstrip("; ")]).strip("; ")
    v, toks = _evaluate_number(text)
    had_unit = any(t.kind == _UNIT for t in toks)
    readings: list[ParsedAnswer] = []
    place = _last_place(toks)
    if had_unit or not unit:
        readings.append(_reading(v.q, v.text, approximate, note, had_unit=had_unit,
                                 place=place))
    else:
        readings.append(_reading(v.q * unit_factor(unit), unit, approximate, note,
                                 had_unit=False, place=place))
        if unit_factor(unit).value != 1 and unit != "%":
            # A bare 131072 where KiB is asked is a byte count, not 131,072 KiB; a bare 7.02e13
            # where TFLOP is asked, FLOP; a bare 0.034 where ms is asked, seconds.
            base = Quantity(v.q.value, expected)
            readings.append(_reading(base, str(expected), approximate, note, had_unit=False))
        if unit == "%":
            # A bare 0.734 where a percentage is asked is a fraction: 73.4%.
            readings.append(_reading(v.q, None, approximate, note, had_unit=False))
    if expected == DIMENSIONLESS and readings[0].quantity.dim in (SEQUENCES, TOKENS):
        # "32 sessions" where the step counts sessions as a plain number: a label.
        readings.append(_reading(Quantity(readings[0].quantity.value), None, approximate,
                                 f"read '{text}' as {exact_text(readings[0].quantity.value)}"))
    if expected.bytes == 1 and v.text is not None and _BITS_LABEL.search(v.text):
        # "52 Gb" on a memory step: almost always bytes typed in the wrong case.
        as_bytes = _BITS_LABEL.sub(lambda m: m.group(0).upper(), v.text)
        readings.append(_reading(v.q * 8, as_bytes, approximate,
                                 f"read '{v.text}' as {as_bytes} (bytes)"))
    if had_unit and readings[0].quantity.dim not in accepted_dims(expected):
        split = split_trailing_unit(text)
        if split is not None and split[0].q.dim != readings[0].quantity.dim:
            # "52e9 / 131072 tokens" means (52e9 / 131072) tokens, not 52e9 per 131072 tokens.
            readings.append(_reading(split[0].q, split[1], approximate, note))
    return tuple(readings)


# "per 128k session", "per 32k-token request": a length that names one thing (the noun is
# singular), not a count to divide by ("per 1k tokens" and "per 4k sessions" still divide)
_SIZED_ONE = lazy(
    r"\bper\s+(?P<size>\d+(?:\.\d+)?\s?[kK](?:[-\s]?tokens?)?\s+)"
    r"(?=(?P<noun>session|sequence|request|conversation|chat|user|prompt|context)\b)",
    re.IGNORECASE)
_WORDS_BEFORE_UNIT = lazy(
    r"^(?P<n>[~≈]?\s*" + _NUM_TEXT + r"\s*[kKM]?)\s+(?P<words>(?:[A-Za-z][A-Za-z-]*\s+){1,3})"
    r"(?P<unit>[A-Za-z]+)(?P<rest>.*)$"
)
_BITS_LABEL = lazy(r"\b[KMGT]b\b")


def _without_extra_words(text: str, note: str) -> tuple[str, str]:
    """`text` without the words a person put between the number and its unit ("3 long
    sessions") or after it ("52 GB for KV"); the reader's own error when neither helps."""
    between = _WORDS_BEFORE_UNIT.match(text)
    if between and _is_unit_word(between.group("unit")) and not any(
            _is_unit_word(w) or w.lower() in ("per", "x") for w in between.group("words").split()):
        described = f"{between.group('n')} {between.group('unit')}{between.group('rest')}"
        if _reads(described):
            return described, note
        text = described
    cut = _without_words_after(text)
    if cut is None:
        evaluate_with_trailing_unit(text)  # raises the reason it does not read
        return text, note
    head, tail = cut
    # ("57 GB i think, 85.5*.9 -16-4": what follows is words and working, not words alone)
    said = _AFTER_THE_NUMBER[1] if any(ch.isdigit() for ch in tail) else _AFTER_THE_NUMBER[0]
    return head, note or f"{said} the number: '{tail}'"


# The notes of a number read with what follows it dropped (words, or words and working):
# _read_quietly tells a step of working read only in part by them
_AFTER_THE_NUMBER = ("ignored the words after", "ignored what followed")


# A word naming what a number counts, between it and a product's operator: "16 steps × 25 ms".
_LABEL_IN_PRODUCT = lazy(
    r"(?<=\d)(?P<gap>\s*)(?P<word>[A-Za-z][A-Za-z-]*)(?=\s*(?:[×*·/]|\bx\b|\bX\b)\s*[\d(])")


def _without_labels_in_products(text: str) -> str | None:
    """`text` with the words that only label a factor taken out ("16 steps × 25 ms" is 16 ×
    25 ms), when that makes it read; a unit is never taken out."""
    labels = [m for m in _LABEL_IN_PRODUCT.finditer(text)
              if not _is_unit_word(m.group("word")) and m.group("word") not in ("x", "X")]
    if not labels:
        return None
    cut = text
    for m in reversed(labels):
        cut = cut[: m.start()] + cut[m.end():]
    return cut if _reads(cut) else None


def _is_unit_word(word: str) -> bool:
    return word in UNITS or word.lower() in CASELESS_UNITS


def _reads(text: str) -> bool:
    try:
        evaluate_with_trailing_unit(text)
    except AnswerParseError:
        return False
    return True


def accepted_dims(expected: Dim) -> tuple[Dim, ...]:
    """The dimensions that answer a step: "128 KiB/token" answers "KV bytes per token" and
    "10.7 GB/sequence" a per-sequence figure."""
    return (expected, expected / TOKENS, expected / SEQUENCES)


def _byte_suffix_readings(text: str, unit: str, expected: Dim, approximate: bool
                          ) -> tuple[ParsedAnswer, ...]:
    """A bare 128k (or 0.125M) on a byte step, read as decimal and as binary bytes, the
    convention of the step's own unit first."""
    m = _BARE_SUFFIX.match(text)
    if not m:
        return ()
    number = read_answer_number(m.group("n"))
    power = _SUFFIX_POWER[m.group("m")]
    per = Quantity(Fraction(1), TOKENS) if m.group("per") else Quantity(Fraction(1))
    decimal_unit, binary_unit = ("KB", "MB", "GB", "TB")[power - 1], \
        ("KiB", "MiB", "GiB", "TiB")[power - 1]
    suffix = "/token" if m.group("per") else ""
    found = []
    for name in (binary_unit, decimal_unit):
        q = number * unit_factor(name) / per
        if q.dim != expected and q.dim not in accepted_dims(expected):
            return ()
        convention = "binary" if name.endswith("iB") else "decimal"
        found.append(_reading(q, name + suffix, approximate,
                              f"read '{text}' as {exact_text(number)} {name}{suffix} "
                              f"({convention})"))
    binary_first = unit.split("/")[0] in ("KiB", "MiB", "GiB", "TiB")
    return tuple(found) if binary_first else tuple(reversed(found))


def _rate_suffix_readings(text: str, expected: Dim, approximate: bool
                          ) -> tuple[ParsedAnswer, ...]:
    """A bare 62T or 989 T where FLOP, FLOP/s or another rate is asked: the SI prefix of the
    step's own base unit (62 TFLOP/s; 3.35T on a bandwidth step is 3.35 TB/s)."""
    m = _BARE_SUFFIX.match(text)
    if not m or m.group("per") or not (expected.flops or expected.seconds == -1):
        return ()
    number = read_answer_number(m.group("n"))
    q = Quantity(number * 1000 ** _SUFFIX_POWER[m.group("m")], expected)
    return (_reading(q, None, approximate, f"read '{text}' as {_shown(q, None)}"),)


_COUNT_SUFFIX = lazy(
    r"^(?P<n>" + _NUM_TEXT + r")\s*(?P<m>[kKM])\s*(?P<tokens>tokens?|toks?)?$"
)


def _count_suffix_readings(text: str, unit: str, expected: Dim, approximate: bool
                           ) -> tuple[ParsedAnswer, ...]:
    """A bare 8k or 128k tokens where tokens or a plain count is asked: 8,000, and also
    8,192, as "an 8k context" means in this trade."""
    m = _COUNT_SUFFIX.match(text)
    if not m or expected not in (TOKENS, DIMENSIONLESS):
        return ()
    number = read_answer_number(m.group("n"))
    power = _SUFFIX_POWER[m.group("m")]
    name = "tokens" if m.group("tokens") else (unit or None)
    scale = unit_factor(name) if name else Quantity(Fraction(1))
    if scale.dim != expected:
        return ()
    decimal, binary = number * 1000**power, number * 1024**power
    place = _place_of(m.group("n"), number)  # "815.6k": a tenth of a thousand
    return (_reading(scale * decimal, name, approximate, had_unit=bool(m.group("tokens")),
                     place=place),
            _reading(scale * binary, name, approximate,
                     f"read '{text}' as {exact_text(binary)} (binary {m.group('m')})",
                     had_unit=bool(m.group("tokens")), place=place))


# Words a tired typist misspells after a number ("96 sesssions", "32 layres"). Byte units are
# left out on purpose: a size is too important to guess ("44 gigglebytes" is refused).
_RESPELLABLE = (
    "sequences", "sequence", "sessions", "session", "users", "requests", "tokens", "token",
    "seconds", "milliseconds", "heads", "layers", "dimensions", "elements", "blocks",
    "concurrent",
)
_KNOWN_WORDS = frozenset(
    [w.lower() for w in UNITS] + list(CASELESS_UNITS) + list(MULTIPLIER_WORDS)
    + list(_NUMBER_WORDS) + list(_RESPELLABLE)
)


def _respelled(text: str) -> tuple[str, str]:
    """`text` with misspelt count words corrected, and a note naming each correction."""
    notes = []

    def fix(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        if low in _KNOWN_WORDS or low in _PLAIN_WORDS:
            return word
        import difflib  # only for a word that is not a unit: kept out of start-up

        close = difflib.get_close_matches(low, _RESPELLABLE, n=1, cutoff=0.8)
        if not close:
            return word
        notes.append(f"read '{word}' as '{close[0]}'")
        return close[0]

    fixed = re.sub(r"[A-Za-z]{4,}", fix, text)
    return fixed, "; ".join(notes)


def read_answer_number(text: str) -> Fraction:
    v, _ = evaluate_with_trailing_unit(text)
    return v.q.value


def _without_words_after(text: str) -> tuple[str, str] | None:
    """The first head of `text` that reads as a value, when what follows is words: after a
    unit any words ("52 GB for KV"), after a bare number punctuation ("0 - none fit") or a
    common word ("96 at 4k"), so that a mistyped unit ("44 gigglebytes") is still refused."""
    for tries, m in enumerate(_WORD_AFTER.finditer(text)):
        head = text[: m.start()]
        if tries >= _MAX_CUTS or len(head) > MAX_CHARS:
            return None
        if not re.search(r"\d", head):
            continue
        try:
            _, toks = evaluate_with_trailing_unit(head)
        except AnswerParseError:
            continue
        tail = text[m.end():].strip()
        first_word = re.match(r"[A-Za-z']*", tail)
        if not (any(t.kind == _UNIT for t in toks) or m.group(0).strip()
                or (first_word and first_word.group(0).lower() in _PLAIN_WORDS)):
            continue
        if not any(t.kind == _UNIT for t in toks) and first_word and first_word.group(0):
            # "66 sessions i guess": the word after the number is its unit, not a remark
            longer = text[: m.end() + first_word.end()]
            try:
                _, more = evaluate_with_trailing_unit(longer)
            except AnswerParseError:
                more = []
            if any(t.kind == _UNIT for t in more):
                rest = text[m.end() + first_word.end():].strip()
                if rest:
                    return longer, rest
        return head, tail
    return None


def _reading(q: Quantity, unit_text: str | None, approximate: bool, note: str = "",
             *, had_unit: bool = True, place: Fraction | None = None) -> ParsedAnswer:
    """`place`: the last typed digit's place as a share of the typed number (0.1 for "38.4"
    is 1/384), when the answer is one number of two or more significant figures."""
    _check_magnitude(q, unit_text or "")
    shown = _shown(q, unit_text)
    return ParsedAnswer(q, approximate, had_unit, ("~" + shown) if approximate else shown,
                        unit_text, note, None if place is None else abs(q.value) * place)


_LITERAL = lazy(r"(?P<int>\d*)(?:\.(?P<frac>\d*))?(?:[eE](?P<exp>[+-]?\d+))?")


def _last_place(toks: list[_Tok]) -> Fraction | None:
    """For an answer that is one typed number (with a multiplier and units, but no
    arithmetic), the value of its last significant digit's place relative to the number: 1/38
    for "38", 1/384 for "38.4", 10/210 for "210", 1/30 for "30" (at least two figures: a whole
    number's trailing zero counts toward two, no further); None for one figure ("5", "0.3") or
    for arithmetic."""
    numbers = [t for t in toks if t.kind == _NUM]
    if len(numbers) != 1:
        return None
    first_unit = next((i for i, t in enumerate(toks) if t.kind == _UNIT), len(toks))
    if any(t.kind == _OP for t in toks[:first_unit]) or numbers[0].value == 0:
        return None
    return _place_of(numbers[0].text, numbers[0].value)


def _place_of(text: str, value: Fraction) -> Fraction | None:
    """The last significant digit's place in the typed number `text` relative to its value,
    as `_last_place` counts it."""
    m = _LITERAL.fullmatch(re.sub(r"[,_ ]", "", text))
    if m is None or value == 0:
        return None
    whole, frac = m.group("int") or "", m.group("frac") or ""
    digits = (whole + frac).lstrip("0")
    trailing = 0 if frac else len(digits) - len(digits.rstrip("0"))
    if len(digits) - trailing < 2:
        if not trailing:
            return None  # one figure ("5", "0.3"): the step's tolerance alone decides
        trailing -= 1  # "30", "400": a trailing zero counts as the second figure
    place = Fraction(10) ** (int(m.group("exp") or 0) - len(frac) + trailing)
    return place / value
