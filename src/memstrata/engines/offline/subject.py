"""Naming the people in a sentence: first person becomes the speaker, second person the listener.

``rewrite("I love my dog", me="Caroline", other="Melanie")`` gives ``"Caroline loves Caroline's dog"``.
The rest of the sentence is kept word for word (keyword search matches those words). Verbs right
after a rewritten subject are put in the third person when they are common base verbs; unknown
words are left as they are rather than guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstrata.engines.offline.lexicon import ADVERBS, BASE_VERBS, IRREGULAR_3SG, NO_CONJUGATE

_TOKEN = re.compile(r"[A-Za-z]+(?:'[A-Za-z]+)*|[^A-Za-z]+")
_IS_WORD = re.compile(r"[A-Za-z]")

# Past participles after which "I'd" / "you'd" means "had", not "would".
_PARTICIPLES = frozenset(
    "been gone had done seen never already just made taken got gotten known heard felt met".split()
)
# Words before a subject "you": clause starts, conjunctions, verbs of thinking.
_SUBJECT_BEFORE = frozenset(
    """
    if when because so but as since while what how where why who until once before after than that
    cause think hope bet guess know sure glad seems feel believe wish hear heard thought knew whether
    though although unless whenever wherever whatever
    """.split()
)
# "Are you ...?" -> "Is Melanie ...?": the auxiliary agrees with the new third-person subject.
_INVERTED = {
    "are": "is",
    "were": "was",
    "have": "has",
    "do": "does",
    "don't": "doesn't",
    "aren't": "isn't",
    "weren't": "wasn't",
    "haven't": "hasn't",
    "am": "is",
}
_FIRST_CONTRACTIONS = {"i'm": "is", "i've": "has", "i'll": "will"}
_SECOND_CONTRACTIONS = {"you're": "is", "you've": "has", "you'll": "will"}


@dataclass(frozen=True, slots=True)
class Rewritten:
    """A rewritten sentence and which persons it mentioned."""

    text: str
    first_person: bool
    second_person: bool


def possessive(name: str) -> str:
    """``Caroline`` -> ``Caroline's``; ``the assistant`` -> ``the assistant's``."""
    return f"{name}'" if name.endswith("s") and not name.endswith("ss") else f"{name}'s"


def _match_case(original: str, replacement: str) -> str:
    if original[:1].isupper() and replacement[:1].islower():
        return replacement[:1].upper() + replacement[1:]
    return replacement


def _third_person(verb: str) -> str | None:
    """The third-person singular of a base verb, or None when ``verb`` is not one we know."""
    low = verb.lower()
    if low in IRREGULAR_3SG:
        return _match_case(verb, IRREGULAR_3SG[low])
    if low not in BASE_VERBS:
        return None
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


class _Sentence:
    """Token list with helpers to look at neighbouring words."""

    def __init__(self, text: str) -> None:
        self.tokens = _TOKEN.findall(text)
        self.word_at = [i for i, t in enumerate(self.tokens) if _IS_WORD.match(t)]

    def word(self, k: int) -> str | None:
        return self.tokens[self.word_at[k]] if 0 <= k < len(self.word_at) else None

    def lower(self, k: int) -> str:
        w = self.word(k)
        return w.lower() if w is not None else ""

    def set(self, k: int, value: str) -> None:
        self.tokens[self.word_at[k]] = value

    def conjugate_after(self, k: int) -> None:
        """Put the verb after the subject at word ``k`` (skipping adverbs) in the third person."""
        j = k + 1
        while self.lower(j) in ADVERBS:
            j += 1
        verb = self.word(j)
        if verb is None or verb.lower() in NO_CONJUGATE:
            return
        third = _third_person(verb)
        if third is not None:
            self.set(j, third)

    def invert_before(self, k: int) -> bool:
        """Fix "are you" -> "is <name>"; True when the auxiliary before word ``k`` was changed."""
        prev = self.lower(k - 1)
        if prev in _INVERTED and k > 0:
            self.set(k - 1, _match_case(self.word(k - 1) or prev, _INVERTED[prev]))
            return True
        return False


def _rewrite_first(s: _Sentence, k: int, low: str, me: str) -> bool:
    if low == "i":
        if not s.invert_before(k) and s.lower(k - 1) not in {"and", "or", "nor"}:
            s.conjugate_after(k)
        s.set(k, me)
    elif low in _FIRST_CONTRACTIONS:
        s.set(k, f"{me} {_FIRST_CONTRACTIONS[low]}")
    elif low == "i'd":
        s.set(k, f"{me} {'had' if s.lower(k + 1) in _PARTICIPLES else 'would'}")
    elif low in {"me", "myself"}:
        s.set(k, me)
    elif low in {"my", "mine"}:
        s.set(k, possessive(me))
    else:
        return False
    return True


def _rewrite_second(s: _Sentence, k: int, low: str, other: str) -> bool:
    if low == "you":
        inverted = s.invert_before(k)
        prev = s.lower(k - 1)
        if not inverted and (k == 0 or prev in _SUBJECT_BEFORE):
            s.conjugate_after(k)
        s.set(k, other)
    elif low in _SECOND_CONTRACTIONS:
        s.set(k, f"{other} {_SECOND_CONTRACTIONS[low]}")
    elif low == "you'd":
        s.set(k, f"{other} {'had' if s.lower(k + 1) in _PARTICIPLES else 'would'}")
    elif low in {"your", "yours"}:
        s.set(k, possessive(other))
    elif low in {"yourself", "yourselves"}:
        s.set(k, other)
    else:
        return False
    return True


def rewrite(text: str, me: str, other: str | None) -> Rewritten:
    """``text`` with I/me/my/mine/myself (and I'm, I've, I'll, I'd) replaced by ``me`` and, when
    ``other`` is given, you/your/yours/yourself (and you're, you've, you'll, you'd) by ``other``."""
    s = _Sentence(text)
    first = second = False
    for k in range(len(s.word_at)):
        low = s.lower(k)
        if _rewrite_first(s, k, low, me):
            first = True
        elif other is not None and _rewrite_second(s, k, low, other):
            second = True
    return Rewritten("".join(s.tokens), first, second)
