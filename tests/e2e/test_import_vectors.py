"""An import with its pipeline makes the messages' vectors beside extraction, not before it (L1
reads no message vector), and loses none when the embedder fails."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from memstrata.clock import FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.interchange.sessions import ImportSession
from memstrata.memory import AsyncMemory
from memstrata.models import AtomDraft, ExtractionWindow, NewMessage, Tenant, Vectors
from memstrata.retrieval.vectors import VectorState
from memstrata.settings import load_settings
from memstrata.stores.sqlite.store import SqliteStore
from memstrata.wiring import Parts
from tests.support.engines import NoDedup, RecordingExtractor

SAID = " said: "  # in every atom the recording extractor makes, in no message


class _SignallingExtractor(RecordingExtractor):
    def __init__(self) -> None:
        super().__init__()
        self.started = threading.Event()

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        self.started.set()
        return await super().extract(window)


class _MessagesWaitForExtraction(HashingEmbedder):
    """Embeds messages only once extraction has started (or after 5 s), noting which it was."""

    def __init__(self, extractor: _SignallingExtractor, *, fail_messages: bool = False) -> None:
        super().__init__(64)
        self._extractor = extractor
        self._fail = fail_messages
        self.messages_during_extraction: list[bool] = []

    def embed(self, texts: Sequence[str]) -> Vectors:
        if not any(SAID in t for t in texts):
            if self._fail:
                raise EmbeddingError("scripted model failure")
            self.messages_during_extraction.append(self._extractor.started.wait(5))
        return super().embed(texts)


def _memory(home: Path, embedder: HashingEmbedder, extractor: RecordingExtractor) -> AsyncMemory:
    store = SqliteStore(home)
    parts = Parts(store, FakeClock(), VectorState(store.index, embedder), extractor, NoDedup(), None)
    return AsyncMemory(parts, load_settings(home))


def _sessions() -> list[ImportSession]:
    out = []
    for n, user in enumerate(("ann", "bob")):
        base = 1_700_000_000_000 + n * 86_400_000
        messages = tuple(
            NewMessage("user", f"{user} message {i}: planning the trip to Lisbon", timestamp=base + i)
            for i in range(4)
        )
        out.append(ImportSession(Tenant(user, "agent"), "s1", "s1", messages))
    return out


async def test_messages_are_embedded_beside_extraction(home: Path) -> None:
    extractor = _SignallingExtractor()
    embedder = _MessagesWaitForExtraction(extractor)
    mem = _memory(home, embedder, extractor)
    try:
        report = await mem.import_sessions(_sessions())
        status = await mem.status()
    finally:
        await mem.close()

    assert report.stored == 8 and report.atoms == 8
    assert embedder.messages_during_extraction and all(embedder.messages_during_extraction)
    assert status.unembedded == 0  # every message and atom has its vector
    assert not report.degradations


async def test_a_failed_embedding_is_reported_and_the_messages_stay(home: Path) -> None:
    extractor = _SignallingExtractor()
    mem = _memory(home, _MessagesWaitForExtraction(extractor, fail_messages=True), extractor)
    try:
        report = await mem.import_sessions(_sessions())
        status = await mem.status()
    finally:
        await mem.close()

    assert report.stored == 8 and report.atoms == 8  # extraction did not wait for the vectors
    assert any("scripted model failure" in d and "retried" in d for d in report.degradations)
    assert status.unembedded == 8  # the messages, left to the backlog's retry; the atoms have theirs
