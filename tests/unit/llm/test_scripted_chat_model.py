"""ScriptedChatModel: the shipped fake chat model (queue, exceptions, call history, responder)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from memstrata.errors import ModelError
from memstrata.llm.scripted import ScriptedCall, ScriptedChatModel
from memstrata.models import ChatMessage, ChatReply, ToolSpec
from memstrata.ports import ChatModel

HI = [ChatMessage("user", "hi")]


async def test_replies_come_in_queue_order() -> None:
    model = ScriptedChatModel("first")
    model.enqueue(ChatReply("second", prompt_tokens=3), "third")

    replies = [await model.complete(HI) for _ in range(3)]

    assert replies == [ChatReply("first"), ChatReply("second", prompt_tokens=3), ChatReply("third")]
    assert model.remaining == 0


async def test_a_queued_exception_is_raised_on_its_turn_only() -> None:
    model = ScriptedChatModel("before", ModelError("down"), "after")

    assert (await model.complete(HI)).content == "before"
    with pytest.raises(ModelError, match="down"):
        await model.complete(HI)
    assert (await model.complete(HI)).content == "after"


async def test_every_call_is_recorded_even_a_failing_one() -> None:
    tool = ToolSpec("list_files", "List files", {"type": "object"})
    model = ScriptedChatModel("ok", TimeoutError())

    await model.complete(HI, json_mode=True)
    with pytest.raises(TimeoutError):
        await model.complete([ChatMessage("user", "again")], tools=[tool])

    assert model.calls == [
        ScriptedCall(tuple(HI), json_mode=True, tools=()),
        ScriptedCall((ChatMessage("user", "again"),), json_mode=False, tools=(tool,)),
    ]


async def test_an_empty_queue_without_responder_is_a_model_error() -> None:
    model = ScriptedChatModel()
    with pytest.raises(ModelError, match="no reply left"):
        await model.complete(HI)


async def test_the_responder_answers_once_the_queue_is_empty() -> None:
    def echo(messages: Sequence[ChatMessage]) -> str:
        return messages[-1].content.upper()

    model: ChatModel = ScriptedChatModel("queued", responder=echo)

    assert (await model.complete(HI)).content == "queued"
    assert (await model.complete([ChatMessage("user", "louder")])).content == "LOUDER"
