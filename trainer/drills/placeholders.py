"""The {{ name }} placeholders of a drill's title, situation, prompts, hints and formulas, filled
with the givens' display values. Only plain names are allowed (no expressions, tags or
comments), so a drill file cannot run template code; nothing here imports Jinja."""

from __future__ import annotations

import re

from trainer.errors import DrillFileError
from trainer.reading.patterns import lazy

_PLACEHOLDER = lazy(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")
# "a" before a number said with a vowel: eight…, eleven…, eighteen… ("an 8,192-token prompt",
# "an 11 GB cache", "an 18,000-token session"; "a 110-layer", "a 1,800-token")
_A_BEFORE_VOWEL_NUMBER = lazy(r"\b([Aa]) (?=8|1[18](?![\d]))")


def fill(text: str, givens: dict[str, str]) -> str:
    """Replace each {{ name }} in a prompt by the given's display value; only plain names are
    allowed (no expressions), so a drill file cannot run template code."""

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in givens:
            raise DrillFileError(
                f"unknown placeholder {{{{ {name} }}}}: use one of {', '.join(sorted(givens))}"
            )
        return givens[name]

    return with_articles(_PLACEHOLDER.sub(replace, text))


def with_articles(text: str) -> str:
    """"a 8,192-token prompt" as "an 8,192-token prompt": a figure filled in after "a"."""
    return _A_BEFORE_VOWEL_NUMBER.sub(lambda m: f"{m.group(1)}n ", text)


_TEMPLATE_SYNTAX = lazy(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", re.DOTALL)


def placeholders(text: str) -> set[str]:
    return set(_PLACEHOLDER.findall(text))


def malformed_placeholders(text: str) -> list[str]:
    """Template syntax that is not a plain {{ name }}: expressions, tags, comments."""
    return [m for m in _TEMPLATE_SYNTAX.findall(text) if not _PLACEHOLDER.fullmatch(m)]
