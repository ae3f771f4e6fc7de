"""What to practise next: each drill is a spaced-repetition card (FSRS), each scored attempt a
review whose rating comes from the rubric. Drills never practised come first; then the one due
soonest. Learning steps are days, not minutes: a drill is not a flash card."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

from fsrs import Card, Rating, Scheduler

from trainer.records import record
from trainer.store import moments

# Rating thresholds on the share of rubric points earned (all dimensions together).
RATING_FLOORS = ((0.85, Rating.Easy), (0.65, Rating.Good), (0.4, Rating.Hard))


def rating_for(share: float) -> Rating:
    for floor, rating in RATING_FLOORS:
        if share >= floor:
            return rating
    return Rating.Again


def read_card(kept: Any) -> Card | None:
    """A kept card (FSRS's dict, from the store) read back and checked: its due date and last
    review timezone-aware in UTC and in range (moments.utc: one with no time zone is read as
    UTC, another zone is converted), its stability and difficulty finite and above zero, its
    state and step ones the scheduler has. None when it cannot be read: the card starts again
    on its next rating, and shows as never rated."""
    if not isinstance(kept, dict):
        return None
    try:
        card = Card.from_dict(kept)  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError, OverflowError):
        return None
    due = moments.utc(card.due)
    last = None if card.last_review is None else moments.utc(card.last_review)
    if due is None or (card.last_review is not None and last is None):
        return None
    for value in (card.stability, card.difficulty):
        if value is not None and not (isinstance(value, float) and math.isfinite(value)
                                      and value > 0):
            return None
    if card.step is not None and (isinstance(card.step, bool) or not isinstance(card.step, int)
                                  or not 0 <= card.step < len(LEARNING_STEPS)):
        return None
    card.due, card.last_review = due, last
    return card


def new_card() -> Card:
    """A new FSRS card. Its id is given: fsrs makes one from the clock and sleeps a millisecond
    after each to keep them apart, which for twenty drills is 20 ms of every `next`; the store
    keys a card by its drill, never by this id."""
    return Card(card_id=0)


def _reviewed(card: Card | None, rating: Rating, when: datetime) -> Card:
    """`card` (None: a new one) with one more rating at `when`, a moment in UTC (moments.utc).
    A rating dated before the card's last review (times edited, attempts taken in out of
    order) counts as given at that last review, so time never runs backwards in the card."""
    card = card or new_card()
    if card.last_review is not None and when < card.last_review:
        when = card.last_review
    try:
        reviewed, _ = _scheduler().review_card(card, rating, when)
    except (ValueError, OverflowError, IndexError, TypeError, ZeroDivisionError):
        reviewed, _ = _scheduler().review_card(new_card(), rating, when)
    return reviewed


LEARNING_STEPS = (timedelta(days=1),)


@cache
def _scheduler() -> Scheduler:
    return Scheduler(learning_steps=LEARNING_STEPS, relearning_steps=LEARNING_STEPS,
                     enable_fuzzing=False)


@record
class DrillCard:
    drill: str
    attempts: int
    last_share: float | None
    last_rating: str | None
    due: datetime | None  # None: never practised


@record
class CardState:
    """A drill's card as kept in the store (FSRS's dict), with how many ratings it holds and
    the last one; `review` puts one more attempt in."""
    card: dict[str, Any]
    reviews: int
    last_share: float | None
    last_rating: str | None

    @staticmethod
    def start() -> CardState:
        return CardState(dict(new_card().to_dict()), 0, None, None)

    def review(self, share: float, when: datetime) -> CardState:
        """One more attempt in: `when` is a moment in UTC (moments.utc); a kept card that no
        longer reads starts again."""
        rating = rating_for(share)
        card = _reviewed(read_card(self.card), rating, when)
        return CardState(dict(card.to_dict()), self.reviews + 1, share, rating.name)

    def drill_card(self, drill_id: str) -> DrillCard:
        card = read_card(self.card) if self.reviews else None
        due = None if card is None else card.due
        return DrillCard(drill_id, self.reviews if due else 0, self.last_share,
                         self.last_rating, due)


def recall(card: dict[str, Any], now: datetime | None = None) -> float:
    """FSRS's retrievability of a kept card at `now` (default: now): the predicted chance of
    a right answer, 0 to 1; 0 for a card never rated or one that no longer reads."""
    kept = read_card(card)
    if kept is None:
        return 0.0
    try:
        value = float(_scheduler().get_card_retrievability(kept, now or datetime.now(UTC)))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return 0.0
    return min(1.0, max(0.0, value)) if math.isfinite(value) else 0.0


def card_for(drill_id: str, reviews: list[tuple[datetime, float]]) -> DrillCard:
    """Replay a drill's scored attempts (time, share of points) into its card."""
    scheduler = _scheduler()
    card = new_card()
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
    assert soonest.due is not None
    score = "last score not kept" if soonest.last_share is None else \
        f"last score {soonest.last_share:.0%} ({soonest.last_rating})"
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


# -- skills ---------------------------------------------------------------------------------
# A skill's card is rated from the steps tagged with it: a right answer in time and without a
# hint is Good, a right one over its budget Hard, anything else (wrong, a hint, unanswered)
# Again. Where one attempt has several steps of a skill, the worst of them is its rating.

RATING_ORDER = (Rating.Again, Rating.Hard, Rating.Good, Rating.Easy)


def step_rating(verdict: str | None, hints: int, overtime: bool) -> Rating:
    if verdict != "correct" or hints:
        return Rating.Again
    return Rating.Hard if overtime else Rating.Good


def worst(ratings: list[Rating]) -> Rating:
    return min(ratings, key=RATING_ORDER.index)


@record
class SkillCard:
    """A skill's card as `next` and `practice --weak` read it."""
    skill: str
    reviews: int  # attempts that rated it
    steps: int  # steps rated
    wrong: int  # of which rated Again
    last_rating: str | None
    last_mistake: str | None  # the wrong-path id the last mistake matched
    last_drill: str | None  # the drill of that mistake
    due: datetime | None
    recall: float = 0.0  # FSRS retrievability when read: the chance of a right answer now
    card: dict[str, Any] | None = None  # the kept FSRS card, for recall at another moment

    @property
    def wrong_share(self) -> float:
        return self.wrong / self.steps if self.steps else 0.0


@record
class SkillState:
    """A skill's card as kept in the store, and how one attempt's steps are put in it."""
    skill: str
    card: CardState
    steps: int = 0
    wrong: int = 0
    last_mistake: str | None = None
    last_drill: str | None = None

    @staticmethod
    def start(skill: str) -> SkillState:
        return SkillState(skill, CardState.start())

    def review(self, ratings: list[Rating], mistake: str | None, drill: str,
               when: datetime) -> SkillState:
        rating = worst(ratings)
        card = _reviewed(read_card(self.card.card), rating, when)
        wrong = sum(1 for r in ratings if r == Rating.Again)
        state = CardState(dict(card.to_dict()), self.card.reviews + 1, None, rating.name)
        return SkillState(self.skill, state, self.steps + len(ratings), self.wrong + wrong,
                          mistake or self.last_mistake, drill if mistake else self.last_drill)

    def skill_card(self, now: datetime | None = None) -> SkillCard:
        due = self.card.drill_card(self.skill).due
        return SkillCard(self.skill, self.card.reviews, self.steps, self.wrong,
                         self.card.last_rating, self.last_mistake, self.last_drill, due,
                         recall(self.card.card, now) if self.card.reviews else 0.0,
                         self.card.card if self.card.reviews else None)


def skill_json(card: SkillCard) -> dict[str, Any]:
    return {"skill": card.skill, "attempts": card.reviews, "steps": card.steps,
            "wrong": card.wrong, "last_rating": card.last_rating,
            "last_mistake": card.last_mistake, "last_drill": card.last_drill,
            "due": card.due.isoformat() if card.due else None}
