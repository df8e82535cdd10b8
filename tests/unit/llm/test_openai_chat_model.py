"""OpenAIChatModel through the real openai SDK, against a scripted HTTP server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest

from memstrata.errors import ConfigError, ModelError
from memstrata.llm.openai_compat import OpenAIChatModel
from memstrata.models import ChatMessage, ToolCall, ToolSpec
from tests.support.openai_server import ScriptedOpenAIServer

API_KEY = "sk-test-secret-4242"
HELLO = [ChatMessage("system", "be brief"), ChatMessage("user", "hello there")]


@pytest.fixture
async def model(openai_server: ScriptedOpenAIServer) -> AsyncIterator[OpenAIChatModel]:
    async with aclosing(OpenAIChatModel(openai_server.base_url, "", "test-model", timeout_seconds=5)) as chat:
        yield chat


async def test_reply_content_and_usage_come_back(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat('{"ok": true}')

    reply = await model.complete(HELLO, json_mode=True)

    assert reply.content == '{"ok": true}'
    assert (reply.prompt_tokens, reply.completion_tokens) == (4, 2)
    [body] = openai_server.bodies()
    assert body["model"] == "test-model"
    assert body["messages"] == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "hello there"},
    ]
    assert body["response_format"] == {"type": "json_object"}
    assert body["max_tokens"] == 4096
    assert "tools" not in body


async def test_empty_api_key_sends_a_placeholder(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_chat("hi")
    await model.complete(HELLO)
    auth = openai_server.requests[0].headers["authorization"]
    assert auth.startswith("Bearer ")
    assert auth.removeprefix("Bearer ").strip()


async def test_json_mode_off_sends_no_response_format(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.enqueue_chat("a")
    openai_server.enqueue_chat("b")
    async with aclosing(OpenAIChatModel(openai_server.base_url, "", "m", json_mode=False)) as chat:
        await chat.complete(HELLO, json_mode=True)  # the instance does not allow it
    async with aclosing(OpenAIChatModel(openai_server.base_url, "", "m")) as chat:
        await chat.complete(HELLO)  # the caller did not ask for it
    assert all("response_format" not in body for body in openai_server.bodies())


async def test_tools_go_out_and_tool_calls_come_back(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    spec = ToolSpec(
        "read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}}
    )
    openai_server.enqueue_chat("", tool_calls=[("read_file", '{"path": "a.md"}')])
    openai_server.enqueue_chat("done")

    first = await model.complete([ChatMessage("user", "read a.md")], tools=[spec])
    assert first.tool_calls == (ToolCall("call_0", "read_file", '{"path": "a.md"}'),)
    history = [
        ChatMessage("user", "read a.md"),
        ChatMessage("assistant", "", tool_calls=first.tool_calls),
        ChatMessage("tool", "# A", tool_call_id="call_0"),
    ]
    second = await model.complete(history, tools=[spec])

    assert second.content == "done"
    sent_tools, sent_history = openai_server.bodies()[0]["tools"], openai_server.bodies()[1]["messages"]
    assert sent_tools == [
        {
            "type": "function",
            "function": {
                "name": "read_file",
                "description": "Read a file",
                "parameters": dict(spec.parameters),
            },
        }
    ]
    assert sent_history[1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_0",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.md"}'},
            }
        ],
    }
    assert sent_history[2] == {"role": "tool", "content": "# A", "tool_call_id": "call_0"}


async def test_http_500_is_a_model_error_that_names_status_model_and_url_but_not_the_key(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.enqueue_error(500, f"upstream broke while using key {API_KEY}")
    async with aclosing(OpenAIChatModel(openai_server.base_url, API_KEY, "test-model", retries=0)) as chat:
        with pytest.raises(ModelError) as caught:
            await chat.complete(HELLO)

    message = str(caught.value)
    assert "HTTP 500" in message
    assert "test-model" in message
    assert openai_server.base_url in message
    assert API_KEY not in message
    assert len(openai_server.requests) == 1  # no SDK retries; the adapter's own are off here


async def test_timeout_is_a_model_error_and_returns_quickly(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.enqueue_delay(10, "too late")
    async with aclosing(
        OpenAIChatModel(openai_server.base_url, "", "test-model", timeout_seconds=0.5, retries=0)
    ) as chat:
        started = time.monotonic()
        with pytest.raises(ModelError, match="timed out"):
            await chat.complete(HELLO)
    assert time.monotonic() - started < 3


async def test_unreachable_server_is_a_model_error() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    async with aclosing(OpenAIChatModel(f"http://127.0.0.1:{port}/v1", "", "test-model", retries=0)) as chat:
        with pytest.raises(ModelError, match="cannot connect"):
            await chat.complete(HELLO)


async def test_rejected_response_format_is_retried_without_it_and_never_sent_again(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "response_format json_object is not supported by this model")
    openai_server.enqueue_chat('{"a": 1}')
    openai_server.enqueue_chat('{"b": 2}')

    first = await model.complete(HELLO, json_mode=True)
    second = await model.complete(HELLO, json_mode=True)

    assert (first.content, second.content) == ('{"a": 1}', '{"b": 2}')
    sent = ["response_format" in body for body in openai_server.bodies()]
    assert sent == [True, False, False]


async def test_a_400_that_persists_without_response_format_keeps_json_mode(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "messages[0].content: bad value")
    openai_server.enqueue_error(400, "messages[0].content: bad value")
    openai_server.enqueue_chat("{}")

    with pytest.raises(ModelError, match="HTTP 400: messages"):
        await model.complete(HELLO, json_mode=True)
    await model.complete(HELLO, json_mode=True)

    sent = ["response_format" in body for body in openai_server.bodies()]
    assert sent == [True, False, True]


async def test_a_400_without_json_mode_is_not_retried(
    model: OpenAIChatModel, openai_server: ScriptedOpenAIServer
) -> None:
    openai_server.enqueue_error(400, "bad request")
    with pytest.raises(ModelError, match="HTTP 400"):
        await model.complete(HELLO)
    assert len(openai_server.requests) == 1


def test_a_model_name_is_required() -> None:
    with pytest.raises(ConfigError, match=r"llm\.model"):
        OpenAIChatModel("http://127.0.0.1:1/v1", "", "")


def test_one_model_serves_successive_event_loops(openai_server: ScriptedOpenAIServer) -> None:
    # The server keeps connections alive: a client pooled on a closed loop would fail here.
    chat = OpenAIChatModel(openai_server.base_url, "", "test-model", timeout_seconds=5)
    for text in ("one", "two", "three"):
        openai_server.enqueue_chat(text)
        assert asyncio.run(chat.complete(HELLO)).content == text
