"""Whole attempts written blind to the marking (issue 33), graded as `kvdrill grade` grades
them: what the marking says is checked against what each answer's author meant
(tests/attempts_report.py counts it; run it as a script for the cases)."""

from __future__ import annotations

from functools import cache

from attempts_report import Report, attempts, report


@cache
def measured() -> Report:
    return report()


def test_the_corpus_holds_150_attempts_over_ten_drills() -> None:
    assert len(attempts()) >= 150
    assert len({a["drill"] for a in attempts()}) >= 10


def test_no_right_answer_is_told_it_is_wrong() -> None:
    assert measured().scolded == []


def test_no_answer_gets_more_than_two_explanations() -> None:
    assert measured().too_many == []


def test_no_red_flag_is_raised_that_the_attempt_did_not_earn() -> None:
    assert measured().false_flags == []


def test_no_bound_is_credited_as_a_value() -> None:
    assert measured().bounds_credited == []


def test_answers_that_follow_from_ones_own_numbers_are_carried_forward() -> None:
    carried = measured().carried
    assert carried["recognised"] >= 0.9 * sum(carried.values()), carried


def test_a_wrong_answer_is_seldom_explained_as_something_it_is_not() -> None:
    found = measured()
    wrong = sum(n for kind, n in found.answers.items() if kind != "right")
    assert len(found.wrongly_named) <= 0.03 * wrong, found.wrongly_named
