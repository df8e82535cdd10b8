"""The Chinese pack: Chinese framing words (小王说：..., 助手问：... 小王答：...), and the Chinese
rules of extraction (``rules``, ``dates``, ``extract``), scene topics (``topics``) and the headings
of scenes and persona (``wording``, ``persona``)."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.engines.offline import atom_text as st
from memstrata.engines.offline.draft import Form, Parts, core_text
from memstrata.engines.offline.l1.context import Speech
from memstrata.engines.offline.lang.zh import extract, persona, rules, topics, wording
from memstrata.engines.offline.packs import Found, Rules
from memstrata.models import Atom, Message
from memstrata.ports import PersonaRequest


class Chinese(Rules):
    """The engine pack of Chinese."""

    code = "zh"
    preference = rules.PREFERENCE
    topic_names = frozenset(topics.TOPICS)
    scene_headings = wording.SCENE_HEADINGS

    def write(self, parts: Parts) -> str:
        """``小王说：...``, ``助手问：...小王答：...``, ``小王分享了一张照片：...``."""
        if parts.form is Form.QUOTE:
            return f"{parts.speaker}说：{parts.text}"
        if parts.form is Form.ANSWER:
            return f"{parts.asker}问：{parts.question}{parts.speaker}答：{parts.text}"
        if parts.form is Form.PHOTO:
            return f"{parts.speaker}分享了一张照片：{parts.text}。"
        return parts.text

    def message_atoms(self, context: Sequence[Message], i: int, sp: Speech) -> Sequence[Found]:
        return extract.message_atoms(context, i, sp)

    def atom_words(self, a: Atom, skip: frozenset[str]) -> frozenset[str]:
        """What the atom says, without its framing (助手问：... 小王答：) and numbers (一家, 三天)."""
        return frozenset(w for w in st.content_words(core_text(a), skip) if not rules.NUMERAL.match(w))

    def scene_summary(self, name: str, members: Sequence[Atom], words: Sequence[str]) -> str:
        return wording.summary(name, members, words)

    def scene_opening(self, name: str, members: Sequence[Atom], words: Sequence[str]) -> tuple[str, str]:
        return wording.title_of(name), wording.lead(name, members, words)

    def shown_note(self, shown: int, total: int) -> str:
        return wording.shown_note(shown, total)

    def persona(self, request: PersonaRequest, max_chars: int, instructions_share: float) -> str:
        return persona.render(request, max_chars, instructions_share)


CHINESE = Chinese()
