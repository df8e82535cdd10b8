"""The offline engine's side of the language seam: extraction and the scene and persona writers
ask the engine's pack table (``engines/offline/packs``). A toy engine pack registered here is
what writes its language's atoms, scene headings and persona; with the Chinese engine pack taken
out, Chinese messages are written by the engine's own rules (no Chinese framing, headings or
persona), which a Chinese branch left in a consumer would still give."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import MappingProxyType

import pytest

from memstrata import lang
from memstrata.engines.offline import extract_window, packs
from memstrata.engines.offline.atom_text import Vocabulary
from memstrata.engines.offline.draft import Form, Parts
from memstrata.engines.offline.l1.classify import Kind
from memstrata.engines.offline.l1.context import Speech
from memstrata.engines.offline.l2 import render
from memstrata.engines.offline.l3.writer import render as persona
from memstrata.models import Atom, AtomType, Message, Tenant
from memstrata.ports import PersonaRequest
from memstrata.stores.files.folder import DirectoryFolder
from tests.unit.engines.offline.conftest import WindowFactory
from tests.unit.lang.toy_pack import TOY

T = Tenant("ann")
MAY_8 = 1_683_554_160_000


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


@pytest.fixture
def thai() -> Iterator[None]:
    lang.register(TOY)
    packs.register(ToyRules())
    try:
        yield
    finally:
        packs.unregister("th")
        lang.unregister("th")


@pytest.fixture
def without_chinese_rules() -> Iterator[None]:
    chinese = packs.unregister("zh")
    try:
        yield
    finally:
        packs.register(chinese)


def _atom(n: int, content: str, code: str) -> Atom:
    meta = {"speaker": "Ann", "message_time": MAY_8, "lang": code}
    return Atom(f"a{n}", T, AtomType.PERSONA, content, 60, "x", metadata=meta, seq=n)


def _persona(atoms: Sequence[Atom], tmp_path: Path) -> str:
    request = PersonaRequest(T, DirectoryFolder(tmp_path), "", True, (), (), tuple(atoms), (), MAY_8)
    return persona(request)


def test_a_registered_engine_pack_writes_its_language(
    window: WindowFactory, tmp_path: Path, thai: None
) -> None:
    (draft,) = extract_window(window([("Ann", "ฉันชอบชาและกาแฟ")]))
    assert draft.content == "Ann บอกว่า ฉันชอบชาและกาแฟ" and draft.metadata["lang"] == "th"
    assert draft.scene_name == "ทั่วไป"
    atoms = [_atom(1, "Ann ชอบชา", "th"), _atom(2, "Ann ชอบกาแฟ", "th")]
    assert "## ประวัติ" in render.body("x.md", atoms, Vocabulary(atoms, frozenset()))
    assert _persona(atoms, tmp_path) == "# โปรไฟล์"


def test_an_engine_pack_needs_its_language() -> None:
    with pytest.raises(Exception, match="no language pack"):
        packs.register(ToyRules())


def test_without_the_chinese_engine_pack_the_engine_writes_by_its_own_rules(
    window: WindowFactory, tmp_path: Path, without_chinese_rules: None
) -> None:
    drafts = extract_window(window([("小王", "我对花生过敏，我在深圳的一家无人机公司工作。")]))
    assert all(d.metadata["lang"] == lang.default().code for d in drafts)
    atoms = [_atom(1, "小王对花生过敏。", "zh"), _atom(2, "小王在深圳工作。", "zh")]
    page = render.body("工作.md", atoms, Vocabulary(atoms, frozenset()))
    assert "## Profile" in page and "概况" not in page
    assert render.summary("工作.md", atoms, Vocabulary(atoms, frozenset())).endswith("memories, May 2023)")
    assert _persona(atoms, tmp_path).startswith("# Persona")


def test_with_the_chinese_engine_pack_the_same_atoms_read_chinese(tmp_path: Path) -> None:
    atoms = [_atom(1, "小王对花生过敏。", "zh"), _atom(2, "小王在深圳工作。", "zh")]
    assert "## 概况" in render.body("工作.md", atoms, Vocabulary(atoms, frozenset()))
    assert not _persona(atoms, tmp_path).startswith("# Persona")
