"""The proxy's pure parts: the SSE tap, session ids, auxiliary requests, and what each dialect
reads from and writes into a body."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memstrata.errors import InputError
from memstrata.gateway.proxy.anthropic_messages import AnthropicMessages, ContentBlocks
from memstrata.gateway.proxy.capture import AUXILIARY, auxiliary
from memstrata.gateway.proxy.dialect import Injection, ToolPolicy
from memstrata.gateway.proxy.openai_chat import ChatDeltas, OpenAIChat
from memstrata.gateway.proxy.openai_responses import OpenAIResponses
from memstrata.gateway.proxy.session import session_key
from memstrata.gateway.proxy.sse import SseTap, is_final
from tests.support.llm_upstream import Reply, chat_body, chat_events, message_body, message_events

NO_TOOLS, TOOLS = ToolPolicy(), ToolPolicy(keep=True, chars=60)


def test_the_tap_finds_events_split_anywhere_across_chunks() -> None:
    raw = b'event: a\r\ndata: {"x": 1}\r\n\r\n: comment\n\ndata: line1\ndata: line2\n\ndata: [DONE]'
    for cut in range(1, len(raw)):
        tap = SseTap()
        events = [*tap.feed(raw[:cut]), *tap.feed(raw[cut:]), *tap.close()]
        assert [(e.name, e.data) for e in events] == [("a", '{"x": 1}'), ("", "line1\nline2"), ("", "[DONE]")]


def test_sessions_come_from_the_header_then_the_harness_then_the_conversation() -> None:
    assert session_key({"x-memstrata-session": "s1", "x-session-id": "h"}, "sys", "hi") == "s1"
    by_harness = session_key({"x-claude-code-session-id": "abc"}, "sys", "hi")
    assert by_harness == session_key({"x-claude-code-session-id": "abc"}, "other", "else")
    derived = session_key({}, "sys", "hi")
    assert derived == session_key({}, "sys", "hi") != session_key({}, "sys", "hello")
    with pytest.raises(InputError):
        session_key({"x-memstrata-session": " "}, "", "")


def test_title_summary_and_turnless_requests_are_auxiliary() -> None:
    chat = OpenAIChat()

    def turn(system: str, prompt: str) -> object:
        body = {"messages": [{"role": "system", "content": system}, {"role": "user", "content": prompt}]}
        return auxiliary(chat.read(body, NO_TOOLS), AUXILIARY)

    assert turn("Please write a 5-10 word title for the following conversation:", "x") is not None
    assert turn("", "Create a detailed summary of the conversation so far.") is not None
    assert turn("Analyze if this message indicates a new conversation topic.", "x") is not None
    assert turn("You are a coding agent.", "Fix the title of my README") is None
    assert (
        auxiliary(chat.read({"messages": [{"role": "system", "content": "s"}]}, NO_TOOLS), AUXILIARY)
        == "no user turn"
    )


def test_claude_codes_quota_probe_and_codex_requests_not_of_a_turn_are_auxiliary() -> None:
    chat = OpenAIChat()
    probe = chat.read({"messages": [{"role": "user", "content": "quota"}]}, NO_TOOLS)
    assert auxiliary(probe, AUXILIARY) is not None
    said = chat.read({"messages": [{"role": "user", "content": "quota for the bees is three"}]}, NO_TOOLS)
    assert auxiliary(said, AUXILIARY) is None

    def kind(metadata: str) -> str | None:
        return auxiliary(said, AUXILIARY, {"x-codex-turn-metadata": metadata})

    assert kind('{"request_kind": "compact", "session_id": "s"}') == "Codex request_kind 'compact'"
    assert kind('{"request_kind": "turn"}') is None
    assert (
        kind('{"request_kind": "turn", "thread_source": "thread_title"}')
        == "Codex thread_source 'thread_title'"
    )
    assert kind('{"request_kind": "turn", "thread_source": "user"}') is None
    for unreadable in ("not json", "[1, 2]", '{"request_kind": 7}', ""):
        assert kind(unreadable) is None  # not Codex's metadata: judged as any other request


def test_openai_chat_injects_at_the_end_of_the_system_prompt_and_before_the_prompt() -> None:
    body: dict[str, Any] = {
        "messages": [
            {"role": "system", "content": "Sys."},
            {"role": "user", "content": "old"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "result"},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "new"},
                    {"type": "image_url", "image_url": {"url": "u"}},
                ],
            },
        ]
    }
    d = OpenAIChat()
    turn = d.read(body, NO_TOOLS)
    assert (turn.prompt_index, turn.prompt, turn.system) == (4, "new", "Sys.")
    out = d.inject(body, turn, Injection("BLOCK", "MEM"))
    assert out["messages"][0]["content"] == "Sys.\n\nBLOCK"
    assert out["messages"][4]["content"][0] == {"type": "text", "text": "MEM"}
    assert out["messages"][4]["content"][1:] == body["messages"][4]["content"]
    assert body["messages"][0]["content"] == "Sys."  # the client's body is not changed
    assert [m.role for m in turn.messages] == ["system", "user", "assistant", "tool", "user"]
    kept = d.read(body, TOOLS).messages
    assert kept[2].content == "[tool call] f: {}" and kept[3].content == "[tool result] c1: result"


def test_anthropic_memories_go_after_tool_results_and_the_block_after_cache_breakpoints() -> None:
    system = [{"type": "text", "text": "S", "cache_control": {"type": "ephemeral"}}]
    content = [
        {"type": "tool_result", "tool_use_id": "t", "content": "r"},
        {"type": "text", "text": "and now?"},
    ]
    body = {"system": system, "messages": [{"role": "user", "content": content}]}
    d = AnthropicMessages()
    turn = d.read(body, NO_TOOLS)
    out = d.inject(body, turn, Injection("BLOCK", "MEM"))
    assert out["system"] == [*system, {"type": "text", "text": "BLOCK"}]
    assert [b["type"] for b in out["messages"][0]["content"]] == ["tool_result", "text", "text"]
    assert out["messages"][0]["content"][1]["text"] == "MEM"


def test_a_streamed_answer_is_read_as_the_same_message_the_client_resends() -> None:
    reply = Reply(text="Sure thing", tool="lookup")
    for tools in (NO_TOOLS, TOOLS):
        chat = ChatDeltas(tools)
        for event in SseTap().feed("".join(chat_events(1, "m", reply)).encode()):
            chat.feed(event)
        assert chat.messages() == OpenAIChat().answer(chat_body(1, "m", reply), tools)
        blocks = ContentBlocks(tools)
        for event in SseTap().feed("".join(message_events(1, "m", reply)).encode()):
            blocks.feed(event)
        assert blocks.messages() == AnthropicMessages().answer(message_body(1, "m", reply), tools)


def test_responses_input_string_and_instructions() -> None:
    d = OpenAIResponses()
    body = {"input": "hello", "instructions": "Be short."}
    turn = d.read(body, NO_TOOLS)
    out = d.inject(body, turn, Injection("BLOCK", "MEM"))
    assert out == {"input": "MEM\n\nhello", "instructions": "Be short.\n\nBLOCK"}
    items = {
        "input": [
            {"type": "function_call", "name": "f", "arguments": "{}"},
            {"role": "user", "content": [{"type": "input_text", "text": "q"}]},
        ]
    }
    t2 = d.read(items, NO_TOOLS)
    assert t2.prompt_index == 1
    assert (
        json.dumps(d.inject(items, t2, Injection("", "MEM"))["input"][1]["content"][0])
        == '{"type": "input_text", "text": "MEM"}'
    )


def test_the_final_event_of_each_api_is_recognised_and_nothing_before_it() -> None:
    chat = 'data: {"choices": [{"delta": {"content": "hi"}}]}\n\ndata: [DONE]\n\n'
    anthropic = (
        'event: content_block_stop\ndata: {"type": "content_block_stop", "index": 0}\n\n'
        'event: message_delta\ndata: {"type": "message_delta"}\n\n'
        'event: message_stop\ndata: {"type": "message_stop"}\n\n'
    )
    responses = (
        'event: response.output_text.delta\ndata: {"type": "response.output_text.delta"}\n\n'
        'event: response.completed\ndata: {"type": "response.completed", "response": {}}\n\n'
    )
    untitled = 'data: {"type": "response.incomplete"}\n\n'  # the type alone, no event name
    for stream in (chat, anthropic, responses, untitled):
        events = list(SseTap().feed(stream.encode()))
        assert [is_final(e) for e in events] == [False] * (len(events) - 1) + [True]
