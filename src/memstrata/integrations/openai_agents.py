"""``MemstrataSession``: an OpenAI Agents SDK ``Session`` on a memstrata memory
(``memstrata[openai-agents]``).

The SDK reads a session's items back and sends them to the model as they were given, so they
must round-trip exactly; memstrata's L0 does not keep them so (it cleans what it stores: code
blocks of assistant replies go, noise is dropped, and tool items are not conversation). So each
session keeps two records:

- the item log: every item verbatim, in order, one pinned atom each (the item in its metadata)
  in a companion tenant of its own, ``(user_id, "<agent_id>:items:<session_id>")``. It never
  meets the conversation's search, recall or persona (tenants are apart), and a session's items
  are listed without reading any other session's;
- the conversation: the user and assistant messages' text captured as L0 of the tenant
  ``(user_id, agent_id)``, session key ``session_id``, where the pipeline turns them into
  memory. Tool calls, tool outputs and reasoning items stay out of it.

``pop_item`` removes the last item from the log and its message (with what was extracted from
it alone) from the conversation; ``clear_session`` empties the log and keeps what the
conversation taught (``forget=True`` deletes the session's messages too). With
``instructions(base)`` as the agent's instructions, each turn's system prompt gets recall's
context for the latest user message."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from agents import Agent, RunContextWrapper, TResponseInputItem
from agents.memory.session import SessionABC

from memstrata.integrations.calling import Held, awaiting
from memstrata.integrations.context import capture, recall_text
from memstrata.operations import Who

_MARK = "openai_agents"
_PAGE = 1000


class MemstrataSession(SessionABC):
    """A session of ``mem`` (``Memory``/``AsyncMemory`` or an HTTP client, blocking ones run in a
    worker thread) for one user: ``Runner.run(agent, text, session=MemstrataSession(...))``."""

    def __init__(
        self, session_id: str, mem: Held, *, user_id: str = "default", agent_id: str = "openai-agents"
    ) -> None:
        self.session_id = session_id
        self.session_settings = None
        self._mem = awaiting(mem)
        self._who: Who = {"user_id": user_id, "agent_id": agent_id}
        self._log: Who = {"user_id": user_id, "agent_id": f"{agent_id}:items:{session_id}"}

    async def get_items(self, limit: int | None = None) -> list[TResponseInputItem]:
        items = [item for _, _, item in await self._entries()]
        return items if limit is None else items[-limit:] if limit > 0 else []

    async def add_items(self, items: list[TResponseInputItem]) -> None:
        entries = await self._entries()
        n = entries[-1][0] + 1 if entries else 0
        said: list[dict[str, Any]] = []
        for i, item in enumerate(items):
            data = json.loads(json.dumps(item))  # the SDK's TypedDicts, as plain JSON
            meta = {_MARK: {"n": n + i, "item": data}}
            text = f"item {n + i} of session {self.session_id}: {_kind(data)}"
            atom = await self._mem.remember(text, metadata=meta, **self._log)
            await self._mem.pin_atom(atom.id, **self._log)
            message = _conversation(data, self._message_id(n + i))
            if message is not None:
                said.append(message)
        await capture(self._mem, said, self._who, self.session_id)

    async def pop_item(self) -> TResponseInputItem | None:
        entries = await self._entries()
        if not entries:
            return None
        n, sources, item = entries[-1]
        await self._mem.delete_messages(sources, **self._log)
        await self._mem.delete_messages([self._message_id(n)], **self._who)
        return item

    async def clear_session(self, *, forget: bool = False) -> None:
        sources = [s for _, ids, _ in await self._entries() for s in ids]
        for start in range(0, len(sources), 100):  # a delete names at most 100 ids
            await self._mem.delete_messages(sources[start : start + 100], **self._log)
        if forget:
            await self._mem.delete_messages(session_keys=[self.session_id], **self._who)

    def instructions(self, base: str = "") -> Callable[[RunContextWrapper[Any], Agent[Any]], Awaitable[str]]:
        """Dynamic instructions for ``Agent(instructions=...)``: ``base``, then recall's context
        for the latest user message of this session."""

        async def build(ctx: RunContextWrapper[Any], agent: Agent[Any]) -> str:
            query = ""
            for _, _, item in reversed(await self._entries()):
                said = _conversation(item, "")
                if said is not None and said["role"] == "user":
                    query = said["content"]
                    break
            context = await recall_text(self._mem, query, self._who, self.session_id)
            return "\n\n".join(p for p in (base, context) if p)

        return build

    def _message_id(self, n: int) -> str:
        return f"oa-{self.session_id}-{n}"

    async def _entries(self) -> list[tuple[int, list[str], TResponseInputItem]]:
        """The log in order: each item's number, its note's message ids and the item."""
        found: list[tuple[int, list[str], TResponseInputItem]] = []
        after = 0
        while True:
            page = await self._mem.atoms(**self._log, limit=_PAGE, after_seq=after)
            for atom in page:
                mark = atom.metadata.get(_MARK)
                if isinstance(mark, Mapping):
                    found.append((int(mark["n"]), list(atom.source_message_ids), mark["item"]))
            if len(page) < _PAGE:
                break
            after = page[-1].seq
        found.sort(key=lambda e: e[0])
        return found


def _kind(item: Mapping[str, Any]) -> str:
    return str(item.get("type") or item.get("role") or "item")


def _conversation(item: Mapping[str, Any], message_id: str) -> dict[str, Any] | None:
    """The L0 message an item is, or None for what is not conversation (tool calls and outputs,
    reasoning, a message with no text)."""
    role = item.get("role")
    if item.get("type", "message") != "message" or role not in ("user", "assistant"):
        return None
    content = item.get("content")
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = "\n".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping) and "text" in p)
    else:
        return None
    if not text.strip():
        return None
    out: dict[str, Any] = {"role": role, "content": text}
    if message_id:
        out["id"] = message_id
    return out
