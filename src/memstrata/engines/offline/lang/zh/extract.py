"""Chinese extraction: one message's clauses -> the parts of its atoms (the pack writes the text).

Per clause worth keeping: fillers dropped, first and second person named, relative dates
resolved; a clause without a subject (Chinese drops it) is stated of the speaker ("小王在一家无人机
公司做嵌入式工程师"); one that opens with someone else is quoted ("小王说：深圳的房租太贵了"). The
first clause of a reply to the other speaker's question is stored with the question. Rules a user
gives the assistant become instructions. The assistant's own messages give no atoms here.
"""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.classify import Kind
from memstrata.engines.offline.l1.context import ASSISTANT, USER, Speech, speaker_label
from memstrata.engines.offline.l1.instructions import STRICT_PRIORITY
from memstrata.engines.offline.lang.zh import rules
from memstrata.engines.offline.lang.zh.dates import resolve
from memstrata.engines.offline.lang.zh.topics import INSTRUCTION_SCENE, scene_label
from memstrata.engines.offline.packs import Found
from memstrata.layers.l0.media import PHOTO
from memstrata.models import AtomType, Message, Role

# The role labels (and a message named after its role, "Assistant") read 用户 / 助手.
_ROLE_NAMES = {USER: "用户", ASSISTANT: "助手", "User": "用户", "Assistant": "助手"}


def display(label: str) -> str:
    """How a speaker is named in Chinese text: a role label reads 用户 / 助手."""
    return _ROLE_NAMES.get(label, label)


def _finish(text: str) -> str:
    text = text.strip().rstrip("，,、")
    return text if rules._END.search(text) else f"{text}。"


def _question_before(context: Sequence[Message], i: int, sp: Speech) -> tuple[str, str] | None:
    """``(asker, question)`` when the message right before, by someone else, ends by asking
    something with content ("新工作怎么样？"; not "你呢？")."""
    if i == 0 or speaker_label(context[i - 1]) == sp.me:
        return None
    prev = context[i - 1]
    said = rules.sentences(PHOTO.sub("\n", prev.content))
    if not said:
        return None
    last = rules.strip_filler(rules.clauses(said[-1])[-1] if rules.clauses(said[-1]) else said[-1])
    if not rules.is_question(last) or rules.han_count(last) < 3:
        return None  # "你呢？" asks nothing an answer could stand on
    asker = display(speaker_label(prev))
    return asker, rules.rewrite(last, asker, display(sp.me))


def _clause_atom(sp: Speech, clause: str, me: str, other: str, person: str | None) -> Found | None:
    stripped = rules.strip_filler(clause)
    plain = rules.resolve_pronoun(stripped, person)
    if rules.is_chatter(plain) or rules.is_question(plain):
        return None
    if sp.message.role == Role.USER and sp.to_assistant:
        rule = rules.instruction(plain, me)
        if rule is not None:
            text, priority = rule
            kind = Kind(AtomType.INSTRUCTION, STRICT_PRIORITY if priority < 0 else priority)
            return Found(Parts(Form.INSTRUCTION, me, text), kind, None, INSTRUCTION_SCENE)
    resolved = resolve(rules.rewrite(plain, me, other), sp.day)
    text = resolved.text
    if plain != stripped or rules.subject(text, me) == "other":  # about the person 他/她 stood for
        form = Form.QUOTE
    else:
        form = Form.STATEMENT
        if not rules.opens_with(text, me):
            text = f"{me}{text}"
    kind = rules.classify(plain, dated=resolved.start is not None)
    names = (me, other, *([person] if person else []))
    return Found(Parts(form, me, _finish(text)), kind, resolved, scene_label(plain, names))


def _person_before(context: Sequence[Message], i: int) -> str | None:
    """The last person the two messages before ``context[i]`` name ("我女儿朵朵..." then "她对鸡蛋
    过敏")."""
    for j in range(i - 1, max(-1, i - 3), -1):
        found = rules.last_person(PHOTO.sub(" ", context[j].content))
        if found is not None:
            return found
    return None


def _unaddressed(clause: str, names: frozenset[str]) -> str:
    """A clause without the listener's name it opens with ("小美，好久不见" -> "好久不见")."""
    head, sep, rest = clause.partition("，")
    return rest if sep and head.lower() in names and rest else clause


def _facts(body: str) -> list[str]:
    """The message's clauses, one fact each (a fact and a rule joined by 所以 are two)."""
    out: list[str] = []
    for sentence in rules.sentences(body):
        for clause in rules.clauses(sentence):
            split = rules.split_rule(clause)
            out.extend(split if split is not None else (clause,))
    return out


def message_atoms(context: Sequence[Message], i: int, sp: Speech) -> list[Found]:
    """The atoms of ``context[i]``, a Chinese message, in order."""
    if sp.message.role == Role.ASSISTANT:
        return []
    me, other = display(sp.me), display(sp.other)
    body = PHOTO.sub("\n", sp.message.content)
    found: list[Found] = []
    asked = _question_before(context, i, sp)
    person = _person_before(context, i)  # the last person named: what 他/她 stands for
    for clause in _facts(body):
        clause = _unaddressed(clause, sp.names)
        atom = _clause_atom(sp, clause, me, other, person)
        person = rules.last_person(clause) or person
        if atom is None:
            continue
        if asked is not None and atom.parts.form is not Form.INSTRUCTION:
            asker, question = asked
            bare = rules.rewrite(rules.strip_filler(clause), me, other)
            said = _finish(resolve(bare, sp.day).text) if rules.opens_with_noun(bare) else atom.parts.text
            parts = Parts(Form.ANSWER, me, said, asker=asker, question=question)
            label = scene_label(f"{question}{clause}", (me, other, asker))
            atom = Found(parts, atom.kind, atom.resolved, label)
        asked = None  # only the first fact answers the question
        found.append(atom)
    for m in PHOTO.finditer(sp.message.content):
        caption = m.group(1).strip()
        if caption:
            found.append(
                Found(Parts(Form.PHOTO, me, caption), Kind(AtomType.EPISODIC, 45), None, scene_label(caption))
            )
    return found
