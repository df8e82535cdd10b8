"""What the search indexes hold for a record: the record plus the context that helps matching.

A message is indexed with its speaker, its date and the turn before it (an answer usually continues
the other speaker's question), with first-person words replaced by the speaker's name and "you" by
the other speaker's. A hit still returns only the record's own content.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache

from memstrata.models import Atom, Message, Role
from memstrata.retrieval.terms import JUDGED_CHARS, judged, segment, short_text_cache

_FIRST = re.compile(r"\b(?:I|me|myself)\b")
_FIRST_POSS = re.compile(r"\b(?:my|mine)\b", re.IGNORECASE)
_FIRST_CONTRACTION = re.compile(r"\bI'(?:m|ve|ll|d)\b")
_SECOND = re.compile(r"\b(?:you|yourself)\b", re.IGNORECASE)
_SECOND_POSS = re.compile(r"\b(?:your|yours)\b", re.IGNORECASE)


def speaker(m: Message) -> str:
    return m.name or ("User" if m.role == Role.USER else "Assistant")


@lru_cache(maxsize=4_096)
def day_words(ms: int) -> str:
    """``8 May 2023, Monday``: the words a question about a date uses."""
    d = datetime.fromtimestamp(ms / 1000, UTC)
    return f"{d.day} {d:%B %Y}, {d:%A}"


def name_people(text: str, me: str, other: str | None) -> str:
    """Replace first-person words by ``me`` and, when known, second-person words by ``other``."""
    text = _FIRST_CONTRACTION.sub(me, text)
    text = _FIRST.sub(me, text)
    text = _FIRST_POSS.sub(f"{me}'s", text)
    if other:
        text = _SECOND_POSS.sub(f"{other}'s", text)
        text = _SECOND.sub(other, text)
    return text


def message_body(m: Message, previous: Message | None, *, with_previous: bool = True) -> str:
    me = speaker(m)
    other = speaker(previous) if previous is not None and speaker(previous) != me else None
    body = f"{me} ({day_words(m.timestamp)}): {name_people(m.content, me, other)}"
    if with_previous and previous is not None:
        prev_me = speaker(previous)
        prev_other = me if prev_me != me else None
        body += f"\n{prev_me}: {name_people(previous.content, prev_me, prev_other)}"
    return segment(body)


def atom_body(a: Atom) -> str:
    parts = [a.content]
    if a.scene_name:
        parts.append(a.scene_name.replace("-", " "))
    when = a.metadata.get("message_time")
    if isinstance(when, int):
        parts.append(day_words(when))
    return segment("\n".join(parts))


def atom_match_text(a: Atom) -> str:
    """What an atom's keyword match quality is judged on: its statement (as far as ``judged``
    reads it) and its date words (not the scene name, which names a whole topic and would make
    every atom of it match)."""
    when = a.metadata.get("message_time")
    content = judged(a.content)
    return _segmented(f"{content}\n{day_words(when)}" if isinstance(when, int) else content)


def message_match_text(m: Message) -> str:
    """What a message's keyword match quality is judged on: its vector text, made of as much of
    its content as ``judged`` reads (segmenting all of a long message was most of a search's time)."""
    return message_vector_text(m if len(m.content) <= JUDGED_CHARS else replace(m, content=judged(m.content)))


def atom_vector_text(a: Atom) -> str:
    """What an atom's vector is made from: its statement alone. The scene name and date words of
    ``atom_body`` help keyword matching but only dilute an embedding (and double its cost)."""
    return a.content


def message_vector_text(m: Message) -> str:
    """What a message's vector is made from: speaker, date and the message with first-person words
    named, without the previous turn (measured on LoCoMo: the same recall at half the cost)."""
    if len(m.content) > CACHED_TEXT_CHARS:
        return message_body(m, None, with_previous=False)
    return _message_alone(speaker(m), m.timestamp, m.content)


# Search judges every candidate by this text (its keyword share), and one tenant's candidates
# recur from query to query: naming the people and the day was a quarter of a recall's time
# (py-spy over 600 recalls), and an atom's day in words (``day_words``) and segmented text still
# ~5 % of a search's (cProfile). Pure in their arguments; long texts are not kept.
CACHED_TEXT_CHARS = 2_000
_segmented = short_text_cache(maxsize=4_096)(segment)


@lru_cache(maxsize=4_096)
def _message_alone(me: str, timestamp: int, content: str) -> str:
    return segment(f"{me} ({day_words(timestamp)}): {name_people(content, me, None)}")
