"""What to practise next: each drill is a spaced-repetition card (FSRS), each scored attempt a
review whose rating comes from the rubric. Drills never practised come first; then the one due
soonest. Learning steps are days, not minutes: a drill is not a flash card."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from fsrs import Card, Rating, Scheduler

# Rating thresholds on the share of rubric points earned (all dimensions together).
RATING_FLOORS = ((0.85, Rating.Easy), (0.65, Rating.Good), (0.4, Rating.Hard))


def rating_for(share: float) -> Rating:
    for floor, rating in RATING_FLOORS:
        if share >= floor:
            return rating
    return Rating.Again


@cache
def _scheduler() -> Scheduler:
    return Scheduler(learning_steps=(timedelta(days=1),), relearning_steps=(timedelta(days=1),),
                     enable_fuzzing=False)


@dataclass(frozen=True)
class DrillCard:
    drill: str
    attempts: int
    last_share: float | None
    last_rating: str | None
    due: datetime | None  # None: never practised


@dataclass(frozen=True)
class CardState:
    """A drill's card as kept in the store (FSRS's dict), with how many ratings it holds and
    the last one; `review` puts one more attempt in."""
    card: dict[str, Any]
    reviews: int
    last_share: float | None
    last_rating: str | None

    @staticmethod
    def start() -> CardState:
        return CardState(dict(Card().to_dict()), 0, None, None)

    def review(self, share: float, when: datetime) -> CardState:
        rating = rating_for(share)
        try:
            card = Card.from_dict(self.card)  # type: ignore[arg-type]
        except (KeyError, TypeError, ValueError):
            card = Card()  # a kept card that no longer reads: start it again
        card, _ = _scheduler().review_card(card, rating, when)
        return CardState(dict(card.to_dict()), self.reviews + 1, share, rating.name)

    def drill_card(self, drill_id: str) -> DrillCard:
        due = None
        if self.reviews:
            try:
                due = Card.from_dict(self.card).due  # type: ignore[arg-type]
            except (KeyError, TypeError, ValueError):
                due = None
        return DrillCard(drill_id, self.reviews if due else 0, self.last_share,
                         self.last_rating, due)


def card_for(drill_id: str, reviews: list[tuple[datetime, float]]) -> DrillCard:
    """Replay a drill's scored attempts (time, share of points) into its card."""
    scheduler = _scheduler()
    card = Card()
    rating = None
    for when, share in sorted(reviews):
        rating = rating_for(share)
        card, _ = scheduler.review_card(card, rating, when)
    last = sorted(reviews)[-1][1] if reviews else None
    return DrillCard(drill_id, len(reviews), last, rating.name if rating else None,
                     card.due if reviews else None)


def choose(cards: list[DrillCard], now: datetime | None = None) -> tuple[DrillCard, str]:
    """The drill to practise now, and why."""
    if not cards:
        raise ValueError("no drills to choose from")
    now = now or datetime.now(UTC)
    fresh = [c for c in cards if c.due is None]
    if fresh:
        return fresh[0], "never practised"
    soonest = min(cards, key=lambda c: c.due or now)
    assert soonest.due is not None and soonest.last_share is not None
    score = f"last score {soonest.last_share:.0%} ({soonest.last_rating})"
    if soonest.due <= now:
        days = (now - soonest.due).days
        when = "due now" if days == 0 else f"overdue by {days} day{'s' if days > 1 else ''}"
        return soonest, f"{when}; {score}"
    days = max(1, round((soonest.due - now).total_seconds() / 86400))
    return soonest, f"nothing is due; this one is next, in {days} day{'s' if days > 1 else ''}; " \
                    f"{score}"


def card_json(card: DrillCard) -> dict[str, Any]:
    return {"drill": card.drill, "attempts": card.attempts, "last_score": card.last_share,
            "last_rating": card.last_rating,
            "due": card.due.isoformat() if card.due else None}
