"""An answer sheet of plain `step: answer` lines, read without the YAML library.

Importing PyYAML and running its pure-Python parser costs a grade more CPU than marking a
right sheet of two dozen numbers (`benchmarks/interviewer.py`). Nearly every sheet is one
mapping of one line per step, so those lines are read here, giving exactly what
`yaml.safe_load` gives for them (`tests/test_plain_mapping.py` holds the two side by side on
sheets and on every awkward line we could think of). Anything else — a block or flow value,
an escape, a tag, an anchor, a duplicate key, a value YAML would read as a bool, a null or a
date, any character YAML refuses or reads as a line break — is not read here: the caller
falls back to the YAML library and its screens, so every refusal and error message is theirs.

Only strings, decimal integers (for the `variant:` line), None and one flat dict are made."""

from __future__ import annotations

import re

# A key: a step id or a sheet field ("1a", "2a-dkv", "variant"), with a letter in it and no
# leading "0x"/"0b" (YAML's hexadecimal and binary integers)
_KEY = r"(?P<key>(?![0O][xXbB])(?=[\w-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9_-]*)"
_LINE = re.compile(rf"{_KEY}:(?:[ ]+(?P<value>\S.*?))?[ ]*")
# A plain value begins with a letter, a digit or one of these (never a YAML indicator)
_PLAIN_START = frozenset("(<≈~$=.+/")
# What YAML 1.1 reads a plain value as, where it is not a string or a number (PyYAML's
# resolver: bools, nulls, dates and times, merge and value keys)
_NOT_TEXT = re.compile(
    r"yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"
    r"|~|null|Null|NULL|<<|="
    r"|[0-9][0-9][0-9][0-9]-[0-9][0-9]?-[0-9][0-9]?(?:[Tt]|[ \t]+|$).*")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
MAX_LINE = 400  # longer lines go to YAML (and its screens for runs of digits)


def plain_mapping(text: str, numeric_fields: tuple[str, ...] = ("variant",),
                  fields: tuple[str, ...] = ()) -> dict[str, str | int | None] | None:
    """The mapping `text` holds, or None where it is not only plain one-line entries.

    A value YAML reads as a number is kept as typed (a sheet is marked on what the candidate
    wrote), except under `numeric_fields`, where a decimal integer is an int; any other
    number there, or a non-string under `fields`, is left to YAML."""
    if not _printable(text):
        return None
    data: dict[str, str | int | None] = {}
    for line in text.split("\n"):
        stripped = line.lstrip(" ")
        if not stripped or stripped.startswith("#"):
            continue
        if len(line) > MAX_LINE:
            return None
        found = _LINE.fullmatch(line)
        if found is None:
            return None
        key, value = found.group("key"), found.group("value")
        if key in data or _NOT_TEXT.fullmatch(key):
            return None
        read = _value(value, key in numeric_fields, key in fields)
        if read is _FALLBACK:
            return None
        data[key] = read  # type: ignore[assignment]
    return data or None


_FALLBACK = object()


def _value(value: str | None, numeric: bool, field: bool) -> object:
    if value is None or value.startswith("#"):
        return None
    if " #" in value:
        value = value[: value.index(" #")].rstrip(" ")
    if value.startswith("'"):
        return _quoted(value, "'")
    if value.startswith('"'):
        return _quoted(value, '"')
    first = value[0]
    if not ((first.isascii() and first.isalnum()) or first in _PLAIN_START) or ": " in value \
            or value.endswith(":") or "\t" in value:
        return _FALLBACK
    if numeric:
        return int(value) if _DECIMAL.fullmatch(value) else _FALLBACK
    if _NOT_TEXT.fullmatch(value) or (field and not first.isalpha()):
        # a bool, a null or a date is YAML's to read, and a field that may be a number
        return _FALLBACK
    return value  # a number is kept as typed


def _quoted(value: str, quote: str) -> object:
    """A quoted value on its one line: 'it''s 8' or "8" (no escapes)."""
    if len(value) < 2 or not value.endswith(quote):
        return _FALLBACK
    inner = value[1:-1]
    if quote == "'":
        if inner.replace("''", "").count("'"):
            return _FALLBACK
        return inner.replace("''", "'")
    if '"' in inner or "\\" in inner:
        return _FALLBACK
    return inner


def _printable(text: str) -> bool:
    """Whether every character is one YAML accepts and reads as itself (no byte-order mark,
    no line separator of its own)."""
    if "\r" in text or _CONTROL.search(text):
        return False
    if text.isascii():
        return True
    for char in text:
        code = ord(char)
        if code < 0x80:
            continue
        if not (0xA0 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD or code >= 0x10000) \
                or char in "\u2028\u2029\ufeff":
            return False
    return True
