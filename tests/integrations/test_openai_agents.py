"""MemstrataSession with the real Agents SDK, driven by a scripted model implementing the SDK's
``Model`` interface (no network: tracing is off). The items round-trip exactly (checked against
the SDK's own ``SQLiteSession`` on the same runs), tool items stay out of the conversation, and a
fact said in one session is recalled in a later session of the same user only."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("agents")

from agents import Agent, ModelResponse, RunConfig, Runner, SQLiteSession, Usage, function_tool
from agents.models.interface import Model
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from memstrata import AsyncMemory, FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.integrations.openai_agents import MemstrataSession
from tests.support.live_server import LiveServer

QUIET = RunConfig(tracing_disabled=True)


class ScriptedModel(Model):
    """Answers from a script: a string is a text reply, a tuple ``(tool, args)`` a tool call.
    Keeps the instructions and input of every call."""

    def __init__(self, script: list[str | tuple[str, str]]) -> None:
        self.script = script
        self.calls: list[tuple[str | None, Any]] = []

    async def get_response(
        self, system_instructions: str | None, input: Any, *a: Any, **k: Any
    ) -> ModelResponse:
        self.calls.append((system_instructions, input))
        step = self.script[len(self.calls) - 1]
        n = len(self.calls)
        out: Any
        if isinstance(step, tuple):
            out = ResponseFunctionToolCall(
                type="function_call", call_id=f"call_{n}", name=step[0], arguments=step[1], id=f"fc_{n}"
            )
        else:
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            out = ResponseOutputMessage(
                id=f"msg_{n}", type="message", role="assistant", status="completed", content=[text]
            )
        return ModelResponse(output=[out], usage=Usage(), response_id=None)

    def stream_response(self, *a: Any, **k: Any) -> Any:
        raise NotImplementedError("the tests run without streaming")


@function_tool
def weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


@pytest.fixture
async def empty_async_memory(home: Path, clock: FakeClock) -> AsyncIterator[AsyncMemory]:
    """An empty AsyncMemory on SQLite (hashing embedder, fake clock)."""
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    yield mem
    await mem.close()


SCRIPT: list[str | tuple[str, str]] = [
    ("weather", '{"city": "Oslo"}'),
    "It is sunny in Oslo. Here is code:\n```python\nprint('hi')\n```",
    "Glad to help with the trip.",
]


async def _two_turns(session: Any) -> None:
    agent = Agent(name="helper", model=ScriptedModel(SCRIPT), tools=[weather])
    await Runner.run(agent, "What's the weather in Oslo?", session=session, run_config=QUIET)
    await Runner.run(agent, "Thanks, I'm flying there on Friday.", session=session, run_config=QUIET)


async def test_items_round_trip_as_the_sdks_own_session_keeps_them(empty_async_memory: AsyncMemory) -> None:
    ours = MemstrataSession("s1", empty_async_memory, user_id="alice")
    reference = SQLiteSession("s1")
    await _two_turns(ours)
    await _two_turns(reference)
    items = await ours.get_items()
    assert items == await reference.get_items()
    assert [i.get("type", "message") for i in items][:3] == [
        "message",
        "function_call",
        "function_call_output",
    ]
    assert await ours.get_items(limit=2) == items[-2:]
    said = await empty_async_memory.messages(user_id="alice", agent_id="openai-agents")
    assert [m.role.value for m in said] == ["user", "assistant", "user", "assistant"]  # no tool items
    assert "sunny in Oslo" not in " ".join(m.content for m in said if m.role.value == "user")
    # L0 keeps the reply's code (searchable; extraction skips it); the item log keeps it as given
    assert "print('hi')" in said[1].content
    assert "print('hi')" in str(items[3])


async def test_pop_and_clear(empty_async_memory: AsyncMemory) -> None:
    session = MemstrataSession("s2", empty_async_memory, user_id="bob")
    items: list[Any] = [
        {"role": "user", "content": "I was born in Recife 🌴"},
        {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
        {"role": "assistant", "content": "Noted: Recife."},
    ]
    await session.add_items(items[:2])
    await session.add_items(items[2:])
    assert await session.get_items() == items
    assert await session.pop_item() == items[2]
    assert await session.get_items() == items[:2]
    said = await empty_async_memory.messages(user_id="bob", agent_id="openai-agents")
    assert [m.content for m in said] == ["I was born in Recife 🌴"]  # the popped reply left L0 too
    await session.clear_session()
    assert await session.get_items() == []
    assert await session.pop_item() is None
    assert len(await empty_async_memory.messages(user_id="bob", agent_id="openai-agents")) == 1


async def _later_session_recalls(mem: Any, user: str, other: str) -> tuple[str, str]:
    first = MemstrataSession("day-1", mem, user_id=user)
    agent = Agent(name="a", model=ScriptedModel(["Pretzel is a lovely name for a dachshund."]))
    await Runner.run(agent, "My dachshund is called Pretzel.", session=first, run_config=QUIET)
    run_all = mem.run_all
    await run_all() if isinstance(mem, AsyncMemory) else run_all()

    async def ask(who: str) -> str:
        session = MemstrataSession("day-2", mem, user_id=who)  # a new session and agent
        model = ScriptedModel(["Your dog is Pretzel."])
        agent = Agent(name="a", model=model, instructions=session.instructions("Be brief."))
        await Runner.run(agent, "What is my dachshund called?", session=session, run_config=QUIET)
        return str(model.calls[0][0])

    return await ask(user), await ask(other)


async def test_a_fact_from_one_session_is_recalled_in_a_later_one(empty_async_memory: AsyncMemory) -> None:
    mine, theirs = await _later_session_recalls(empty_async_memory, "carol", "dave")
    assert mine.startswith("Be brief.") and "Pretzel" in mine
    assert "Pretzel" not in theirs


async def test_the_session_over_the_http_client(gateway: LiveServer) -> None:
    user = f"u-{uuid.uuid4().hex[:8]}"
    with Memory.open(gateway.url) as mem:  # a blocking client runs in a worker thread
        mine, theirs = await _later_session_recalls(mem, user, user + "-other")
    assert "Pretzel" in mine and "Pretzel" not in theirs
    async_mem = await AsyncMemory.open(gateway.url)
    try:
        session = MemstrataSession("day-1", async_mem, user_id=user)
        items = await session.get_items()
        assert [i.get("role") for i in items] == ["user", "assistant"]
    finally:
        await async_mem.close()
