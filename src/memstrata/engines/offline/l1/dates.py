"""Dates in a sentence, resolved against the day the message was written.

``resolve("I went there yesterday", date(2023, 5, 8))`` rewrites the sentence to "I went there on
7 May 2023" and reports the activity span 2023-05-07..2023-05-07. Day-precise relative words are
replaced by the date; vaguer ones ("two weeks ago") keep their words and gain the resolved date in
parentheses; absolute dates are kept (a missing year is added) and reported as a span.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from memstrata.engines.offline.l1.daymath import (
    add_months,
    day_text,
    month_end,
    month_text,
    next_weekday,
    previous_weekday,
    season_span,
)
from memstrata.engines.offline.lexicon import IRREGULAR_PAST, MONTH_ABBREV, MONTHS, NUMBER_WORDS, WEEKDAYS

_FUTURE = re.compile(
    r"\b(?:will|'ll|going to|gonna|plan|plans|planning|next|tomorrow|can't wait|looking forward|"
    r"excited|hope to|hoping to|want to|wanna|would like|about to|upcoming|coming up|soon|this coming|"
    # present progressive ("Tom is finally moving ...") usually speaks of arrangements to come
    r"(?:is|are)\s+(?:\w+ly\s+)?\w+ing)\b",
    re.IGNORECASE,
)
# Clause boundaries: a date takes its tense from its own clause, not the whole sentence
# ("we found a flat, Tom is moving on June 14": the date belongs to the second clause).
_CLAUSE = re.compile(r"[,;:]|\s(?:so|but|and|because|while)\s", re.IGNORECASE)
# "-ed" words that are as often adjectives of a present state ("a cat called Miso", "a company
# based in Porto", "interested in"): they do not make a sentence past.
_STATE_ED = "called|named|based|located|interested|related|supposed|tired|excited|derived"
_PAST = re.compile(
    rf"\b(?:{'|'.join(sorted(IRREGULAR_PAST))}|last|ago|yesterday|(?!(?:{_STATE_ED})\b)[a-z]{{3,}}ed)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(r"\b(?:every|each)\s*$", re.IGNORECASE)
_WD = "|".join(WEEKDAYS)
_WD_ABBREV = {
    "Mon": 0,
    "Tue": 1,
    "Tues": 1,
    "Wed": 2,
    "Thu": 3,
    "Thur": 3,
    "Thurs": 3,
    "Fri": 4,
    "Sat": 5,
    "Sun": 6,
}
_MONTH = "|".join(m.capitalize() for m in MONTHS if m != "may") + "|May"
_MON = _MONTH + r"|(?:Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)\.?"
_NUM = r"\d{1,3}|" + "|".join(sorted((re.escape(k) for k in NUMBER_WORDS), key=len, reverse=True))
_YEAR = r"(?:19[5-9]\d|20[0-9]\d)"
# A month word followed by its day ("by April 15") is a day, left to the month-day rules: read as
# a month, its rewrite ("by April 2024") would strand the day ("by April 2024 15, 2024").
_NO_DAY = r"(?! \d{1,2}(?:st|nd|rd|th)?\b)"
# The year written after a month ("May 5, 1821"): any, since it stands right after the month; a bare
# number is read as a year only from 1950 on (_YEAR).
_STATED = r"(?:1[0-9]\d\d|20\d\d)"


@dataclass(frozen=True, slots=True)
class Resolved:
    """A sentence after date resolution and the span of the dates it mentions (None if none)."""

    text: str
    start: date | None
    end: date | None


@dataclass(frozen=True, slots=True)
class _Found:
    """One date expression: its replacement words and its span."""

    replacement: str | None  # None keeps the matched words
    start: date
    end: date


@dataclass(frozen=True, slots=True)
class _Context:
    """What a handler needs: the message day and the sentence's tense."""

    anchor: date
    past: bool


_Handler = Callable[[re.Match[str], _Context], "_Found | None"]


def _day(d: date, template: str = "on {}") -> _Found:
    return _Found(template.format(day_text(d)), d, d)


def _number(word: str) -> int | None:
    word = " ".join(word.lower().split())
    if word.isdigit():
        return int(word)
    return NUMBER_WORDS.get(word)


def _simple_days(m: re.Match[str], c: _Context) -> _Found | None:
    phrase = " ".join(m.group(0).lower().split())
    a = c.anchor
    table: dict[str, tuple[int, str]] = {
        "the day before yesterday": (-2, "on {}"),
        "the day after tomorrow": (2, "on {}"),
        "yesterday": (-1, "on {}"),
        "today": (0, "on {}"),
        "tonight": (0, "on the night of {}"),
        "last night": (-1, "on the night of {}"),
        "tomorrow": (1, "on {}"),
        "this morning": (0, "on the morning of {}"),
        "this afternoon": (0, "on the afternoon of {}"),
        "this evening": (0, "on the evening of {}"),
        "earlier today": (0, "earlier on {}"),
    }
    offset, template = table[phrase]
    return _day(a + timedelta(days=offset), template)


def _week(m: re.Match[str], c: _Context) -> _Found | None:
    which = m.group(1).lower()
    a = c.anchor
    if which == "last":
        return _Found(f"in the week before {day_text(a)}", a - timedelta(days=7), a - timedelta(days=1))
    if which == "next":
        return _Found(f"in the week after {day_text(a)}", a + timedelta(days=1), a + timedelta(days=7))
    monday = a - timedelta(days=a.weekday())
    return _Found(f"in the week of {day_text(a)}", monday, monday + timedelta(days=6))


def _weekend(m: re.Match[str], c: _Context) -> _Found | None:
    which = m.group(1).lower()
    a = c.anchor
    if which == "last" or (which == "this" and c.past and a.weekday() < 5):
        saturday = a - timedelta(days=a.weekday() + 2)
        label = f"on the weekend before {day_text(a)}"
    else:
        saturday = a + timedelta(days=(5 - a.weekday()) % 7)
        if which == "next" and saturday <= a:
            saturday += timedelta(days=7)
        label = "on the weekend of"
    sunday = saturday + timedelta(days=1)
    span = f"{saturday.day}-{day_text(sunday)}" if saturday.month == sunday.month else day_text(saturday)
    text = f"{label} ({span})" if "before" in label else f"{label} {span}"
    return _Found(text, saturday, sunday)


def _month_rel(m: re.Match[str], c: _Context) -> _Found | None:
    shift = {"last": -1, "this": 0, "next": 1}[m.group(1).lower()]
    first = add_months(c.anchor.replace(day=1), shift)
    return _Found(f"in {month_text(first)}", first, month_end(first))


def _year_rel(m: re.Match[str], c: _Context) -> _Found | None:
    shift = {"last": -1, "this": 0, "next": 1}[m.group(1).lower()]
    year = c.anchor.year + shift
    return _Found(f"in {year}", date(year, 1, 1), date(year, 12, 31))


def _season(m: re.Match[str], c: _Context) -> _Found | None:
    which, season = m.group(1).lower(), m.group(2).lower()
    start, end, label = season_span(season, which, c.anchor, c.past)
    return _Found(f"in {label}", start, end)


def _ago(m: re.Match[str], c: _Context) -> _Found | None:
    n = _number(m.group(1))
    if n is None:
        return None
    unit = m.group(2).lower()
    a = c.anchor
    fuzzy = m.group(1).lower().strip() in {"a few", "few", "several"}
    if unit == "day":
        d = a - timedelta(days=n)
        if fuzzy:
            return _Found(
                f"{m.group(0)} (shortly before {day_text(a)})", d - timedelta(days=2), d + timedelta(days=1)
            )
        return _day(d)
    if unit == "week":
        d = a - timedelta(days=7 * n)
        return _Found(f"{m.group(0)} (around {day_text(d)})", d - timedelta(days=3), d + timedelta(days=3))
    if unit == "month":
        first = add_months(a.replace(day=1), -n)
        return _Found(f"{m.group(0)} (around {month_text(first)})", first, month_end(first))
    year = a.year - n
    return _Found(f"{m.group(0)} (around {year})", date(year, 1, 1), date(year, 12, 31))


def _in_future(m: re.Match[str], c: _Context) -> _Found | None:
    n = _number(m.group(1))
    if n is None or c.past:
        return None
    unit = m.group(2).lower()
    days = {"day": 1, "week": 7}.get(unit)
    if days is not None:
        d = c.anchor + timedelta(days=n * days)
        return _Found(f"{m.group(0)} (around {day_text(d)})", d, d)
    first = add_months(c.anchor.replace(day=1), n if unit == "month" else 12 * n)
    return _Found(f"{m.group(0)} (around {month_text(first)})", first, month_end(first))


_UP_TO_NOW = re.compile(
    r"\b(?:have|has|'ve|'s)\s+(?:\w+ly\s+)?(?:been|known|had|lived|worked|\w+ed)\b|\b(?:now|already)\b",
    re.IGNORECASE,
)


def _duration(m: re.Match[str], c: _Context) -> _Found | None:
    """ "for four months now", "seven years now", "I have been married for 3 years": a state that
    lasts up to the message day, so it began about that long before it."""
    if _UP_TO_NOW.search(_clause(m.string, m.start(), m.end())) is None:
        return None
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
    return _Found(f"{m.group(0)} (since around {label})", start, a)


def _weekday(m: re.Match[str], c: _Context) -> _Found | None:
    which = (m.group(1) or "").lower().split()
    if _HABIT.search(m.string[: m.start()]):
        return None  # a habit, not a date
    name = m.group(2)
    wd = _WD_ABBREV[name.rstrip(".")] if name.rstrip(".") in _WD_ABBREV else WEEKDAYS.index(name.lower())
    if "last" in which or "past" in which or ("next" not in which and "coming" not in which and c.past):
        d = previous_weekday(c.anchor, wd)
    else:
        d = next_weekday(c.anchor, wd)
    return _Found(f"on {WEEKDAYS[wd].capitalize()}, {day_text(d)}", d, d)


def _month_day(m: re.Match[str], c: _Context) -> _Found | None:
    month = _month_number(m.group("month"))
    day, year = int(m.group("day")), m.group("year")
    y = int(year) if year else _infer_year(month, c)
    try:
        d = date(y, month, day)
    except ValueError:
        return None
    return _Found(None if year else f"{m.group(0)} {y}", d, d)


def _month_only(m: re.Match[str], c: _Context) -> _Found | None:
    month = _month_number(m.group("month"))
    year = m.group("year")
    prefix = (m.groupdict().get("pre") or "").lower().strip()
    y = int(year) if year else _month_year(month, prefix, c)
    first = date(y, month, 1)
    return _Found(None if year else f"{m.group(0)} {y}", first, month_end(first))


def _month_year(month: int, prefix: str, c: _Context) -> int:
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


def _year_only(m: re.Match[str], c: _Context) -> _Found | None:
    y = int(m.group(0))
    return _Found(None, date(y, 1, 1), date(y, 12, 31))


def _month_number(name: str) -> int:
    key = name.lower().rstrip(".")
    return MONTHS.index(key) + 1 if key in MONTHS else MONTH_ABBREV[key[:4] if key == "sept" else key[:3]]


def _infer_year(month: int, c: _Context) -> int:
    """A month without a year: the latest past one for past tense, else the next to come."""
    a = c.anchor
    if c.past:
        return a.year if month <= a.month else a.year - 1
    return a.year if month >= a.month else a.year + 1


_I = re.IGNORECASE
_RULES: tuple[tuple[re.Pattern[str], _Handler], ...] = (
    (
        re.compile(
            r"\b(?:the day before yesterday|the day after tomorrow|yesterday|today|tonight|last night|"
            r"tomorrow|this morning|this afternoon|this evening|earlier today)\b",
            _I,
        ),
        _simple_days,
    ),
    (re.compile(r"\b(last|next|this) week\b", _I), _week),
    (re.compile(r"\b(last|next|this) weekend\b", _I), _weekend),
    (re.compile(r"\b(last|next|this) month\b", _I), _month_rel),
    (re.compile(r"\b(last|next|this) year\b", _I), _year_rel),
    (re.compile(r"\b(last|next|this) (summer|winter|spring|fall|autumn)\b", _I), _season),
    (re.compile(rf"\b({_NUM}) (day|week|month|year)s? ago\b", _I), _ago),
    (re.compile(rf"\bin (?:the next )?({_NUM}) (day|week|month|year)s?\b", _I), _in_future),
    (
        re.compile(
            rf"\bfor (?:about |around |almost |nearly |over |more than )?(?P<n>{_NUM}) "
            rf"(?P<unit>day|week|month|year)s?\b",
            _I,
        ),
        _duration,
    ),
    (re.compile(rf"\b(?P<n>{_NUM}) (?P<unit>day|week|month|year)s? (?:now|already)\b", _I), _duration),
    (re.compile(rf"\b(?:on )?(last|next|this|this past|this coming)? ?\b({_WD})\b(?!s)", _I), _weekday),
    (
        re.compile(
            rf"\b(?:on )?((?i:last|next|this|this past|this coming)) ({'|'.join(_WD_ABBREV)})\b(?![a-z])"
        ),
        _weekday,
    ),
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


def is_past(text: str) -> bool:
    """Whether a sentence reads as past tense (future markers win over past ones)."""
    return _FUTURE.search(text) is None and _PAST.search(text) is not None


def _clause(text: str, start: int, end: int) -> str:
    """The clause of ``text`` around ``[start, end)``."""
    before = [b.end() for b in _CLAUSE.finditer(text, 0, start)]
    after = _CLAUSE.search(text, end)
    return text[(before[-1] if before else 0) : (after.start() if after else len(text))]


def resolve(text: str, anchor: date) -> Resolved:
    """Rewrite relative dates in ``text`` against ``anchor`` and report the span of all dates found."""
    sentence = _Context(anchor, is_past(text))
    found: list[tuple[int, int, _Found]] = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            clause = _clause(text, m.start(), m.end())
            ctx = _Context(anchor, is_past(clause)) if clause != text else sentence
            result = handler(m, ctx)
            if result is not None:
                found.append((m.start(), m.end(), result))
    found.sort(key=lambda f: (f[0], -(f[1] - f[0])))
    out: list[str] = []
    pos = 0
    start: date | None = None
    end: date | None = None
    for s, e, f in found:
        if s < pos:
            continue  # overlaps a longer or earlier match
        out.append(text[pos:s])
        out.append(text[s:e] if f.replacement is None else f.replacement)
        pos = e
        start = f.start if start is None else min(start, f.start)
        end = f.end if end is None else max(end, f.end)
    out.append(text[pos:])
    return Resolved("".join(out), start, end)
