"""The chat model's messages, tool calls and replies (the ``ChatModel`` port's vocabulary)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class ChatMessage:
    role: Literal["system", "user", "assistant", "tool"]
    content: str
    tool_call_id: str | None = None
    tool_calls: tuple[ToolCall, ...] = ()


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    arguments: str  # JSON text, as the model wrote it


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    parameters: Mapping[str, Any]  # JSON schema


@dataclass(frozen=True, slots=True)
class ResponseSchema:
    """The JSON schema a reply must follow (a pydantic model's ``model_json_schema()``), for
    servers that constrain their output to it (``response_format`` of type ``json_schema``)."""

    name: str
    schema: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ChatReply:
    """The first choice of a completion. ``finish_reason`` is ``length`` when the reply was cut at
    ``max_tokens`` (its JSON is then usually incomplete)."""

    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0
    finish_reason: str = "stop"
