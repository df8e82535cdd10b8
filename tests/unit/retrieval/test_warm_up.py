"""A server readies its query embedder before it takes requests (``VectorState.warm_up``, called
by ``wiring.assemble`` when ``embedding.query_process`` is on): the model decided for the store is
warmed, an undecided store chooses nothing early, and a model that fails to load is logged, not
raised (queries then report it as before)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.clock import FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.models import QueryPassReport, Vectors
from memstrata.ports import Embedder
from memstrata.retrieval.vectors import VectorState
from memstrata.stores.sqlite.store import SqliteStore
from memstrata.wiring import WARM_UP_SECONDS


class Warming(HashingEmbedder):
    """A query-first embedder that notes each warm-up (and fails it when told to)."""

    def __init__(self, *, fails: bool = False) -> None:
        super().__init__(32)
        self.warmed: list[float] = []
        self.fails = fails

    def embed_queries(self, texts: Sequence[str]) -> Vectors:
        return self.embed(texts)

    def query_report(self) -> QueryPassReport:
        return QueryPassReport()

    def warm_up(self, within: float) -> None:
        if self.fails:
            raise EmbeddingError("the weights are corrupt")
        self.warmed.append(within)


class Undecided:
    """An embedder choice for a store without messages: nothing may be chosen by a warm-up."""

    def __init__(self, model: Warming) -> None:
        self.model = model

    def for_model(self, name: str) -> Embedder:
        return self.model

    def for_texts(self, texts: Sequence[str]) -> Embedder:
        raise AssertionError("a warm-up chose a model for a store without messages")


def test_the_stores_embedder_is_warmed_within_the_bound(tmp_path: Path) -> None:
    store, model = SqliteStore(tmp_path / "d"), Warming()
    try:
        VectorState(store.index, model).warm_up(2.5)
    finally:
        store.close()
    assert model.warmed == [2.5]


def test_a_store_without_messages_chooses_no_model_to_warm(tmp_path: Path) -> None:
    store, model = SqliteStore(tmp_path / "d"), Warming()
    try:
        vectors = VectorState(store.index, Undecided(model), sample=list)
        vectors.warm_up(2.5)
        assert vectors.undecided and store.index.embedding_model() is None
    finally:
        store.close()
    assert model.warmed == []


def test_a_model_that_fails_to_load_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path / "d")
    try:
        with caplog.at_level(logging.WARNING, logger="memstrata.retrieval.vectors"):
            VectorState(store.index, Warming(fails=True)).warm_up(2.5)
    finally:
        store.close()
    assert "did not load: the weights are corrupt" in caplog.text


def test_an_embedder_with_nothing_to_load_is_left_alone(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d")
    try:
        VectorState(store.index, HashingEmbedder(32)).warm_up(2.5)  # no warm_up: nothing happens
    finally:
        store.close()


def test_a_server_opens_warmed_and_the_library_does_not(home: Path, clock: FakeClock) -> None:
    served, library, reader = Warming(), Warming(), Warming()
    with Memory.open(home, clock=clock, embedder=served, embedding={"query_process": True}):
        pass
    with Memory.open(home, clock=clock, embedder=library):
        pass
    with Memory.open(home, read_only=True, embedder=reader, embedding={"query_process": True}):
        pass
    assert (served.warmed, library.warmed, reader.warmed) == ([WARM_UP_SECONDS], [], [])
