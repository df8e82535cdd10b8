"""One search, one answer: the library, HTTP, the client, the CLI and MCP return the same ids in
the same order with the same scores for one query; ``remember`` makes a note findable at once."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from memstrata import InputError, Memory
from memstrata.client import MemoryClient
from memstrata.embeddings.hashing import HashingEmbedder
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer

NOTES = (
    "Maya is allergic to peanuts.",
    "Maya lives in Lisbon, in Graça.",
    "Maya's sister Ana lives in Berlin.",
    "Maya climbs at a bouldering gym on Tuesdays.",
)
QUERY = "Where does Maya live?"


def remembered(http: httpx.Client, user: str) -> None:
    for note in NOTES:
        assert http.post("/v1/remember", json={"text": note, "user_id": user}).status_code == 200


def triples(hits: list[dict[str, Any]]) -> list[tuple[str, int, float]]:
    return [(h["id"], h["rank"], round(h["score"], 4)) for h in hits]


def test_every_surface_answers_one_query_with_the_same_ids_order_and_scores(
    server: LiveServer, http: httpx.Client, user: str
) -> None:
    remembered(http, user)
    body = {"query": QUERY, "user_id": user, "layers": ["L1"], "limit": 5}
    over_http = triples(http.post("/v1/search", json=body).json()["hits"])
    assert over_http, "the notes about where Maya lives are found"
    assert [r for _, r, _ in over_http] == sorted(r for _, r, _ in over_http)  # best (fused) first
    assert all(0 < s <= 1 for _, _, s in over_http)

    with Memory.open(server.settings.home, read_only=True, embedder=HashingEmbedder(64)) as mem:
        found = mem.search(QUERY, user_id=user, layers=("L1",), limit=5)
        library = [(h.id, h.rank, round(h.score, 4)) for h in found]
    with MemoryClient(server.url, api_key=KEY) as client:
        found = client.search(QUERY, user_id=user, layers=("L1",), limit=5)
        through_client = [(h.id, h.rank, round(h.score, 4)) for h in found]
    env = {**os.environ, "MEMSTRATA_API_KEY": KEY, "HF_HUB_OFFLINE": "1"}
    args = ["--url", server.url, "search", QUERY, "--user", user, "--layers", "L1", "-n", "5", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "memstrata", *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    on_cli = triples(json.loads(done.stdout)["hits"])

    assert library == over_http
    assert through_client == over_http
    assert on_cli == over_http
    assert mcp_search(server, user) == over_http


def mcp_search(server: LiveServer, user: str) -> list[tuple[str, int, float]]:
    import asyncio

    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    async def call() -> list[dict[str, Any]]:
        headers = {"authorization": f"Bearer {KEY}", "x-memstrata-user-id": user}
        async with (
            httpx2.AsyncClient(headers=headers, timeout=30) as h,
            Client(streamable_http_client(server.url + "/mcp", http_client=h)) as client,
        ):
            result = await client.call_tool("memory_search", {"query": QUERY, "limit": 5})
            assert result.structured_content is not None
            hits: list[dict[str, Any]] = result.structured_content["result"]
            return hits

    return triples(asyncio.run(call()))


def test_a_remembered_note_is_the_first_hit_when_the_call_returns(http: httpx.Client, user: str) -> None:
    remembered(http, user)
    answer = http.post(
        "/v1/remember",
        json={"text": "Maya's cat is called Pimenta.", "user_id": user, "metadata": {"source": "test"}},
    )
    assert answer.status_code == 200, answer.text
    atom = answer.json()
    assert atom["metadata"]["source"] == "test" and atom["source_message_ids"]
    hits = http.post("/v1/search", json={"query": "what is the cat called", "user_id": user}).json()["hits"]
    assert hits[0]["id"] == atom["id"] and hits[0]["rank"] >= 1
    source = http.get(f"/v1/messages/{atom['source_message_ids'][0]}", params={"user_id": user})
    assert source.status_code == 200 and source.json()["content"] == "Maya's cat is called Pimenta."
    again = http.post("/v1/remember", json={"text": "Maya's cat is called Pimenta.", "user_id": user})
    assert again.json()["id"] == atom["id"]  # the same note makes one atom


def test_an_off_topic_query_finds_nothing_on_any_text_surface(
    server: LiveServer, http: httpx.Client, user: str
) -> None:
    remembered(http, user)
    body = {"query": "quantum chromodynamics gauge symmetry", "user_id": user}
    assert http.post("/v1/search", json=body).json()["hits"] == []
    env = {**os.environ, "MEMSTRATA_API_KEY": KEY, "HF_HUB_OFFLINE": "1"}
    args = ["--url", server.url, "search", body["query"], "--user", user]
    done = subprocess.run(
        [sys.executable, "-m", "memstrata", *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0 and "No memories match" in done.stdout


def test_an_empty_or_missing_capture_is_one_input_error_on_every_surface(
    server: LiveServer, http: httpx.Client, user: str, tmp_path: Path
) -> None:
    nothing: tuple[list[object] | None, ...] = ([], None)
    for given in nothing:
        answer = http.post("/v1/capture", json={"messages": given, "user_id": user})
        assert answer.status_code == 422, answer.text
        assert answer.json()["error"]["field"] == "messages"
        with MemoryClient(server.url, api_key=KEY) as client, pytest.raises(InputError) as over_client:
            client.capture(given, user_id=user)  # type: ignore[arg-type]
        assert over_client.value.item == "messages"
        with Memory.open(tmp_path / "own", embedder=None) as mem:
            with pytest.raises(InputError) as in_library:
                mem.capture(given, user_id=user)  # type: ignore[arg-type]
            assert in_library.value.item == "messages"
            assert mem.status().messages == 0
    assert http.get("/v1/messages", params={"user_id": user}).json() == []
