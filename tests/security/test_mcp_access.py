"""MCP over streamable HTTP, with the official client, obeys the same rule as every route: a key
scoped to alice never reaches bob's data by any tool or header; a session stays with the tenant
of its first call; the turn limit is counted per tenant; tenant ids are validated as everywhere."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextContent

from tests.security.conftest import Secured

SEARCHES = [
    ("memory_search", {"query": "cello Porto"}),
    ("conversation_search", {"query": "cello Porto"}),
]


def text(result: Any) -> str:
    first = result.content[0]
    assert isinstance(first, TextContent)
    return first.text


def payload(result: Any) -> Any:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data)
    return json.loads(text(result))


def found_nothing(result: Any) -> bool:
    """A search tool's answer when nothing matched: it says so in words (the model must see it)."""
    answer = payload(result)
    return isinstance(answer, str) and answer.startswith("No ") and answer.endswith(": nothing found.")


@asynccontextmanager
async def session(
    s: Secured, key: str, mode: str = "auto", **headers: str
) -> AsyncIterator[tuple[Client, httpx2.AsyncClient]]:
    sent = {"authorization": f"Bearer {key}", **{k.replace("_", "-"): v for k, v in headers.items()}}
    async with (
        httpx2.AsyncClient(headers=sent, timeout=30) as http,
        Client(streamable_http_client(s.url + "/mcp", http_client=http), mode=mode) as client,
    ):
        yield client, http


async def test_alices_key_naming_bob_in_a_header_gets_nothing_from_any_tool(secured: Secured) -> None:
    calls: list[tuple[str, dict[str, Any]]] = [
        *SEARCHES,
        ("read_scene", {"path": f"scene_blocks/{secured.bob_scene}"}),
        ("recall", {"query": "what does Bob play?"}),
        ("remember", {"content": "Bob now hates music."}),
    ]
    for header in ("x_memstrata_user_id",):
        async with session(secured, secured.alice, **{header: "bob"}) as (client, _):
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, result.content)
                assert "cannot reach tenant 'bob'" in text(result)
    with secured.admin() as admin:
        said = [m["content"] for m in admin.get("/v1/messages", params={"user_id": "bob"}).json()]
    assert "Bob now hates music." not in said


async def test_alices_key_alone_searches_alices_memory_only(secured: Secured) -> None:
    async with session(secured, secured.alice) as (client, _):
        for name, arguments in SEARCHES:
            assert found_nothing(await client.call_tool(name, arguments)), name
        missing = await client.call_tool("read_scene", {"path": f"scene_blocks/{secured.bob_scene}"})
        assert missing.is_error
        context = payload(await client.call_tool("recall", {"query": "what does Bob play?"}))
        assert "cello" not in context["prepend_context"] + context["system_context"]


async def test_an_mcp_session_stays_with_the_tenant_it_began_with(secured: Secured) -> None:
    """Defect: a session opened as bob answered alice's data when a later request carried alice's
    header (with a key reaching both). Sessions exist in the handshake protocol ('legacy')."""
    with secured.admin() as admin:
        key = admin.post("/v1/keys", json={"tenants": [["bob", None], ["carol", None]]}).json()["secret"]
    async with session(secured, key, "legacy", x_memstrata_user_id="carol") as (client, http):
        assert found_nothing(await client.call_tool("memory_search", {"query": "cello"}))
        http.headers["x-memstrata-user-id"] = "bob"
        moved = await client.call_tool("memory_search", {"query": "cello"})
        assert moved.is_error and "bound to another tenant" in text(moved)
        assert "carol" not in text(moved)


async def test_the_turn_limit_is_counted_per_tenant(secured: Secured) -> None:
    """Defect: bob's four calls with ``turn_id: shared-turn-1`` made alice's first call with the
    same id fail."""
    turn = {"query": "cello", "turn_id": "shared-turn-1"}
    async with session(secured, secured.bob) as (bob, _):
        for _ in range(3):
            payload(await bob.call_tool("memory_search", turn))
        fourth = await bob.call_tool("memory_search", turn)
        assert fourth.is_error and "at most 3" in text(fourth)
    async with session(secured, secured.alice) as (alice, _):
        assert found_nothing(await alice.call_tool("memory_search", turn))


async def test_a_tenant_id_over_512_characters_is_refused_and_creates_nothing(secured: Secured) -> None:
    """Defect: MCP accepted a 5,000-character user id from the header and created that tenant."""
    long = "u" * 5000
    from tests.security.conftest import ADMIN_KEY

    async with session(secured, ADMIN_KEY, x_memstrata_user_id=long) as (client, _):
        refused = await client.call_tool("remember", {"content": "I like long names."})
        assert refused.is_error and "1 to 512 characters" in text(refused)
    with secured.admin() as admin:
        tenants = {t["user_id"] for t in admin.get("/v1/tenants").json()}
    assert long not in tenants
