"""When the retention sweep is due: a local time of day in a time zone, across daylight saving,
after a failure, and at once when it never ran."""

from __future__ import annotations

from datetime import UTC, datetime
from zoneinfo import ZoneInfo

from memstrata.forgetting.schedule import cutoff, due_at, next_sweep
from memstrata.models import SweepState

PARIS = ZoneInfo("Europe/Paris")


def utc(year: int, month: int, day: int, hour: int, minute: int) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp() * 1000)


def test_the_next_sweep_is_the_next_local_time_of_day() -> None:
    # 03:30 in Paris is 02:30 UTC in winter and 01:30 UTC in summer
    assert next_sweep(utc(2026, 3, 10, 12, 0), "03:30", PARIS) == utc(2026, 3, 11, 2, 30)
    assert next_sweep(utc(2026, 3, 11, 2, 29), "03:30", PARIS) == utc(2026, 3, 11, 2, 30)
    assert next_sweep(utc(2026, 3, 11, 2, 30), "03:30", PARIS) == utc(2026, 3, 12, 2, 30)
    assert next_sweep(utc(2026, 3, 28, 12, 0), "03:30", PARIS) == utc(2026, 3, 29, 1, 30)  # DST day
    assert next_sweep(utc(2026, 7, 1, 0, 0), "00:00", ZoneInfo("UTC")) == utc(2026, 7, 2, 0, 0)


def test_due_at_once_when_never_run_then_daily_or_at_the_retry_time() -> None:
    assert due_at(SweepState(), "03:30", PARIS) == 0
    last = utc(2026, 3, 11, 2, 30)
    assert due_at(SweepState(last_run=last), "03:30", PARIS) == utc(2026, 3, 12, 2, 30)
    assert due_at(SweepState(last_run=last, retry_at=last + 30_000), "03:30", PARIS) == last + 30_000


def test_the_retention_cutoff() -> None:
    assert cutoff(10 * 86_400_000, None) is None
    assert cutoff(10 * 86_400_000, 1.5) == 8.5 * 86_400_000
