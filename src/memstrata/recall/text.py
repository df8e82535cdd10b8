"""How one memory reads in the prompt: ``- [date] content``, cut to a budget, quoted
(``recall.quoting``: markup neutralised).

Dates are written the way people write them ("7 May 2023", "June 2023", "2022"): a model reads
them without arithmetic, and they match how the conversation itself names them.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

from memstrata import lang as languages
from memstrata.layers.l1.metadata_dates import metadata_day
from memstrata.models import Hit, Layer
from memstrata.recall.quoting import quoted


def fitted(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters and ``quoted``, still within ``limit`` (quoting
    lengthens a text; it is cut first so that a long text is not worked through whole)."""
    return cut(quoted(cut(text, limit)), limit)


def cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, cut at a word boundary with an ellipsis. Reads only
    the start of a long text (a stored message may be megabytes long), unless that start is
    mostly blank."""
    lines = "\n" in text
    window = text[: 4 * limit + 64]
    short, was_cut = _cut(window, limit, lines)
    if was_cut or len(window) == len(text):
        return short
    return _cut(text, limit, lines)[0]


def _cut(text: str, limit: int, lines: bool) -> tuple[str, bool]:
    text = text.strip() if lines else " ".join(text.split())
    if len(text) <= limit:
        return text, False
    head = text[: max(0, limit - 1)]
    space = head.rfind(" ")
    return (head[:space] if space > limit // 2 else head).rstrip() + "…", True


def day_text(d: date, lang: str = "") -> str:
    """A day in the words of ``lang`` (its pack's): ``7 May 2023``."""
    return languages.get(lang).day(d)


def span_text(start: date, end: date, lang: str = "") -> str:
    """A span in the words of ``lang``: ``2022`` (a whole year), ``June 2023`` (a whole month),
    ``7 May 2023`` (a day), ``9-10 September 2023`` or ``28 May 2023 to 3 June 2023``."""
    return languages.get(lang).span(start, end)


def said_on(hit: Hit) -> date | None:
    """The day the memory was said: its message time (atoms) or timestamp (messages)."""
    ms = hit.metadata.get("message_time", hit.metadata.get("timestamp"))
    if isinstance(ms, int) and ms > 0:
        return datetime.fromtimestamp(ms / 1000, UTC).date()
    return metadata_day(hit.metadata.get("mentioned_at"))


def _names_day(text: str, d: date) -> bool:
    """Whether ``text`` names the day ``d`` in a language whose pack can tell."""
    return any(p.names_day(text, d) for p in languages.languages())


def _activity_span(hit: Hit) -> tuple[date, date] | None:
    """The first and last day of the activity a memory tells of (its metadata), or None."""
    start = metadata_day(hit.metadata.get("activity_start"))
    if start is None:
        return None
    return start, max(start, metadata_day(hit.metadata.get("activity_end")) or start)


def when(hit: Hit, lang: str = "") -> str:
    """The date a memory line carries: the span of the activity it tells of, unless its text already
    names that span (then, and without one, the day it was said)."""
    span = _activity_span(hit)
    if span is not None:
        start, end = span
        text = span_text(start, end, lang)
        if text not in hit.content and not (start == end and _names_day(hit.content, start)):
            return text
    said = said_on(hit)
    return day_text(said, lang) if said is not None else ""


def speaker(hit: Hit, lang: str = "") -> str:
    """Who wrote a raw message: its speaker name, else its role (in the conversation's language)."""
    name = hit.metadata.get("name")
    if name:
        return str(name)
    role = str(hit.metadata.get("role") or "someone")
    return languages.get(lang).roles.get(role, role)


def activity(hit: Hit, lang: str = "") -> str:
    """The span of the activity a memory tells of, in words, or ""."""
    span = _activity_span(hit)
    return span_text(*span, lang) if span is not None else ""


def memory_line(hit: Hit, limit: int, about: str = "", lang: str = "") -> str:
    """``- [7 May 2023] content`` on one line; a raw message says who wrote it: ``- [7 May 2023] Maya: text``,
    and ``about`` when it tells of another day (``- [20 July 2023; about 18 July 2023] ...``, from
    the message's atoms, which resolved its relative dates)."""
    t = when(hit, lang)
    if about and about != t:
        t = languages.get(lang).about.format(when=t, about=about) if t else about
    prefix = f"- [{t}] " if t else "- "
    if hit.layer == Layer.L0:
        prefix += f"{quoted(speaker(hit, lang))}: "
    room = max(20, limit - len(prefix))
    # One memory, one line: a memory's own line breaks would let it pose as more items.
    return f"{prefix}{' '.join(fitted(hit.content, room).split())}"
