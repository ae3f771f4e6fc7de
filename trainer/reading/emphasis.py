"""Markdown emphasis taken off a typed text: **bold**, *italic*, __bold__ and `code` mark
words and figures, they are not symbols between them ("saves **FLOPs**" says "saves flops",
"**52 GB**" is 52 GB). A ** between digits is a power (2**10) and stays, as does a * with
spaces or figures about it (64 * 0.54, 64*0.54)."""

from __future__ import annotations

from trainer.reading.patterns import lazy

_STRONG = lazy(r"(?<!\d)\*\*|\*\*(?!\d)|(?<![\w*])__|__(?![\w*])")
_ITALIC = lazy(r"(?<![\w*])\*(?=[^\s*])([^*\n]{1,200}?)(?<=[^\s*])\*(?![\w*])")


def without_emphasis(text: str) -> str:
    """`text` with its Markdown emphasis markers taken off (what they mark kept)."""
    if "*" not in text and "_" not in text and "`" not in text:
        return text
    # a backtick quotes code and means nothing in a figure or a claim: all of them go
    return _ITALIC.sub(r"\1", _STRONG.sub("", text)).replace("`", "")
