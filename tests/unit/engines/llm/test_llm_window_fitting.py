"""The LLM extractor fits its window to the model: a prompt too long shrinks (background, then a
split window, then a cut message), a truncated reply is asked again with more tokens, then split;
garbage items are dropped one by one; each degradation is counted. Logic only: a scripted model."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from memstrata.engines.llm.l1 import LLMExtractor
from memstrata.engines.llm.l1_prompt import SCHEMA
from memstrata.errors import ContextLengthError, ParseError
from memstrata.llm.scripted import ScriptedChatModel
from memstrata.models import ChatMessage, ChatReply, ExtractionWindow, Message, Role, Tenant

TENANT = Tenant("ana")
T0 = int(datetime(2024, 3, 4, 9, 0, tzinfo=UTC).timestamp() * 1000)


def msg(n: int, text: str = "") -> Message:
    return Message(
        f"m{n}",
        TENANT,
        "s",
        "s1",
        Role.USER,
        text or f"Ana says thing number {n}.",
        T0,
        T0,
        seq=n,
        name="Ana",
    )


def window(new: int, background: int = 0) -> ExtractionWindow:
    return ExtractionWindow(
        TENANT,
        "s",
        tuple(msg(100 + i) for i in range(new)),
        tuple(msg(i) for i in range(background)),
    )


def new_ids(messages: Sequence[ChatMessage]) -> list[str]:
    """The ids of the NEW messages a prompt carries."""
    text = messages[-1].content.split("NEW MESSAGES", 1)[1]
    return [line.split("]")[0][1:] for line in text.splitlines() if line.startswith("[")]


def background_ids(messages: Sequence[ChatMessage]) -> list[str]:
    text = messages[-1].content.split("NEW MESSAGES", 1)[0]
    return [line.split("]")[0][1:] for line in text.splitlines() if line.startswith("[")]


def one_memory_per_message(messages: Sequence[ChatMessage]) -> str:
    memories = [
        {"content": f"Ana said {i}", "type": "episodic", "source_message_ids": [i]} for i in new_ids(messages)
    ]
    return json.dumps({"scenes": [{"scene_name": "talk", "memories": memories}]})


def too_long_above(limit: int) -> ScriptedChatModel:
    """A model whose context takes at most ``limit`` messages (background and new together)."""

    def answer(messages: Sequence[ChatMessage]) -> str:
        if len(new_ids(messages)) + len(background_ids(messages)) > limit:
            raise ContextLengthError("the request exceeds the available context size")
        return one_memory_per_message(messages)

    return ScriptedChatModel(responder=answer)


async def test_every_call_asks_for_the_extraction_schema() -> None:
    model = ScriptedChatModel(responder=one_memory_per_message)
    await LLMExtractor(model).extract(window(2))
    assert model.calls[0].schema == SCHEMA
    assert model.calls[0].json_mode


async def test_a_prompt_too_long_drops_background_before_splitting_the_window() -> None:
    model = too_long_above(4)
    extractor = LLMExtractor(model)

    drafts = await extractor.extract(window(4, background=4))

    assert sorted(d.source_message_ids[0] for d in drafts) == ["m100", "m101", "m102", "m103"]
    sent = [(len(background_ids(c.messages)), len(new_ids(c.messages))) for c in model.calls]
    assert sent == [(4, 4), (2, 4), (1, 4), (0, 4)]
    assert extractor.degradations.snapshot() == {"context_shrunk": 3}


async def test_a_window_that_does_not_fit_alone_is_split_and_every_message_is_read() -> None:
    model = too_long_above(2)
    extractor = LLMExtractor(model)

    drafts = await extractor.extract(window(5))

    assert [d.source_message_ids[0] for d in drafts] == ["m100", "m101", "m102", "m103", "m104"]
    assert extractor.degradations.get("window_split") >= 2


async def test_one_message_too_long_alone_is_cut_in_the_prompt() -> None:
    seen: list[int] = []

    def answer(messages: Sequence[ChatMessage]) -> str:
        seen.append(len(messages[-1].content))
        if len(messages[-1].content) > 400:
            raise ContextLengthError("maximum context length is 512 tokens")
        return one_memory_per_message(messages)

    model = ScriptedChatModel(responder=answer)
    big = ExtractionWindow(TENANT, "s", (msg(1, "word " * 400),))
    extractor = LLMExtractor(model)

    drafts = await extractor.extract(big)

    assert [d.source_message_ids for d in drafts] == [("m1",)]
    assert extractor.degradations.get("message_cut") >= 1
    assert seen == sorted(seen, reverse=True)


def raising(messages: Sequence[ChatMessage]) -> str:
    raise ContextLengthError("the request exceeds the available context size")


async def test_a_message_that_never_fits_raises_after_the_cuts() -> None:
    with pytest.raises(ContextLengthError):
        await LLMExtractor(ScriptedChatModel(responder=raising)).extract(window(1))


async def test_a_truncated_reply_is_asked_again_with_twice_the_tokens() -> None:
    model = ScriptedChatModel(
        ChatReply('{"scenes": [{"scene_name": "x", "memories": [{"content": "Ana', finish_reason="length"),
        responder=one_memory_per_message,
    )
    extractor = LLMExtractor(model, max_tokens=256, max_tokens_cap=4096)

    drafts = await extractor.extract(window(2))

    assert len(drafts) == 2
    assert [c.max_tokens for c in model.calls] == [256, 512]
    assert extractor.degradations.snapshot() == {"truncated_replies": 1}


async def test_a_reply_still_truncated_at_the_cap_splits_the_window() -> None:
    cut = ChatReply('{"scenes": [', finish_reason="length")
    model = ScriptedChatModel(cut, cut, responder=one_memory_per_message)
    extractor = LLMExtractor(model, max_tokens=256, max_tokens_cap=512)

    drafts = await extractor.extract(window(4))

    assert [d.source_message_ids[0] for d in drafts] == ["m100", "m101", "m102", "m103"]
    assert [len(new_ids(c.messages)) for c in model.calls] == [4, 4, 2, 2]
    assert extractor.degradations.snapshot() == {"truncated_replies": 2, "window_split": 1}


async def test_a_truncated_reply_of_one_message_keeps_what_parses_or_fails_cleanly() -> None:
    cut = ChatReply('{"scenes": [{"scene_name": "x", "memories": [', finish_reason="length")
    model = ScriptedChatModel(cut, cut)
    with pytest.raises(ParseError, match="no JSON value"):
        await LLMExtractor(model, max_tokens=256, max_tokens_cap=512).extract(window(1))


def memory(content: str, source: str = "m100") -> str:
    return json.dumps({"content": content, "type": "persona", "source_message_ids": [source]})


async def test_a_truncated_reply_that_repeats_itself_is_kept_not_asked_again() -> None:
    # A small model under greedy sampling writes the same memory until the budget ends.
    looping = '{"scenes": [{"scene_name": "x", "memories": [' + ", ".join(
        [memory("Ana is a nurse."), memory("Ana has a puppy named Max.", "m101"), memory("Ana is a nurse.")]
    )
    model = ScriptedChatModel(ChatReply(looping + ', {"content": "Ana is', finish_reason="length"))
    extractor = LLMExtractor(model, max_tokens=256, max_tokens_cap=4096)

    drafts = await extractor.extract(window(2))

    assert len(model.calls) == 1
    assert sorted({d.content for d in drafts}) == ["Ana has a puppy named Max.", "Ana is a nurse."]
    assert extractor.degradations.snapshot() == {"looping_replies": 1, "truncated_replies": 1}


async def test_a_truncated_reply_looping_inside_a_memory_is_kept_not_asked_again() -> None:
    loop = "Ana is sorry, she did not mean it, but " * 4
    cut = '{"scenes": [{"memories": [' + memory(loop.strip()) + ', {"content": "Ana'
    model = ScriptedChatModel(ChatReply(cut, finish_reason="length"))
    extractor = LLMExtractor(model, max_tokens=256, max_tokens_cap=4096)

    drafts = await extractor.extract(window(2))

    assert len(model.calls) == 1 and len(drafts) == 1
    assert extractor.degradations.snapshot() == {"looping_replies": 1, "truncated_replies": 1}


async def test_a_truncated_reply_of_one_message_keeps_the_memories_it_completed() -> None:
    cut = '{"scenes": [{"scene_name": "x", "memories": [' + memory("Ana is a nurse.") + ', {"content": "An'
    model = ScriptedChatModel(ChatReply(cut, finish_reason="length"), ChatReply(cut, finish_reason="length"))

    drafts = await LLMExtractor(model, max_tokens=256, max_tokens_cap=512).extract(window(1))

    assert [d.content for d in drafts] == ["Ana is a nurse."]
    assert [c.max_tokens for c in model.calls] == [256, 512]


async def test_a_truncated_reply_that_completed_no_valid_memory_fails_the_window() -> None:
    # Not "nothing worth remembering": the window stays pending for a retry.
    cut = ChatReply(
        '{"scenes": [{"scene_name": "x", "memories": [{"content": "Ana", "ids": []', finish_reason="length"
    )
    with pytest.raises(ParseError, match="cut off at max_tokens"):
        await LLMExtractor(ScriptedChatModel(cut, cut), max_tokens=256, max_tokens_cap=512).extract(window(1))


async def test_a_truncated_prose_reply_is_asked_again_once_and_never_split() -> None:
    # No JSON begun in the whole budget: a smaller window would only be more prose.
    prose = ChatReply("[D1:3] Caroline: I am so excited to meet you! " * 20, finish_reason="length")
    model = ScriptedChatModel(prose, prose)
    extractor = LLMExtractor(model, max_tokens=256, max_tokens_cap=512)

    with pytest.raises(ParseError, match="no JSON value"):
        await extractor.extract(window(4))

    assert [c.max_tokens for c in model.calls] == [256, 512]
    assert extractor.degradations.snapshot() == {"truncated_replies": 2}


async def test_garbage_items_are_dropped_one_by_one_and_counted() -> None:
    reply = {
        "scenes": [
            {
                "scene_name": "talk",
                "memories": [
                    {
                        "content": "Ana moved to Porto in March 2024.",
                        "type": "persona",
                        "source_message_ids": ["m100"],
                    },
                    {"content": "", "type": "persona"},
                    {"content": "Ana likes figs.", "type": "feeling"},
                    "not a memory at all",
                    {"content": "Ana works at a bakery.", "type": "persona", "priority": "high"},
                ],
            }
        ]
    }
    extractor = LLMExtractor(ScriptedChatModel(json.dumps(reply)))

    drafts = await extractor.extract(window(1))

    assert [d.content for d in drafts] == ["Ana moved to Porto in March 2024."]
    assert extractor.degradations.snapshot() == {"dropped_items": 4}
