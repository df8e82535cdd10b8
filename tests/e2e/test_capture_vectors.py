"""Who makes a captured message's vector: the capture itself, or a running background pipeline."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence
from pathlib import Path

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.models import Vectors


class GatedEmbedder:
    """A hashing embedder that waits for ``open`` before embedding anything."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(64)
        self.name, self.dimensions = self._inner.name, self._inner.dimensions
        self.open = threading.Event()

    def embed(self, texts: Sequence[str]) -> Vectors:
        assert self.open.wait(10), "the embedder was never opened"
        return self._inner.embed(texts)


async def _unembedded(mem: AsyncMemory) -> int:
    return (await mem.status()).unembedded


async def test_without_a_background_pipeline_capture_returns_with_the_vectors(
    home: Path, clock: FakeClock
) -> None:
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    try:
        await mem.capture([{"role": "user", "content": "I adopted a greyhound called Pixel"}])
        assert await _unembedded(mem) == 0
    finally:
        await mem.close()


async def test_with_a_background_pipeline_capture_does_not_wait_for_the_model(
    home: Path, clock: FakeClock
) -> None:
    embedder = GatedEmbedder()
    mem = await AsyncMemory.open(home, clock=clock, embedder=embedder, background=True)
    try:
        # Returns while the model is still blocked: the message is stored, its vector pending.
        result = await asyncio.wait_for(
            mem.capture([{"role": "user", "content": "I adopted a greyhound called Pixel"}]), 5
        )
        assert len(result.stored) == 1
        assert await _unembedded(mem) == 1
        embedder.open.set()
        clock.advance(1)  # past the gathering window: the pipeline embeds it
        for _ in range(1500):  # up to 30 s on a slow machine
            if await _unembedded(mem) == 0:
                break
            await asyncio.sleep(0.02)
        assert await _unembedded(mem) == 0
        found = await mem.search("greyhound Pixel", layers=("L0",), mode="vector")
        assert found.strategy == "vector" and found.hits
    finally:
        embedder.open.set()
        await mem.close()


async def test_captured_messages_gather_until_their_window_ends_or_run_all(
    home: Path, clock: FakeClock
) -> None:
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64), background=True)
    try:
        # The loop's first pass after open embeds whatever it finds unembedded, a message stored
        # while it runs included (seen on a slow machine): run_all waits for that pass to end.
        await mem.run_all()
        await mem.capture([{"role": "user", "content": "My sister Ines lives in Braga"}])
        await asyncio.sleep(0.2)  # the loop ran, but the gathering window (fake time) is still open
        assert await _unembedded(mem) == 1
        await mem.capture([{"role": "user", "content": "She teaches chemistry"}], session_key="other")
        await mem.run_all()  # forces the backlog: both in one batch
        assert await _unembedded(mem) == 0
    finally:
        await mem.close()


async def test_without_an_embedder_a_background_capture_arms_no_timer(home: Path, clock: FakeClock) -> None:
    mem = await AsyncMemory.open(home, clock=clock, embedder=None, background=True)
    try:
        await mem.capture([{"role": "user", "content": "Keyword search only here"}])
        assert mem._pipeline.embedding.next_fire() is None  # the loop does not wake for vectors
    finally:
        await mem.close()


class FailingEmbedder(GatedEmbedder):
    def embed(self, texts: Sequence[str]) -> Vectors:
        raise EmbeddingError("model offline")


async def test_after_a_failed_embedding_gathered_messages_wait_for_the_retry(
    home: Path, clock: FakeClock
) -> None:
    mem = await AsyncMemory.open(home, clock=clock, embedder=FailingEmbedder(), background=True)
    backlog = mem._pipeline.embedding
    try:
        await mem.capture([{"role": "user", "content": "First message"}])
        clock.advance(1)  # the window ends; the drain fails and arms the retry
        for _ in range(3000):  # up to 30 s on a slow machine
            if backlog.last_error:
                break
            await asyncio.sleep(0.01)
        assert backlog.last_error and "model offline" in backlog.last_error
        await mem.capture([{"role": "user", "content": "Second message"}])
        fire = backlog.next_fire()
        # Not the gathering window's end (soon, then due at once, over and over): the retry.
        assert fire is not None and fire >= clock.now_ms() + 10_000
    finally:
        await mem.close()


async def test_close_right_after_a_capture_stops_the_background_loop(home: Path, clock: FakeClock) -> None:
    # The capture wakes the loop and close cancels it at once: the cancel must not be lost in
    # between (Python 3.11's wait_for dropped it; the loop went on until something cancelled close).
    for round_ in range(10):
        mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64), background=True)
        await asyncio.sleep(0.05)  # the loop has run and waits for a wake-up
        await mem.capture([{"role": "user", "content": f"Message {round_} about Lisbon"}])
        started = time.monotonic()
        await asyncio.wait_for(mem.close(), 10)  # a lost cancel fails here in 10 s, not for ever
        assert time.monotonic() - started < 3  # it stopped at once (it used to take the idle poll)
