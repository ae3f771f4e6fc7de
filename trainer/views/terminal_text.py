"""Markdown (worked solutions, long feedback) as text for a terminal: paragraphs and list items
wrapped between words at the terminal's width, headings, bold and code marked with a style,
tables as aligned columns (or one "header: cell" line each when they are too wide).

The result is a list of lines, each a list of (style, text) fragments, so tui.py can colour
them and `plain` can print them without any style. Raw HTML in the Markdown stays text."""

from __future__ import annotations

from typing import Any

from trainer.text_layout import columns

Fragment = tuple[str, str]  # (style, text); style "" is plain
Line = list[Fragment]

HEADING, STRONG, EMPHASIS, CODE = "class:md.heading", "class:md.strong", "class:md.em", \
    "class:md.code"
_INLINE_STYLES = {"strong_open": STRONG, "em_open": EMPHASIS}


def render(markdown: str, width: int) -> list[Line]:
    """`markdown` as styled lines no wider than `width` (a code block or a word longer than
    the width is left whole)."""
    from markdown_it import MarkdownIt

    tokens = MarkdownIt("commonmark", {"html": False}).enable("table").parse(markdown)
    return _Renderer(max(20, width)).blocks(tokens)


def plain(lines: list[Line], width: int | None = None) -> str:
    """The lines without styles; a heading keeps its weight as a rule drawn under it, of at
    most half of `width` (the width the lines were laid out for) in "─", a sign of ambiguous
    width: two columns each in some terminals, where a rule as long as the heading spilled."""
    out: list[str] = []
    heading = 0  # the width of the heading being printed, over its lines
    longest = None if width is None else max(1, width // 2)
    for line in lines:
        text = "".join(text for _, text in line).rstrip()
        is_heading = bool(text) and all(style == HEADING or not part.strip()
                                        for style, part in line)
        if heading and not is_heading:
            out.append(RULE * heading)
            heading = 0
        out.append(text)
        if is_heading:
            heading = max(heading, len(text)) if longest is None else \
                min(longest, max(heading, len(text)))
    if heading:
        out.append(RULE * heading)
    return "\n".join(out)


RULE = "─"


def _inline(token: Any) -> list[Fragment]:
    """An inline token's children as (style, text) pieces, nested styles joined."""
    pieces: list[Fragment] = []
    active: list[str] = []
    for child in token.children or []:
        if child.type in _INLINE_STYLES:
            active.append(_INLINE_STYLES[child.type])
        elif child.type in ("strong_close", "em_close"):
            if active:
                active.pop()
        elif child.type == "code_inline":
            pieces.append((CODE, child.content))
        elif child.type in ("softbreak", "hardbreak"):
            pieces.append((" ".join(active), " "))
        elif child.type in ("text", "html_inline"):
            pieces.append((" ".join(active), child.content))
    return pieces


def _words(pieces: list[Fragment]) -> list[list[Fragment]]:
    """Split styled pieces into words; a word may carry several styles (**128** KiB,)."""
    words: list[list[Fragment]] = []
    joining = False
    for style, text in pieces:
        parts = text.split(" ")
        for index, part in enumerate(parts):
            if index > 0:
                joining = False
            if not part:
                continue
            if joining and words:
                words[-1].append((style, part))
            else:
                words.append([(style, part)])
            joining = True
    return words


def _fill(pieces: list[Fragment], width: int, first: str, rest: str) -> list[Line]:
    """Greedy word wrap of styled pieces: `first` leads the first line, `rest` the others."""
    lines: list[Line] = []
    line: Line = [("", first)]
    used = columns(first)
    empty = True
    for word in _words(pieces):
        size = sum(columns(text) for _, text in word)
        if not empty and used + 1 + size > width:
            lines.append(line)
            line, used, empty = [("", rest)], columns(rest), True
        if not empty:
            line.append(("", " "))
            used += 1
        line += word
        used += size
        empty = False
    lines.append(line)
    return lines


class _Renderer:
    def __init__(self, width: int) -> None:
        self.width = width

    def blocks(self, tokens: list[Any]) -> list[Line]:
        out: list[Line] = []
        pending: str | None = None  # a list item's marker, for its first line
        hang: list[str] = []  # what each nested list item or quote puts before a line
        ordinal: list[int | None] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            kind = token.type
            if kind in ("bullet_list_open", "ordered_list_open"):
                start = token.attrGet("start")
                ordinal.append(int(start) if kind == "ordered_list_open" and start
                               else 1 if kind == "ordered_list_open" else None)
            elif kind in ("bullet_list_close", "ordered_list_close"):
                ordinal.pop()
                if not ordinal:
                    out.append([])
            elif kind == "list_item_open":
                number = ordinal[-1] if ordinal else None
                marker = "• " if number is None else f"{number}. "
                if number is not None:
                    ordinal[-1] = number + 1
                pending = "".join(hang) + marker
                hang.append(" " * len(marker))
            elif kind == "list_item_close":
                hang.pop()
            elif kind == "blockquote_open":
                hang.append("│ ")
            elif kind == "blockquote_close":
                hang.pop()
            elif kind == "heading_open":
                text = _inline(tokens[index + 1])
                out += _fill([(HEADING, t) for _, t in text], self.width, "", "")
                out.append([])
                index += 2
            elif kind == "inline":
                first = "".join(hang) if pending is None else pending
                pending = None
                out += _fill(_inline(token), self.width, first, "".join(hang))
                if not ordinal:
                    out.append([])
            elif kind in ("fence", "code_block"):
                for text in token.content.rstrip("\n").split("\n"):
                    out.append([("", "".join(hang) + "    "), (CODE, text)])
                out.append([])
            elif kind == "hr":
                # (half the width at most: "─" may be drawn two columns wide)
                out += [[("", RULE * min(self.width // 2, 40))], []]
            elif kind == "table_open":
                end = next(i for i in range(index, len(tokens))
                           if tokens[i].type == "table_close")
                out += self.table(tokens[index:end])
                out.append([])
                index = end
            index += 1
        while out and not out[-1]:
            out.pop()
        return out

    def table(self, tokens: list[Any]) -> list[Line]:
        rows: list[list[list[Fragment]]] = []
        for token in tokens:
            if token.type == "tr_open":
                rows.append([])
            elif token.type == "inline" and rows:
                rows[-1].append(_inline(token))
        if not rows:
            return []
        texts = [["".join(t for _, t in cell) for cell in row] for row in rows]
        columns = max(len(row) for row in texts)
        widths = [max((len(row[i]) for row in texts if i < len(row)), default=0)
                  for i in range(columns)]
        if sum(widths) + 3 * (columns - 1) <= self.width:
            lines: list[Line] = []
            for number, row in enumerate(rows):
                line: Line = []
                for i, cell in enumerate(row):
                    style = HEADING if number == 0 else ""
                    pad = widths[i] - len(texts[number][i])
                    line += [(style or s, t) for s, t in cell] + [("", " " * pad)]
                    if i < len(row) - 1:
                        line.append(("", " │ "))
                lines.append(line)
                if number == 0:
                    lines.append([("", "─┼─".join("─" * w for w in widths))])
            return lines
        # Too wide for the terminal: each row as "header: cell" lines under its first cell.
        header = texts[0]
        lines = []
        for row in rows[1:]:
            lines += _fill(row[0], self.width, "• ", "  ") if row else []
            for i, cell in enumerate(row[1:], start=1):
                name = header[i] if i < len(header) else ""
                lines += _fill([(STRONG, f"{name}:"), ("", " "), *cell], self.width, "    ",
                               "      ")
        return lines
