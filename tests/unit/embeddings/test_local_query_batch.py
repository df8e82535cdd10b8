"""The local model's query path: batched queries give the single-query vectors (1e-5)."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from memstrata import Memory
from memstrata.embeddings.local import LocalEmbedder
from memstrata.models import QueryEmbeddingStatus
from memstrata.ports import QueryFirstEmbedder
from memstrata.retrieval.query_vectors import QueryVectors
from tests.unit.embeddings.local_texts import AWKWARD, locomo_texts

QUESTIONS = [
    "Where did Maya move to last spring?",
    "When is Caroline's birthday?",
    "What does Jon do for work, and since when?",
    "Hi",
    *AWKWARD,
    *locomo_texts(40)[20:],
]


@pytest.fixture(scope="module")
def minilm() -> LocalEmbedder:
    return LocalEmbedder()


def test_the_local_model_tells_queries_from_batches(minilm: LocalEmbedder) -> None:
    assert isinstance(minilm, QueryFirstEmbedder)


@pytest.mark.parametrize("n", [1, 4, 16, len(QUESTIONS)])
def test_batched_queries_equal_single_ones(minilm: LocalEmbedder, n: int) -> None:
    texts = QUESTIONS[:n]
    batched = minilm.embed_queries(texts)
    assert batched.shape == (n, 384)
    for text, row in zip(texts, batched, strict=True):
        np.testing.assert_allclose(row, minilm.embed([text])[0], atol=1e-5)


def test_concurrent_searches_share_passes_and_keep_their_vectors(minilm: LocalEmbedder) -> None:
    queries = QueryVectors(minilm, cache_size=0)
    texts = QUESTIONS[:16] * 3
    start = threading.Barrier(16)

    def ask(text: str) -> np.ndarray:
        start.wait()
        return queries.vector(text)

    with ThreadPoolExecutor(max_workers=16) as pool:
        got = list(pool.map(ask, texts))
    for text, vector in zip(texts, got, strict=True):
        np.testing.assert_allclose(vector, minilm.embed([text])[0], atol=1e-5)
    st = queries.status()
    assert st.queries == len(texts)
    assert st.passes < len(texts)  # 16 threads at once cannot all have run alone
    assert st.batched > 0


def test_a_memorys_status_counts_its_query_embeddings(tmp_path: Path) -> None:
    with Memory.open(tmp_path / "data", embedder=LocalEmbedder()) as mem:
        mem.capture([{"role": "user", "content": "I adopted a greyhound called Pixel."}], session_key="s")
        assert mem.status().query_embedding == QueryEmbeddingStatus()
        with ThreadPoolExecutor(max_workers=8) as pool:
            found = list(pool.map(lambda q: mem.search(q, layers=("L0",)), QUESTIONS[:8]))
        again = mem.search(QUESTIONS[0], layers=("L0",))
        st = mem.status().query_embedding
    assert all(r.strategy == "hybrid" for r in [*found, again])
    assert st is not None
    assert (st.queries, st.cached) == (9, 1)
    assert 1 <= st.passes <= 8 and st.cache_entries == 8
