"""Dates and times read back from a store, a kept card or a transcript, checked where they
enter: an ISO date and time, with a time zone (one without is read as UTC, as kvdrill has always
written UTC), normalised to UTC, and inside the years a practice can have happened in, far
enough from datetime's limits that the schedule's longest interval (a century) still fits.
Anything else is not a moment: the caller repairs it (a start time for a finish time, a card
started again) or says which attempt it belongs to; it never reaches the arithmetic."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

EARLIEST = datetime(1970, 1, 1, tzinfo=UTC)
LATEST = datetime(9000, 1, 1, tzinfo=UTC)
MAX_STAMP_CHARS = 64  # an ISO date and time is about 32 characters


def utc(stamp: Any) -> datetime | None:
    """`stamp` (ISO text or a datetime) as an aware UTC datetime between EARLIEST and LATEST;
    None when it is not one (not text, not a date, out of range, or out of range once its
    offset is taken off: 9999-12-31T23:59:59-14:00)."""
    if isinstance(stamp, str):
        if len(stamp) > MAX_STAMP_CHARS:
            return None
        try:
            moment = datetime.fromisoformat(stamp.strip())
        except ValueError:
            return None
    elif isinstance(stamp, datetime):
        moment = stamp
    else:
        return None
    try:
        moment = moment.replace(tzinfo=UTC) if moment.utcoffset() is None \
            else moment.astimezone(UTC)
    except (OverflowError, ValueError):
        return None
    return moment if EARLIEST <= moment < LATEST else None


def utc_text(stamp: Any) -> str | None:
    """`stamp` normalised to UTC ISO text (2026-03-01T09:00:00+00:00), None when not a moment."""
    moment = utc(stamp)
    return None if moment is None else moment.isoformat()


def described(stamp: Any) -> str:
    """A stamp that is not a moment, quoted short for a message."""
    text = repr(stamp) if not isinstance(stamp, str) else repr(stamp[:40])
    return text


def attempt_time(attempt_id: int, finished_at: Any, started_at: Any
                 ) -> tuple[datetime | None, str | None]:
    """When an attempt is placed in time (its finish, else its start), and a note naming the
    attempt when a stored time is not a usable date: its start stands in for a finish that is
    not one; with neither usable, (None, note) and the attempt is left out of whatever needed
    the time."""
    finished = utc(finished_at) if finished_at is not None else None
    if finished is not None:
        return finished, None
    started = utc(started_at)
    if finished_at is None:
        if started is not None:
            return started, None
        return None, (f"attempt {attempt_id}: its start time {described(started_at)} is not a "
                      "usable date and time; left out of the schedule and the weeks")
    if started is not None:
        return started, (f"attempt {attempt_id}: its finish time {described(finished_at)} is "
                         "not a usable date and time; its start time stands in")
    return None, (f"attempt {attempt_id}: neither its finish time {described(finished_at)} nor "
                  f"its start time {described(started_at)} is a usable date and time; left out "
                  "of the schedule and the weeks")
