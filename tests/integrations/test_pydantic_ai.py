"""The Pydantic AI adapters with the real framework, driven by its own ``FunctionModel`` (which
sees exactly the messages the processor made) and ``TestModel``: a fact said in one run reaches
a later run's system prompt through recall, only for its user; the memory tools remember and
find; the same over the HTTP client."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pydantic_ai")

from pydantic_ai import Agent
from pydantic_ai.capabilities import ProcessHistory
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from memstrata import AsyncMemory, FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.integrations.pydantic_ai import MARK, memstrata_history, memstrata_tools
from tests.support.live_server import LiveServer


@pytest.fixture
async def empty_async_memory(home: Path, clock: FakeClock) -> AsyncIterator[AsyncMemory]:
    """An empty AsyncMemory on SQLite (hashing embedder, fake clock)."""
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    yield mem
    await mem.close()


class Seen:
    """A FunctionModel that answers ``reply`` and keeps the messages of each request."""

    def __init__(self, reply: str) -> None:
        self.reply = reply
        self.requests: list[list[ModelMessage]] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append(list(messages))
        return ModelResponse(parts=[TextPart(self.reply)])

    def recalled(self) -> list[str]:
        """The context parts the processor put in the last request."""
        return [
            p.content
            for m in self.requests[-1]
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, SystemPromptPart) and p.dynamic_ref == MARK
        ]


async def _run(
    mem: Any, user: str, prompt: str, history: list[ModelMessage] | None = None
) -> tuple[Seen, Any]:
    seen = Seen("Happy to help with that, truly.")
    agent = Agent(FunctionModel(seen), capabilities=[ProcessHistory(memstrata_history(mem, user_id=user))])
    return seen, await agent.run(prompt, message_history=history)


async def _fact_then_question(mem: Any, user: str, other: str) -> tuple[Seen, Seen]:
    await _run(mem, user, "I moved to Tromsø to study the northern lights.")
    run_all = mem.run_all
    await run_all() if isinstance(mem, AsyncMemory) else run_all()
    later, _ = await _run(mem, user, "Which city did I move to for the northern lights?")
    stranger, _ = await _run(mem, other, "Which city did I move to for the northern lights?")
    return later, stranger


async def test_a_fact_from_one_run_is_recalled_in_a_later_run(empty_async_memory: AsyncMemory) -> None:
    later, stranger = await _fact_then_question(empty_async_memory, "erin", "frank")
    assert any("Tromsø" in c for c in later.recalled())
    assert not any("Tromsø" in c for c in stranger.recalled())
    said = await empty_async_memory.messages(user_id="erin", agent_id="pydantic-ai")
    assert said[0].content == "I moved to Tromsø to study the northern lights."


async def test_the_context_part_is_replaced_not_piled_up(empty_async_memory: AsyncMemory) -> None:
    await empty_async_memory.remember("Greta plays the theremin", user_id="greta", agent_id="pydantic-ai")
    _, first = await _run(empty_async_memory, "greta", "Do I play the theremin?")
    _, second = await _run(empty_async_memory, "greta", "Tell me about my theremin", first.all_messages())
    assert (
        len(
            [
                p
                for m in second.all_messages()
                if isinstance(m, ModelRequest)
                for p in m.parts
                if isinstance(p, SystemPromptPart) and p.dynamic_ref == MARK
            ]
        )
        == 1
    )
    said = await empty_async_memory.messages(
        user_id="greta", agent_id="pydantic-ai", session_key="pydantic-ai"
    )
    # the first run's reply was captured by the second run's request, and nothing twice
    assert [m.role.value for m in said] == ["user", "assistant", "user"]


def test_the_memory_tools_remember_and_search(empty_memory: Memory) -> None:
    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("remember", {"text": "Hana is vegetarian"})])
        if len(returns) == 1:
            return ModelResponse(parts=[ToolCallPart("search_memory", {"query": "vegetarian"})])
        return ModelResponse(parts=[TextPart(f"found: {returns[-1].content}")])

    agent = Agent(FunctionModel(script), tools=memstrata_tools(empty_memory, user_id="hana"))
    result = agent.run_sync("Remember that I am vegetarian, then check.")
    assert "Hana is vegetarian" in result.output
    assert [a.content for a in empty_memory.atoms(user_id="hana", agent_id="pydantic-ai")] == [
        "Hana is vegetarian"
    ]
    found = Agent(
        TestModel(call_tools=["search_memory"]), tools=memstrata_tools(empty_memory, user_id="ivan")
    )
    assert "vegetarian" not in found.run_sync("search").output  # ivan's memory holds nothing


def _search_then_say(query: str) -> Any:
    """A model function: call ``search_memory(query)``, then answer with what it returned."""

    def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            p
            for m in messages
            if isinstance(m, ModelRequest)
            for p in m.parts
            if isinstance(p, ToolReturnPart)
        ]
        if not returns:
            return ModelResponse(parts=[ToolCallPart("search_memory", {"query": query})])
        return ModelResponse(parts=[TextPart(f"found: {returns[-1].content}")])

    return script


async def test_the_adapters_over_the_http_client(gateway: LiveServer) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    with Memory.open(gateway.url) as mem:
        later, stranger = await _fact_then_question(mem, user, user + "-other")
    assert any("Tromsø" in c for c in later.recalled())
    assert not any("Tromsø" in c for c in stranger.recalled())
    async_mem = await AsyncMemory.open(gateway.url)
    try:
        agent = Agent(
            FunctionModel(_search_then_say("Tromsø")), tools=memstrata_tools(async_mem, user_id=user)
        )
        assert "Tromsø" in (await agent.run("where did I move?")).output
    finally:
        await async_mem.close()
