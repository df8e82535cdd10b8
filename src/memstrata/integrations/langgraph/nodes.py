"""``MemoryNodes``: memstrata's layered memory in a LangGraph graph, for graphs that want recall
and capture rather than a key-value store. Put ``recall`` (or ``arecall``) before the model node
and ``capture`` (or ``acapture``) after it:

    START -> recall -> model -> capture -> END

``recall`` writes recall's context for the latest human message into the state key ``context``
(declare it in the graph's state; the model node puts it in its system prompt). ``capture``
captures the turn: the latest human message and the replies after it, by their message ids, so
capturing again adds nothing twice. Tool calls and tool results stay out of the conversation.
The tenant is the run config's ``configurable.user_id`` (else ``user_id``) and ``agent_id``;
the session is ``configurable.thread_id`` (else ``session_key``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig

from memstrata.integrations.calling import Held, awaiting, blocking, drive
from memstrata.integrations.context import capture, recall_text
from memstrata.operations import MemoryApi, Who

_ROLES = {"human": "user", "ai": "assistant"}


class MemoryNodes:
    """Recall and capture nodes over ``mem`` (a ``Memory``/``AsyncMemory`` or an HTTP client).
    The sync nodes need a blocking memory; the async ones take either."""

    def __init__(
        self,
        mem: Held,
        *,
        user_id: str = "default",
        agent_id: str = "langgraph",
        session_key: str = "langgraph",
        context_key: str = "context",
    ) -> None:
        self._mem = mem
        self._user, self._agent, self._session = user_id, agent_id, session_key
        self._key = context_key

    # ``state`` is the graph's own state type (a mapping with ``messages``).
    def recall(self, state: Any, config: RunnableConfig) -> dict[str, str]:
        return drive(self._recall(blocking(self._mem), state, config))

    async def arecall(self, state: Any, config: RunnableConfig) -> dict[str, str]:
        return await self._recall(awaiting(self._mem), state, config)

    def capture(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return drive(self._capture(blocking(self._mem), state, config))

    async def acapture(self, state: Any, config: RunnableConfig) -> dict[str, Any]:
        return await self._capture(awaiting(self._mem), state, config)

    def _where(self, config: RunnableConfig | None) -> tuple[Who, str]:
        conf = (config or {}).get("configurable", {})
        who: Who = {"user_id": str(conf.get("user_id", self._user)), "agent_id": self._agent}
        return who, str(conf.get("thread_id", self._session))

    async def _recall(
        self, mem: MemoryApi, state: Mapping[str, Any], config: RunnableConfig | None
    ) -> dict[str, str]:
        who, session = self._where(config)
        turn = _turn(state.get("messages", ()))
        query = _text(turn[0]) if turn else ""
        return {self._key: await recall_text(mem, query, who, session)}

    async def _capture(
        self, mem: MemoryApi, state: Mapping[str, Any], config: RunnableConfig | None
    ) -> dict[str, Any]:
        who, session = self._where(config)
        said = [_message(m) for m in _turn(state.get("messages", ())) if m.type in _ROLES]
        await capture(mem, [m for m in said if m is not None], who, session)
        return {}


def _turn(messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The latest human message and every message after it ([] when there is none)."""
    for i in range(len(messages) - 1, -1, -1):
        if isinstance(messages[i], HumanMessage):
            return list(messages[i:])
    return []


def _message(m: BaseMessage) -> dict[str, Any] | None:
    if isinstance(m, AIMessage) and m.tool_calls and not _text(m).strip():
        return None  # a bare tool call is not conversation
    out: dict[str, Any] = {"role": _ROLES[m.type], "content": _text(m)}
    if m.id:
        out["id"] = f"lg-{m.id}"
    return out


def _text(m: BaseMessage) -> str:
    """A message's text (content blocks of other kinds, such as images, left out)."""
    if isinstance(m.content, str):
        return m.content
    return " ".join(
        b if isinstance(b, str) else str(b.get("text", "")) for b in m.content if isinstance(b, str | dict)
    )
