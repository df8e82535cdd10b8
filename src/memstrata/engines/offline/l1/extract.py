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
from dataclasses import replace

from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.answers import (
    answer_span,
    only_acknowledged,
    qa_atom,
    questions_before,
    second_answer,
)
from memstrata.engines.offline.l1.assistant import assistant_atoms
from memstrata.engines.offline.l1.builder import Builder, ExtractOptions, speaker_early, statement
from memstrata.engines.offline.l1.classify import (
    Kind,
    classify,
    content_words,
    is_first_person,
    is_question,
    is_small_talk,
    is_thanks,
    strip_filler,
    told_before_asking,
    worth_keeping,
)
from memstrata.engines.offline.l1.context import Speech, introduced_name, participant_names, speech
from memstrata.engines.offline.l1.dedup import normalise
from memstrata.engines.offline.l1.instructions import STRICT_PRIORITY, Instruction, is_task
from memstrata.engines.offline.l1.instructions import detect as detect_instruction
from memstrata.engines.offline.l1.references import places, resolve_it, resolve_place, thing_before
from memstrata.engines.offline.l1.sentences import split_message, words
from memstrata.engines.offline.l1.tense import is_past
from memstrata.engines.offline.packs import Found, Rules, pack_for
from memstrata.models import USER_NAME, AtomDraft, AtomType, ExtractionWindow, Message, Role

__all__ = ["ExtractOptions", "OfflineExtractor", "extract_window"]

log = logging.getLogger(__name__)

# A user message to an assistant longer than this is mostly material (``_material``). Leave-one-out
# (bench/constants_loo.py) chose 4000 in 109 of 111 folds, with no held-out gain; with it PrefEval's
# checker fell (search top 10 95.0 -> 93.1 %, atoms x2.25 from pasted filler), so 600 stays.
MATERIAL_CHARS = 600

_CONTINUES = re.compile(
    r"^(?:it|it's|its|that|that's|this|these|those|they|they're|them|their|he|he's|his|she|she's|her|"
    r"there|there's)\b",
    re.IGNORECASE,
)
_DEICTIC_WORD = re.compile(r"\b(?:here|there)\b", re.IGNORECASE)
_IT_WORD = re.compile(r" it\b")


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


def _instruction(sp: Speech, sentence: str) -> Instruction | None:
    """The instruction in a user's sentence to the assistant (None in talk between people). In
    pasted material only a strict rule ("always ...") or one the user words as theirs counts: "Use
    C-ordered arrays for optimal performance" in a library's docs is no rule for the assistant."""
    if sp.message.role != Role.USER or not sp.to_assistant:
        return None
    found = detect_instruction(strip_filler(sentence, sp.names), sp.me)
    if (
        found is not None
        and _material(sp)
        and found.priority != STRICT_PRIORITY
        and not is_first_person(sentence)
    ):
        return None
    return found


def _sentence_atom(b: Builder, sentence: str) -> None:
    sp = b.sp
    instruction = _instruction(sp, sentence)
    if instruction is not None:
        kind = Kind(AtomType.INSTRUCTION, instruction.priority)
        b.add(Parts(Form.INSTRUCTION, sp.me, instruction.content), kind, None, instruction.content)
        return
    if sp.to_assistant and sp.message.role == Role.USER and is_task(sentence):
        return  # "Explain step by step how to ...": a request, not a memory
    if is_question(sentence):
        told = told_before_asking(sentence)
        if told is None:
            return
        sentence = told  # "I prefer minimal dependencies, how can I keep my app small?"
    content, resolved = statement(sp, sentence)
    if not worth_keeping(sentence, sp.names, dated=resolved.start is not None):
        return
    form = Form.STATEMENT if speaker_early(content, sp.me) else Form.QUOTE
    if form is Form.QUOTE and _material(sp):
        return  # a sentence of a paper, a transcript, a spec the user pasted: the message has it
    kind = classify(sentence, dated=resolved.start is not None, past=is_past(sentence))
    b.add(Parts(form, sp.me, content), kind, resolved, sentence)


def _material(sp: Speech) -> bool:
    """A user's long message to an assistant: material handed over (a pasted paper, a transcript,
    code and its notes) more than talk. Only what it says about the user makes atoms; the rest
    stays findable in the message itself."""
    return sp.to_assistant and sp.message.role == Role.USER and len(sp.message.content) > MATERIAL_CHARS


def _photo_atoms(b: Builder, captions: Sequence[str]) -> None:
    for caption in captions:
        kind = Kind(AtomType.EPISODIC, 45)
        b.add(Parts(Form.PHOTO, b.sp.me, caption), kind, None, caption)


def _message_atoms(
    context: Sequence[Message], i: int, names: frozenset[str], new_ids: frozenset[str], opts: ExtractOptions
) -> list[AtomDraft]:
    sp = speech(context, i, names)
    pack = pack_for(sp.message.content)
    found = pack.message_atoms(context, i, sp)
    if found is not None:
        return _pack_atoms(context, i, sp, pack, found, new_ids)
    parts = split_message(sp.message.content)
    b = Builder(sp, (sp.message.id,))
    if sp.message.role == Role.ASSISTANT:
        assistant_atoms(b, parts.sentences)
        return b.drafts
    units = _standalone(_units(parts.sentences, names, opts), context, i, names)
    used: set[int] = set()
    asked = questions_before(context, i, sp)
    if asked is not None:
        asker, questions = asked
        span = answer_span(units, names, opts)
        if span and _instruction(sp, units[span[0]]) is None:
            # Two questions answered one after the other pair in order; else the reply answers
            # the last question asked.
            second = second_answer(units, span, questions[-1], names, opts) if len(questions) == 2 else []
            pairs = [(questions[0], span), (questions[1], second)] if second else [(questions[-1], span)]
            q_id = asker.message.id
            for question, answer in pairs:
                said = [units[j] for j in answer]
                if is_small_talk(question, said, names) or only_acknowledged(asker, question, said, names):
                    used.update(answer)  # "How is the first week going?" "Busy."; "Does that help?" "Yes!"
                    continue
                if not content_words(question, names):
                    continue  # "How does it feel?": its answer says what it says on its own
                qa = Builder(sp, (q_id, sp.message.id) if q_id in new_ids else (sp.message.id,))
                qa_atom(qa, asker, question, [units[j] for j in answer])
                b.drafts.extend(qa.drafts)
                used.update(answer)
    for j, unit in enumerate(units):
        if j not in used:
            _sentence_atom(b, unit)
    if opts.photo_atoms:
        _photo_atoms(b, parts.captions)
    return b.drafts


def _pack_atoms(
    context: Sequence[Message],
    i: int,
    sp: Speech,
    pack: Rules,
    atoms: Sequence[Found],
    new_ids: frozenset[str],
) -> list[AtomDraft]:
    """The atoms a language's own extraction found in a message (``lang/zh``); an answer also names
    the question's message when that is new in the window."""
    b = Builder(sp, (sp.message.id,), pack=pack)
    for found in atoms:
        if found.parts.form is Form.ANSWER and context[i - 1].id in new_ids:
            qa = Builder(sp, (context[i - 1].id, sp.message.id), pack=pack)
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


def _given_names(context: Sequence[Message]) -> dict[str, str]:
    """The name a nameless user gave, for each of their messages from the one giving it onwards.

    The naming message itself often leaves no atom ("I'm Ana, a nurse, can you help me ...?" is a
    request), and the persona reads only the top atoms: every later nameless-user message of the
    window carries the name too, so the name survives whichever of its atoms are kept.
    """
    out: dict[str, str] = {}
    name: str | None = None
    for m in context:
        name = introduced_name(m) or name
        if name is not None and m.role == Role.USER and not (m.name and m.name.strip()):
            out[m.id] = name
    return out


def extract_window(window: ExtractionWindow, options: ExtractOptions | None = None) -> list[AtomDraft]:
    """Atom drafts for the window's new messages, in message order, without duplicate texts.

    Every draft's ``source_message_ids`` name only messages of ``window.new``.
    """
    opts = options or ExtractOptions()
    context = _one_name((*window.background, *window.new))
    # A name a nameless user gives ("my name is Ana") is a participant's name too: never a scene's
    # label word ("ana-live"), a vocative is dropped ("Thanks, Ana!").
    given = _given_names(context)
    names = participant_names(context) | {n.lower() for n in given.values()}
    new_ids = frozenset(m.id for m in window.new)
    seen: set[str] = set()
    out: list[AtomDraft] = []
    for i in range(len(window.background), len(context)):
        for draft in _message_atoms(context, i, names, new_ids, opts):
            if context[i].id in given:  # the persona names the user after it (user.user_name)
                draft = replace(draft, metadata={**draft.metadata, USER_NAME: given[context[i].id]})
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
