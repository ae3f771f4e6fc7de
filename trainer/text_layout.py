"""Text laid out for a terminal of a given width: prose wrapped between words, and tables whose
columns narrow and wrap inside their cells, or, when even that cannot fit, rows stacked as
"column: value" lines. Width None means the text is piped or written to a file: each record
stays on one line, under a header row that names its columns.

Plain strings in, plain strings out: colour is added after layout, and nothing here imports
more than the standard library, so any command can lay out its text without start-up cost."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from unicodedata import east_asian_width

from trainer.records import field, record

GAP = "  "
MIN_COLUMN = 6  # a column narrower than this reads as noise: stack the rows instead
_LEAD = re.compile(r"^(\s*(?:[-•*✓✗✎·?⚑]|\d+[.)]|\([a-z0-9]+\))?\s*)")
_LABEL = re.compile(r"^(\s+[A-Za-z][\w .()-]{0,24}: )")  # "  model: ", under a heading


def columns(text: str) -> int:
    """The columns a text may take on a terminal, at most: its length, each character of
    ambiguous East Asian width counted twice. Such characters ("×", "÷", "•", "—", "→") take
    one column in most terminals and two in some (a CJK locale, several fonts); a wrap that
    counts them as two never spills past the terminal's edge in either."""
    if text.isascii():
        return len(text)
    return len(text) + sum(1 for ch in text if not ch.isascii() and east_asian_width(ch) == "A")


def wrap_words(text: str, width: int, first: str = "", rest: str = "") -> list[str]:
    """Greedy wrap between words; a word longer than a whole line (a path, a long number) is
    the only thing ever cut, at the width."""
    room = max(1, width)
    lines: list[str] = []
    line, empty = first, True
    for word in text.split():
        if not empty and columns(line) + 1 + columns(word) > room:
            lines.append(line.rstrip())
            line, empty = rest, True
        while len(line) + len(word) > room and len(line) < room:
            cut = _cut_at(word, room - len(line))
            lines.append(line + word[:cut])
            word, line = word[cut:], rest
        if word:
            line += ("" if empty else " ") + word
            empty = False
    lines.append(line.rstrip())
    return lines


def _cut_at(word: str, room: int) -> int:
    """Where to break a word too long for the room: after its last hyphen, slash or underscore
    that fits (a step id, a path), else at the room itself."""
    for index in range(room, 1, -1):
        if word[index - 1] in "-/_.":
            return index
    return room


def wrap_line(line: str, width: int) -> list[str]:
    """One line wrapped at `width`; the lines it continues on are indented under its text (past
    its indent and any list marker such as "- ", "• ", "✓ ", "1. ")."""
    if len(line) <= width:
        return [line]
    lead = _LABEL.match(line) or _LEAD.match(line)
    first = lead.group(1) if lead else ""
    hang = " " * len(first) if len(first) <= width // 2 else ""
    return wrap_words(line[len(first):], width, first, hang)


def wrap(text: str, width: int | None) -> str:
    """Every line of `text` that is wider than `width` wrapped between words (None: as is)."""
    if width is None:
        return text
    return "\n".join(out for line in text.split("\n") for out in wrap_line(line, width))


def reflow(text: str, width: int | None) -> str:
    """Prose whose line breaks were made for another width (a drill's situation) re-filled:
    lines of one paragraph are joined, while blank lines, list items and indented lines keep
    their own starts."""
    if width is None:
        return text
    out: list[str] = []
    paragraph: list[str] = []

    def flush() -> None:
        if paragraph:
            out.extend(wrap_line(" ".join(part.strip() for part in paragraph), width))
            paragraph.clear()

    for line in text.split("\n"):
        starts_item = bool(re.match(r"^\s*(?:[-•*]|\d+[.)])\s", line))
        if not line.strip():
            flush()
            out.append("")
        elif starts_item or (paragraph and _is_continuation_of_item(paragraph[0], line)):
            if starts_item:
                flush()
            paragraph.append(line)
        elif paragraph and _indent(line) != _indent(paragraph[-1]) and \
                not re.match(r"^\s*(?:[-•*]|\d+[.)])\s", paragraph[0]):
            flush()
            paragraph.append(line)
        else:
            paragraph.append(line)
    flush()
    return "\n".join(out)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _is_continuation_of_item(item: str, line: str) -> bool:
    marker = re.match(r"^(\s*(?:[-•*]|\d+[.)])\s+)", item)
    if marker is None:
        return False
    return _indent(line) >= len(marker.group(1)) - 2 and _indent(line) > 0


# ---- Tables ---------------------------------------------------------------------------------


@record(frozen=False)
class Column:
    header: str
    align: str = "<"  # "<" left, ">" right (numbers)
    wrap: bool = True  # False: never narrowed (ids, dates, short numbers)
    least: int = 0  # narrowed no further than this while others can give (a title)


@record(frozen=False)
class Table:
    """Columns laid out once for a width (from the rows it is shown first), then any number of
    rows printed under that layout, so a long listing can be printed a batch at a time."""

    columns: Sequence[Column]
    width: int | None
    widths: list[int] = field(default_factory=list)
    kept: list[int] = field(default_factory=list)  # the columns shown, by index
    stacked: bool = False

    def fit(self, rows: Iterable[Sequence[str]], drop_empty: bool = False) -> Table:
        """Lay the columns out for these rows; `drop_empty` leaves out a column that is empty
        in every row (only for a table shown whole, never a listing printed in batches)."""
        rows = [list(row) for row in rows]
        self.kept = [i for i in range(len(self.columns))
                     if not (drop_empty and rows and not any(_cell(row, i) for row in rows))]
        natural = [max([len(self.columns[i].header)] + [len(_cell(row, i)) for row in rows])
                   for i in self.kept]
        self.widths = natural
        if self.width is None:
            return self
        room = self.width - len(GAP) * (len(self.kept) - 1)
        if sum(natural) <= room:
            return self
        floors = []
        for n, i in enumerate(self.kept):
            column = self.columns[i]
            words = [len(w) for row in rows for w in _cell(row, i).split()]
            words += [len(w) for w in column.header.split()]
            floors.append(natural[n] if not column.wrap
                          else min(natural[n], max(MIN_COLUMN, min(max(words), 16))))
        if sum(floors) > room:
            self.stacked = True
            return self
        preferred = [min(natural[n], max(floors[n], self.columns[i].least))
                     for n, i in enumerate(self.kept)]
        if sum(preferred) <= room:
            floors = preferred
        widths = list(natural)
        while sum(widths) > room:  # a character from the widest column that can give one
            n = max((j for j in range(len(widths)) if widths[j] > floors[j]),
                    key=lambda j: widths[j])
            widths[n] -= 1
        self.widths = widths
        return self

    def header_lines(self) -> list[str]:
        if self.stacked:
            return []
        lines = self._lines([c.header for c in self.columns])
        lines.append(GAP.join("─" * w for w in self.widths).rstrip())
        return lines

    def row_lines(self, row: Sequence[str]) -> list[str]:
        return self._stacked(row) if self.stacked else self._lines(row)

    def lines(self, rows: Iterable[Sequence[str]], drop_empty: bool = False) -> list[str]:
        rows = [list(row) for row in rows]
        self.fit(rows, drop_empty)
        out = self.header_lines()
        for row in rows:
            out += self.row_lines(row)
        while out and not out[-1]:
            out.pop()
        return out

    def _lines(self, row: Sequence[str]) -> list[str]:
        cells = []
        for n, i in enumerate(self.kept):
            text, width = _cell(row, i), self.widths[n]
            parts = [text] if len(text) <= width or self.width is None else \
                wrap_words(text, width)
            cells.append([f"{part:{self.columns[i].align}{width}}" for part in parts])
        height = max(len(c) for c in cells)
        return [GAP.join(c[k] if k < len(c) else " " * self.widths[n]
                         for n, c in enumerate(cells)).rstrip() for k in range(height)]

    def _stacked(self, row: Sequence[str]) -> list[str]:
        assert self.width is not None
        width = self.width
        first = _cell(row, 0)
        if self.columns[0].align == ">":  # a number (an id) says what it is
            first = f"{self.columns[0].header} {first}"
        out = wrap_words(first, width)
        for i in self.kept[1:] if self.kept and self.kept[0] == 0 else self.kept:
            text = _cell(row, i)
            if text:
                label = f"  {self.columns[i].header}: "
                out += wrap_words(text, width, label, " " * min(len(label), width // 2))
        out.append("")
        return out


def _cell(row: Sequence[str], index: int) -> str:
    return row[index] if index < len(row) else ""


def table(columns: Sequence[Column], rows: Iterable[Sequence[str]], width: int | None,
          drop_empty: bool = False) -> str:
    return "\n".join(Table(columns, width).lines(rows, drop_empty))


def column_blocks(columns: Sequence[Column], rows: Sequence[Sequence[str]], width: int | None
                  ) -> list[str]:
    """A grid whose first column labels the rows (a step per row, a candidate per column):
    when its columns do not fit, they go in blocks, each repeating the row labels, so every
    cell keeps its width and every block its header."""
    if width is None or len(columns) < 2:
        return Table(columns, width).lines(rows)
    label = max([len(columns[0].header)] + [len(_cell(row, 0)) for row in rows])
    sizes = [max([len(c.header)] + [len(_cell(row, i)) for row in rows])
             for i, c in enumerate(columns)]
    blocks: list[list[int]] = [[]]
    used = label
    for i in range(1, len(columns)):
        if blocks[-1] and used + len(GAP) + sizes[i] > width:
            blocks.append([])
            used = label
        blocks[-1].append(i)
        used += len(GAP) + sizes[i]
    out: list[str] = []
    for block in blocks:
        picked = [0, *block]
        table = Table([columns[i] for i in picked], width)
        if out:
            out.append("")
        out += table.lines([[_cell(row, i) for i in picked] for row in rows])
    return out


def pack(items: Sequence[str], width: int | None, first: str = "", rest: str = "",
         separator: str = " · ") -> list[str]:
    """Items joined by `separator` on lines of at most `width`, each item kept whole on one line
    (a phrase such as "levers ▁▄█ 3.5/4"), unless it is longer than a line; lines after the
    first start with `rest`. Width None: one line."""
    if width is None:
        return [first + separator.join(items)]
    lines: list[str] = []
    line, empty = first, True
    for item in items:
        piece = item if empty else separator + item
        if not empty and len(line) + len(piece) > width:
            lines.append(line.rstrip())
            line, piece = rest, item
        if len(line) + len(piece) > width:  # too long for a line of its own: wrapped
            wrapped = wrap_words(piece, width, line, rest)
            lines += wrapped[:-1]
            line = wrapped[-1]
        else:
            line += piece
        empty = False
    lines.append(line.rstrip())
    return lines
