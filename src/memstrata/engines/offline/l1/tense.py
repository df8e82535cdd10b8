"""The tense of a sentence and the clause a word stands in.

Extraction reads a sentence's tense to classify it (an event told in the past, a plan); the date
rules read the tense of the clause a date stands in, since a sentence can hold both ("we found a
flat, Tom is moving on June 14": the date belongs to the second clause).
"""

from __future__ import annotations

import re

from memstrata.engines.offline.lexicon import IRREGULAR_PAST, MONTHS, WEEKDAYS

_FUTURE = re.compile(
    r"\b(?:will|'ll|going to|gonna|plan|plans|planning|next|tomorrow|can't wait|looking forward|"
    r"excited|hope to|hoping to|want to|wanna|would like|about to|upcoming|coming up|soon|this coming|"
    # present progressive ("Tom is finally moving ...") usually speaks of arrangements to come
    r"(?:is|are)\s+(?:\w+ly\s+)?\w+ing)\b",
    re.IGNORECASE,
)
# Clause boundaries: a date takes its tense from its own clause, not the whole sentence.
_CLAUSE = re.compile(r"[,;:]|\s(?:so|but|and|because|while)\s", re.IGNORECASE)
# "-ed" words that are as often adjectives of a present state ("a cat called Miso", "a company
# based in Porto", "interested in"): they do not make a sentence past.
_STATE_ED = "called|named|based|located|interested|related|supposed|tired|excited|derived"
_PAST = re.compile(
    rf"\b(?:{'|'.join(sorted(IRREGULAR_PAST))}|ago|yesterday|(?!(?:{_STATE_ED})\b)[a-z]{{3,}}ed)\b",
    re.IGNORECASE,
)
# "last" tells the past only as the date "last <period>" ("last week", "last June", "last time"):
# "the last week of June" and "my last exam" name the final one of something, which may be to come
# ("we go away the last week of June"), as "at last" and "it won't last" say nothing of the time
# ("her" is no owner here: "I met her last week" is a date, as in the date rules).
_PERIOD = "|".join(
    (*WEEKDAYS, *MONTHS, "night|week|weekend|month|year|time|spring|summer|fall|autumn|winter")
)
_LAST = re.compile(
    rf"\b(?P<owner>(?:the|my|our|his|their|your|its|every|each)\s+)?last\s+(?:{_PERIOD})\b"
    rf"(?P<of>\s+of\b)?",
    re.IGNORECASE,
)
# "I've got", "she's got": possession now (British "have"), not a past "got".
_HAVE_GOT = re.compile(r"\b(?:have|has|haven't|hasn't)\s+got\b|[’'](?:ve|s)\s+got\b", re.IGNORECASE)


def is_past(text: str) -> bool:
    """Whether a sentence reads as past tense (future markers win over past ones)."""
    if _FUTURE.search(text) is not None:
        return False
    if any(m.group("owner") is None and m.group("of") is None for m in _LAST.finditer(text)):
        return True
    return _PAST.search(_HAVE_GOT.sub(" ", text)) is not None


def clause_around(text: str, start: int, end: int) -> str:
    """The clause of ``text`` around ``[start, end)``: from the boundary before it to the next."""
    before = [b.end() for b in _CLAUSE.finditer(text, 0, start)]
    after = _CLAUSE.search(text, end)
    return text[(before[-1] if before else 0) : (after.start() if after else len(text))]
