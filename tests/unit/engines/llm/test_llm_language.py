"""The LLM engine writes memories in the conversation's language: every prompt says so, names the
language when the script tells it, and a Chinese transcript gives Chinese atoms, scenes and a
persona through the whole pipeline (the scripted model plays an obedient LLM)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstrata import FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.engines.llm.language import conversation_language
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import ChatMessage, ChatReply, NewMessage, Role, ToolCall

CHINESE = [
    ("小王", "我上周刚搬到深圳，在一家无人机公司做嵌入式工程师。"),
    ("助手", "新工作怎么样？"),
    ("小王", "挺忙的。我对花生过敏，点外卖要小心。"),
    ("小王", "下周六我和女朋友小李去爬梧桐山。"),
]


@pytest.mark.parametrize(
    ("texts", "language"),
    [
        (["我上周刚搬到深圳"], "Chinese"),
        (["東京に引っ越しました"], "Japanese"),
        (["저는 서울에 살아요"], "Korean"),
        (["I moved to Lisbon", "小王"], None),
        (["Eu mudei para Lisboa"], None),  # Latin script: left to the prompt's general rule
        ([""], None),
    ],
)
def test_the_language_is_named_when_the_script_says_it(texts: list[str], language: str | None) -> None:
    assert conversation_language(texts) == language


def obedient(messages: Sequence[ChatMessage]) -> ChatReply:
    """Extraction and dedup as JSON, L2/L3 as a tool call then a final line; all in Chinese."""
    system = messages[0].content
    if "extract long-term memories" in system:
        memories = [
            {"content": "小王上周搬到了深圳，在无人机公司做嵌入式工程师。", "type": "persona"},
            {"content": "小王对花生过敏。", "type": "persona", "priority": 90},
        ]
        return ChatReply(json.dumps({"scenes": [{"scene_name": "工作与健康", "memories": memories}]}))
    if "free of duplicates" in system:
        return ChatReply('{"decisions": []}')
    if messages[-1].role == "tool":
        return ChatReply("已更新。")
    if "persona.md" in system:
        body = "# 个人档案\n\n## 小王\n- 健康：对花生过敏\n- 工作：嵌入式工程师（深圳）\n"
        return ChatReply(
            "",
            tool_calls=(ToolCall("p1", "write_file", json.dumps({"path": "persona.md", "content": body})),),
        )
    scene = "-----META-START-----\nsummary: 小王的工作与健康\n-----META-END-----\n\n小王在深圳工作，对花生过敏。\n"
    args = json.dumps({"path": "scene_blocks/工作与健康.md", "content": scene}, ensure_ascii=False)
    return ChatReply("", tool_calls=(ToolCall("s1", "write_file", args),))


def test_a_chinese_transcript_gives_chinese_memories_and_every_prompt_asks_for_them(tmp_path: Path) -> None:
    model = ScriptedChatModel(responder=obedient)
    with Memory.open(
        tmp_path / "data", clock=FakeClock(), embedder=HashingEmbedder(64), chat_model=model
    ) as mem:
        mem.capture(
            [
                NewMessage(Role.USER if who != "助手" else Role.ASSISTANT, text, name=who)
                for who, text in CHINESE
            ],
            session_key="s1",
            user_id="xiaowang",
        )
        mem.end_session("s1", user_id="xiaowang")
        report = mem.run_all()
        atoms = mem.atoms(user_id="xiaowang")
        persona = mem.persona(user_id="xiaowang")

    assert report.ok
    assert sorted(a.content for a in atoms) == [
        "小王上周搬到了深圳，在无人机公司做嵌入式工程师。",
        "小王对花生过敏。",
    ]
    assert persona is not None and "对花生过敏" in persona.body
    extraction = next(c for c in model.calls if "extract long-term memories" in c.messages[0].content)
    assert "language of the conversation" in extraction.messages[0].content
    assert extraction.messages[1].content.startswith(
        "The conversation is in Chinese: write every memory in Chinese."
    )
    scene_call = next(c for c in model.calls if "scene documents" in c.messages[0].content)
    assert "language the memory atoms are written in" in scene_call.messages[0].content
    assert scene_call.messages[1].content.startswith("The conversation is in Chinese")
    persona_call = next(c for c in model.calls if "persona.md" in c.messages[0].content[:40])
    assert "translate the headings too" in persona_call.messages[0].content
    assert "Chinese" in persona_call.messages[1].content.split("\n", 1)[0]
