"""Pydantic AI adapters (``memstrata[pydantic-ai]``): a history processor that gives the model
recall's context and captures the conversation, and memory tools.

    agent = Agent(model, capabilities=[ProcessHistory(memstrata_history(mem, user_id="alice"))],
                  tools=memstrata_tools(mem, user_id="alice"))

Before each model request the processor captures the user prompts and text replies of the
history (each with an id made from its time and text, so processing the same history again
adds nothing) and puts recall's context for the latest user prompt in a system prompt part just
before it. That part is marked (``dynamic_ref``) and replaced on the next request rather than
piled up. Tool calls and their returns are not conversation and are not captured; the reply
that ends a run is captured by the next run's first request, or by ``capture(messages)``."""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Sequence
from typing import Any

from pydantic_ai import Tool
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    UserPromptPart,
)

from memstrata.integrations.calling import Held, awaiting
from memstrata.integrations.context import capture, recall_text
from memstrata.operations import Who

MARK = "memstrata-recall"


class MemstrataHistory:
    """The history processor (an async callable over the message list); build it with
    ``memstrata_history``."""

    def __init__(self, mem: Held, *, user_id: str, agent_id: str, session_key: str) -> None:
        self._mem = awaiting(mem)
        self._who: Who = {"user_id": user_id, "agent_id": agent_id}
        self._session = session_key

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        kept = [_unmarked(m) for m in messages]
        await self.capture(kept)
        at = _latest_prompt(kept)
        if at is None:
            return kept
        i, j = at
        request = kept[i]
        assert isinstance(request, ModelRequest)
        prompt = request.parts[j]
        assert isinstance(prompt, UserPromptPart)
        context = await recall_text(self._mem, _prompt_text(prompt), self._who, self._session)
        if not context:
            return kept
        part = SystemPromptPart(context, dynamic_ref=MARK)
        parts = [*request.parts[:j], part, *request.parts[j:]]
        kept[i] = dataclasses.replace(request, parts=parts)
        return kept

    async def capture(self, messages: Sequence[ModelMessage]) -> None:
        """Capture the user prompts and text replies of ``messages`` (a run's ``all_messages()``)."""
        said: list[dict[str, Any]] = []
        for m in messages:
            if isinstance(m, ModelRequest):
                said += [
                    _said("user", _prompt_text(p), p.timestamp)
                    for p in m.parts
                    if isinstance(p, UserPromptPart)
                ]
            elif isinstance(m, ModelResponse):
                text = "".join(p.content for p in m.parts if isinstance(p, TextPart))
                said.append(_said("assistant", text, m.timestamp))
        await capture(self._mem, said, self._who, self._session)


def memstrata_history(
    mem: Held, *, user_id: str, agent_id: str = "pydantic-ai", session_key: str = "pydantic-ai"
) -> MemstrataHistory:
    """The history processor for ``ProcessHistory(...)`` (or ``history_processors=[...]``) over
    ``mem`` (``Memory``/``AsyncMemory`` or an HTTP client)."""
    return MemstrataHistory(mem, user_id=user_id, agent_id=agent_id, session_key=session_key)


def memstrata_tools(
    mem: Held, *, user_id: str, agent_id: str = "pydantic-ai", limit: int = 5
) -> list[Tool[Any]]:
    """``remember`` (keep a note now) and ``search_memory`` (the best memories for a query, above
    the relevance floor) for ``Agent(tools=...)``."""
    api = awaiting(mem)
    who: Who = {"user_id": user_id, "agent_id": agent_id}

    async def remember(text: str) -> str:
        """Remember a fact about the user for later conversations."""
        atom = await api.remember(text, **who)
        return f"remembered: {atom.content}"

    async def search_memory(query: str) -> list[str]:
        """Search what is remembered about the user; returns the best matching memories."""
        result = await api.search(query, limit=limit, **who)
        return [h.content for h in result]

    return [Tool(remember, takes_ctx=False), Tool(search_memory, takes_ctx=False)]


def _unmarked(m: ModelMessage) -> ModelMessage:
    """``m`` without the context part an earlier request put in."""
    if not isinstance(m, ModelRequest):
        return m
    parts = [p for p in m.parts if not (isinstance(p, SystemPromptPart) and p.dynamic_ref == MARK)]
    return m if len(parts) == len(m.parts) else dataclasses.replace(m, parts=parts)


def _latest_prompt(messages: list[ModelMessage]) -> tuple[int, int] | None:
    for i in range(len(messages) - 1, -1, -1):
        m = messages[i]
        if isinstance(m, ModelRequest):
            for j in range(len(m.parts) - 1, -1, -1):
                if isinstance(m.parts[j], UserPromptPart):
                    return i, j
    return None


def _prompt_text(p: UserPromptPart) -> str:
    if isinstance(p.content, str):
        return p.content
    return " ".join(c for c in p.content if isinstance(c, str))


def _said(role: str, text: str, at: Any) -> dict[str, Any]:
    stamp = at.isoformat() if at is not None else ""
    digest = hashlib.blake2b(f"{role}\x1f{stamp}\x1f{text}".encode(), digest_size=12).hexdigest()
    return {"role": role, "content": text, "id": f"pa-{digest}"}
