"""What an assistant's message says about the user: the facts it states back ("Noted: you are
vegetarian"), never its advice, questions or explanations."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.builder import Builder
from memstrata.engines.offline.l1.classify import Kind, classify, is_question, worth_keeping
from memstrata.engines.offline.l1.dates.resolve import resolve
from memstrata.engines.offline.l1.subject import rewrite
from memstrata.engines.offline.l1.tense import is_past

_ADVICE = re.compile(
    r"\b(?:should|could|might|may|can|try|consider|recommend|suggest|let me|let's|if you|here's|here is|"
    r"would you|do you|feel free|need to|needs to|have to|has to|must|ensure|make sure|by following|"
    r"here are|to do this|for example)\b",
    re.IGNORECASE,
)
# "you" as the subject of a clause ("Noted: you live in Porto", "since you're vegan"): what the
# assistant states about the user. "your project" in advice ("Define your project's scope") or
# "you" as an object ("Nice to meet you") states nothing about them.
_YOU_SUBJECT = re.compile(
    r"(?:^|[:;,]\s*|\b(?:that|and|so|since|because|as|now|noted|remember|mentioned)\s+)"
    r"you(?:'re|'ve|'d|'ll)?\s+(?!know\b)[a-z]",
    re.IGNORECASE,
)
_ACK = re.compile(r"^(?:got it|noted|understood|sure|okay|ok|of course|great|perfect|thanks)[,.!:]*\s+", re.I)


def assistant_atoms(b: Builder, sentences: Sequence[str]) -> None:
    """Facts about the user that an assistant message states back ("Noted: you prefer tea")."""
    sp = b.sp
    for sentence in sentences:
        plain = _ACK.sub("", sentence.strip())
        if is_question(plain) or _ADVICE.search(plain) or not _YOU_SUBJECT.search(plain):
            continue
        rewritten = rewrite(plain, sp.me, sp.other)
        if not rewritten.second_person or rewritten.first_person:
            continue
        resolved = resolve(rewritten.text, sp.day)
        if not worth_keeping(plain, sp.names, dated=resolved.start is not None):
            continue
        kind = classify(plain, dated=resolved.start is not None, past=is_past(plain))
        parts = Parts(Form.CONFIRMED, sp.me, resolved.text)
        b.add(parts, Kind(kind.type, min(kind.priority, 60)), resolved, plain)
