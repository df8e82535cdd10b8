"""Dates in a sentence, resolved against the day the message was written.

``resolve("I went there yesterday", date(2023, 5, 8))`` rewrites the sentence to "I went there on
7 May 2023" and reports the activity span 2023-05-07..2023-05-07. Day-precise relative words are
replaced by the date; vaguer ones ("two weeks ago") keep their words and gain the resolved date in
parentheses; absolute dates are kept (a missing year is added) and reported as a span.
"""

from __future__ import annotations

from datetime import date

from memstrata.engines.offline.l1.dates import absolute, counted, relative
from memstrata.engines.offline.l1.dates.span import Context, Found, Resolved, Rule
from memstrata.engines.offline.l1.tense import clause_around, is_past

_RULES: tuple[Rule, ...] = (*relative.RULES, *counted.RULES, *absolute.RULES)


def resolve(text: str, anchor: date) -> Resolved:
    """Rewrite relative dates in ``text`` against ``anchor`` and report the span of all dates found."""
    sentence = Context(anchor, is_past(text))
    found: list[tuple[int, int, Found]] = []
    for pattern, handler in _RULES:
        for m in pattern.finditer(text):
            clause = clause_around(text, m.start(), m.end())
            ctx = Context(anchor, is_past(clause)) if clause != text else sentence
            result = handler(m, ctx)
            if result is not None:
                found.append((m.start(), m.end(), result))
    # Where matches overlap, the earliest and then the longest wins (the sort is stable, so on a
    # tie the rule listed first).
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
