"""How one memory reads in the prompt: ``- [date] content``, cut to a budget, tags escaped.

Dates are written the way people write them ("7 May 2023", "June 2023", "2022"): a model reads
them without arithmetic, and they match how the conversation itself names them.
"""

from __future__ import annotations

import calendar
import re
from datetime import UTC, date, datetime

from memstrata.layers.l1.metadata_dates import metadata_day
from memstrata.layers.l3.persona_doc import escape_tags
from memstrata.models import Hit, Layer


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = " ".join(text.split()) if "\n" not in text else text.strip()
    if len(text) <= limit:
        return text
    head = text[: max(0, limit - 1)]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…"


def day_text(d: date) -> str:
    """``7 May 2023``."""
    return f"{d.day} {calendar.month_name[d.month]} {d.year}"


def span_text(start: date, end: date) -> str:
    """A span in words: ``2022`` (a whole year), ``June 2023`` (a whole month), ``7 May 2023``
    (a day), ``9-10 September 2023`` or ``28 May 2023 to 3 June 2023``."""
    month = calendar.month_name[start.month]
    if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
        return str(start.year)
    same_month = (start.year, start.month) == (end.year, end.month)
    if same_month and start.day == 1 and end.day == calendar.monthrange(end.year, end.month)[1]:
        return f"{month} {start.year}"
    if start == end:
        return day_text(start)
    if same_month:
        return f"{start.day}-{end.day} {month} {start.year}"
    return f"{day_text(start)} to {day_text(end)}"


def said_on(hit: Hit) -> date | None:
    """The day the memory was said: its message time (atoms) or timestamp (messages)."""
    ms = hit.metadata.get("message_time", hit.metadata.get("timestamp"))
    if isinstance(ms, int) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).date()
    return metadata_day(hit.metadata.get("mentioned_at"))


def _names(text: str, d: date) -> bool:
    """Whether ``text`` names the day ``d`` ("14 June 2026", "June 14 2026", "June 14th, 2026")."""
    return (
        str(d.year) in text
        and calendar.month_name[d.month] in text
        and re.search(rf"(?<!\d){d.day}(?!\d)", text.replace(str(d.year), "")) is not None
    )


def _activity_span(hit: Hit) -> tuple[date, date] | None:
    """The first and last day of the activity a memory tells of (its metadata), or None."""
    start = metadata_day(hit.metadata.get("activity_start"))
    if start is None:
        return None
    return start, max(start, metadata_day(hit.metadata.get("activity_end")) or start)


def when(hit: Hit) -> str:
    """The date a memory line carries: the span of the activity it tells of, unless its text already
    names that span (then, and without one, the day it was said)."""
    span = _activity_span(hit)
    if span is not None:
        start, end = span
        text = span_text(start, end)
        if text not in hit.content and not (start == end and _names(hit.content, start)):
            return text
    said = said_on(hit)
    return day_text(said) if said is not None else ""


def speaker(hit: Hit) -> str:
    """Who wrote a raw message: its speaker name, else its role."""
    name = hit.metadata.get("name")
    return str(name) if name else str(hit.metadata.get("role") or "someone")


def activity(hit: Hit) -> str:
    """The span of the activity a memory tells of, in words, or ""."""
    span = _activity_span(hit)
    return span_text(*span) if span is not None else ""


def memory_line(hit: Hit, limit: int, about: str = "") -> str:
    """``- [7 May 2023] content``; a raw message says who wrote it: ``- [7 May 2023] Maya: text``,
    and ``about`` when it tells of another day (``- [20 July 2023; about 18 July 2023] ...``, from
    the message's atoms, which resolved its relative dates)."""
    t = when(hit)
    if about and about != t:
        t = f"{t}; about {about}" if t else about
    prefix = f"- [{t}] " if t else "- "
    if hit.layer == Layer.L0:
        prefix += f"{escape_tags(speaker(hit))}: "
    room = max(20, limit - len(prefix))
    return f"{prefix}{escape_tags(cut(hit.content, room))}"
