"""A worked solution wrapped for a terminal fits it even where × and ÷ are drawn two columns
wide (a CJK locale, several fonts): `kvdrill solution llama31-8b-h100` spilled 5 lines there."""

from __future__ import annotations

from trainer.text_layout import columns, wrap_words
from trainer.views.terminal_text import plain, render


def _wide(line: str) -> int:
    return len(line) + line.count("×") + line.count("÷")


def test_the_signs_of_ambiguous_width_count_twice() -> None:
    assert columns("2 × 32 ÷ 4") == 12


def test_wrapped_prose_fits_where_the_signs_are_drawn_wide() -> None:
    text = " ".join(["2 × 32 layers × 8 KV heads × 128 head_dim × 2 B ÷ 1,024"] * 6)
    assert max(_wide(line) for line in wrap_words(text, 80)) <= 80


def test_a_worked_solution_fits_where_the_signs_are_drawn_wide() -> None:
    markdown = "- Bytes per token: " + " ".join(["2 (K and V) × 32 layers × 8 KV heads"] * 5)
    assert max(_wide(line) for line in plain(render(markdown, 80)).split("\n")) <= 80


def _every_ambiguous_wide(line: str) -> int:
    from unicodedata import east_asian_width
    return sum(2 if east_asian_width(ch) == "A" else 1 for ch in line)


def test_bullets_and_heading_rules_fit_where_every_ambiguous_sign_is_drawn_wide() -> None:
    # (the stop-65 review: "•" and the heading's "─" rule are of ambiguous width too; the
    # rule was as long as its heading and spilled where each "─" takes two columns)
    markdown = ("# KV bytes per token and sessions per card — Llama-3.1-8B on one H100\n\n"
                "- Less memory than assumed: an activation peak and CUDA graphs bigger than "
                "the 4 GB reserve, or another process on the card.\n\n---\n")
    lines = plain(render(markdown, 80), 80).split("\n")
    assert max(_every_ambiguous_wide(line) for line in lines) <= 80
    assert any(set(line) == {"─"} for line in lines)  # the heading keeps its rule
