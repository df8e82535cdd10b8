"""What the proxy needs from each provider's wire format, and the shapes the dialects share.

A dialect (``openai_chat``, ``openai_responses``, ``anthropic_messages``) reads a request body
into a ``Turn`` (the conversation as memstrata sees it), puts an ``Injection`` into a copy of the
body, reads the assistant's answer back from a response body or from its stream of events, and
words errors in its provider's shape. It touches nothing else in a body: every field it does not
name reaches the upstream as the client sent it.

Positions matter: ``Turn.messages[i]`` is the body's i-th conversation item (system and tool
items included, as non-chat roles), and the answer's messages follow at the next positions, so
the answer stored now and the same message resent by the client next turn get the same stable
id (``layers.host_turns``) and are stored once.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memstrata.gateway.proxy.sse import Event
from memstrata.layers.host_turns import TurnMessage, strip_harness

Body = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """Whether tool calls and results are stored as conversation, and each cut to ``chars``."""

    keep: bool = False
    chars: int = 2000

    def render(self, kind: str, name: str, payload: str) -> str:
        """``[tool call] name: {...}`` (cut), or "" when tools are not kept."""
        if not self.keep:
            return ""
        text = f"[{kind}] {name}: {payload}".strip()
        return text if len(text) <= self.chars else text[: self.chars - 1] + "…"


@dataclass(frozen=True, slots=True)
class Turn:
    """A request's conversation: its items in order (``messages``), the system prompt's text, and
    the turn's prompt: the latest user item with text (``prompt_index`` None when there is none,
    a request that only continues tool calls or has no user turn at all)."""

    messages: tuple[TurnMessage, ...]
    system: str
    prompt_index: int | None

    @property
    def prompt(self) -> str:
        return self.messages[self.prompt_index].content if self.prompt_index is not None else ""

    @property
    def new_from(self) -> int:
        """Where this turn's part of the transcript starts: after the previous user message with
        text (0 when there is none). The prompt is stored from there, so the previous answer as
        the client has it goes in first, in order (when its own capture has not ended yet, or
        never ran: a stream the client left), and is a duplicate otherwise."""
        end = self.prompt_index if self.prompt_index is not None else len(self.messages)
        before = (
            i for i in range(end - 1, -1, -1) if self.messages[i].role == "user" and self.messages[i].content
        )
        return next(before, -1) + 1

    @property
    def first_user(self) -> str:
        return next((m.content for m in self.messages if m.role == "user" and m.content), "")


@dataclass(frozen=True, slots=True)
class Injection:
    """What goes into a request: ``system`` at the end of the system prompt (stable between
    turns), ``memories`` before the text of the turn's prompt (query-dependent)."""

    system: str = ""
    memories: str = ""

    @property
    def empty(self) -> bool:
        return not self.system and not self.memories


class Accumulator(Protocol):
    """Builds the assistant's answer from a stream's events, one at a time."""

    def feed(self, event: Event) -> None: ...

    def messages(self) -> list[TurnMessage]: ...


class Dialect(Protocol):
    family: str  # the error family: "openai" or "anthropic"

    def read(self, body: Body, tools: ToolPolicy) -> Turn: ...

    def inject(self, body: Body, turn: Turn, injection: Injection) -> Body: ...

    def answer(self, body: Any, tools: ToolPolicy) -> list[TurnMessage]: ...

    def accumulator(self, tools: ToolPolicy) -> Accumulator: ...

    def streaming(self, body: Body) -> bool: ...


def conversation(items: Iterable[TurnMessage]) -> tuple[TurnMessage, ...]:
    """``items`` with the harness text (Claude Code's ``<system-reminder>`` blocks, Codex's
    ``<environment_context>``, ...: ``host_turns.HARNESS_RULES``) cut from user messages: the
    turn's prompt, the recall query, the session's first message and the auxiliary checks are
    about what the user wrote. Only what memstrata reads: the body goes upstream as sent."""
    return tuple(
        dataclasses.replace(m, content=strip_harness(m.content)) if m.role == "user" else m for m in items
    )


def joined(parts: Sequence[str]) -> str:
    return "\n".join(p for p in parts if p)


def content_text(content: Any, part_types: Collection[str]) -> str:
    """The text of a message's content: a string as it is, or the text of its parts whose
    ``type`` is one of ``part_types`` (images, audio, tool results and the rest skipped)."""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return joined(
        [
            p["text"]
            for p in content
            if isinstance(p, dict) and p.get("type") in part_types and isinstance(p.get("text"), str)
        ]
    )


def canonical(value: Any) -> str:
    """A tool's input as one stable string, whichever way it arrived (an object, or JSON text
    streamed in pieces)."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def prepend_text(content: Any, text: str, part_type: str) -> Any:
    """``content`` (a string or a list of parts) with ``text`` before its first text part;
    parts that must lead (tool results) stay first."""
    if isinstance(content, str):
        return f"{text}\n\n{content}"
    parts = list(content) if isinstance(content, list) else []
    at = next(
        (i for i, p in enumerate(parts) if isinstance(p, dict) and p.get("type") == part_type), len(parts)
    )
    return [*parts[:at], {"type": part_type, "text": text}, *parts[at:]]


def append_system(system: Any, text: str) -> Any:
    """A system prompt (a string, a list of text blocks, or nothing) with ``text`` at its end."""
    if system is None or system == "":
        return text
    if isinstance(system, str):
        return f"{system}\n\n{text}"
    return [*system, {"type": "text", "text": text}]
