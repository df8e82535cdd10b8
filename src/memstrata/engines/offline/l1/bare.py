"""Sentences whose only thing is a pronoun: "Highly recommend it for sure!", "I love it!", "I'll
try that", "Can't wait to see it". Alone they say no fact that a search could find (what "it" is
was said elsewhere, and the message itself keeps it); beside the atom that names the thing they
only take its place in the ranking. "I love it in Lisbon", "I sold it to Ana", "I love this book"
and "It's my grandmother's ring" name something besides, so they stay.

The test is one of shape, on closed word classes only: the sentence is an optional subject
(I / we / you), auxiliaries and adverbs, a verb or a short verb chain ("wait to try", "proud of"),
then "it" / "that" / "this", then nothing but adverbs ("for sure", "a lot", "again", "sometime").
Any other word after the pronoun, a determiner, a name or a number anywhere, two open words in a
row ("Kids loved it") or a third one breaks the shape: then the sentence may name something.
"""

from __future__ import annotations

from collections.abc import Collection

from memstrata.engines.offline.l1.sentences import lower_words

_SUBJECTS = frozenset(
    "i we you i'm we're you're i'll we'll you'll i'd we'd you'd i've we've you've let's".split()
)
_AUXILIARIES = frozenset(
    "do does did don't doesn't didn't can can't cannot could couldn't would wouldn't will won't should "
    "shouldn't shall might may must am is are was were have has had haven't hasn't gonna wanna gotta "
    "going be been not never let".split()
)
# Adverbs of degree, certainty and time; any "-ly" word is one too ("highly", "absolutely").
_ADVERBS = frozenset(
    "so just too also still even already always sure certainly probably maybe very def pretty super "
    "kinda again sometime someday soon later now anymore though ever yet either more".split()
)
# Between the verb and the pronoun ("proud of it", "go for it", "listen to it").
_LINKS = frozenset("to of about on for with into at out up over through in from off by".split())
# After the pronoun: adverbial phrases made of closed words only ("for sure", "a lot", "so much",
# "as well", "next time", "one day", "back", "out").
_TAIL = _ADVERBS | frozenset("for a lot much as well next time one day out up back down off forward".split())
_PRONOUNS = frozenset(("it", "that", "this"))
# A determiner or possessive opens a noun phrase: "my mom loved it" names who.
_DETERMINERS = frozenset("the a an my your his her our their its these those some any every no".split())
_MAX_VERBS = 2  # "wait to try", "love to see"


def _adverb(word: str) -> bool:
    return word in _ADVERBS or (word.endswith("ly") and len(word) > 4)


def only_pronoun(sentence: str, names: Collection[str] = ()) -> bool:
    """Whether the sentence's one thing is a bare "it" / "that" / "this" (see the module)."""
    if any(c.isdigit() for c in sentence):
        return False
    tokens = lower_words(sentence)
    where = [k for k, w in enumerate(tokens) if w in _PRONOUNS]
    if len(where) != 1:
        return False
    at = where[0]
    if not all(_adverb(w) or w in _TAIL for w in tokens[at + 1 :]):
        return False
    verbs, linked = 0, True
    for k, w in enumerate(tokens[:at]):
        if w in names or w in _DETERMINERS:
            return False
        if (w in _SUBJECTS and k == 0) or w in _AUXILIARIES or _adverb(w):
            continue
        if w in _LINKS:
            linked = True
            continue
        if not linked:
            return False  # two open words in a row: "Kids loved it" names who
        verbs, linked = verbs + 1, False
    return verbs <= _MAX_VERBS
