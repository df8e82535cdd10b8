"""Fail-open: memory that is closed or slow never fails the LLM call; the degradation is counted
in /v1/status."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.memory import AsyncMemory
from tests.proxy.conftest import proxy_settings, stored_turns, wait_for
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


class _SlowRecall:
    """The server's memory with ``before_prompt`` held until ``release`` is set (at most 30 s;
    everything else as it is)."""

    def __init__(self, mem: Any) -> None:
        self._mem = mem
        self.release = threading.Event()
        self.late_done = 0

    async def before_prompt(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.to_thread(self.release.wait, 30)
        try:
            return await self._mem.before_prompt(*args, **kwargs)
        finally:
            self.late_done += 1

    def __getattr__(self, name: str) -> Any:
        return getattr(self._mem, name)


def test_a_slow_recall_does_not_hold_the_upstream_request_past_the_recall_timeout(
    home: Path, upstream: ScriptedUpstream
) -> None:
    with LiveServer(home, proxy=proxy_settings(upstream, recall_timeout_ms=200)) as server:
        assert _ask(server, "My bike is blue.") == "Noted, thank you."  # a turn stored, recall quick
        slow = _SlowRecall(server.app.state.memory)
        kept, server.app.state.memory = server.app.state.memory, slow
        try:
            upstream.enqueue(Reply(text="Blue, I think."))
            asked = time.monotonic()
            assert _ask(server, "What colour is my bike?") == "Blue, I think."
            answered = time.monotonic()
            sent = upstream.requests[-1]
            # The upstream had the request once the proxy's recall timeout (200 ms) was over, and
            # the answer came back, while the recall was still held (it is released below; the
            # bounds leave a slow machine room and are still far from the 30 s hold).
            assert slow.late_done == 0
            assert sent.started - asked < 10 and answered - asked < 15
            slow.release.set()
            assert "<relevant-memories>" not in sent.body.decode()
            status = httpx.get(server.url + "/v1/status").json()["proxy"]
            assert status["recall_timeouts"] == 1  # counted as degraded
            assert status["prompts_captured"] == 2  # the prompt was stored all the same
            assert wait_for(lambda: slow.late_done == 1, 10)  # the late recall ran to its end
        finally:
            slow.release.set()
            server.app.state.memory = kept
        texts = [m["content"] for m in httpx.get(server.url + "/v1/messages").json()]
        assert "What colour is my bike?" in texts and "Blue, I think." in texts


def _leave_stream(server: LiveServer, text: str, session: str, *, chunks: int) -> None:
    """Asks for a stream with ``text`` as its prompt and leaves after reading ``chunks`` chunks."""
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": text}]}
    with (
        httpx.Client() as client,
        client.stream(
            "POST",
            server.url + "/proxy/openai/v1/chat/completions",
            json=body,
            headers={"x-memstrata-session": session},
        ) as r,
    ):
        assert r.status_code == 200
        if chunks:
            for i, _ in enumerate(r.iter_bytes(), start=1):
                if i == chunks:
                    break


@pytest.mark.parametrize(
    ("chunks", "delay"),
    [(1, 0.05), (0, 1.0)],  # mid-stream; before the first event (the status line comes at once)
    ids=["mid-stream", "before-the-first-chunk"],
)
def test_a_client_that_leaves_still_has_its_prompt_stored(
    home: Path, upstream: ScriptedUpstream, chunks: int, delay: float
) -> None:
    with LiveServer(home, proxy=proxy_settings(upstream)) as server:
        upstream.enqueue(Reply(text=" ".join(f"w{i}" for i in range(100)), delay=delay))
        _leave_stream(server, "I left early.", "leaver", chunks=chunks)
        assert wait_for(lambda: upstream.requests[-1].cancelled, 10)
        assert stored_turns(server, "leaver", want=1) == [("user", "I left early.")]  # no answer
