"""Small date arithmetic and the wording of dates in atom text ("7 May 2023", "April 2023")."""

from __future__ import annotations

import calendar
from datetime import date, timedelta

_SEASON_MONTHS = {"spring": 3, "summer": 6, "fall": 9, "autumn": 9, "winter": 12}


def day_text(d: date) -> str:
    """``7 May 2023``."""
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


def month_text(d: date) -> str:
    """``April 2023``."""
    return f"{calendar.month_name[d.month]} {d.year}"


def add_months(d: date, n: int) -> date:
    """The first day of the month ``n`` months after ``d``'s month (``n`` may be negative)."""
    index = d.year * 12 + d.month - 1 + n
    return date(index // 12, index % 12 + 1, 1)


def month_end(d: date) -> date:
    """The last day of ``d``'s month."""
    return date(d.year, d.month, calendar.monthrange(d.year, d.month)[1])


def previous_weekday(anchor: date, weekday: int) -> date:
    """The latest day strictly before ``anchor`` that falls on ``weekday`` (Monday = 0)."""
    return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)


def next_weekday(anchor: date, weekday: int) -> date:
    """The first day strictly after ``anchor`` that falls on ``weekday`` (Monday = 0)."""
    return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)


def _season(season: str, year: int) -> tuple[date, date]:
    first = date(year, _SEASON_MONTHS[season], 1)
    return first, month_end(add_months(first, 2))


def season_span(season: str, which: str, anchor: date, past: bool) -> tuple[date, date, str]:
    """The span and label ("summer 2022") of "last/this/next <season>" said on ``anchor``.

    Winter starts in December and is labelled with that year. "last" is the latest season that has
    ended; "next" the first one that has not begun; "this" the one of the current year, or the one
    going on (the winter that began last December counts for January and February).
    """
    season = season.lower()
    year = anchor.year
    if season == "winter" and anchor.month < 3:
        year -= 1
    start, end = _season(season, year)
    if which == "last":
        while end >= anchor:
            year -= 1
            start, end = _season(season, year)
    elif which == "next":
        while start <= anchor:
            year += 1
            start, end = _season(season, year)
    elif past and start > anchor:
        year -= 1
        start, end = _season(season, year)
    name = "fall" if season == "autumn" else season
    return start, end, f"{name} {year}"
