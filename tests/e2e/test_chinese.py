"""A Chinese conversation through the whole offline pipeline: Chinese atoms, scenes, persona and a
recall in the conversation's language (real SQLite, keyword search)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memstrata import Memory
from memstrata.cli.main import app
from memstrata.demo import sample
from memstrata.interchange import parse_import
from memstrata.retrieval.terms import has_unspaced as has_cjk

ENGLISH_FRAMING = re.compile(r"\b(?:said|asked|answered|shared a photo)\b|\bUser\b|\bAssistant\b")


@pytest.fixture
def memory_with_xiaowang(home: Path) -> Iterator[Memory]:
    """The Chinese demo conversation (小王, three sessions) through L0-L3."""
    with Memory.open(home, embedder=None) as mem:
        mem.import_sessions(parse_import(sample("zh")))
        yield mem


def test_chinese_memories_are_chinese_at_every_layer(memory_with_xiaowang: Memory) -> None:
    mem = memory_with_xiaowang
    atoms = mem.atoms(user_id="xiaowang", limit=100)
    contents = [a.content for a in atoms]
    assert not [c for c in contents if ENGLISH_FRAMING.search(c)]
    assert "小王对花生过敏。" in contents  # its own atom, not glued to the answer before it
    assert any("2026年11月16日" in c for c in contents)  # 昨天, said on 17 November
    assert any("农历八月十五" in c for c in contents)  # kept as it was said
    scenes = mem.scenes(user_id="xiaowang")
    assert scenes and all(has_cjk(s.name) for s in scenes)
    persona = mem.persona(user_id="xiaowang")
    assert persona is not None
    assert persona.body.startswith("# 用户画像") and "## 给助手的指令" in persona.body
    assert "健康：小王对花生过敏" in persona.body


def test_recall_speaks_the_conversations_language(memory_with_xiaowang: Memory) -> None:
    mem = memory_with_xiaowang
    zh = mem.recall("去成都出差的时候我可以吃什么？", user_id="xiaowang", session_key="chat-xiaowang")
    assert "记忆不够用时" in zh.system_context and "When this is not enough" not in zh.system_context
    assert re.search(r"- \[2026年\d+月\d+日", zh.prepend_context)
    en = mem.recall("What can I eat on my trip?", user_id="xiaowang", session_key="chat-xiaowang")
    assert "When this is not enough" in en.system_context


def test_the_demo_runs_in_chinese(tmp_path: Path) -> None:
    r = CliRunner().invoke(
        app,
        ["demo", "--lang", "zh", "--dir", str(tmp_path / "d")],
        env={"MEMSTRATA_EMBEDDING__PROVIDER": "none"},
    )
    assert r.exit_code == 0, r.output
    assert "用户画像" in r.output and "小王在一家无人机公司做嵌入式工程师" in r.output
    assert " said: " not in r.output
