"""The Chinese persona profile: per person, standing facts in Chinese sections (健康, 工作与学习,
居住, 家庭与关系, 宠物, 喜好, 计划), the most telling first, each dated with the month it was said,
then the instructions for the assistant; within the same character budget as the English one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline.draft import Form, core_text, form_of
from memstrata.engines.offline.l3.facts import is_plan
from memstrata.engines.offline.lang.zh import wording
from memstrata.engines.offline.lang.zh.rules import PREFERENCE, han_count, person_at_start
from memstrata.models import Atom, AtomType
from memstrata.ports import PersonaRequest

SECTIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("健康", re.compile(r"过敏|吃素|素食|纯素|忌口|不吃|哮喘|糖尿病|怀孕|乳糖不耐|手术|生病|失眠")),
    (
        "工作与学习",
        re.compile(
            r"工作|公司|上班|工程师|程序员|医生|老师|律师|设计师|职位|同事|老板|学校|大学|专业|毕业|学生"
        ),
    ),
    ("居住", re.compile(r"住在|搬到|搬来|搬去|搬家|老家|来自|出生|房子|公寓|租房")),
    (
        "家庭与关系",
        re.compile(
            r"女朋友|男朋友|老婆|老公|妻子|丈夫|未婚妻|未婚夫|结婚|离婚|儿子|女儿|孩子|爸爸|妈妈|父母|"
            r"哥哥|姐姐|弟弟|妹妹|家人|朋友|室友"
        ),
    ),
    ("宠物", re.compile(r"狗|猫|宠物")),
)
LIKES, PLANS, OTHER, RELATIONS = "喜好", "计划", "其他", "家庭与关系"
ORDER = [name for name, _ in SECTIONS] + [LIKES, PLANS, OTHER]
MAX_PEOPLE = 3
_END = "。！!"


def _fact_text(a: Atom) -> str | None:
    """The fact an atom states in the profile, or None (a short answer, a short quote)."""
    form = form_of(a)
    text = core_text(a) if form is Form.QUOTE else st.statement(a)
    if form is Form.ANSWER and text == " ".join(a.content.split()):
        return None  # "挺忙的" needs its question: no profile fact
    if form is Form.QUOTE and han_count(text) < 6:
        return None
    return text.rstrip(_END) or None


def _section(a: Atom, text: str) -> str:
    if a.type == AtomType.EPISODIC:
        return PLANS
    if form_of(a) is Form.QUOTE and person_at_start(text):
        return RELATIONS  # what the speaker says of someone they know ("小李现在还在杭州")
    if PREFERENCE.search(text):
        return LIKES
    return next((name for name, pattern in SECTIONS if pattern.search(text)), OTHER)


def _instructions(atoms: Sequence[Atom], room: int) -> list[str]:
    lines: list[str] = []
    used = 0
    for a in atoms:
        if a.type != AtomType.INSTRUCTION:
            continue
        line = f"- {st.statement(a)}{wording.ALWAYS if a.priority == -1 else ''}"
        if line in lines or used + len(line) + 1 > room:
            continue
        lines.append(line)
        used += len(line) + 1
    return ["", wording.INSTRUCTIONS_HEADING, "", *lines] if lines else []


def render(request: PersonaRequest, max_chars: int, instructions_share: float) -> str:
    """The Chinese persona body for ``request`` within ``max_chars``."""
    people = st.people(request.atoms, MAX_PEOPLE) or st.people(request.events, MAX_PEOPLE)
    lines = [wording.PERSONA_TITLE, "", wording.persona_intro("、".join(people))]
    rules = _instructions(request.atoms, int(max_chars * instructions_share))
    room = max_chars - sum(len(x) + 1 for x in lines) - sum(len(x) + 1 for x in rules)
    today = datetime.fromtimestamp(request.now / 1000, UTC).date().isoformat()
    chosen = [a for a in request.atoms if a.type == AtomType.PERSONA]
    chosen += [
        a for a in request.events if is_plan(a) and str(a.metadata.get("activity_start"))[:10] >= today
    ]
    chosen.sort(key=lambda a: (-a.priority, -a.seq))
    grouped: dict[str, dict[str, list[str]]] = {}
    seen: set[str] = set()
    for a in chosen:
        text = _fact_text(a)
        if text is None or st.fold(text) in seen:
            continue
        seen.add(st.fold(text))
        who = st.subject(a, people) or (wording.ABOUT_USER if not people else wording.OTHERS)
        fact = wording.dated(text, st.said_on(a))
        cost = len(fact) + 2
        if room - cost < 0:
            continue
        room -= cost
        grouped.setdefault(who, {}).setdefault(_section(a, text), []).append(fact)
    for who in [*people, wording.OTHERS, wording.ABOUT_USER]:
        sections = grouped.get(who)
        if sections:
            lines += ["", f"## {who}", ""]
            lines += [f"- {name}：{'；'.join(sections[name])}。" for name in ORDER if name in sections]
    return "\n".join([*lines, *rules]) + "\n"
