"""What real OpenAI-compatible servers do differently, played by the scripted server on 127.0.0.1:
structured outputs supported or not, context-length and tool refusals in each server's words,
transient failures retried with backoff, truncated replies reported."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest

from memstrata.errors import ContextLengthError, ModelError, ToolsUnsupportedError
from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.models import ChatMessage, ResponseSchema, ToolSpec
from tests.support.openai_server import ScriptedOpenAIServer

HELLO = [ChatMessage("user", "hello")]
SCHEMA = ResponseSchema("answer", {"type": "object", "properties": {"a": {"type": "integer"}}})
TOOL = ToolSpec("list_files", "List the files.", {"type": "object", "properties": {}})


@pytest.fixture
async def model(openai_server: ScriptedOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    chat = OpenAIChatModel(openai_server.base_url, "", "m", timeout_seconds=5, backoff_seconds=0.01)
    async with aclosing(chat):
        yield chat


def formats(server: ScriptedOpenAIServer) -> list[str]:
    return [b.get("response_format", {}).get("type", "none") for b in server.bodies()]


async def test_a_schema_call_sends_the_json_schema(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat('{"a": 1}')
    await model.complete(HELLO, schema=SCHEMA)
    [body] = openai_server.bodies()
    assert body["response_format"] == {
        "type": "json_schema",
        "json_schema": {"name": "answer", "schema": dict(SCHEMA.schema)},
    }


async def test_a_server_without_json_schema_falls_back_to_json_mode_once_and_for_good(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "response_format type json_schema is not supported")
    openai_server.enqueue_chat('{"a": 1}')
    openai_server.enqueue_chat('{"a": 2}')

    await model.complete(HELLO, schema=SCHEMA)
    await model.complete(HELLO, schema=SCHEMA)

    assert formats(openai_server) == ["json_schema", "json_object", "json_object"]
    assert model.structured_output == "json_object"
    assert model.degradations.snapshot() == {"structured_output_fallback": 1}


async def test_a_server_without_any_response_format_gets_none_after_probing(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "unknown field response_format")
    openai_server.enqueue_error(400, "unknown field response_format")
    openai_server.enqueue_chat('{"a": 1}')
    openai_server.enqueue_chat('{"a": 2}')

    await model.complete(HELLO, schema=SCHEMA)
    await model.complete(HELLO, json_mode=True)

    assert formats(openai_server) == ["json_schema", "json_object", "none", "none"]


async def test_a_fixed_setting_never_probes(openai_server: ScriptedOpenAIServer) -> None:
    chat = OpenAIChatModel(openai_server.base_url, "", "m", structured_output="json_object", retries=0)
    openai_server.enqueue_error(400, "response_format json_object unsupported")
    async with aclosing(chat):
        with pytest.raises(ModelError, match="HTTP 400"):
            await chat.complete(HELLO, schema=SCHEMA)
    assert formats(openai_server) == ["json_object"]


@pytest.mark.parametrize(
    "words",
    [
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "This model's maximum context length is 2048 tokens. However, you requested 3000 tokens.",  # vLLM
        {"error": {"message": "Input too long", "code": "context_length_exceeded"}},  # OpenAI
    ],
)
async def test_context_length_errors_in_each_servers_words_are_context_length_errors(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer, words: str | dict[str, object]
) -> None:
    openai_server.enqueue_error(400, words)
    with pytest.raises(ContextLengthError):
        await model.complete(HELLO, schema=SCHEMA)
    assert len(openai_server.requests) == 1  # not retried at a lesser format: it would not fit either
    assert model.structured_output == "json_schema"


async def test_a_server_that_refuses_tools_says_so(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "tools param requires --jinja flag")
    with pytest.raises(ToolsUnsupportedError, match="jinja"):
        await model.complete(HELLO, tools=[TOOL])


async def test_transient_failures_are_retried_with_backoff_then_succeed(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(503, "loading model")
    openai_server.enqueue_error(429, "slow down")
    openai_server.enqueue_chat("fine")

    reply = await model.complete(HELLO)

    assert reply.content == "fine"
    assert len(openai_server.requests) == 3
    assert model.degradations.get("model_retries") == 2


async def test_a_slow_first_token_is_retried_after_a_timeout(openai_server: ScriptedOpenAIServer) -> None:
    chat = OpenAIChatModel(openai_server.base_url, "", "m", timeout_seconds=0.3, retries=1, backoff_seconds=0)
    openai_server.enqueue_delay(5, "too late")
    openai_server.enqueue_chat("on time")
    started = time.monotonic()
    async with aclosing(chat):
        assert (await chat.complete(HELLO)).content == "on time"
    assert time.monotonic() - started < 3


async def test_retries_end_in_a_model_error(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    for _ in range(3):
        openai_server.enqueue_error(500, "broken")
    with pytest.raises(ModelError, match="HTTP 500"):
        await model.complete(HELLO)
    assert len(openai_server.requests) == 3  # one call and two retries


async def test_a_truncated_reply_says_length_and_a_call_can_raise_max_tokens(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat('{"a": [1, 2', finish_reason="length")
    reply = await model.complete(HELLO, json_mode=True, max_tokens=64)
    assert reply.finish_reason == "length"
    assert openai_server.bodies()[0]["max_tokens"] == 64
