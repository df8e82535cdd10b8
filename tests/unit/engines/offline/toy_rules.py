"""The offline engine's pack of the toy Thai (``tests/unit/lang/toy_pack``), which names it: its
framing words, its own extraction (one atom per message, in its own scene), a scene heading and
a persona."""

from __future__ import annotations

from collections.abc import Sequence
from types import MappingProxyType

from memstrata.engines.offline import packs
from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.classify import Kind
from memstrata.engines.offline.l1.context import Speech
from memstrata.models import AtomType, Message
from memstrata.ports import PersonaRequest


class ToyRules(packs.Rules):
    code = "th"
    scene_headings = MappingProxyType({"Profile": "ประวัติ"})

    def write(self, parts: Parts) -> str:
        return f"{parts.speaker} บอกว่า {parts.text}"

    def message_atoms(self, context: Sequence[Message], i: int, sp: Speech) -> Sequence[packs.Found]:
        parts = Parts(Form.STATEMENT, sp.me, sp.message.content)
        return [packs.Found(parts, Kind(AtomType.PERSONA, 60), None, "ทั่วไป")]

    def persona(self, request: PersonaRequest, max_chars: int, instructions_share: float) -> str:
        return "# โปรไฟล์"


TOY_RULES = ToyRules()
NOT_RULES = object()  # what a pack naming this is refused for
