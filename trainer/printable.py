"""Text that is safe to print: whatever a person typed or a file held, no control character
reaches the terminal (clear screen, window titles, OSC 52 clipboard writes, bells, C1 codes,
bidirectional overrides). Imports nothing heavy; every command's output passes through here."""

from __future__ import annotations

import unicodedata
from typing import Any

REPLACEMENT = "\ufffd"
_UNSAFE = ("Cc", "Cf", "Cs", "Co", "Cn")


def _unsafe(c: str) -> bool:
    return c not in "\n\t" and unicodedata.category(c) in _UNSAFE


def printable(text: str, keep_lines: bool = True) -> str:
    """`text` with every control, format (bidi) and unassigned character shown as U+FFFD; line
    breaks kept (or made spaces), tabs kept. Ordinary text comes back unchanged."""
    if text.isprintable():
        return text
    lines = text.split("\n")
    if all(line.isprintable() for line in lines):  # ordinary lines: nothing to look at closely
        return text if keep_lines else " ".join(lines)
    out = []
    for c in text:
        if c == "\r":
            out.append("" if keep_lines else " ")
        elif c == "\n":
            out.append(c if keep_lines else " ")
        else:
            out.append(REPLACEMENT if _unsafe(c) else c)
    return "".join(out)


def json_text(payload: Any) -> str:
    """JSON with every control, format and unassigned character escaped (\\u001b, \\u202e): the
    JSON module escapes only C0 controls when it keeps non-ASCII text readable."""
    import json  # not at start-up: `kvdrill --help` never needs it

    text = json.dumps(payload, indent=2, ensure_ascii=False)
    if text.isprintable():
        return text
    return "".join(f"\\u{ord(c):04x}" if _unsafe(c) and ord(c) <= 0xFFFF
                   else REPLACEMENT if _unsafe(c) else c for c in text)
