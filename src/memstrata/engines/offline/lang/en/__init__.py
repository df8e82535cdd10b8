"""The English pack: the framing words of English atoms (its sentence rules live in ``l1/``)."""

from __future__ import annotations

import re

from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.lexicon import IRREGULAR_PAST
from memstrata.engines.offline.packs import Rules

# "the user" as the person, not as a noun's modifier ("the user experience", "the user table"):
# followed by "'s", punctuation or the end, by a verb (an auxiliary, "-s" or "-ed" form), or by a
# preposition, conjunction, determiner or adverb ("walking the user through it", "the user and Tom",
# "the user also wants"); or
# after a verb whose object does the next thing ("help the user understand", "let the user know").
_THE_USER = re.compile(
    r"\b[Tt]he user(?='s\b|\s*[,.;:!?)]|\s*$|\s+(?:is|was|has|had|does|did|will|would|can|could|should|"
    r"may|might|must|wants|\w+(?<!s)s|\w+ed|\w+n't|also|really|just|still|already|never|always|often|"
    r"usually|currently|now|only|even|actually|to|with|through|into|in|on|at|for|from|about|by|of|and|or|but|"
    r"that|if|when|so|as|because|while|what|how|the|a|an|this|these|some|any|"
    + "|".join(sorted(IRREGULAR_PAST))  # "the user made a mistake"
    + r")\b)"
)
_CAUSATIVE = re.compile(
    r"\b(?P<verb>help|helps|helped|helping|let|lets|letting|make|makes|made|making|watch|see|hear) "
    r"the user(?=\s+[a-z])"
)


def named(text: str, name: str) -> str:
    """``text`` with "the user" read as ``name``: "The user lives in Porto" -> "Ana lives in Porto";
    the name itself goes ("The user's name is Ana and the user lives in Porto" -> "Ana lives in
    Porto": the profile is headed by the name already), leaving "" when nothing else is said;
    "The user is Ana, a nurse in Porto" -> "Ana is a nurse in Porto" (not "Ana is Ana, ...")."""
    gave = re.match(
        rf"^the user(?P<is>'s name)? is {re.escape(name)}\b(?!['’])"
        r"(?P<sep>(?:\s*(?:,|and\b|so\b)\s*)*)(?P<rest>.*)$",
        text,
        re.I,
    )
    if gave is not None and (gave["is"] or gave["sep"] or not gave["rest"][1:]):  # not "is Ana Lee"
        text = gave.group("rest").strip()
        if not gave.group("is") and "," in gave.group("sep") and not _THE_USER.match(text):
            text = f"{name} is {text}"  # an apposition: "The user is Ana, a nurse ..."
        text = text[:1].upper() + text[1:] if len(text.split()) > 1 else ""
    return _THE_USER.sub(name, _CAUSATIVE.sub(lambda m: f"{m['verb']} {name}", text))


def opening(text: str) -> str:
    """``text`` as it opens a sentence: "the user said" -> "The user said" (a name is unchanged)."""
    return text[:1].upper() + text[1:]


class English(Rules):
    """The engine pack of English: its framing words; every other rule is the engine's own
    (``l1/``, ``l2/``, ``l3/``)."""

    code = "en"

    def write(self, parts: Parts) -> str:
        """``Maya said: ...``, ``The assistant asked: ... The user answered: ...``, ``Maya shared a
        photo of ...``; a nameless speaker is "the user", capitalised where a sentence opens."""
        if parts.form is Form.QUOTE:
            return f"{opening(parts.speaker)} said: {parts.text}"
        if parts.form is Form.ANSWER:
            return f"{opening(parts.asker)} asked: {parts.question} {opening(parts.speaker)} answered: {parts.text}"
        if parts.form is Form.PHOTO:
            return f"{opening(parts.speaker)} shared a photo of {parts.text}."
        return opening(parts.text)


ENGLISH = English()
