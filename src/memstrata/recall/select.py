"""Which query-dependent memories go into the prompt: ranked hits, each one item, within a budget.

Walks the search hits best first and keeps a hit unless
- it repeats an item already kept: a raw message whose atom is kept, or an atom whose source
  message is kept raw (an atom and its source message are one item: the atoms stand in for a
  message when they hold most of its words and its photo captions), or a text whose content
  words, reactions aside ("great news"), are nearly all in one kept item already (``overlap``);
- it is a raw message with too little content to stand alone ("Will do.", "Haha, same!", or a
  question with little else: "Good to know. Do you climb?");
- one line of the system context (a persona line) already says it, reactions aside ("Noted:");
- its line does not fit in what is left of the budget (a shorter one further down still may).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from memstrata.layers.l0.media import photo_captions
from memstrata.models import Hit, Layer
from memstrata.recall.text import activity, memory_line
from memstrata.retrieval.terms import STOPWORDS, judged, short_text_cache, words

_SENTENCE = re.compile(r"(?<=[.!?])\s+")
# Words that react or acknowledge rather than tell: "That's great news about Tom and the flat!"
# says nothing a kept "Tom is moving ..., we found a flat" does not.
_REACTIONS = frozenset(
    """
    great awesome amazing nice cool wow good glad happy congrats congratulations thanks thank sounds
    news love lovely fantastic wonderful super sweet fun beautiful incredible noted okay ok sure
    """.split()
)


@dataclass(frozen=True, slots=True)
class SelectOptions:
    """Knobs of the selection (the defaults are the measured best; see docs/benchmarks.md)."""

    line_chars: int = 300  # one memory line at most
    min_message_words: int = 3  # content words a raw message needs to stand alone
    overlap: float = 0.8  # share of a hit's content words already in one kept item: a repeat
    # A raw message is shown as its atoms when they hold this share of its content words (their
    # dates are resolved, their subject named); else as itself (its atoms left something out).
    atoms_cover: float = 0.5
    lang: str = ""  # the conversation's language (its pack says how dates read); "": the default


@short_text_cache(maxsize=8_192)  # a hit, its atoms and the persona's lines recur across recalls
def content_terms(text: str) -> frozenset[str]:
    """Lowercased words that carry content: no stopwords, no single letters; of as much of
    ``text`` as ``judged`` reads."""
    return frozenset(w for w in words(judged(text)) if w not in STOPWORDS and (len(w) > 1 or w.isdigit()))


@dataclass(slots=True, eq=False)  # identity: two kept items are never the same item
class _Kept:
    hit: Hit
    line: str
    terms: frozenset[str]


@dataclass(slots=True)
class _Picker:
    room: int
    opts: SelectOptions
    raw: dict[str, Hit] = field(default_factory=dict)  # message id -> its L0 hit, when shown raw
    atoms_of: dict[str, list[Hit]] = field(default_factory=dict)  # message id -> atoms from it
    given: tuple[frozenset[str], ...] = ()  # content words of each line of the system context
    kept: list[_Kept] = field(default_factory=list)
    used: int = 0

    def known(self, terms: frozenset[str]) -> bool:
        """Whether one line of the system context already holds (nearly) all of these words
        (reactions aside). One line, not the whole persona: the persona's words together cover
        most short hits, so a memory that adds a date to a persona fact was dropped as known."""
        terms = telling(terms)
        need = self.opts.overlap * len(terms)
        return bool(terms) and any(len(terms & g) >= need for g in self.given)

    def plan(self, hits: Sequence[Hit]) -> None:
        """Decide, per message among the hits, whether it is shown raw or as its atoms."""
        for hit in hits:
            if hit.layer == Layer.L1:
                for source in hit.source_message_ids:
                    self.atoms_of.setdefault(source, []).append(hit)
        for hit in hits:
            if hit.layer != Layer.L0:
                continue
            terms = content_terms(hit.content)
            atoms = self.atoms_of.get(hit.id, [])
            said = frozenset().union(*(content_terms(a.content) for a in atoms))
            # Shown as its atoms only when they say most of it and all that its photo showed
            # (a reply's atom often keeps the words and drops the caption, the answer to "what
            # did she make?").
            shown = frozenset().union(*(content_terms(c) for c in photo_captions(hit.content)))
            if not atoms or len(terms & said) < self.opts.atoms_cover * len(terms) or not shown <= said:
                self.raw[hit.id] = hit

    def offer(self, hit: Hit) -> None:
        """Keep the item ``hit`` belongs to, in the form planned for it, unless it is already kept,
        repeats a kept one or does not fit."""
        if hit.layer == Layer.L0 and hit.id not in self.raw:
            for atom in self.atoms_of.get(hit.id, []):
                self.offer(atom)  # the message's atoms stand in for it, at its rank
            return
        if hit.layer == Layer.L1:
            raw = next(
                (
                    self.raw[s]
                    for s in hit.source_message_ids
                    if s in self.raw and self.holds(self.raw[s], hit)
                ),
                None,
            )
            if raw is not None:
                hit = raw  # the raw message stands in for its atoms, at the best rank of either
        if any(k.hit is hit for k in self.kept):
            return
        terms = content_terms(hit.content)
        if (
            hit.layer == Layer.L0
            and len(content_terms(statements(judged(hit.content)))) < self.opts.min_message_words
        ):
            return
        if self.repeats(terms) or self.known(terms):
            return
        about = ""
        if hit.layer == Layer.L0:  # a raw message's atoms know the day its "last Friday" was
            about = next((t for a in self.atoms_of.get(hit.id, []) if (t := activity(a, self.opts.lang))), "")
        line = memory_line(hit, self.opts.line_chars, about, self.opts.lang)
        if self.used + len(line) + 1 <= self.room:
            self.kept.append(_Kept(hit, line, terms))
            self.used += len(line) + 1

    def holds(self, message: Hit, atom: Hit) -> bool:
        """Whether ``message``, shown raw, can stand in for ``atom``: always for an atom made from
        it alone; for an atom made from several messages (a question and its answer), only when
        this one says most of it (the question's message does not hold the answer)."""
        if len(atom.source_message_ids) <= 1:
            return True
        terms = content_terms(atom.content)
        return len(terms & content_terms(message.content)) >= self.opts.atoms_cover * len(terms)

    def repeats(self, terms: frozenset[str]) -> bool:
        """Whether one kept item already holds (nearly) all of these words, reactions aside."""
        terms = telling(terms)
        if len(terms) < 3:
            return any(terms and terms <= k.terms for k in self.kept)
        need = self.opts.overlap * len(terms)
        return any(len(terms & k.terms) >= need for k in self.kept)


def telling(terms: frozenset[str]) -> frozenset[str]:
    """``terms`` without reactions and acknowledgements (all of them when nothing else is left)."""
    return (terms - _REACTIONS) or terms


def given_lines(text: str) -> list[str]:
    """The lines of the system context (a persona line is one topic of one person, its facts
    joined with "; ")."""
    return [line for line in text.splitlines() if line.strip()]


def statements(text: str) -> str:
    """The text without its questions (what a message tells rather than asks)."""
    return " ".join(s for s in _SENTENCE.split(text) if not s.rstrip().endswith("?"))


def select(
    hits: Sequence[Hit], room: int, opts: SelectOptions | None = None, given: str = ""
) -> list[tuple[Hit, str]]:
    """The hits kept for the prompt, best first, with their lines; all lines plus one newline each
    fit in ``room`` characters. ``given`` is the text already in the prompt (the persona)."""
    picker = _Picker(room, opts or SelectOptions(), given=tuple(content_terms(s) for s in given_lines(given)))
    picker.plan(hits)
    for hit in hits:
        picker.offer(hit)
    return [(k.hit, k.line) for k in picker.kept]
