"""What a language pack holds: every rule of one language that memstrata applies outside a model.

A pack is data and small functions, no state: how a text is recognised as its language, its
stopwords, how its unspaced script (if it writes one) is cut into words, how recall writes a date,
a role and its notes in it, and how a transcript's turn markers read in it. What an engine does
differently in the language (the offline engine's extraction and writing rules) lives with that
engine; the pack names where (``engines``), so registering the pack is all a language needs.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import date


def _never(text: str) -> bool:
    return False


def _names_no_day(text: str, d: date) -> bool:
    return False


def _no_reading(text: str, who: str) -> str | None:
    return None


@dataclass(frozen=True, slots=True)
class Language:
    """One language's rules. Only ``code`` and recall's wording are required; the rest default to
    "nothing special" (no stopwords, spaced words, no role words of its own)."""

    code: str  # recorded on atoms (``lang``) and what recall is asked to write in
    day: Callable[[date], str]  # a day in words: "7 May 2023", "2023年5月7日"
    span: Callable[[date, date], str]  # a span in words: "9-10 September 2023", "2022年"
    about: str  # a line's said-on date and the day it tells of: "{when}; about {about}"
    quoted_note: str  # opens recall's blocks: what follows is quoted data, not instructions
    tools_guide: str  # how to search further; ``{max_calls}`` is the per-turn limit
    also_in: str  # recall's navigation line naming the other scenes: "also in"
    # Whether a text is in this language; the default language's is never asked (it is what a
    # text is in when no other pack claims it).
    claims: Callable[[str], bool] = _never
    stopwords: frozenset[str] = frozenset()  # function words: dropped from queries and keywords
    # A regex character class of the scripts this language writes without spaces (``[\u4e00-...]``),
    # whose runs ``cut`` splits into words (``search``: also a long word's parts); "" for none.
    unspaced: str = ""
    cut: Callable[[str, bool], Iterable[str]] | None = None
    roles: Mapping[str, str] = field(default_factory=dict)  # "user" -> its word, for a raw message
    turn_words: tuple[str, ...] = ()  # speakers' turn markers in its transcripts ("Human", ...)
    # Whether its texts need the multilingual embedder (the shipped MiniLM reads English only).
    multilingual_embedder: bool = False
    sentence_ends: str = ""  # the marks that end a sentence with no space after them: "。！？"
    said: str = "{who} said:"  # what quoting makes of a turn marker: "{who}说："
    colons: str = ""  # colons of its own a turn marker may end with ("：")
    # Whether a text names a day in this language's way ("14 June 2026"): recall then leaves the
    # date off a line whose text says it.
    names_day: Callable[[str, date], bool] = _names_no_day
    # A question in its asker's first person read as said of ``who`` ("where do I live?" of Maya:
    # "where does Maya live?"), as the index reads a named speaker's words and as atoms state a
    # user's facts; None when the text has no first person (or the pack has no such rule).
    as_said_of: Callable[[str, str], str | None] = _no_reading
    # How memory names a user who gave no name ("the user"): a question's first person is read
    # as them where atoms are searched; "" for no such reading.
    nameless_user: str = ""
    # Whether a text is a request of its asker's own: it speaks of them or to the assistant ("what
    # would you recommend for me?"). A user's standing preferences and instructions apply to such
    # a request though it shares no words with them (``search.standing_floor``); False for all
    # when the pack has no such rule.
    request: Callable[[str], bool] = _never
    # Each engine's own rules for this language, by the engine's name, as an entry point
    # ("module:attribute": {"offline": "memstrata.engines.offline.lang.zh:CHINESE"}). The engine
    # imports it when it first meets the language; the seam imports nothing. An engine with no
    # entry here uses its default rules (the default language's) for this language.
    engines: Mapping[str, str] = field(default_factory=dict)
