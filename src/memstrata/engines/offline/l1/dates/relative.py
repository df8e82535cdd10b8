"""Date words whose day follows from the message day alone: "yesterday", "tonight", "last week",
"this weekend", "next month", "last summer", "on Friday", "last Tues."."""

from __future__ import annotations

import re
from datetime import date, timedelta

from memstrata.engines.offline.l1.dates.daymath import (
    add_months,
    day_text,
    month_end,
    month_text,
    next_weekday,
    previous_weekday,
    season_span,
)
from memstrata.engines.offline.l1.dates.span import Context, Found, Handler, Rule, on_day
from memstrata.engines.offline.lexicon import BASE_VERBS, IRREGULAR_PAST, STOPWORDS, WEEKDAYS

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
# phrase -> (days from the message day, the words that replace it)
_DAYS: dict[str, tuple[int, str]] = {
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


# "Kids today spend ...", "young people today are ...": "today" right after a bare plural subject
# that opens its clause means nowadays, no day. The subject: up to three lowercase content words
# (no pronoun, owner or verb: "I saw kids today", "my kids today" and "Tom teaches kids today" are
# dated), the last a plural, the ones before it no plural or past form (adjectives do not inflect);
# what follows is no past form ("the kids today were great" is a day).
_SUBJECT_BEFORE = re.compile(
    r"(?:^|[,;:.!?]\s*|\b(?:and|but|so|because|that)\s+)(?:the\s+)?(?P<np>(?:[a-z-]+\s+){0,2}[a-z-]+)\s+$",
    re.IGNORECASE,
)
_PLURAL_NOUNS = frozenset({"people", "children", "men", "women"})  # the plurals without an -s
_NEXT_WORD = re.compile(r"\s*([a-z']+)", re.IGNORECASE)


def _nowadays(m: re.Match[str]) -> bool:
    """Whether "today" at ``m`` means nowadays (see ``_SUBJECT_BEFORE``)."""
    subject = _SUBJECT_BEFORE.search(m.string, 0, m.start())
    if subject is None:
        return False
    written = subject.group("np").split()
    if any(w[:1].isupper() for w in written[1:]):
        return False  # a name inside: "Tom teaches Kids"
    np = [w.lower() for w in written]
    if any(w in STOPWORDS or w in IRREGULAR_PAST or w in BASE_VERBS for w in np):
        return False
    if any(w.endswith(("s", "ed")) for w in np[:-1]):
        return False
    head = np[-1]
    if head not in _PLURAL_NOUNS and not (head.endswith("s") and not head.endswith(("ss", "us", "is"))):
        return False
    after = _NEXT_WORD.match(m.string, m.end())
    return after is None or not (after.group(1).lower() in IRREGULAR_PAST or after.group(1).endswith("ed"))


def _simple_days(m: re.Match[str], c: Context) -> Found | None:
    phrase = " ".join(m.group(0).lower().split())
    if phrase == "today" and _nowadays(m):
        return None
    offset, template = _DAYS[phrase]
    return on_day(c.anchor + timedelta(days=offset), template)


def _week(m: re.Match[str], c: Context) -> Found | None:
    which = m.group("which").lower()
    a = c.anchor
    if which == "last":
        return Found(f"in the week before {day_text(a)}", a - timedelta(days=7), a - timedelta(days=1))
    if which == "next":
        return Found(f"in the week after {day_text(a)}", a + timedelta(days=1), a + timedelta(days=7))
    monday = a - timedelta(days=a.weekday())
    return Found(f"in the week of {day_text(a)}", monday, monday + timedelta(days=6))


def _weekend(m: re.Match[str], c: Context) -> Found | None:
    which = m.group("which").lower()
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
    return Found(text, saturday, sunday)


def _month_rel(m: re.Match[str], c: Context) -> Found | None:
    shift = {"last": -1, "this": 0, "next": 1}[m.group("which").lower()]
    first = add_months(c.anchor.replace(day=1), shift)
    return Found(f"in {month_text(first)}", first, month_end(first))


def _year_rel(m: re.Match[str], c: Context) -> Found | None:
    shift = {"last": -1, "this": 0, "next": 1}[m.group("which").lower()]
    year = c.anchor.year + shift
    return Found(f"in {year}", date(year, 1, 1), date(year, 12, 31))


def _season(m: re.Match[str], c: Context) -> Found | None:
    which, season = m.group("which").lower(), m.group("season").lower()
    start, end, label = season_span(season, which, c.anchor, c.past)
    return Found(f"in {label}", start, end)


# Lengths of "the last week / month / year": the stretch up to the message day, not the calendar's.
_STRETCH_DAYS = {"week": 7, "month": 30, "year": 365}
# "my last year at school", "every last weekend": the final one of something, not the one before now
# ("her" is left out: "I met her last week" is a date).
_OWNER_BEFORE = re.compile(r"\b(?:my|our|his|their|your|its|every|each)\s+$", re.IGNORECASE)
_OF_AFTER = re.compile(r"\s+of\b", re.IGNORECASE)


def _stretch(m: re.Match[str], c: Context) -> Found | None:
    """ "the last month": the month up to the message day; "the next week": the week after it."""
    unit, which = m.group("unit").lower(), m.group("which").lower()
    if unit not in _STRETCH_DAYS or which == "this":
        return None
    length = timedelta(days=_STRETCH_DAYS[unit])
    start, end = (c.anchor - length, c.anchor) if which == "last" else (c.anchor, c.anchor + length)
    return Found(f"{m.group(0)} ({day_text(start)} to {day_text(end)})", start, end)


def _period(rule: Handler) -> Handler:
    """A "last / next / this <period>" rule, read against the words around the phrase: after an
    owner ("my last year at school") it is no date; with "the" and "of" ("the last week of June")
    it is a part of another period, no date either; "the last month" without "of" is the stretch
    up to the message day ("so much has happened in the last month"), "the next week" the one
    after it; before "'s" ("this week's episode") its words stay, since a rewrite would read
    "in the week of 8 May 2023's episode"."""

    def read(m: re.Match[str], c: Context) -> Found | None:
        if _OWNER_BEFORE.search(m.string, 0, m.start()):
            return None
        if m.group("the") and _OF_AFTER.match(m.string, m.end()):
            return None
        found = _stretch(m, c) if m.group("the") else None
        found = found or rule(m, c)
        if found is not None and m.string.startswith("'s", m.end()):
            return Found(None, found.start, found.end)
        return found

    return read


def _weekday(m: re.Match[str], c: Context) -> Found | None:
    which = (m.group(1) or "").lower().split()
    if _HABIT.search(m.string[: m.start()]):
        return None  # a habit, not a date
    name = m.group(2)
    wd = _WD_ABBREV[name.rstrip(".")] if name.rstrip(".") in _WD_ABBREV else WEEKDAYS.index(name.lower())
    if "last" in which or "past" in which or ("next" not in which and "coming" not in which and c.past):
        d = previous_weekday(c.anchor, wd)
    else:
        d = next_weekday(c.anchor, wd)
    return Found(f"on {WEEKDAYS[wd].capitalize()}, {day_text(d)}", d, d)


_I = re.IGNORECASE
_WHICH = r"\b(?P<the>the )?(?P<which>last|next|this)"
RULES: tuple[Rule, ...] = (
    (re.compile(rf"\b(?:{'|'.join(_DAYS)})\b", _I), _simple_days),
    (re.compile(rf"{_WHICH} (?P<unit>week)\b", _I), _period(_week)),
    (re.compile(rf"{_WHICH} (?P<unit>weekend)\b", _I), _period(_weekend)),
    (re.compile(rf"{_WHICH} (?P<unit>month)\b", _I), _period(_month_rel)),
    (re.compile(rf"{_WHICH} (?P<unit>year)\b", _I), _period(_year_rel)),
    (re.compile(rf"{_WHICH} (?P<unit>(?P<season>summer|winter|spring|fall|autumn))\b", _I), _period(_season)),
    # the qualifier and its space are one optional group: were the space optional alone, the match
    # would start at the space before a bare weekday and "was Friday" be rewritten "wason Friday"
    (re.compile(rf"\b(?:on )?(?:(last|next|this|this past|this coming) )?\b({_WD})\b(?!s)", _I), _weekday),
    (
        re.compile(
            rf"\b(?:on )?((?i:last|next|this|this past|this coming)) ({'|'.join(_WD_ABBREV)})\b(?![a-z])"
        ),
        _weekday,
    ),
)
