"""Naming the people in a sentence: first person becomes the speaker, second person the listener.

``rewrite("I love my dog", me="Caroline", other="Melanie")`` gives ``"Caroline loves Caroline's dog"``.
The rest of the sentence is kept word for word (keyword search matches those words). Verbs right
after a rewritten subject are put in the third person ("so I skip" -> "so Maya skips"): known base
verbs always; another plain lowercase word in that place only in a sentence not about the past
(where it could be an irregular past form) and when it cannot be a past form, a participle or a
function word.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memstrata.engines.offline.l1.introduction import without_introduction
from memstrata.engines.offline.lexicon import (
    ADVERBS,
    BASE_VERBS,
    IRREGULAR_3SG,
    IRREGULAR_PAST,
    NO_CONJUGATE,
    STOPWORDS,
    word_set,
)

# Letter runs (any script, inner apostrophes kept): "Jérôme" is one word, never "J", "r", "me".
_WORD_SPLIT = re.compile(r"([^\W\d_]+(?:'[^\W\d_]+)*)")

# Past participles after which "I'd" / "you'd" means "had", not "would".
_PARTICIPLES = word_set(
    "been gone had done seen never already just made taken got gotten known heard felt met"
)
# Words before a subject "you": clause starts, conjunctions, verbs of thinking.
_SUBJECT_BEFORE = word_set(
    """
    if when because so but and as since while what how where why who until once before after than that
    cause think hope bet guess know sure glad seems feel believe wish hear heard thought knew whether
    though although unless whenever wherever whatever anytime everytime
    """
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
_WH = word_set("what when where who why how which whose and or so but then")
# Forms that read the same in the past: not conjugated when the sentence is about the past.
_SAME_IN_PAST = word_set("read put cut hit set let quit hurt cost spread bet")
# Auxiliaries before a subject mark an inverted question ("can I ...", "should you ...").
_AUX_BEFORE = NO_CONJUGATE | frozenset(_INVERTED) | word_set("does doesn't is isn't")
# Words that, before "and I", make one subject of two ("you and I", "the kids and I").
_PAIRED = word_set("you he she they we him her them us me")
_DETERMINERS = word_set("my our his her their the a an your")
# A verb of being or naming before "<word> and I" makes the word its complement, so "I" opens a
# clause of its own: "my name is Ana and I live in Porto" -> "... and the user lives in Porto".
_COMPLEMENT_BEFORE = word_set("is was am are were called named")
# Words after which a clause opens: its subject follows ("when Tom and I ...", "last week Tom and I").
_CLAUSE_OPENERS = (
    _SUBJECT_BEFORE
    | ADVERBS
    | word_set(
        """
        yesterday today tonight tomorrow then or nor lately week weekend night morning evening
        afternoon summer winter spring autumn fall year month
        """
    )
)
# Words that follow a subject without being a base verb.
_NOT_BASE = word_set("gonna wanna gotta myself yourself alone too both either neither personally")
# "you guys" / "you all" / "y'all" mean the listener and the people with them: a plural subject, so
# its verb stays as it is ("you guys look" -> "Gina and company look", never "Gina guyses look").
_PLURAL_YOU = word_set("guys all folks")
_PLURAL = "and company"
_ITEM_COMMA = re.compile(r"\s*,\s*")
_FINITE_AFTER_YOU = word_set("are were aren't weren't don't")
# A second verb of the same subject: how far after the first verb its conjunction may stand, the
# words that cannot come between (they open a verb phrase of their own), and the words that start
# its object ("refuse to", "hate the commute", "love them").
_COORDINATED_REACH = 12
_COORDINATORS = word_set("and or but")
_OPENS_VERB_PHRASE = NO_CONJUGATE | word_set(
    "to i we they he she you there is are am be been do does don't doesn't has have"
)
_OBJECT_STARTS = _DETERMINERS | word_set(
    "to it them him her me us this that these those any all every some no each everything something"
)
# Words only ever before a noun ("her", "that", "this" stand alone too: "I saw her hug you", "a
# hobby that makes you feel ..."), and the pronouns that are nouns.
_NOUN_DETERMINERS = (_DETERMINERS - {"her"}) | word_set("every each any some no")
_INDEFINITES = word_set("everything something anything nothing everyone someone anyone no-one")
_NOUN_STOPWORDS = word_set("thing things way ways one ones stuff")  # "the way you go"
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


def _third_person(verb: str, *, guess: bool = False) -> str | None:
    """The third-person singular of a base verb, or None when ``verb`` is not one we know (with
    ``guess``, any plain lowercase word that cannot be a past form, participle or function word)."""
    low = verb.lower()
    if low in IRREGULAR_3SG:
        return _match_case(verb, IRREGULAR_3SG[low])
    if low not in BASE_VERBS and not (guess and _verb_like(verb)):
        return None
    if low.endswith("y") and low[-2:-1] not in "aeiou":
        return verb[:-1] + "ies"
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    return verb + "s"


def _verb_like(word: str) -> bool:
    """A word that, right after a subject, reads as a present base verb."""
    return (
        word.isalpha()
        and word.islower()
        and len(word) > 1
        and word not in STOPWORDS
        and word not in IRREGULAR_PAST
        and word not in _NOT_BASE
        and not word.endswith(("ed", "ing", "en", "ly"))
    )


class _Sentence:
    """Token list with helpers to look at neighbouring words."""

    def __init__(self, text: str, past: bool) -> None:
        self.tokens = _WORD_SPLIT.split(text)  # separators at even indexes, words at odd ones
        self.word_at = list(range(1, len(self.tokens), 2))
        self.question = text.rstrip().endswith("?")
        self.past = past
        self.objects: set[int] = set()  # words rewritten from an object person ("me", "you")

    def word(self, k: int) -> str | None:
        """Word ``k`` as written, or None past either end."""
        return self.tokens[self.word_at[k]] if 0 <= k < len(self.word_at) else None

    def lower(self, k: int) -> str:
        """Word ``k`` lowercased, or "" past either end."""
        w = self.word(k)
        return w.lower() if w is not None else ""

    def hyphenated(self, k: int) -> bool:
        """Whether word ``k`` is part of a hyphenated compound ("me-time")."""
        i = self.word_at[k]
        before = self.tokens[i - 1] if i > 0 else ""
        after = self.tokens[i + 1] if i + 1 < len(self.tokens) else ""
        return before.endswith("-") or after.startswith("-")

    def filler(self, k: int) -> bool:
        """Whether word ``k`` ("you") starts the filler "you know": set off by a comma or the start
        of the text before, and by punctuation or the end after ("It was, you know, fine")."""
        if self.lower(k + 1) != "know":
            return False
        i = self.word_at[k]
        opened = k == 0 or "," in self.tokens[i - 1] or "-" in self.tokens[i - 1]
        if i + 3 >= len(self.tokens) - 1:
            return opened  # "... you know" ends the text
        return opened and self.tokens[i + 3].strip()[:1] in (",", ".", "!", "?", ";", "-")

    def after_break(self, k: int) -> bool:
        """Whether word ``k`` follows a comma, colon or semicolon: it opens a clause."""
        i = self.word_at[k]
        return i > 0 and any(mark in self.tokens[i - 1] for mark in ",:;")

    def subject(self, k: int, name: str) -> str:
        """The subject ``name`` at word ``k``; after an object of the same name, a verb's gains "that"
        ("reminding me I'm" -> "reminding Maria that Maria is"), a preposition's a comma ("for Nate, Nate")."""
        joined = self.tokens[self.word_at[k] - 1].strip() == ""
        if not (joined and k - 1 in self.objects and self.word(k - 1) == name):
            return name
        if self.lower(k - 2) in STOPWORDS:
            self.tokens[self.word_at[k - 1]] += ","
            return name
        return f"that {name}"

    def set(self, k: int, value: str) -> None:
        """Replace word ``k``."""
        self.tokens[self.word_at[k]] = value

    def conjugate_after(self, k: int) -> None:
        """Put the verb after the subject at word ``k`` (skipping adverbs) in the third person."""
        j = k + 1
        while self.lower(j) in ADVERBS:
            j += 1
        verb = self.word(j)
        if verb is None or verb.lower() in NO_CONJUGATE or (self.past and verb.lower() in _SAME_IN_PAST):
            return
        joined = self.tokens[self.word_at[j] - 1].strip() == ""  # "I, too, ..." is no subject-verb pair
        third = _third_person(verb, guess=joined and not self.past)
        if third is not None:
            self.set(j, third)
            if _opens_clause(self, k):  # "the chances I get and leave ...": "leave" is not the subject's
                self.conjugate_coordinated(j)

    def conjugate_coordinated(self, j: int) -> None:
        """A second verb of the subject agrees too ("I follow a diet and refuse to" -> "follows ... and
        refuses to"): a known base verb after and/or/but with an object or "to" after it (else it is
        as often a noun: "I need peace and love"), nothing between opening another verb phrase: "to"
        ("I like to cook and eat"), an auxiliary, a pronoun or a base verb ("I help kids learn and grow")."""
        for a in range(j + 1, min(j + _COORDINATED_REACH, len(self.word_at))):
            low = self.lower(a)
            if low in _COORDINATORS:
                break
            if low in _OPENS_VERB_PHRASE or low in BASE_VERBS or low in _SUBJECT_BEFORE:
                return
            if any(mark in self.tokens[self.word_at[a] - 1] for mark in ".;:!?()"):
                return
        else:
            return
        v = a + 1
        while self.lower(v) in ADVERBS:
            v += 1
        verb, after = self.word(v), self.lower(v + 1)
        if verb is None or verb.lower() not in BASE_VERBS or not verb.islower():
            return
        if after in _OBJECT_STARTS or after.endswith("'s"):
            self.set(v, _third_person(verb) or verb)

    def invert_before(self, k: int) -> bool:
        """Fix "are you" -> "is <name>" in a question; True when the auxiliary before word ``k``
        was changed (only an auxiliary opening a clause: "have you" in "lucky to have you" stays)."""
        prev = self.lower(k - 1)
        opens_clause = k == 1 or self.lower(k - 2) in _WH or self.lower(k - 3) in _WH
        if self.question and prev in _INVERTED and opens_clause:
            self.set(k - 1, _match_case(self.word(k - 1) or prev, _INVERTED[prev]))
            return True
        return False


def _new_clause_and(s: _Sentence, k: int) -> bool:
    """Whether "and I" at word ``k`` starts a clause of its own ("I'm vegan and I live in Porto",
    "I use Flask, and I want ...") rather than ending a subject of two ("Tom and I live", "my wife
    and I live": no -s then). A subject of two opens its clause; the same words after a verb or a
    preposition are its object ("I have a dog and I have a cat", "using Flask and I want ...")."""
    if s.lower(k - 1) != "and":
        return False
    if s.lower(k - 3) in _COMPLEMENT_BEFORE:
        return True
    if "," in s.tokens[s.word_at[k - 1] - 1]:
        return not _listed(s, k - 2)  # "..., and I" opens a clause, unless it ends a list of people
    if s.lower(k - 2) in _PAIRED:
        return False
    start = k - 2  # the first word of the noun phrase before "and": "my (best) friend", "Tom"
    for back in (1, 2):
        before = s.lower(start - back)
        if before in _DETERMINERS or before.endswith("'s"):  # "my wife" is "John's wife" by now
            start -= back
            break
    return not _opens_clause(s, start)


def _opens_clause(s: _Sentence, k: int) -> bool:
    """Whether word ``k`` opens a clause: the first word, after a clause mark, or after a word that
    opens clauses ("when", "so", "yesterday")."""
    if k <= 0:
        return True
    mark = s.tokens[s.word_at[k] - 1]
    before = s.lower(k - 1)
    thinks = before.endswith("s") and before[:-1] in _SUBJECT_BEFORE  # "I think" is rewritten by now
    return any(c in mark for c in ",.;:!?()") or before in _CLAUSE_OPENERS or thinks


def _listed(s: _Sentence, k: int) -> bool:
    """Whether word ``k``, before ", and", ends a list of people ("Tom, Ana, and I", "my mom, my
    dad, and I"): an item of at most three words after a comma between words, opening with a name
    or a determiner ("... Projects, and Contact, and I" ended its list already; numbers' commas in
    "at 09:00 CET" or "sides 9, 12, 15" separate no items)."""
    for start in (k, k - 1, k - 2):
        if start < 1:
            return False
        if _ITEM_COMMA.fullmatch(s.tokens[s.word_at[start] - 1]):
            first = s.word(start) or ""
            return first[:1].isupper() or first.lower() in _DETERMINERS
    return False


def _rewrite_first(s: _Sentence, k: int, low: str, me: str) -> bool:
    if low == "i":
        paired = s.lower(k - 1) in _AUX_BEFORE | {"and", "or", "nor"} and not _new_clause_and(s, k)
        if not s.invert_before(k) and not paired:
            s.conjugate_after(k)
        s.set(k, s.subject(k, me))
    elif low in _FIRST_CONTRACTIONS:
        s.set(k, f"{s.subject(k, me)} {_FIRST_CONTRACTIONS[low]}")
    elif low == "i'd":
        s.set(k, f"{s.subject(k, me)} {'had' if s.lower(k + 1) in _PARTICIPLES else 'would'}")
    elif low in {"me", "myself"}:
        s.set(k, me)
        s.objects.add(k)
    elif low in {"my", "mine", "our", "ours"}:
        s.set(k, possessive(me))
    else:
        return False
    return True


def _after_noun(s: _Sentence, k: int) -> bool:
    """Whether "you" at word ``k`` follows a noun, so opens a relative clause as its subject ("the
    people you work with", "every time you visit", "everything you do"): a noun takes no object.
    The noun: a content word after a determiner or an owner, or an indefinite pronoun ("thank you"
    is no noun: "a thank you note")."""
    prev = s.lower(k - 1)
    if prev in _INDEFINITES:
        return True
    if (prev in STOPWORDS and prev not in _NOUN_STOPWORDS) or prev == "thank":
        return False
    det = s.lower(k - 2)
    if det.endswith("'s"):  # an owner, or "is": "every step's getting you closer"
        return not prev.endswith(("ing", "ed", "en")) and prev not in BASE_VERBS
    return det in _NOUN_DETERMINERS


def _rewrite_second(s: _Sentence, k: int, low: str, other: str) -> bool:
    if low == "you" and s.filler(k):
        return False
    if low == "you" and s.lower(k + 1) in _PLURAL_YOU and s.lower(k + 2) != "right":  # "you all right?"
        s.set(k, other)
        s.set(k + 1, _PLURAL)
    elif low == "y'all":
        s.set(k, f"{other} {_PLURAL}")
    elif low == "you":
        inverted = s.invert_before(k)
        prev = s.lower(k - 1)
        after_clause_start = (
            k == 0
            or prev in _SUBJECT_BEFORE
            or prev.removesuffix("s") in _SUBJECT_BEFORE
            or s.after_break(k)  # "Since it runs on Gunicorn, you need ..."
        )
        # "are"/"were"/"don't" after "you" are its own verb wherever it stands ("just like you
        # are doing", "the work you don't see"): no object of another verb takes them.
        finite = s.lower(k + 1) in _FINITE_AFTER_YOU
        relative = _after_noun(s, k)
        if not inverted and (after_clause_start or finite or relative) and prev not in _AUX_BEFORE:
            s.conjugate_after(k)
            s.set(k, s.subject(k, other))
        else:
            s.set(k, other)
            s.objects.add(k)
    elif low in _SECOND_CONTRACTIONS:
        s.set(k, f"{s.subject(k, other)} {_SECOND_CONTRACTIONS[low]}")
    elif low == "you'd":
        s.set(k, f"{s.subject(k, other)} {'had' if s.lower(k + 1) in _PARTICIPLES else 'would'}")
    elif low in {"your", "yours"}:
        s.set(k, possessive(other))
    elif low in {"yourself", "yourselves"}:
        s.set(k, other)
    else:
        return False
    return True


def rewrite(text: str, me: str, other: str | None, *, past: bool = False) -> Rewritten:
    """``text`` with I/me/my/mine/myself/our/ours (and I'm, I've, I'll, I'd) replaced by ``me`` and,
    when ``other`` is given, you/your/yours/yourself (and you're, you've, you'll, you'd) by ``other``.

    ``past`` says the sentence is about the past, so "I read" stays "read" rather than "reads".
    """
    text = without_introduction(text, me)
    s = _Sentence(text, past)
    first = second = False
    for k in range(len(s.word_at)):
        low = s.lower(k)
        if s.hyphenated(k):
            continue
        if _rewrite_first(s, k, low, me):
            first = True
        elif other is not None and _rewrite_second(s, k, low, other):
            second = True
    return Rewritten("".join(s.tokens), first, second)
