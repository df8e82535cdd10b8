"""When the retention sweep is due: daily at a local time of day, and at once when one was missed.

Pure functions over ``SweepState`` and times in ms; the zone is an IANA zone, or None for the
machine's local time (naive local datetimes, so daylight saving follows the system's rules).
"""

from __future__ import annotations

from datetime import datetime, timedelta, tzinfo

from memstrata.models import SweepState

DAY_MS = 86_400_000


def next_sweep(after_ms: int, at: str, zone: tzinfo | None) -> int:
    """The first moment strictly after ``after_ms`` whose local time of day is ``at`` (``HH:MM``)."""
    hour, minute = (int(part) for part in at.split(":"))
    then = datetime.fromtimestamp(after_ms / 1000, zone)
    candidate = then.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if candidate <= then:
        candidate = (then + timedelta(days=1)).replace(hour=hour, minute=minute, second=0, microsecond=0)
    return round(candidate.timestamp() * 1000)


def due_at(state: SweepState, at: str, zone: tzinfo | None) -> int:
    """When the sweep is due: a retry time after a failure; at once when it never ran; else the
    first ``at`` after the last run (in the past when a sweep was missed while closed)."""
    if state.retry_at is not None:
        return state.retry_at
    if state.last_run is None:
        return 0
    return next_sweep(state.last_run, at, zone)


def cutoff(now: int, days: float | None) -> int | None:
    """The time before which records are past a retention of ``days`` (None: no retention)."""
    return None if days is None else now - round(days * DAY_MS)
