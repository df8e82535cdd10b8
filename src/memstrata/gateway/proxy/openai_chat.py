"""OpenAI Chat Completions (``POST /v1/chat/completions``): the dialect of most OpenAI-compatible
servers (vLLM, llama.cpp, Ollama) and of LangChain's ``ChatOpenAI``.

System and developer messages are the system prompt; the injected block goes at the end of the
first one (one is added first in the list when there is none). Memories go before the text of
the latest user message with text. The answer is ``choices[0].message``, or that message built
from the stream's ``delta`` s.
"""

from __future__ import annotations

import copy
from typing import Any

from memstrata.gateway.proxy.dialect import (
    Body,
    Injection,
    ToolPolicy,
    Turn,
    append_system,
    content_text,
    conversation,
    joined,
    prepend_text,
)
from memstrata.gateway.proxy.sse import Event
from memstrata.layers.host_turns import TurnMessage

_SYSTEM_ROLES = frozenset({"system", "developer"})
_TEXT_PARTS = frozenset({"text"})  # image, audio, file and refusal parts carry no conversation text


def message(m: Any, tools: ToolPolicy) -> TurnMessage:
    """One request or answer message as memstrata sees it (the same rendering either way)."""
    if not isinstance(m, dict):
        return TurnMessage("other", "")
    role = str(m.get("role") or "other")
    text = content_text(m.get("content"), _TEXT_PARTS)
    if role == "assistant":
        calls = [c.get("function") or {} for c in m.get("tool_calls") or () if isinstance(c, dict)]
        rendered = [
            tools.render("tool call", str(f.get("name", "")), str(f.get("arguments", ""))) for f in calls
        ]
        return TurnMessage("assistant", joined([text, *rendered]))
    if role == "tool":
        kept = tools.render("tool result", str(m.get("tool_call_id", "")), text)
        return TurnMessage("assistant" if kept else "tool", kept)
    return TurnMessage(role, text)


class OpenAIChat:
    family = "openai"

    def read(self, body: Body, tools: ToolPolicy) -> Turn:
        raw = body.get("messages")
        items = conversation(message(m, tools) for m in raw) if isinstance(raw, list) else ()
        system = joined([m.content for m in items if m.role in _SYSTEM_ROLES])
        # The prompt is the latest user message with text; tool results after it (an agent's
        # loop) continue that turn.
        prompt = max((i for i, m in enumerate(items) if m.role == "user" and m.content.strip()), default=None)
        return Turn(items, system, prompt)

    def inject(self, body: Body, turn: Turn, injection: Injection) -> Body:
        out = dict(body)
        messages = copy.copy(body["messages"])
        if injection.memories and turn.prompt_index is not None:
            m = dict(messages[turn.prompt_index])
            m["content"] = prepend_text(m.get("content"), injection.memories, "text")
            messages[turn.prompt_index] = m
        if injection.system:
            first = next(
                (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") in _SYSTEM_ROLES),
                None,
            )
            if first is None:
                messages.insert(0, {"role": "system", "content": injection.system})
            else:
                m = dict(messages[first])
                m["content"] = append_system(m.get("content"), injection.system)
                messages[first] = m
        out["messages"] = messages
        return out

    def answer(self, body: Any, tools: ToolPolicy) -> list[TurnMessage]:
        choices = body.get("choices") if isinstance(body, dict) else None
        if not choices or not isinstance(choices[0], dict):
            return []
        return [message(choices[0].get("message"), tools)]

    def accumulator(self, tools: ToolPolicy) -> ChatDeltas:
        return ChatDeltas(tools)

    def streaming(self, body: Body) -> bool:
        return body.get("stream") is True


class ChatDeltas:
    """``choices[0].message`` rebuilt from a stream's chunks (its content and tool calls)."""

    def __init__(self, tools: ToolPolicy) -> None:
        self._tools = tools
        self._text: list[str] = []
        self._calls: dict[int, dict[str, str]] = {}

    def feed(self, event: Event) -> None:
        chunk = event.json()
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not choices or not isinstance(choices[0], dict) or choices[0].get("index", 0) != 0:
            return
        delta = choices[0].get("delta") or {}
        if isinstance(delta.get("content"), str):
            self._text.append(delta["content"])
        for call in delta.get("tool_calls") or ():
            f = call.get("function") or {}
            slot = self._calls.setdefault(int(call.get("index", 0)), {"name": "", "arguments": ""})
            slot["name"] += f.get("name") or ""
            slot["arguments"] += f.get("arguments") or ""

    def messages(self) -> list[TurnMessage]:
        calls = [{"function": self._calls[i]} for i in sorted(self._calls)]
        built = {"role": "assistant", "content": "".join(self._text), "tool_calls": calls}
        return [message(built, self._tools)]
