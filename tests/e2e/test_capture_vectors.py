"""Who makes a captured message's vector: the capture itself, or a running background pipeline."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from pathlib import Path

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
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
        for _ in range(200):
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
        await mem.capture([{"role": "user", "content": "My sister Ines lives in Braga"}])
        await asyncio.sleep(0.2)  # the loop ran, but the gathering window (fake time) is still open
        assert await _unembedded(mem) == 1
        await mem.capture([{"role": "user", "content": "She teaches chemistry"}], session_key="other")
        await mem.run_all()  # forces the backlog: both in one batch
        assert await _unembedded(mem) == 0
    finally:
        await mem.close()
