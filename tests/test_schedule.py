"""What to practise next: FSRS over scored attempts."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from fsrs import Rating

from trainer.store.schedule import card_for, choose, rating_for

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)


def test_scores_map_to_ratings() -> None:
    assert [rating_for(s) for s in (0.1, 0.5, 0.7, 0.9)] == [
        Rating.Again, Rating.Hard, Rating.Good, Rating.Easy]


def test_a_poor_attempt_comes_due_sooner_than_a_strong_one() -> None:
    poor = card_for("a", [(NOW - timedelta(days=3), 0.2)])
    strong = card_for("b", [(NOW - timedelta(days=3), 0.95)])
    assert poor.due is not None and strong.due is not None and poor.due < strong.due


def test_a_drill_never_practised_is_chosen_first() -> None:
    chosen, why = choose([card_for("a", [(NOW, 0.2)]), card_for("b", [])], NOW)
    assert chosen.drill == "b" and why == "never practised"


def test_the_most_overdue_drill_is_chosen_with_its_reason() -> None:
    old = card_for("a", [(NOW - timedelta(days=40), 0.5)])
    recent = card_for("b", [(NOW - timedelta(days=1), 0.9)])
    chosen, why = choose([recent, old], NOW)
    assert chosen.drill == "a" and why.startswith("overdue by")
