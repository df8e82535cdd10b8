"""Offline L1 extraction: a window of messages -> standalone atom drafts.

Per new message of the window (background messages only give context):

- each sentence worth keeping becomes one atom, with the speaker named as subject ("I" -> the
  speaker's name, "you" -> the other participant) and relative dates resolved against the
  message's day; a sentence whose subject is not the speaker is attributed ("Mel said: ...");
- an answer to the other speaker's question is stored together with the question, so that
  "Since 2016." still says what it answers;
- photo captions ("[shares a photo: ...]") become "<speaker> shared a photo of ...";
- sentences a user addresses to the assistant as rules become instructions;
- the assistant's own messages only yield what they confirm about the user.

Greetings, thanks, reactions and questions without a fact are skipped. Deterministic and fast:
regular expressions and word lists only.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from memstrata.engines.offline.draft import Form, Parts, parts_metadata
from memstrata.engines.offline.l1.classify import (
    Kind,
    classify,
    content_words,
    is_answer_start,
    is_question,
    is_reaction,
    is_standing,
    is_thanks,
    strip_filler,
    worth_keeping,
)
from memstrata.engines.offline.l1.context import Speech, participant_names, speaker_label, speech
from memstrata.engines.offline.l1.dates import Resolved, is_past, resolve
from memstrata.engines.offline.l1.dedup import normalise
from memstrata.engines.offline.l1.instructions import Instruction
from memstrata.engines.offline.l1.instructions import detect as detect_instruction
from memstrata.engines.offline.l1.labels import INSTRUCTION_SCENE, scene_name
from memstrata.engines.offline.l1.references import (
    drop_fillers,
    places,
    resolve_it,
    resolve_place,
    thing_before,
)
from memstrata.engines.offline.l1.sentences import split_message, words
from memstrata.engines.offline.l1.subject import rewrite
from memstrata.engines.offline.lang import LanguagePack, pack_for
from memstrata.engines.offline.lang.en import ENGLISH
from memstrata.engines.offline.lang.zh import extract as zh_extract
from memstrata.models import AtomDraft, AtomType, ExtractionWindow, Message, Role

log = logging.getLogger(__name__)

_ADVICE = re.compile(
    r"\b(?:should|could|might|may|can|try|consider|recommend|suggest|let me|let's|if you|here's|here is|"
    r"would you|do you|feel free)\b",
    re.IGNORECASE,
)
_SPEAKER_WITHIN = 8  # words: a statement naming its speaker this early needs no "<name> said:"
_CONTINUES = re.compile(
    r"^(?:it|it's|its|that|that's|this|these|those|they|they're|them|their|he|he's|his|she|she's|her|"
    r"there|there's)\b",
    re.IGNORECASE,
)
_NEW_TOPIC = re.compile(
    r"\b(?:by the way|btw|speaking of|on another note|anyway)\b|^(?:also|oh and|and also)\b", re.I
)
_ANSWER_GOES_ON = re.compile(r"^(?:and|also|as for|oh,? and|plus)\b", re.IGNORECASE)
_DEICTIC_WORD = re.compile(r"\b(?:here|there)\b", re.IGNORECASE)
_IT_WORD = re.compile(r" it\b")
_ACK = re.compile(r"^(?:got it|noted|understood|sure|okay|ok|of course|great|perfect|thanks)[,.!:]*\s+", re.I)


@dataclass(frozen=True, slots=True)
class ExtractOptions:
    """Knobs of the offline extractor (defaults are the measured best)."""

    # An answer shorter than this many words also takes its next sentence: replies often open with
    # a reaction and answer in the sentence after ("Seeing my kids so happy at the beach was the
    # best! We don't go often, usually once or twice a year."). On the LoCoMo dev set 16 (was 8)
    # put the answer into recall's context for 1.4 more points of answer words (75.0 -> 76.4%),
    # evidence R@10 78.6 -> 78.5, R@1000tok 89.2 -> 88.9 (12: 75.9%; 20: 76.3%; 3 sentences: less).
    answer_words: int = 16
    max_answer_sentences: int = 2
    photo_atoms: bool = True
    join_pronouns: bool = True  # a sentence opening with "it"/"they"/"he"... continues the one before
    max_unit_words: int = 40  # ... unless that one is already this long


@dataclass(slots=True)
class _Builder:
    """Collects the drafts of one message."""

    sp: Speech
    sources: tuple[str, ...]
    drafts: list[AtomDraft] = field(default_factory=list)
    pack: LanguagePack = ENGLISH

    def add(
        self, parts: Parts, kind: Kind, resolved: Resolved | None, scene_text: str, scene: str | None = None
    ) -> None:
        """Append a draft written by the pack from ``parts``, with the message's metadata
        (mentioned_at, message_time, speaker, the parts, and the activity span when dates were
        found); the scene label is ``scene``, else comes from ``scene_text``."""
        content = self.pack.write(parts)
        metadata: dict[str, Any] = {
            "mentioned_at": self.sp.day.isoformat(),
            "message_time": self.sp.message.timestamp,
            "speaker": self.sp.me,
            **parts_metadata(parts, self.pack.code),
        }
        if resolved is not None and resolved.start is not None and resolved.end is not None:
            metadata["activity_start"] = resolved.start.isoformat()
            metadata["activity_end"] = resolved.end.isoformat()
        if scene is None:
            scene = (
                INSTRUCTION_SCENE
                if kind.type is AtomType.INSTRUCTION
                else scene_name(scene_text, self.sp.names)
            )
        self.drafts.append(AtomDraft(kind.type, content, kind.priority, scene, self.sources, metadata))


def _speaker_early(text: str, me: str) -> bool:
    """Whether the speaker is named within the statement's first words ("On Monday Ann went ...")."""
    head = " ".join(text.split()[: _SPEAKER_WITHIN + len(me.split()) - 1])
    return re.search(rf"(?<!\w){re.escape(me)}(?!\w)", head) is not None


def _capitalised(text: str) -> str:
    """``text`` with its first letter upper-cased, unless it opens with a non-word (a URL, code)."""
    first = text.split(" ", 1)[0]
    code_like = any(mark in first for mark in ("://", "(", "=", "/", "_"))
    return text[:1].upper() + text[1:] if text[:1].isalpha() and not code_like else text


def _units(sentences: Sequence[str], names: frozenset[str], opts: ExtractOptions) -> list[str]:
    """Sentences grouped into statements: one that opens with a pronoun ("It was ...", "He ...")
    continues the sentence before it, which usually names what the pronoun means. Sentences
    without content (thanks, reactions) neither join nor are joined."""
    units: list[list[str]] = []
    has_content: list[bool] = []
    for sentence in sentences:
        plain = strip_filler(sentence, names)
        content = bool(content_words(plain, names)) and not is_thanks(sentence)
        joins = (
            opts.join_pronouns
            and units
            and has_content[-1]
            and _CONTINUES.match(plain)
            and not is_question(sentence)
            and not is_question(units[-1][-1])
            and sum(len(words(x)) for x in units[-1]) < opts.max_unit_words
        )
        if joins:
            units[-1].append(sentence)
        else:
            units.append([sentence])
            has_content.append(content)
    return [" ".join(u) for u in units]


def _standalone(units: Sequence[str], context: Sequence[Message], i: int, names: frozenset[str]) -> list[str]:
    """Units whose "here"/"there" name the one place said just before (in this message or the two
    before) and whose object "it" names the thing the unit before was about."""
    out: list[str] = []
    for j, unit in enumerate(units):
        text = unit
        if _DEICTIC_WORD.search(unit):  # cheap test first: most units have no "here"/"there"
            earlier = [m.content for m in context[max(0, i - 2) : i]]
            text = resolve_place(unit, places([*earlier, *units[:j]], names))
        if j and _IT_WORD.search(text):
            text = resolve_it(text, thing_before(units[j - 1]))
        out.append(text)
    return out


def _statement(sp: Speech, text: str, *, keep_answer: bool = False) -> tuple[str, Resolved]:
    """Text with people named and dates resolved (the speaker is not attributed here)."""
    plain = drop_fillers(strip_filler(text, sp.names, keep_answer=keep_answer))
    resolved = resolve(rewrite(plain, sp.me, sp.other, past=is_past(plain)).text, sp.day)
    return _capitalised(resolved.text), resolved


def _instruction(sp: Speech, sentence: str) -> Instruction | None:
    """The instruction in a user's sentence to the assistant (None in talk between people)."""
    if sp.message.role != Role.USER or not sp.to_assistant:
        return None
    return detect_instruction(strip_filler(sentence, sp.names), sp.me)


def _sentence_atom(b: _Builder, sentence: str) -> None:
    sp = b.sp
    instruction = _instruction(sp, sentence)
    if instruction is not None:
        kind = Kind(AtomType.INSTRUCTION, instruction.priority)
        b.add(Parts(Form.INSTRUCTION, sp.me, instruction.content), kind, None, instruction.content)
        return
    if is_question(sentence):
        return
    content, resolved = _statement(sp, sentence)
    if not worth_keeping(sentence, sp.names, dated=resolved.start is not None):
        return
    form = Form.STATEMENT if _speaker_early(content, sp.me) else Form.QUOTE
    kind = classify(sentence, dated=resolved.start is not None, past=is_past(sentence))
    b.add(Parts(form, sp.me, content), kind, resolved, sentence)


def _questions_before(context: Sequence[Message], i: int, sp: Speech) -> tuple[Speech, list[str]] | None:
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


def _answer_span(sentences: Sequence[str], names: frozenset[str], opts: ExtractOptions) -> list[int]:
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


def _second_answer(
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
    return [start + j for j in _answer_span(units[start:], names, opts)]


def _stands_alone(sentence: str) -> bool:
    """A sentence after the answer that starts a fact of its own ("I'm allergic to peanuts, by the
    way"): it becomes its own atom rather than part of the answer."""
    return is_standing(sentence) or _NEW_TOPIC.search(sentence) is not None


def _qa_atom(b: _Builder, asker: Speech, question: str, answer: Sequence[str]) -> None:
    sp = b.sp
    q_text, _ = _statement(asker, question)
    a_raw = " ".join(strip_filler(s, sp.names, keep_answer=True) for s in answer)
    a_text, resolved = _statement(sp, a_raw, keep_answer=True)
    parts = Parts(Form.ANSWER, sp.me, a_text, asker=asker.me, question=q_text)
    kind = classify(a_raw, dated=resolved.start is not None, past=is_past(a_raw))
    b.add(parts, kind, resolved, f"{question} {a_raw}")


def _photo_atoms(b: _Builder, captions: Sequence[str]) -> None:
    for caption in captions:
        kind = Kind(AtomType.EPISODIC, 45)
        b.add(Parts(Form.PHOTO, b.sp.me, caption), kind, None, caption)


def _assistant_atoms(b: _Builder, sentences: Sequence[str]) -> None:
    """Facts about the user that an assistant message states back ("Noted: you prefer tea")."""
    sp = b.sp
    for sentence in sentences:
        plain = _ACK.sub("", sentence.strip())
        if is_question(plain) or _ADVICE.search(plain):
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


def _message_atoms(
    context: Sequence[Message], i: int, names: frozenset[str], new_ids: frozenset[str], opts: ExtractOptions
) -> list[AtomDraft]:
    sp = speech(context, i, names)
    pack = pack_for(sp.message.content)
    if pack.code == "zh":
        return _chinese_atoms(context, i, sp, pack, new_ids)
    parts = split_message(sp.message.content)
    b = _Builder(sp, (sp.message.id,))
    if sp.message.role == Role.ASSISTANT:
        _assistant_atoms(b, parts.sentences)
        return b.drafts
    units = _standalone(_units(parts.sentences, names, opts), context, i, names)
    used: set[int] = set()
    asked = _questions_before(context, i, sp)
    if asked is not None:
        asker, questions = asked
        span = _answer_span(units, names, opts)
        if span and _instruction(sp, units[span[0]]) is None:
            # Two questions answered one after the other pair in order; else the reply answers
            # the last question asked.
            second = _second_answer(units, span, questions[-1], names, opts) if len(questions) == 2 else []
            pairs = [(questions[0], span), (questions[1], second)] if second else [(questions[-1], span)]
            q_id = asker.message.id
            for question, answer in pairs:
                if not content_words(question, names):
                    continue  # "How does it feel?": its answer says what it says on its own
                qa = _Builder(sp, (q_id, sp.message.id) if q_id in new_ids else (sp.message.id,))
                _qa_atom(qa, asker, question, [units[j] for j in answer])
                b.drafts.extend(qa.drafts)
                used.update(answer)
    for j, unit in enumerate(units):
        if j not in used:
            _sentence_atom(b, unit)
    if opts.photo_atoms:
        _photo_atoms(b, parts.captions)
    return b.drafts


def _chinese_atoms(
    context: Sequence[Message], i: int, sp: Speech, pack: LanguagePack, new_ids: frozenset[str]
) -> list[AtomDraft]:
    """A Chinese message's atoms (``lang/zh``); an answer also names the question's message when
    that is new in the window."""
    b = _Builder(sp, (sp.message.id,), pack=pack)
    for found in zh_extract.message_atoms(context, i, sp):
        if found.parts.form is Form.ANSWER and context[i - 1].id in new_ids:
            qa = _Builder(sp, (context[i - 1].id, sp.message.id), pack=pack)
            qa.add(found.parts, found.kind, found.resolved, "", found.scene)
            b.drafts.extend(qa.drafts)
        else:
            b.add(found.parts, found.kind, found.resolved, "", found.scene)
    return b.drafts


def _one_name(context: Sequence[Message]) -> tuple[Message, ...]:
    """The window's messages, a user's message without a name given the one name the window's
    other user messages carry: one person is "Maya" everywhere, not "User" beside "Maya"."""
    named = {m.name.strip() for m in context if m.role == Role.USER and m.name and m.name.strip()}
    if len(named) != 1:
        return tuple(context)
    (name,) = named
    return tuple(
        replace(m, name=name) if m.role == Role.USER and not (m.name and m.name.strip()) else m
        for m in context
    )


def extract_window(window: ExtractionWindow, options: ExtractOptions | None = None) -> list[AtomDraft]:
    """Atom drafts for the window's new messages, in message order, without duplicate texts.

    Every draft's ``source_message_ids`` name only messages of ``window.new``.
    """
    opts = options or ExtractOptions()
    context = _one_name((*window.background, *window.new))
    names = participant_names(context)
    new_ids = frozenset(m.id for m in window.new)
    seen: set[str] = set()
    out: list[AtomDraft] = []
    for i in range(len(window.background), len(context)):
        for draft in _message_atoms(context, i, names, new_ids, opts):
            key = normalise(draft.content)
            if key not in seen:
                seen.add(key)
                out.append(draft)
    log.debug("offline extraction: %d messages -> %d atoms", len(window.new), len(out))
    return out


class OfflineExtractor:
    """The ``Extractor`` port without a model: see the module docstring for what it extracts."""

    def __init__(self, options: ExtractOptions | None = None) -> None:
        self.options = options or ExtractOptions()

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        """Atom drafts for ``window`` (never raises on odd text: unparseable parts are skipped).
        CPU work, so in a worker thread: the event loop keeps serving requests meanwhile."""
        return await asyncio.to_thread(extract_window, window, self.options)
