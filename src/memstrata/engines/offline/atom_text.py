"""Readable text from atoms, for the offline L2 and L3 writers: cleaned statements, dates, the
people a tenant's memories are about, and the distinctive words of a group of atoms."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime

from memstrata import lang
from memstrata.engines.offline.draft import Form, core_text, form_of, lang_of
from memstrata.engines.offline.lexicon import ADVERBS, DISCOURSE, GENERIC, MONTHS, STOPWORDS, WEEKDAYS
from memstrata.engines.offline.packs import pack_of
from memstrata.layers.l1.metadata_dates import metadata_day
from memstrata.models import Atom, AtomType
from memstrata.retrieval.terms import has_unspaced, plain_words

_NAME = re.compile(r"\b[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?\b")
_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*", re.UNICODE)
# Verb forms only: "love" the noun ("all the love and support") is no preference.
_PREFERENCE = re.compile(
    r"\b(?:likes|liked|loves|loved|enjoys|enjoyed|prefers|preferred|favou?rites?|hates|hated|dislikes|"
    r"can't stand|a fan of|keen on|passionate about|is into|are into)\b",
    re.IGNORECASE,
)
_ROLES = frozenset({"user", "assistant", "the user", "the assistant"})
_DULL = (
    STOPWORDS
    | GENERIC
    | frozenset(MONTHS)
    | frozenset(WEEKDAYS)
    | _ROLES
    | frozenset("said asked answered instructed shared photo picture pic image showing shows really".split())
)


def statement(a: Atom) -> str:
    """The atom's content as one readable statement: a question-and-answer atom keeps the answer
    when it says enough on its own (four words or more; ``Yes.`` needs its question)."""
    text = " ".join(a.content.split())
    if form_of(a) is Form.ANSWER:
        answer = core_text(a)
        if len(answer.split()) >= 4 or (answer != text and _says_enough_unspaced(answer)):
            return answer
    return text


def _says_enough_unspaced(text: str) -> bool:
    """A Chinese answer has no spaces: eight characters say as much as four English words."""
    return " " not in text and len(text) >= 8


def is_quoted(a: Atom) -> bool:
    """Whether the atom quotes what a speaker said (``Name said: ...``) rather than stating a fact."""
    return form_of(a) is Form.QUOTE


def fold(text: str) -> str:
    """Lowercase letters and digits only: two statements that fold alike say the same."""
    return re.sub(r"[\W_]+", " ", text.lower()).strip()


def is_preference(a: Atom) -> bool:
    pattern = pack_of(lang_of(a)).preference or _PREFERENCE
    return a.type == AtomType.PERSONA and bool(pattern.search(a.content))


def when(a: Atom) -> tuple[str, str]:
    """``(sort key, label)`` of when the atom's event happened: its activity dates when it has
    them (``2022`` for a whole year, ``2023-06`` for a whole month, a range, or a day), else the day
    it was said."""
    start, end = metadata_day(a.metadata.get("activity_start")), metadata_day(a.metadata.get("activity_end"))
    if start is not None:
        end = end or start
        if (start.month, start.day, end.month, end.day) == (1, 1, 12, 31) and start.year == end.year:
            return start.isoformat(), f"{start.year}"
        if start.day == 1 and (start.year, start.month) == (end.year, end.month) and end.day >= 28:
            return start.isoformat(), f"{start:%Y-%m}"
        if start == end:
            return start.isoformat(), start.isoformat()
        return start.isoformat(), f"{start.isoformat()} to {end.isoformat()}"
    said = a.metadata.get("message_time")
    ms = int(said) if isinstance(said, int | float) else a.created_at
    day = datetime.fromtimestamp(ms / 1000, UTC).date()
    return day.isoformat(), day.isoformat()


def said_on(a: Atom) -> date:
    """The day the atom was said (its message time)."""
    said = a.metadata.get("message_time")
    ms = int(said) if isinstance(said, int | float) else a.created_at
    return datetime.fromtimestamp(ms / 1000, UTC).date()


def people(atoms: Iterable[Atom], limit: int = 4) -> list[str]:
    """The people these memories are about, most mentioned first: the named speakers, else the
    capitalised names that open statements. ``User``/``Assistant`` are roles, not names."""
    atoms = list(atoms)
    speakers = Counter(
        str(a.metadata["speaker"])
        for a in atoms
        if isinstance(a.metadata.get("speaker"), str) and a.metadata["speaker"].lower() not in _ROLES
    )
    if not speakers:
        speakers = Counter(name for a in atoms if (name := _opening_name(statement(a))) is not None)
        floor = max(2, len(atoms) // 10)
        speakers = Counter({k: v for k, v in speakers.items() if v >= floor})
    return [name for name, _ in speakers.most_common(limit)]


def _opening_name(text: str) -> str | None:
    """The capitalised word that opens ``text`` when it can be a person's name: not a function word,
    sentence adverb or connective of any language pack ("However", "Also", "Actually", "Thanks"), and
    not set off by a comma ("However, the user ..."; "Sam, ..." addresses a listener)."""
    m = _NAME.match(text)
    if m is None or text[m.end() : m.end() + 1] == ",":
        return None
    word = m.group().lower()
    if word in _DULL or word in ADVERBS or word in DISCOURSE or word in lang.stopwords():
        return None
    return m.group()


def subject(a: Atom, names: Sequence[str]) -> str | None:
    """Who the atom is about: the first of ``names`` its statement mentions, else its speaker."""
    text = statement(a)
    found = [(text.find(n), n) for n in names if re.search(rf"\b{re.escape(n)}\b", text)]
    if found:
        return min(found)[1]
    speaker = a.metadata.get("speaker")
    return speaker if isinstance(speaker, str) and speaker in names else None


def content_words(text: str, skip: frozenset[str] = frozenset()) -> list[str]:
    """Lowercase content words (3+ letters; "don't" is one word) that are not stopwords, fillers,
    possessives of ``skip`` or ``skip``; Chinese text is segmented by the search's tokenizer (words
    of two characters or more, Chinese stopwords dropped)."""
    if has_unspaced(text):
        stopwords = lang.stopwords()
        return [
            w
            for w in plain_words(text)
            if w not in skip
            and w not in stopwords
            and w not in _DULL
            and (len(w) > 1 if has_unspaced(w) else len(w) > 2)
        ]
    out = []
    for w in _WORD.findall(text.lower().replace("’", "'")):
        base = w.removesuffix("'s")
        if len(base) > 2 and w not in _DULL and base not in _DULL and base not in skip:
            out.append(base)
    return out


class Vocabulary:
    """Content words per atom and their document frequency over a corpus, computed once."""

    def __init__(self, corpus: Sequence[Atom], skip: frozenset[str]) -> None:
        self._skip = skip
        self._words: dict[str, frozenset[str]] = {}
        self.size = max(1, len(corpus))
        self.df = Counter(w for a in corpus for w in self.words(a))

    def words(self, a: Atom) -> frozenset[str]:
        """The atom's content words (by its language's pack, where that has its own rule)."""
        found = self._words.get(a.id)
        if found is None:
            found = pack_of(lang_of(a)).atom_words(a, self._skip)
            if found is None:
                found = frozenset(content_words(a.content, self._skip))
            self._words[a.id] = found
        return found

    def keywords(self, group: Sequence[Atom], k: int, skip: frozenset[str] = frozenset()) -> list[str]:
        """The ``k`` words most distinctive of ``group`` (TF-IDF over atoms), minus ``skip``;
        words seen in one atom only come last."""
        tf = Counter(w for a in group for w in self.words(a) if w not in skip)
        score = {w: tf[w] * math.log(1 + self.size / (self.df[w] or 1)) for w in tf}
        ranked = sorted(tf, key=lambda w: (tf[w] < 2, -score[w], w))
        return ranked[:k]


def join_names(names: Sequence[str]) -> str:
    """``A``, ``A and B``, ``A, B and C``."""
    if len(names) <= 1:
        return "".join(names)
    return f"{', '.join(names[:-1])} and {names[-1]}"
