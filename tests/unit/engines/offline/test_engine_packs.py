"""The offline engine's side of the language seam: extraction and the scene and persona writers
ask the engine's pack table (``engines/offline/packs``), which a language's pack fills by naming
its engine pack. One registration of a toy language (``tests/unit/lang/toy_pack``) gives it both
its word cutting and its own extraction, scene headings and persona; with the Chinese pack
registered without its engine pack, Chinese messages are written by the engine's own rules (no
Chinese framing, headings or persona), which a Chinese branch left in a consumer would still give."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from memstrata import lang
from memstrata.engines.offline import extract_window, packs
from memstrata.engines.offline.atom_text import Vocabulary
from memstrata.engines.offline.l2 import render
from memstrata.engines.offline.l3.writer import render as persona
from memstrata.errors import ConfigError
from memstrata.models import Atom, AtomType, Tenant
from memstrata.ports import PersonaRequest
from memstrata.retrieval import terms
from memstrata.stores.files.folder import DirectoryFolder
from tests.unit.engines.offline.conftest import WindowFactory
from tests.unit.engines.offline.toy_rules import TOY_RULES
from tests.unit.lang.toy_pack import TOY

T = Tenant("ann")
MAY_8 = 1_683_554_160_000


@pytest.fixture
def thai() -> Iterator[None]:
    lang.register(TOY)  # the one registration: no engine table is touched
    try:
        yield
    finally:
        lang.unregister("th")


@pytest.fixture
def chinese_without_engine_rules() -> Iterator[None]:
    chinese = lang.unregister("zh")
    lang.register(dataclasses.replace(chinese, engines={}))
    try:
        yield
    finally:
        lang.unregister("zh")
        lang.register(chinese)


def _atom(n: int, content: str, code: str) -> Atom:
    meta = {"speaker": "Ann", "message_time": MAY_8, "lang": code}
    return Atom(f"a{n}", T, AtomType.PERSONA, content, 60, "x", metadata=meta, seq=n)


def _persona(atoms: Sequence[Atom], tmp_path: Path) -> str:
    request = PersonaRequest(T, DirectoryFolder(tmp_path), "", True, (), (), tuple(atoms), (), MAY_8)
    return persona(request)


def test_one_registration_cuts_the_words_and_extracts_by_the_named_engine_pack(
    window: WindowFactory, tmp_path: Path, thai: None
) -> None:
    assert terms.segment("ชาและกาแฟ") == " ชา และ กาแฟ "
    assert packs.pack_of("th") is TOY_RULES and packs.pack_for("ฉันชอบชา") is TOY_RULES
    (draft,) = extract_window(window([("Ann", "ฉันชอบชาและกาแฟ")]))
    assert draft.content == "Ann บอกว่า ฉันชอบชาและกาแฟ" and draft.metadata["lang"] == "th"
    assert draft.scene_name == "ทั่วไป"
    atoms = [_atom(1, "Ann ชอบชา", "th"), _atom(2, "Ann ชอบกาแฟ", "th")]
    assert "## ประวัติ" in render.body("x.md", atoms, Vocabulary(atoms, frozenset()))
    assert _persona(atoms, tmp_path) == "# โปรไฟล์"


def test_without_the_pack_the_language_and_its_engine_pack_are_gone(window: WindowFactory) -> None:
    (draft,) = extract_window(window([("Ann", "ฉันชอบชาและกาแฟ")]))
    assert draft.metadata["lang"] == lang.default().code and "บอกว่า" not in draft.content
    assert packs.pack_of("th") is packs.pack_of(lang.default().code)


@pytest.mark.parametrize(
    "where",
    [
        "tests.unit.engines.offline.toy_rules:NOT_RULES",  # not an engine pack
        "memstrata.engines.offline.lang.zh:CHINESE",  # another language's
        "tests.unit.engines.offline.toy_rules:MISSING",
        "tests.unit.engines.offline.no_such_module:RULES",
    ],
)
def test_a_pack_naming_no_engine_pack_of_its_own_is_refused_when_met(where: str) -> None:
    lang.register(dataclasses.replace(TOY, engines={"offline": where}))
    try:
        with pytest.raises(ConfigError, match="th"):
            packs.pack_of("th")
    finally:
        lang.unregister("th")


def test_an_engine_pack_is_named_as_module_colon_attribute() -> None:
    with pytest.raises(ConfigError, match="module:attribute"):
        lang.register(dataclasses.replace(TOY, engines={"offline": "toy_rules.TOY_RULES"}))
    assert "th" not in {p.code for p in lang.languages()}


def test_without_the_chinese_engine_pack_the_engine_writes_by_its_own_rules(
    window: WindowFactory, tmp_path: Path, chinese_without_engine_rules: None
) -> None:
    assert lang.language_of("我在深圳工作") == "zh"  # still Chinese to the seam
    drafts = extract_window(window([("小王", "我对花生过敏，我在深圳的一家无人机公司工作。")]))
    assert all(d.metadata["lang"] == lang.default().code for d in drafts)
    assert "健身" not in packs.topic_names()
    atoms = [_atom(1, "小王对花生过敏。", "zh"), _atom(2, "小王在深圳工作。", "zh")]
    page = render.body("工作.md", atoms, Vocabulary(atoms, frozenset()))
    assert "## Profile" in page and "概况" not in page
    assert render.summary("工作.md", atoms, Vocabulary(atoms, frozenset())).endswith("memories, May 2023)")
    assert _persona(atoms, tmp_path).startswith("# Persona")


def test_with_the_chinese_engine_pack_the_same_atoms_read_chinese(tmp_path: Path) -> None:
    assert packs.topic_names() >= {"健身"}  # the pack registered again is looked up again
    atoms = [_atom(1, "小王对花生过敏。", "zh"), _atom(2, "小王在深圳工作。", "zh")]
    assert "## 概况" in render.body("工作.md", atoms, Vocabulary(atoms, frozenset()))
    assert not _persona(atoms, tmp_path).startswith("# Persona")
