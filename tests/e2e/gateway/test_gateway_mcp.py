"""The MCP server: an in-memory client session lists and calls every tool; a stdio subprocess
started with ``memstrata mcp`` answers ``tools/list`` and a ``memory_search``; the gateway serves
MCP over streamable HTTP at ``/mcp``."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.mcp.server import build_server
from memstrata.memory import AsyncMemory
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer

TOOLS = {"memory_search", "conversation_search", "read_scene", "remember", "recall"}


def text(result: Any) -> str:
    """The text of a tool's (error) answer."""
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def payload(result: Any) -> Any:
    """The JSON a tool answered (structured content when there is one, else the text)."""
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data)
    return json.loads(result.content[0].text)


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[AsyncMemory]:
    mem = await AsyncMemory.open(tmp_path / "data", embedder=HashingEmbedder(64))
    yield mem
    await mem.close()


async def test_an_in_memory_session_lists_and_calls_every_tool(memory: AsyncMemory) -> None:
    await memory.write_scene("pets.md", "Biscuit is a beagle.", summary="pets", user_id="ann")
    server = build_server(lambda: memory, user_id="ann")
    async with Client(server) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert set(listed) == TOOLS
        assert "query" in listed["memory_search"].input_schema["properties"]
        stored = payload(
            await client.call_tool(
                "remember", {"content": "I adopted a beagle named Biscuit.", "reply": "Lovely!"}
            )
        )
        assert len(stored["stored"]) == 2
        await memory.end_session("mcp", user_id="ann")
        hits = payload(await client.call_tool("memory_search", {"query": "beagle Biscuit"}))
        assert any("Biscuit" in h["content"] for h in hits)
        said = payload(
            await client.call_tool("conversation_search", {"query": "beagle", "session_key": "mcp"})
        )
        assert said[0]["layer"] == "L0"
        scene = payload(await client.call_tool("read_scene", {"path": "scene_blocks/pets.md"}))
        assert scene == {"path": "scene_blocks/pets.md", "summary": "pets", "body": "Biscuit is a beagle."}
        context = payload(await client.call_tool("recall", {"query": "what is my beagle named?"}))
        assert "Biscuit" in context["prepend_context"] and "scene_blocks/pets.md" in context["system_context"]
        missing = await client.call_tool("read_scene", {"path": "../persona.md"})
        assert missing.is_error and "scene path" in text(missing)
    assert await memory.messages(user_id="other") == []  # the configured tenant, nobody else's


async def test_the_search_tools_take_metadata_filters(memory: AsyncMemory) -> None:
    for app in ("crm", "erp"):
        said = [
            {"role": "user", "content": f"My beagle Biscuit sleeps a lot ({app}).", "metadata": {"app": app}}
        ]
        await memory.capture(said, session_key=app, user_id="ann")
        await memory.end_session(app, user_id="ann")
    async with Client(build_server(lambda: memory, user_id="ann")) as client:
        for tool in ("memory_search", "conversation_search"):
            hits = payload(await client.call_tool(tool, {"query": "beagle", "filters": {"app": "crm"}}))
            assert hits and all("(crm)" in h["content"] for h in hits), tool
        bad = await client.call_tool("memory_search", {"query": "beagle", "filters": {"app": {"like": "c"}}})
        assert bad.is_error and "unknown operator" in text(bad)


async def test_at_most_three_searches_per_turn(memory: AsyncMemory) -> None:
    async with Client(build_server(lambda: memory)) as client:
        for _ in range(3):
            payload(await client.call_tool("memory_search", {"query": "anything"}))
        fourth = await client.call_tool("conversation_search", {"query": "anything"})
        assert fourth.is_error and "search limit reached" in text(fourth)
        await client.call_tool("recall", {"query": "next turn"})  # a new turn starts
        payload(await client.call_tool("memory_search", {"query": "anything"}))
        for _ in range(3):
            payload(await client.call_tool("memory_search", {"query": "x", "turn_id": "t-9"}))
        named = await client.call_tool("memory_search", {"query": "x", "turn_id": "t-9"})
        assert named.is_error


async def test_memstrata_mcp_over_stdio(tmp_path: Path) -> None:
    env = {**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "hashing", "MEMSTRATA_HOME": str(tmp_path / "data")}
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memstrata", "mcp", "--user", "ann"], env=env, cwd=str(tmp_path)
    )
    async with Client(params, read_timeout_seconds=60) as client:
        assert {t.name for t in (await client.list_tools()).tools} == TOOLS
        payload(await client.call_tool("remember", {"content": "I live in Lisbon and I love sardines."}))
        hits = payload(await client.call_tool("memory_search", {"query": "sardines"}))
        assert isinstance(hits, list)
        said = payload(await client.call_tool("conversation_search", {"query": "sardines"}))
        assert "sardines" in said[0]["content"]


async def test_the_gateway_serves_mcp_over_streamable_http(server: LiveServer, user: str) -> None:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    headers = {"authorization": f"Bearer {KEY}", "x-memstrata-user-id": user}
    async with httpx2.AsyncClient(headers=headers, timeout=30) as http:
        transport = streamable_http_client(server.url + "/mcp", http_client=http)
        async with Client(transport) as client:
            assert {t.name for t in (await client.list_tools()).tools} == TOOLS
            payload(await client.call_tool("remember", {"content": "My favourite colour is teal."}))
    with httpx2.Client(base_url=server.url, headers={"authorization": f"Bearer {KEY}"}) as plain:
        contents = [m["content"] for m in plain.get("/v1/messages", params={"user_id": user}).json()]
    assert contents == ["My favourite colour is teal."]  # stored for the connection's tenant
