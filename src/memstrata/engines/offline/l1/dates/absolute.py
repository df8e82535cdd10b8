"""Named months, days and years: "June 5", "5 June 1990", "in March", "May 2022", "in 2016". A
month or day written without a year gains the year it most likely means."""

from __future__ import annotations

import re
from datetime import date

from memstrata.engines.offline.l1.dates.daymath import month_end
from memstrata.engines.offline.l1.dates.span import Context, Found, Rule
from memstrata.engines.offline.lexicon import MONTH_ABBREV, MONTHS, STOPWORDS, WEEKDAYS

_MONTH = "|".join(m.capitalize() for m in MONTHS if m != "may") + "|May"
_MON = _MONTH + r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
_YEAR = r"(?:19[5-9]\d|20[0-9]\d)"
# A month word followed by its day ("by April 15") is a day, left to the month-day rules: read as
# a month, its rewrite ("by April 2024") would strand the day ("by April 2024 15, 2024").
_NO_DAY = r"(?! \d{1,2}(?:st|nd|rd|th)?\b)"
# The year written after a month ("May 5, 1821"): any, since it stands right after the month; a bare
# number is read as a year only from 1950 on (_YEAR).
_STATED = r"(?:1[0-9]\d\d|20\d\d)"


def _month_day(m: re.Match[str], c: Context) -> Found | None:
    month = _month_number(m.group("month"))
    day, year = int(m.group("day")), m.group("year")
    y = int(year) if year else _infer_year(month, c)
    try:
        d = date(y, month, day)
    except ValueError:
        return None
    return Found(None if year else f"{m.group(0)} {y}", d, d)


def _month_only(m: re.Match[str], c: Context) -> Found | None:
    month = _month_number(m.group("month"))
    year = m.group("year")
    prefix = (m.groupdict().get("pre") or "").lower().strip()
    y = int(year) if year else _month_year(month, prefix, c)
    first = date(y, month, 1)
    return Found(None if year else f"{m.group(0)} {y}", first, month_end(first))


def _month_year(month: int, prefix: str, c: Context) -> int:
    """The year of a month named without one, read from the word before it, else the tense:
    "last June" is the latest June before this month, "next June" the first one after it, "until
    June" the nearest June (a stay "until June" said in March ends in the coming June even in a
    past-tense clause). "for June" is not read as a month: it names a person as often."""
    a = c.anchor
    if prefix == "last":
        return a.year if month < a.month else a.year - 1
    if prefix == "next":
        return a.year if month > a.month else a.year + 1
    if prefix in ("until", "till"):
        return min(
            (a.year - 1, a.year, a.year + 1), key=lambda y: abs(a.year * 12 + a.month - y * 12 - month)
        )
    return _infer_year(month, c)


# Capitalised words a year may follow as a date: the calendar's ("Feb 2024", "Christmas 2019",
# "Summer 2020") and the words that open a sentence before one ("Since 2019", "Early 2020").
_CALENDAR_WORDS = (
    frozenset(MONTHS)
    | frozenset(MONTH_ABBREV)
    | frozenset(WEEKDAYS)
    | frozenset(
        """
        spring summer fall autumn winter christmas easter thanksgiving halloween hanukkah passover
        ramadan eid diwali year years eve since around circa till early late mid end start beginning
        """.split()
    )
)
_WORD_BEFORE = re.compile(r"([^\W\d_][\w'-]*) $")


def _in_a_name(m: re.Match[str]) -> bool:
    """Whether the number at ``m`` ends a name or a title ("Cyberpunk 2077", "Windows 2000", "Blade
    Runner 2049"): it follows a capitalised word that is no calendar or function word."""
    before = _WORD_BEFORE.search(m.string, 0, m.start())
    if before is None or before.group(1) == before.group(1).lower():
        return False
    word = before.group(1).lower()
    return word not in _CALENDAR_WORDS and word not in STOPWORDS


def _year_only(m: re.Match[str], c: Context) -> Found | None:
    if _in_a_name(m):
        return None
    y = int(m.group(0))
    return Found(None, date(y, 1, 1), date(y, 12, 31))


def _month_number(name: str) -> int:
    key = name.lower().rstrip(".")
    return MONTHS.index(key) + 1 if key in MONTHS else MONTH_ABBREV[key[:4] if key == "sept" else key[:3]]


def _infer_year(month: int, c: Context) -> int:
    """A month without a year: the latest past one for past tense, else the next to come."""
    a = c.anchor
    if c.past:
        return a.year if month <= a.month else a.year - 1
    return a.year if month >= a.month else a.year + 1


RULES: tuple[Rule, ...] = (
    (
        re.compile(rf"\b(?P<month>{_MON}) (?P<day>\d{{1,2}})(?:st|nd|rd|th)?\b(?:,? (?P<year>{_STATED})\b)?"),
        _month_day,
    ),
    (
        re.compile(
            rf"\b(?P<day>\d{{1,2}})(?:st|nd|rd|th)? (?:of )?(?P<month>{_MON})\b(?:,? (?P<year>{_STATED})\b)?"
        ),
        _month_day,
    ),
    (
        re.compile(
            rf"\b(?P<pre>(?i:in|last|this|next|early|late|mid|since|during|until|till|by|of) )"
            rf"(?P<month>{_MONTH})\b{_NO_DAY}(?:,? (?P<year>{_STATED})\b)?"
        ),
        _month_only,
    ),
    (re.compile(rf"\b(?P<month>{_MONTH}),? (?P<year>{_STATED})\b"), _month_only),
    (re.compile(rf"\b{_YEAR}\b"), _year_only),
)
