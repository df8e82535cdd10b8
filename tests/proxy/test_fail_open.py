"""Fail-open: memory that is closed or slow never fails the LLM call; the degradation is counted
in /v1/status."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import openai

from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.memory import AsyncMemory
from tests.proxy.conftest import proxy_settings, wait_for
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream


def _ask(server: LiveServer, text: str) -> str:
    client = openai.OpenAI(base_url=server.url + "/proxy/openai/v1", api_key="sk", max_retries=0)
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


def test_a_closed_store_still_returns_the_upstream_answer(home: Path, upstream: ScriptedUpstream) -> None:
    with LiveServer(home, proxy=proxy_settings(upstream)) as server:
        assert _ask(server, "I water the plants on Sundays.") == "Noted, thank you."
        loop = server.server.servers[0].get_loop()
        closed = asyncio.run_coroutine_threadsafe(_closed_memory(home.parent / "other"), loop).result(30)
        kept, server.app.state.memory = server.app.state.memory, closed
        try:
            upstream.enqueue(Reply(text="Still here."))
            assert _ask(server, "When do I water the plants?") == "Still here."
            assert "<relevant-memories>" not in upstream.requests[-1].body.decode()
            counted = server.app.state.proxy.stats
            assert counted.recall_degraded + counted.recall_failures == 1  # recall said what it left out
            # Both captures fail, counted: the prompt's beside the call, then the answer's (which
            # carries the prompt again, since it was not stored).
            assert wait_for(lambda: counted.capture_failures == 2)
            assert counted.prompts_captured == counted.captured == 1  # the first turn's
            assert httpx.get(server.url + "/v1/status").status_code == 503  # the store is closed, says so
        finally:
            server.app.state.memory = kept


async def _closed_memory(path: Path) -> AsyncMemory:
    mem = await AsyncMemory.open(path, embedder=HashingEmbedder(64))
    await mem.close()
    return mem


def test_recall_timing_out_sends_the_request_without_memories(home: Path, upstream: ScriptedUpstream) -> None:
    with LiveServer(home, proxy=proxy_settings(upstream, recall_timeout_ms=1)) as server:
        assert _ask(server, "My bike is blue.") == "Noted, thank you."
        assert _ask(server, "What colour is my bike?") == "Noted, thank you."
        status = httpx.get(server.url + "/v1/status").json()["proxy"]
        assert status["recall_timeouts"] == 2
        assert status["requests"] == 2
        assert "<relevant-memories>" not in upstream.requests[-1].body.decode()
