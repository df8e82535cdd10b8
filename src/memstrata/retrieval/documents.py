"""What the search indexes hold for a record: the record plus the context that helps matching.

A message is indexed with its speaker and its date; a short one also with the start of the turn
before it (a short answer usually continues the other speaker's question: "Yes, twice a week."),
a long one alone: on long technical chats (BEAM dev) the previous turn doubled a record's length
and matched it by the other message's words, and keyword R@10 fell from 50.7 to 36.1 (BM25 over
the same texts; 49.4 with this rule). A named speaker's first-person words are replaced by their
name and "you" by the other speaker's, so "What did Caroline research?" reaches "I researched
..."; a nameless speaker's are left as said, so "where do I live?" reaches "I moved to Lisbon" (a
first-person question is read as said of a named user where records name them: ``asker.py``). A fenced code block is indexed as its distinct words: what it names is findable, while
its repeated tokens do not make the message long for BM25. A hit returns the record's content.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache

from memstrata.models import Atom, Message, Role, Tenant
from memstrata.retrieval.fences import code_blocks
from memstrata.retrieval.terms import JUDGED_CHARS, judged, segment, short_text_cache, words

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


# A message of at most CONTEXT_FOR_CHARS characters is indexed with the first CONTEXT_CHARS of the
# turn before it (see the module docstring). 500: no LoCoMo turn is longer (its context recall
# 77.4 % against 77.1 % at 300), BEAM's technical turns mostly are.
CONTEXT_FOR_CHARS = 500
CONTEXT_CHARS = 300


def said(m: Message, other: Message | None) -> str:
    """The message's words as indexed: a named speaker's people named (``name_people``), code
    blocks as their distinct words (``code_words``)."""
    text = code_words(m.content)
    if not m.name:
        return text
    me = speaker(m)
    return name_people(text, me, speaker(other) if other is not None and speaker(other) != me else None)


def code_words(text: str) -> str:
    """``text`` with each fenced code block replaced by its distinct words, in order of first use."""
    spans = code_blocks(text)
    if not spans:
        return text
    out, at = [], 0
    for start, end in spans:
        out += [text[at:start], " ".join(dict.fromkeys(words(text[start:end]))), "\n"]
        at = end
    out.append(text[at:])
    return "".join(out)


def message_body(m: Message, previous: Message | None, *, with_previous: bool = True) -> str:
    """The message's keyword text (see the module docstring)."""
    body = f"{speaker(m)} ({day_words(m.timestamp)}): {said(m, previous)}"
    if with_previous and previous is not None and len(m.content) <= CONTEXT_FOR_CHARS:
        body += f"\n{speaker(previous)}: {said(previous, m)[:CONTEXT_CHARS]}"
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
    """What a message's keyword match quality is judged on: its text (``message_text``), made of as
    much of its content as ``judged`` reads (segmenting all of a long message was most of a search's time)."""
    return message_text(m if len(m.content) <= JUDGED_CHARS else replace(m, content=judged(m.content)))


def atom_vector_text(a: Atom) -> str:
    """What an atom's vector is made from: its statement alone. The scene name and date words of
    ``atom_body`` help keyword matching but only dilute an embedding (and double its cost)."""
    return a.content


# An assistant's message is embedded from its first ASSISTANT_VECTOR_WORDS words, speaker and date
# included (a user's from as many as the embedder reads: MiniLM, 256 word pieces). An assistant's
# replies in technical chats are long (BEAM dev: median 470 words, 497 of 516 past MiniLM's 256
# pieces; PrefEval's fillers 193) and were 54 % of the word pieces a BEAM import embeds; their
# vectors' start says what the reply is about, and what it says further in is found by keyword.
# Measured with memstrata's own checkers, fresh imports (docs/benchmarks.md, issue 49).
ASSISTANT_VECTOR_WORDS = 60
_WORD_STARTS = re.compile(r"\S+")


def message_vector_text(m: Message) -> str:
    """What a message's vector is made from: its text (``message_text``), an assistant's cut to its
    first ``ASSISTANT_VECTOR_WORDS`` words."""
    text = message_text(m)
    return first_words(text, ASSISTANT_VECTOR_WORDS) if m.role == Role.ASSISTANT else text


def first_words(text: str, n: int) -> str:
    """``text`` up to its ``n``-th whitespace-separated word (all of it when it has no more)."""
    for i, w in enumerate(_WORD_STARTS.finditer(text)):
        if i == n:
            return text[: w.start()].rstrip()
    return text


def message_text(m: Message) -> str:
    """What search judges a message's keyword match on, and its vector's text before any cut:
    speaker, date and the message as indexed (``said``), without the previous turn (measured on
    LoCoMo: the same recall at half the cost). An embedder reads its first few hundred word pieces
    (MiniLM: 256); one vector per passage of 120 words of a long message, scored by its best,
    measured worse on BEAM dev (L0 vector R@10 49.0, against 56.6 for this text alone): a long
    message's many passages outranked the evidence by chance. What it says further in is found by
    keyword."""
    if len(m.content) > CACHED_TEXT_CHARS:
        return message_body(m, None, with_previous=False)
    return _message_alone(m.name, m.role, m.timestamp, m.content)


# Search judges every candidate by this text (its keyword share), and one tenant's candidates
# recur from query to query: naming the people and the day was a quarter of a recall's time
# (py-spy over 600 recalls), and an atom's day in words (``day_words``) and segmented text still
# ~5 % of a search's (cProfile). Pure in their arguments; texts longer than a judged one are not
# kept (``message_match_text`` cuts a message to ``JUDGED_CHARS``).
CACHED_TEXT_CHARS = JUDGED_CHARS
_segmented = short_text_cache(maxsize=4_096)(segment)


@lru_cache(maxsize=4_096)
def _message_alone(name: str | None, role: Role, timestamp: int, content: str) -> str:
    m = Message("", _NOBODY, "", "", role, content, timestamp, 0, name)
    return segment(f"{speaker(m)} ({day_words(timestamp)}): {said(m, None)}")


_NOBODY = Tenant("", "")
