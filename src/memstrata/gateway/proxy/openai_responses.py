"""OpenAI Responses (``POST /v1/responses``): Codex and newer OpenAI SDK code.

The system prompt is ``instructions`` (the injected block goes at its end) plus any system or
developer items of ``input``; ``input`` is a string (one user message) or a list of items, where
messages, function calls, their outputs and reasoning each take one position. Memories go before
the text of the latest user message. The answer is the response's ``output`` items, each at its
own position (a client that resends them as input finds them stored already), from the body or
from the stream's ``response.completed`` event.

A request that continues a stored response (``previous_response_id``) sends only its new items:
its session is then named by a session header, or derived from those items alone.
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
_TEXT_PARTS = frozenset({"input_text", "output_text", "text"})


def item(it: Any, tools: ToolPolicy) -> TurnMessage:
    """One input or output item as memstrata sees it (the same rendering either way)."""
    if not isinstance(it, dict):
        return TurnMessage("other", "")
    kind = it.get("type", "message")
    if kind == "message" or (kind is None and "role" in it):
        return TurnMessage(str(it.get("role") or "other"), content_text(it.get("content"), _TEXT_PARTS))
    if kind == "function_call":
        kept = tools.render("tool call", str(it.get("name", "")), str(it.get("arguments", "")))
    elif kind == "function_call_output":
        out = it.get("output")
        kept = tools.render(
            "tool result",
            str(it.get("call_id", "")),
            out if isinstance(out, str) else content_text(out, _TEXT_PARTS),
        )
    else:
        return TurnMessage(str(kind), "")  # reasoning, web search calls, references: not conversation
    return TurnMessage("assistant" if kept else "tool", kept)


def _items(body: Body) -> list[Any]:
    raw = body.get("input")
    if isinstance(raw, str):
        return [{"role": "user", "content": raw}]
    return list(raw) if isinstance(raw, list) else []


class OpenAIResponses:
    family = "openai"

    def read(self, body: Body, tools: ToolPolicy) -> Turn:
        items = conversation(item(it, tools) for it in _items(body))
        instructions = body.get("instructions")
        system = joined(
            [
                instructions if isinstance(instructions, str) else "",
                *(m.content for m in items if m.role in _SYSTEM_ROLES),
            ]
        )
        prompt = max((i for i, m in enumerate(items) if m.role == "user" and m.content.strip()), default=None)
        return Turn(items, system, prompt)

    def inject(self, body: Body, turn: Turn, injection: Injection) -> Body:
        out = dict(body)
        if injection.memories and turn.prompt_index is not None:
            raw = body["input"]
            if isinstance(raw, str):
                out["input"] = f"{injection.memories}\n\n{raw}"
            else:
                items = copy.copy(raw)
                it = dict(items[turn.prompt_index])
                it["content"] = prepend_text(it.get("content"), injection.memories, "input_text")
                items[turn.prompt_index] = it
                out["input"] = items
        if injection.system:
            out["instructions"] = append_system(body.get("instructions"), injection.system)
        return out

    def answer(self, body: Any, tools: ToolPolicy) -> list[TurnMessage]:
        output = body.get("output") if isinstance(body, dict) else None
        return [item(it, tools) for it in output] if isinstance(output, list) else []

    def accumulator(self, tools: ToolPolicy) -> ResponseEvents:
        return ResponseEvents(tools)

    def streaming(self, body: Body) -> bool:
        return body.get("stream") is True


class ResponseEvents:
    """The answer's output items: those of ``response.completed``, else each
    ``response.output_item.done`` seen (a stream cut short)."""

    def __init__(self, tools: ToolPolicy) -> None:
        self._tools = tools
        self._done: list[Any] = []
        self._final: list[Any] | None = None

    def feed(self, event: Event) -> None:
        data = event.json()
        if not isinstance(data, dict):
            return
        if data.get("type") == "response.output_item.done":
            self._done.append(data.get("item"))
        elif data.get("type") == "response.completed":
            output = (data.get("response") or {}).get("output")
            self._final = output if isinstance(output, list) else None

    def messages(self) -> list[TurnMessage]:
        return [item(it, self._tools) for it in (self._final if self._final is not None else self._done)]
