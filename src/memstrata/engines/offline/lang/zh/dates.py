"""Chinese dates in a sentence, resolved against the day the message was written.

``resolve("我昨天去了北京", date(2026, 12, 1))`` gives "我2026年11月30日去了北京" with the span
2026-11-30..2026-11-30. Day-precise words (昨天, 下周六, 三天后, 下个月十五号) are replaced by the
date; vaguer ones (上周, 这周末, 月底) keep their words and gain the resolved dates in brackets; a
month (明年三月, 去年十月) is written as that month. Lunar dates (农历八月十五) are kept as they are
and resolve to nothing: their Gregorian day needs a lunar calendar the engine does not carry.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta

from memstrata.engines.offline.l1.dates.daymath import add_months, month_end, next_weekday, previous_weekday
from memstrata.engines.offline.l1.dates.span import Resolved

_DIGIT = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_NUM = r"(?:\d{1,2}|[零〇一二两三四五六七八九十]{1,3})"
_WEEKDAY = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEK = r"(?:周|星期|礼拜)"
_PAST = re.compile(r"了|过|刚|已经")
_LUNAR = re.compile(
    r"(?:农历|阴历)(?:[正一二三四五六七八九十冬腊]{1,2}月)?(?:初[一二三四五六七八九十]|[一二三四五六七八九十廿]{1,3}[日号]?)?"
)
_DAY_OFFSETS = {
    "大前天": -3,
    "前天": -2,
    "昨天": -1,
    "昨晚": -1,
    "今天": 0,
    "今晚": 0,
    "明天": 1,
    "明早": 1,
    "后天": 2,
    "大后天": 3,
}
_YEAR_OFFSETS = {"前年": -2, "去年": -1, "今年": 0, "明年": 1, "后年": 2}
_REL = {"上": -1, "下": 1, "这": 0, "本": 0}


def number(text: str) -> int | None:
    """``15``, ``十五``, ``二十三``, ``三`` -> the number (None when it is none)."""
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        t = _DIGIT.get(tens, 0) if tens else 1
        o = _DIGIT.get(ones, 0) if ones else 0
        return None if (tens and tens not in _DIGIT) or (ones and ones not in _DIGIT) else t * 10 + o
    return _DIGIT.get(text) if len(text) == 1 else None


def day_text(d: date) -> str:
    """``2026年11月30日``."""
    return f"{d.year}年{d.month}月{d.day}日"


def month_text(d: date) -> str:
    """``2027年3月``."""
    return f"{d.year}年{d.month}月"


def span_text(start: date, end: date) -> str:
    """``11月23日至29日``, ``2026年12月28日至2027年1月3日``."""
    if start.year != end.year:
        return f"{day_text(start)}至{day_text(end)}"
    if start.month != end.month:
        return f"{start.year}年{start.month}月{start.day}日至{end.month}月{end.day}日"
    return f"{start.year}年{start.month}月{start.day}日至{end.day}日"


@dataclass(frozen=True, slots=True)
class _Found:
    replacement: str  # what the matched words become
    start: date
    end: date


def _day(d: date) -> _Found:
    return _Found(day_text(d), d, d)


def _kept(words: str, start: date, end: date) -> _Found:
    return _Found(f"{words}（{day_text(start) if start == end else span_text(start, end)}）", start, end)


def _month(d: date) -> _Found:
    return _Found(month_text(d), d, month_end(d))


def _week_start(anchor: date, offset: int) -> date:
    return anchor - timedelta(days=anchor.weekday()) + timedelta(weeks=offset)


def _day_offset(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    return _day(anchor + timedelta(days=_DAY_OFFSETS[m.group(0)]))


def _week_day(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    """上周六, 下周六, 这周五, 本周末; a bare 周六 is the next one (the last one when told in the past)."""
    rel, which = m.group("rel"), m.group("day")
    if not rel and m.string[max(0, m.start() - 1) : m.start()] == "每":
        return None  # 每周六: a habit, no date
    if which == "末":
        start = _week_start(anchor, _REL[rel] if rel else 0) + timedelta(days=5)
        return _kept(m.group(0), start, start + timedelta(days=1))
    weekday = _WEEKDAY[which]
    if rel:
        return _day(_week_start(anchor, _REL[rel]) + timedelta(days=weekday))
    if weekday == anchor.weekday():
        return _day(anchor)
    return _day(previous_weekday(anchor, weekday) if past else next_weekday(anchor, weekday))


def _week(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    start = _week_start(anchor, _REL[m.group("rel")])
    return _kept(m.group(0), start, start + timedelta(days=6))


def _month_rel(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    """上个月, 下个月十五号, 这个月底, 月底."""
    first = add_months(anchor, _REL[m.group("rel")] if m.group("rel") else 0)
    if m.group("day"):
        day = number(m.group("day"))
        if day is None or not 1 <= day <= month_end(first).day:
            return None
        return _day(first.replace(day=day))
    if m.group("end"):
        end = month_end(first)
        return _kept(m.group(0), end, end)
    return _month(first)


def _year_month(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    """明年三月, 去年十月, 2025年10月, 三月五号, 3月5日 (a bare month is this year's)."""
    year = anchor.year
    if m.group("ryear"):
        year += _YEAR_OFFSETS[m.group("ryear")]
    elif m.group("year"):
        year = int(m.group("year"))
    month = number(m.group("month"))
    if month is None or not 1 <= month <= 12:
        return None
    first = date(year, month, 1)
    if m.group("day"):
        day = number(m.group("day"))
        if day is None or not 1 <= day <= month_end(first).day:
            return None
        return _day(first.replace(day=day))
    return _month(first)


def _year(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    year = anchor.year + _YEAR_OFFSETS[m.group(0)]
    return _Found(f"{year}年", date(year, 1, 1), date(year, 12, 31))


def _offset(m: re.Match[str], anchor: date, past: bool) -> _Found | None:
    """三天后, 两周前, 一个月以后, 五年前."""
    n = number(m.group("n"))
    if n is None:
        return None
    sign = -1 if m.group("dir").endswith("前") else 1
    unit = m.group("unit")
    if unit == "天":
        return _day(anchor + timedelta(days=sign * n))
    if unit in ("周", "个星期", "星期", "个礼拜"):
        return _day(anchor + timedelta(weeks=sign * n))
    if unit == "个月":
        first = add_months(anchor, sign * n)
        return _kept(m.group(0), first, month_end(first))
    year = anchor.year + sign * n
    return _kept(m.group(0), date(year, 1, 1), date(year, 12, 31))


_Rule = Callable[[re.Match[str], date, bool], _Found | None]
_RULES: tuple[tuple[re.Pattern[str], _Rule], ...] = (
    (
        re.compile(
            rf"(?:(?P<ryear>前年|去年|今年|明年|后年)|(?P<year>(?:19|20)\d\d)年)?(?P<month>{_NUM})月"
            rf"(?:(?P<day>{_NUM})[日号])?"
        ),
        _year_month,
    ),
    (re.compile(rf"(?P<rel>[上下这本])个?月(?:(?P<day>{_NUM})[号日]|(?P<end>底))?"), _month_rel),
    (re.compile(r"(?P<rel>)(?P<day>)(?P<end>月底)"), _month_rel),
    (
        re.compile(
            rf"(?P<n>{_NUM})(?P<unit>天|周|个星期|星期|个礼拜|个月|年)(?P<dir>以后|之后|后|以前|之前|前)"
        ),
        _offset,
    ),
    (re.compile(r"大前天|前天|昨天|昨晚|今天|今晚|明天|明早|大后天|后天"), _day_offset),
    (re.compile(rf"(?:(?P<rel>[上下这本])个?)?{_WEEK}(?P<day>[一二三四五六日天末])"), _week_day),
    (re.compile(rf"(?P<rel>[上下这本])个?{_WEEK}"), _week),
    (re.compile(r"前年|去年|今年|明年|后年"), _year),
)


def resolve(text: str, anchor: date) -> Resolved:
    """``text`` with its relative dates resolved against ``anchor``, and the span they cover."""
    past = _PAST.search(text) is not None
    taken = [(m.start(), m.end()) for m in _LUNAR.finditer(text) if m.end() - m.start() > 2]
    found: list[tuple[int, int, _Found]] = []
    for pattern, rule in _RULES:
        for m in pattern.finditer(text):
            if any(m.start() < e and s < m.end() for s, e in taken):
                continue
            hit = rule(m, anchor, past)
            if hit is not None:
                taken.append((m.start(), m.end()))
                found.append((m.start(), m.end(), hit))
    if not found:
        return Resolved(text, None, None)
    out = text
    for start, end, hit in sorted(found, key=lambda f: -f[0]):
        out = out[:start] + hit.replacement + out[end:]
    return Resolved(out, min(f[2].start for f in found), max(f[2].end for f in found))
