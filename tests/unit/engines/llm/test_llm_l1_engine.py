"""The LLM L1 engine (extraction + dedup) through the real OpenAIChatModel and a loopback server."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from contextlib import aclosing
from datetime import UTC, datetime
from typing import Any

import pytest

from memstrata.engines.llm.l1 import LLMDeduplicator, LLMExtractor
from memstrata.errors import ParseError
from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import (
    Atom,
    AtomDraft,
    AtomType,
    ChatReply,
    DedupAction,
    DedupDecision,
    ExtractionWindow,
    Message,
    Role,
    Tenant,
)
from tests.support.openai_server import ScriptedOpenAIServer

TENANT = Tenant("alice")
MAY_8 = int(datetime(2023, 5, 8, 13, 56, tzinfo=UTC).timestamp() * 1000)


def message(id: str, name: str, content: str, minutes: int = 0) -> Message:
    ts = MAY_8 + minutes * 60_000
    return Message(id, TENANT, "chat-1", "s1", Role.USER, content, ts, ts, name=name)


WINDOW = ExtractionWindow(
    TENANT,
    "chat-1",
    new=(
        message("m3", "Caroline", "I went to a LGBTQ support group yesterday.", 10),
        message("m4", "Melanie", "That's great! I'm painting a sunrise this week.", 11),
    ),
    background=(message("b1", "Melanie", "Hey Caroline, how have you been?"),),
)


def memory(content: str, type: str = "persona", **extra: Any) -> dict[str, Any]:
    return {"content": content, "type": type, "priority": 60, "source_message_ids": ["m3"], **extra}


def scenes(*memories: dict[str, Any], name: str = "support group") -> str:
    return json.dumps({"scenes": [{"scene_name": name, "memories": list(memories)}]})


@pytest.fixture
async def model(openai_server: ScriptedOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    async with aclosing(
        OpenAIChatModel(openai_server.base_url, "", "extract-model", timeout_seconds=5)
    ) as chat:
        yield chat


# --- extraction -----------------------------------------------------------------------------------


async def test_a_reply_becomes_drafts(model: OpenAIChatModel, openai_server: ScriptedOpenAIServer) -> None:
    event = memory(
        "Caroline attended an LGBTQ support group on 7 May 2023.",
        "episodic",
        priority=75,
        metadata={"activity_start": "2023-05-07"},
    )
    openai_server.enqueue_chat(scenes(event))

    drafts = await LLMExtractor(model).extract(WINDOW)

    assert drafts == [
        AtomDraft(
            type=AtomType.EPISODIC,
            content="Caroline attended an LGBTQ support group on 7 May 2023.",
            priority=75,
            scene_name="support group",
            source_message_ids=("m3",),
            metadata={"activity_start": "2023-05-07"},
        )
    ]


async def test_the_request_names_the_model_the_new_ids_and_marks_background(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat('{"scenes": []}')

    assert await LLMExtractor(model).extract(WINDOW) == []

    [body] = openai_server.bodies()
    assert body["model"] == "extract-model"
    assert body["response_format"]["type"] == "json_schema"
    assert body["response_format"]["json_schema"]["name"] == "memory_extraction"
    system, user = body["messages"][0]["content"], body["messages"][1]["content"]
    assert "activity_start" in system  # the field guide made it into the prompt
    background, new = user.split("NEW MESSAGES")
    assert "do NOT extract" in background
    assert "[b1] (2023-05-08T13:56:00+00:00, Monday) Melanie: Hey Caroline" in background
    assert "[m3] (2023-05-08T14:06:00+00:00, Monday) Caroline: I went to" in new
    assert "[m4]" in new
    assert "[b1]" not in new


@pytest.mark.parametrize(
    "wrap",
    [
        lambda text: f"```json\n{text}\n```",
        lambda text: f"Here are the memories I found:\n{text}\nLet me know if you need more.",
    ],
    ids=["fenced", "prose"],
)
async def test_fenced_and_prose_wrapped_replies_are_parsed(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer, wrap: Any
) -> None:
    openai_server.enqueue_chat(wrap(scenes(memory("Caroline values her support group."))))
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [d.content for d in drafts] == ["Caroline values her support group."]


async def test_trailing_commas_and_raw_control_characters_are_parsed(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    reply = (
        '[{"scene_name": "art", "memories": [{"content": "Melanie paints\nsunrises.", '
        '"type": "persona", "source_message_ids": ["m4"],},],},]'
    )
    openai_server.enqueue_chat(reply)
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [(d.content, d.scene_name) for d in drafts] == [("Melanie paints\nsunrises.", "art")]


async def test_malformed_json_raises_parse_error(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat('{"scenes": [{"scene_name": "art", "memories": [')
    with pytest.raises(ParseError) as caught:
        await LLMExtractor(model).extract(WINDOW)
    assert caught.value.reply.startswith('{"scenes"')


async def test_an_item_with_an_invalid_type_is_dropped_and_the_others_kept(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue_chat(
        scenes(memory("Caroline is brave."), memory("Something odd.", "gossip"), memory("Melanie paints."))
    )
    with caplog.at_level(logging.WARNING):
        drafts = await LLMExtractor(model).extract(WINDOW)
    assert [d.content for d in drafts] == ["Caroline is brave.", "Melanie paints."]
    assert "dropped 1 of 3 memories" in caplog.text


async def test_legacy_type_names_are_normalised(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    legacy = ["episode", "Event", "preference", "fact", "profile", "instruction"]
    openai_server.enqueue_chat(scenes(*(memory(f"Memory {i}.", kind) for i, kind in enumerate(legacy))))
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [d.type for d in drafts] == [
        AtomType.EPISODIC,
        AtomType.EPISODIC,
        AtomType.PERSONA,
        AtomType.PERSONA,
        AtomType.PERSONA,
        AtomType.INSTRUCTION,
    ]


async def test_priorities_are_clamped(model: OpenAIChatModel, openai_server: ScriptedOpenAIServer) -> None:
    openai_server.enqueue_chat(
        scenes(*(memory(f"Memory {p}.", priority=p) for p in (250, -7, "80", 33.6, -1)))
    )
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [d.priority for d in drafts] == [100, -1, 80, 34, -1]


async def test_source_ids_are_limited_to_the_new_messages(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat(
        scenes(
            memory("Cited new and background.", source_message_ids=["b1", "[m4]", "m4", "zzz"]),
            memory("Cited background only.", source_message_ids=["b1"]),
        )
    )
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [d.source_message_ids for d in drafts] == [("m4",), ("m3", "m4")]


async def test_memories_without_a_scene_segment_are_kept(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat(json.dumps([memory("Caroline is brave.")]))
    drafts = await LLMExtractor(model).extract(WINDOW)
    assert [(d.content, d.scene_name) for d in drafts] == [("Caroline is brave.", "")]


# --- dedup ----------------------------------------------------------------------------------------


def atom(id: str, content: str) -> Atom:
    return Atom(id, TENANT, AtomType.PERSONA, content)


DRAFTS = [
    AtomDraft(AtomType.PERSONA, "Caroline loves hiking in the Alps."),
    AtomDraft(AtomType.PERSONA, "Melanie has two kids."),
    AtomDraft(AtomType.EPISODIC, "Melanie ran a charity race on 20 May 2023."),
]
CANDIDATES = [[atom("a1", "Caroline likes hiking.")], [], [atom("a2", "Melanie ran a race.")]]


def decisions(*items: dict[str, Any]) -> str:
    return json.dumps({"decisions": list(items)})


async def test_no_candidates_means_no_model_call(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    assert await LLMDeduplicator(model).decide(DRAFTS, [[], [], []]) == []
    assert openai_server.requests == []


async def test_the_prompt_shows_only_drafts_with_candidates_by_index_and_id(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat(decisions())
    await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)
    user = openai_server.bodies()[0]["messages"][1]["content"]
    assert "NEW MEMORY 0 [persona]: Caroline loves hiking in the Alps." in user
    assert "- id=a1 [persona]: Caroline likes hiking." in user
    assert "NEW MEMORY 2 [episodic]" in user
    assert "id=a2" in user
    assert "NEW MEMORY 1" not in user


async def test_decisions_are_mapped_and_merge_without_text_becomes_update(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat(
        decisions(
            {"index": 2, "action": "MERGE", "target_ids": ["a2"], "merged_content": None},
            {"index": 0, "action": "update", "target_ids": ["a1"]},
        )
    )
    result = await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)
    assert result == [
        DedupDecision(0, DedupAction.UPDATE, ("a1",)),
        DedupDecision(2, DedupAction.UPDATE, ("a2",)),
    ]


async def test_a_merge_keeps_its_merged_content(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    merged = "Melanie ran a charity race on 20 May 2023."
    openai_server.enqueue_chat(
        decisions({"index": 2, "action": "merge", "target_ids": ["a2"], "merged_content": merged})
    )
    result = await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)
    assert result == [DedupDecision(2, DedupAction.MERGE, ("a2",), merged)]


async def test_target_ids_outside_the_drafts_candidates_are_rejected(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer, caplog: pytest.LogCaptureFixture
) -> None:
    openai_server.enqueue_chat(
        decisions(
            {"index": 0, "action": "update", "target_ids": ["ghost"]},
            {"index": 2, "action": "update", "target_ids": ["a1", "a2"]},  # a1 belongs to draft 0
        )
    )
    with caplog.at_level(logging.WARNING):
        result = await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)
    assert result == [
        DedupDecision(0, DedupAction.STORE),
        DedupDecision(2, DedupAction.UPDATE, ("a2",)),
    ]
    assert "ghost" in caplog.text


async def test_decisions_for_drafts_without_candidates_or_repeated_are_ignored(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat(
        decisions(
            {"index": 1, "action": "skip"},
            {"index": 7, "action": "skip"},
            {"index": 0, "action": "skip", "target_ids": ["a1"]},
            {"index": 0, "action": "store"},
        )
    )
    result = await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)
    assert result == [DedupDecision(0, DedupAction.SKIP)]


async def test_an_unparseable_dedup_reply_raises_parse_error(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat("I think they are all new.")
    with pytest.raises(ParseError):
        await LLMDeduplicator(model).decide(DRAFTS, CANDIDATES)


async def test_a_dedup_reply_cut_at_max_tokens_keeps_the_decisions_it_completed() -> None:
    done = json.dumps({"index": 0, "action": "skip", "target_ids": ["a1"]})
    cut = ChatReply('{"decisions": [' + done + ', {"index": 2, "action": "upd', finish_reason="length")
    dedup = LLMDeduplicator(ScriptedChatModel(cut))

    result = await dedup.decide(DRAFTS, CANDIDATES)

    assert result == [DedupDecision(0, DedupAction.SKIP)]  # draft 2, not reached, is stored
    assert dedup.degradations.snapshot() == {"truncated_replies": 1}
