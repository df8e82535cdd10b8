"""Answers: a reply to the other speaker's question is stored with the question ("Since 2016."
still says what it answers), and a reply that answers two questions pairs them in order."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.builder import Builder, ExtractOptions, statement
from memstrata.engines.offline.l1.classify import (
    acknowledges,
    classify,
    content_words,
    is_answer_start,
    is_question,
    is_reaction,
    is_standing,
    is_thanks,
    strip_filler,
)
from memstrata.engines.offline.l1.context import Speech, speaker_label, speech
from memstrata.engines.offline.l1.sentences import split_message, words
from memstrata.engines.offline.l1.tense import is_past
from memstrata.models import Message, Role

_NEW_TOPIC = re.compile(
    r"\b(?:by the way|btw|speaking of|on another note|anyway)\b|^(?:also|oh and|and also)\b", re.I
)
_ANSWER_GOES_ON = re.compile(r"^(?:and|also|as for|oh,? and|plus)\b", re.IGNORECASE)

_LEAD = r"^(?:(?:so|and|or|also|then|but)[,\s]+)*"
# A question about the asker's own help rather than about the other or the world: a check on what
# they just said ("Does that help?", "Is this clear?"; not "Did the medication help?") or an offer
# of more ("Would you like me to ...?", "Anything else I can do?", "Any other questions?"). Not
# "Would that work for you?": agreeing to a plan says something.
_ON_HELP = re.compile(
    _LEAD
    + r"(?:(?:does|did|do|would|will|has|have)\s+(?:all\s+)?(?:this|that|these|those)\s+(?:\w+\s+){0,3}?"
    r"(?:help|helps|helped|make sense|"
    r"clarify|clear (?:\w+ )?up|answer your)\b|"
    r"(?:is|was|are|were)\s+(?:this|that|it|these|those|everything)\s+(?:\w+\s+){0,2}?"
    r"(?:clear|helpful|useful|what you (?:need|needed|wanted|were looking for))\b|"
    r"(?:would|do|did)\s+you\s+(?:like|want|need)\s+(?:me|us)\b|(?:can|could|may|shall)\s+i\s+help\b|"
    r"(?:is there\s+)?(?:anything|something)\s+(?:else\b|(?:\w+\s+)?(?:i|we)\s+can\b)|"
    r"(?:do|did)\s+you\s+have\s+any\s+(?:\w+\s+)?(?:questions|concerns)\b|any\s+(?:other|more|further)\s+questions\b|"
    r"(?:need|want)\s+(?:any\s+)?help\b|how\s+(?:else\s+)?can\s+i\s+help\b)",
    re.IGNORECASE,
)
# An assistant offering to go on ("Would you like to explore another example?"): between people
# "Would you like to join us?" asks what the other wants, and "Sure!" says it.
_ASSISTANT_OFFERS = re.compile(_LEAD + r"(?:would|do)\s+you\s+(?:like|want)\s+to\b", re.IGNORECASE)


# A reply turning down more help opens with the refusal ("No, ...", "Not really", "Nope", "I'm good",
# "That's all for now") ...
_REFUSAL = re.compile(
    r"^(?:no|nope|nah|not|nothing|none|(?:i\s+think\s+)?(?:i'm|i\s+am|we're|we\s+are)\s+(?:all\s+)?"
    r"(?:good|set|fine|ok|okay|sorted)|that(?:'s|\s+is|'ll\s+be|\s+will\s+be)\s+(?:all|it|everything))\b",
    re.IGNORECASE,
)
# ... and says no more than that the speaker needs nothing more ("I've got a good handle on this",
# "I'm all set", "I'll reach out if I have more questions"): words of closing a talk, no fact.
_CLOSING = frozenset("handle grasp set sorted covered enough manage else later today reach questions".split())


def _closes(sentence: str, names: frozenset[str]) -> bool:
    """A sentence of a closing: thanks or understanding (``acknowledges``), or words of needing
    nothing more."""
    said = content_words(strip_filler(sentence, names), names)
    return acknowledges(sentence, names) or all(w in _CLOSING for w in said)


def declines(answer: Sequence[str], names: frozenset[str]) -> bool:
    """A reply that only turns down more help ("No, I think I'm good for now. Thanks for the help
    with my probability problems!", "Not really, I've got a good handle on this"): it opens with
    a refusal and says nothing but closing words, and the thanks after it close the talk whatever
    they name (what the help was about is in the talk before). "No, I don't have pets" and "No,
    I moved to Porto" say something."""
    if not answer or _REFUSAL.match(strip_filler(answer[0], names, keep_answer=True)) is None:
        return False
    return _closes(answer[0], names) and all(is_thanks(a) or _closes(a, names) for a in answer[1:])


def only_acknowledged(asker: Speech, question: str, answer: Sequence[str], names: frozenset[str]) -> bool:
    """A reply that only takes the asker's help ("Yeah, that helps a lot! Thanks for walking me
    through it.") or turns down more of it (``declines``) to a question about that help ("Does
    that help?", "Would you like me to ...?", "Anything else?"): no memory. To a question about
    the speaker or the world a bare "Yes." does say something."""
    on_help = _ON_HELP.match(question) is not None or (
        asker.message.role == Role.ASSISTANT and _ASSISTANT_OFFERS.match(question) is not None
    )
    return on_help and (all(acknowledges(a, names) for a in answer) or declines(answer, names))


def questions_before(context: Sequence[Message], i: int, sp: Speech) -> tuple[Speech, list[str]] | None:
    """The other speaker's questions that message ``i`` answers, in order, if the message right
    before ends by asking: its last question, and the one before it when its last two sentences
    both ask something ("How does it feel? Also, do you have any pets?"). The last one has content
    words; the one before may not (it still takes the first answer, so the second gets its own)."""
    if i == 0 or speaker_label(context[i - 1]) == sp.me:
        return None
    prev = speech(context, i - 1, sp.names)
    sentences = split_message(prev.message.content).sentences
    for k in range(len(sentences) - 1, max(-1, len(sentences) - 3), -1):
        if is_question(sentences[k]):
            last = strip_filler(sentences[k], sp.names)
            if not content_words(last, sp.names):
                return None
            before = (
                strip_filler(sentences[k - 1], sp.names) if k > 0 and is_question(sentences[k - 1]) else ""
            )
            return prev, ([before] if before else []) + [last]
    return None


def answer_span(sentences: Sequence[str], names: frozenset[str], opts: ExtractOptions) -> list[int]:
    """Indexes of the sentences that answer a question: the first ones, skipping leading thanks,
    greetings and reactions (a bare "Yes." is kept: with its question it says something)."""
    chosen: list[int] = []
    for j, sentence in enumerate(sentences):
        empty = not content_words(strip_filler(sentence, names), names)
        lead_in = is_thanks(sentence) or is_reaction(sentence) or empty
        if not chosen and lead_in and not is_answer_start(sentence) and j + 1 < len(sentences):
            continue
        if is_question(sentence):
            break
        if chosen and _stands_alone(sentence):
            break
        chosen.append(j)
        n_words = sum(len(words(sentences[k])) for k in chosen)
        if n_words >= opts.answer_words or len(chosen) >= opts.max_answer_sentences:
            break
    said = " ".join(sentences[j] for j in chosen)
    if chosen and not content_words(strip_filler(said, names), names) and not is_answer_start(said):
        return []  # "Thanks!" answers nothing
    return chosen


def second_answer(
    units: Sequence[str], first: Sequence[int], question: str, names: frozenset[str], opts: ExtractOptions
) -> list[int]:
    """The span answering a second question, when the reply goes on after the first answer with
    one: a sentence opening like an answer or with "and" / "also" / "as for" ("And yup, I do -
    Oscar, my guinea pig."), or sharing a content word with the question. Else none: what follows
    is news of its own."""
    start = first[-1] + 1
    if start >= len(units):
        return []
    opening = strip_filler(units[start], names)
    cued = (
        is_answer_start(units[start])
        or _ANSWER_GOES_ON.match(units[start]) is not None
        or bool(set(content_words(opening, names)) & set(content_words(question, names)))
    )
    if not cued or is_question(units[start]):
        return []
    return [start + j for j in answer_span(units[start:], names, opts)]


def _stands_alone(sentence: str) -> bool:
    """A sentence after the answer that starts a fact of its own ("I'm allergic to peanuts, by the
    way"): it becomes its own atom rather than part of the answer."""
    return is_standing(sentence) or _NEW_TOPIC.search(sentence) is not None


def qa_atom(b: Builder, asker: Speech, question: str, answer: Sequence[str]) -> None:
    sp = b.sp
    q_text, _ = statement(asker, question)
    a_raw = " ".join(strip_filler(s, sp.names, keep_answer=True) for s in answer)
    a_text, resolved = statement(sp, a_raw, keep_answer=True)
    parts = Parts(Form.ANSWER, sp.me, a_text, asker=asker.me, question=q_text)
    kind = classify(a_raw, dated=resolved.start is not None, past=is_past(a_raw))
    b.add(parts, kind, resolved, f"{question} {a_raw}")
