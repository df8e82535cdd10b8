"""What a date rule reports (``Found``), what it is told (``Context``) and what resolution returns."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from memstrata.engines.offline.l1.dates.daymath import day_text


@dataclass(frozen=True, slots=True)
class Resolved:
    """A sentence after date resolution and the span of the dates it mentions (None if none)."""

    text: str
    start: date | None
    end: date | None


@dataclass(frozen=True, slots=True)
class Found:
    """One date expression: its replacement words and its span."""

    replacement: str | None  # None keeps the matched words
    start: date
    end: date


@dataclass(frozen=True, slots=True)
class Context:
    """What a rule needs: the message day and the tense of the clause the match stands in."""

    anchor: date
    past: bool


Handler = Callable[[re.Match[str], Context], "Found | None"]
Rule = tuple[re.Pattern[str], Handler]


def on_day(d: date, template: str = "on {}") -> Found:
    """A single day, its words replaced by ``template`` filled with the day ("on 7 May 2023")."""
    return Found(template.format(day_text(d)), d, d)
