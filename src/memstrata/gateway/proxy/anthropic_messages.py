"""Anthropic Messages (``POST /v1/messages``): Claude Code and the Anthropic SDKs.

The system prompt is the top-level ``system`` (a string or a list of text blocks, often with
``cache_control``); the injected block is appended as one more text block after the client's
own, so every cache breakpoint the client set covers the same bytes as before. Memories go as a
text block before the first text block of the latest user message with text (after any
``tool_result`` blocks, which must lead). The answer is the response's ``content``, or that
content rebuilt from the stream's ``content_block_*`` events.
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
    canonical,
    content_text,
    conversation,
    joined,
    prepend_text,
)
from memstrata.gateway.proxy.sse import Event
from memstrata.layers.host_turns import TurnMessage, strip_harness

_TEXT = frozenset({"text"})  # the text blocks (no tool results, thinking, images or documents)


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _rendered(block: dict[str, Any], tools: ToolPolicy) -> str:
    kind = block.get("type")
    if kind in ("tool_use", "server_tool_use"):
        return tools.render("tool call", str(block.get("name", "")), canonical(block.get("input", {})))
    if kind == "tool_result":
        inner = block.get("content", "")
        return tools.render("tool result", str(block.get("tool_use_id", "")), content_text(inner, _TEXT))
    return ""


def message(m: Any, tools: ToolPolicy) -> TurnMessage:
    """One request or answer message as memstrata sees it (the same rendering either way)."""
    if not isinstance(m, dict):
        return TurnMessage("other", "")
    content = m.get("content")
    parts = [content_text(content, _TEXT), *(_rendered(b, tools) for b in _blocks(content))]
    return TurnMessage(str(m.get("role") or "other"), joined(parts))


class AnthropicMessages:
    family = "anthropic"

    def read(self, body: Body, tools: ToolPolicy) -> Turn:
        raw = body.get("messages")
        raw = raw if isinstance(raw, list) else []
        items = conversation(message(m, tools) for m in raw)
        system = body.get("system")
        system_text = system if isinstance(system, str) else content_text(system, _TEXT)
        prompt = max(
            (
                i
                for i, m in enumerate(raw)
                if isinstance(m, dict)
                and m.get("role") == "user"
                and strip_harness(content_text(m.get("content"), _TEXT)).strip()
            ),
            default=None,
        )
        return Turn(items, system_text, prompt)

    def inject(self, body: Body, turn: Turn, injection: Injection) -> Body:
        out = dict(body)
        if injection.memories and turn.prompt_index is not None:
            messages = copy.copy(body["messages"])
            m = dict(messages[turn.prompt_index])
            m["content"] = prepend_text(m.get("content"), injection.memories, "text")
            messages[turn.prompt_index] = m
            out["messages"] = messages
        if injection.system:
            out["system"] = append_system(body.get("system"), injection.system)
        return out

    def answer(self, body: Any, tools: ToolPolicy) -> list[TurnMessage]:
        if not isinstance(body, dict) or body.get("type") != "message":
            return []
        return [message({"role": "assistant", "content": body.get("content")}, tools)]

    def accumulator(self, tools: ToolPolicy) -> ContentBlocks:
        return ContentBlocks(tools)

    def streaming(self, body: Body) -> bool:
        return body.get("stream") is True


class ContentBlocks:
    """The answer's ``content`` rebuilt from ``content_block_start`` / ``_delta`` events."""

    def __init__(self, tools: ToolPolicy) -> None:
        self._tools = tools
        self._blocks: dict[int, dict[str, Any]] = {}
        self._json: dict[int, list[str]] = {}

    def feed(self, event: Event) -> None:
        data = event.json()
        if not isinstance(data, dict):
            return
        kind, index = data.get("type"), data.get("index")
        if kind == "content_block_start" and isinstance(index, int):
            self._blocks[index] = dict(data.get("content_block") or {})
        elif kind == "content_block_delta" and isinstance(index, int) and index in self._blocks:
            delta = data.get("delta") or {}
            if delta.get("type") == "text_delta":
                block = self._blocks[index]
                block["text"] = str(block.get("text", "")) + str(delta.get("text", ""))
            elif delta.get("type") == "input_json_delta":
                self._json.setdefault(index, []).append(str(delta.get("partial_json", "")))

    def messages(self) -> list[TurnMessage]:
        blocks = []
        for i in sorted(self._blocks):
            block = self._blocks[i]
            if i in self._json:
                block = {**block, "input": "".join(self._json[i]) or "{}"}
            blocks.append(block)
        return [message({"role": "assistant", "content": blocks}, self._tools)]
