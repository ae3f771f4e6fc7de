"""Answers as tired people type them: words before the number ("same as before, ~181 GB",
"double, ~192", "twice as many, 193") are a remark, and the words after it are echoed as typed,
none dropped."""

from __future__ import annotations

import pytest

from trainer.errors import AnswerParseError
from trainer.reading.exact import Fraction
from trainer.reading.reader import read_answer


@pytest.mark.parametrize(("typed", "unit", "value"), [
    ("same as before, ~181 GB", "GB", Fraction(181 * 10**9)),
    ("double, ~192", "", Fraction(192)),
    ("twice as many, 193", "sequences", Fraction(193)),
])
def test_words_before_the_number_are_a_remark(typed: str, unit: str, value: Fraction) -> None:
    assert read_answer(typed, unit).readings[0].quantity.value == value


def test_the_words_after_the_number_are_echoed_whole() -> None:
    note = read_answer("52 GB but i would keep more headroom", "GB").readings[0].note
    assert note == "ignored the words after the number: 'but i would keep more headroom'"


def test_adjectives_right_after_the_number_are_still_read_through() -> None:
    reading = read_answer("96 concurrent live sessions", "sequences").readings[0]
    assert reading.quantity.value == 96


def test_a_leading_not_is_never_dropped() -> None:
    # "not, 52 GB" is no answer of 52 GB: refused, or read with its "not"
    try:
        readings = read_answer("not, 52 GB", "GB").readings
    except AnswerParseError:
        return
    assert all(r.quantity.value != 52 * 10**9 for r in readings)


def test_the_unit_after_a_number_is_not_called_an_ignored_word() -> None:
    reading = read_answer("66 sessions i guess", "sequences").readings[0]
    assert reading.note == "ignored the words after the number: 'i guess'"


@pytest.mark.parametrize(("typed", "unit", "value"), [
    ("20ish seqs", "sequences", Fraction(20)),
    ("6-ish GB", "GB", Fraction(6 * 10**9)),
    ("2.5ish ms", "ms", Fraction(1, 400)),
])
def test_ish_glued_to_the_number_marks_it_approximate(typed: str, unit: str,
                                                       value: Fraction) -> None:
    reading = read_answer(typed, unit).readings[0]
    assert (reading.quantity.value, reading.approximate) == (value, True)


def test_working_after_the_number_is_not_called_words() -> None:
    reading = read_answer("57 GB i think, 85.5*.9 -16-4", "GB").readings[0]
    assert reading.note == "ignored what followed the number: 'i think, 85.5*.9 -16-4'"
