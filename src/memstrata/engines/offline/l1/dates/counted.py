"""A count of days, weeks, months or years from the message day: "three days ago", "in two weeks",
"for four months now"."""

from __future__ import annotations

import re
from datetime import date, timedelta

from memstrata.engines.offline.l1.dates.daymath import add_months, day_text, month_end, month_text
from memstrata.engines.offline.l1.dates.span import Context, Found, Rule, on_day
from memstrata.engines.offline.l1.tense import clause_around
from memstrata.engines.offline.lexicon import NUMBER_WORDS

_NUM = r"\d{1,3}|" + "|".join(sorted((re.escape(k) for k in NUMBER_WORDS), key=len, reverse=True))
_UNIT = r"(?P<unit>day|week|month|year)s?"
# "in N units" after a count is a rate or a measure, not a time to come: after how often ("three
# times in a week", "twice in a month") or a number of units ("365 days in a year", "hours in a
# day") whatever the span; after a number of things only when the span is one unit ("20 books in a
# year": "3 exams in 2 weeks" may be exams to come). "a" and "an" do not count here: "a marathon in
# a month" is an event to come as often as a rate.
_COUNT = r"\d[\d,.]*|" + "|".join(re.escape(k) for k in NUMBER_WORDS if k not in ("a", "an"))
_HOW_OFTEN = re.compile(
    r"(?:\b(?:once|twice|thrice|times)|\b(?:second|minute|hour|day|night|week|month|year)s)\s+$",
    re.IGNORECASE,
)
_HOW_MANY = re.compile(rf"\b(?:{_COUNT})\s+[\w-]+\s+$", re.IGNORECASE)
_ONE = frozenset({"a", "an", "one", "1"})
# After it, another origin or a length: "in a week from March 3" counts from another day than the
# message's ("from now" does not), "in 3 years of marriage" is a length.
_MEASURE_AFTER = re.compile(r"\s+(?:(?:from|after)\s+(?!now\b|today\b)|of\s)", re.IGNORECASE)
# A negated perfect or a "first time" measures a stretch up to now: "I haven't seen him in a year",
# "for the first time in two years".
_GAP_UP_TO_NOW = re.compile(
    r"\b(?:have|has)(?:n[’']?t|\s+not|\s+never)\b|[’']ve\s+(?:not|never)\b|\b(?:first|only)\s+time\b",
    re.IGNORECASE,
)
# "N units now" after how often or how long something takes is a measure, not a stretch up to now:
# "I water them every 2 days now", "the build takes 3 days now".
_MEASURED_BY = re.compile(
    r"\b(?:every|per|takes?|took|taking|lasts?|lasted|needs?|needed|requires?|required)\s+(?:\w+\s+){0,2}$",
    re.IGNORECASE,
)
_UP_TO_NOW = re.compile(
    r"\b(?:have|has|'ve|'s)\s+(?:\w+ly\s+)?(?:been|known|had|lived|worked|\w+ed)\b|\b(?:now|already)\b",
    re.IGNORECASE,
)


def _number(word: str) -> int | None:
    word = " ".join(word.lower().split())
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word)


def _ago(m: re.Match[str], c: Context) -> Found | None:
    n = _number(m.group("n"))
    if n is None:
        return None
    unit = m.group("unit").lower()
    a = c.anchor
    fuzzy = m.group("n").lower().strip() in {"a few", "few", "several"}
    if unit == "day":
        d = a - timedelta(days=n)
        if fuzzy:
            return Found(
                f"{m.group(0)} (shortly before {day_text(a)})", d - timedelta(days=2), d + timedelta(days=1)
            )
        return on_day(d)
    if unit == "week":
        d = a - timedelta(days=7 * n)
        return Found(f"{m.group(0)} (around {day_text(d)})", d - timedelta(days=3), d + timedelta(days=3))
    if unit == "month":
        first = add_months(a.replace(day=1), -n)
        return Found(f"{m.group(0)} (around {month_text(first)})", first, month_end(first))
    year = a.year - n
    return Found(f"{m.group(0)} (around {year})", date(year, 1, 1), date(year, 12, 31))


def _in_future(m: re.Match[str], c: Context) -> Found | None:
    """ "in two weeks", "in the next few months": a day or month to come, unless the phrase only
    measures a length (see ``_measures``)."""
    n = _number(m.group("n"))
    if n is None or c.past or _measures(m):
        return None
    unit = m.group("unit").lower()
    days = {"day": 1, "week": 7}.get(unit)
    if days is not None:
        d = c.anchor + timedelta(days=n * days)
        return Found(f"{m.group(0)} (around {day_text(d)})", d, d)
    first = add_months(c.anchor.replace(day=1), n if unit == "month" else 12 * n)
    return Found(f"{m.group(0)} (around {month_text(first)})", first, month_end(first))


def _measures(m: re.Match[str]) -> bool:
    """Whether "in N units" measures a length or a rate rather than naming a time to come."""
    before, clause = m.string[: m.start()], clause_around(m.string, m.start(), m.end())
    if _HOW_OFTEN.search(before) or (_HOW_MANY.search(before) and m.group("n").lower() in _ONE):
        return True
    return _MEASURE_AFTER.match(m.string, m.end()) is not None or _GAP_UP_TO_NOW.search(clause) is not None


def _duration(m: re.Match[str], c: Context) -> Found | None:
    """ "for four months now", "seven years now", "I have been married for 3 years": a state that
    lasts up to the message day, so it began about that long before it."""
    if _UP_TO_NOW.search(clause_around(m.string, m.start(), m.end())) is None:
        return None
    if m.start() == m.start("n") and _MEASURED_BY.search(m.string, 0, m.start()):
        return None  # "N units now" only: in "I've needed glasses for 3 years", "for" tells it
    n = _number(m.group("n"))
    if n is None:
        return None
    unit, a = m.group("unit").lower(), c.anchor
    if unit == "year":
        start, label = date(a.year - n, 1, 1), str(a.year - n)
    elif unit == "month":
        start = add_months(a.replace(day=1), -n)
        label = month_text(start)
    else:
        start = a - timedelta(days=n * (7 if unit == "week" else 1))
        label = day_text(start)
    return Found(f"{m.group(0)} (since around {label})", start, a)


_I = re.IGNORECASE
RULES: tuple[Rule, ...] = (
    (re.compile(rf"\b(?P<n>{_NUM}) {_UNIT} ago\b", _I), _ago),
    (re.compile(rf"\bin (?:the next )?(?P<n>{_NUM}) {_UNIT}\b", _I), _in_future),
    (
        re.compile(
            rf"\bfor (?:about |around |almost |nearly |over |more than )?(?P<n>{_NUM}) {_UNIT}\b",
            _I,
        ),
        _duration,
    ),
    (re.compile(rf"\b(?P<n>{_NUM}) {_UNIT} (?:now|already)\b", _I), _duration),
)
