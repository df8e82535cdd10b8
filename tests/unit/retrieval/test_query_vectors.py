"""QueryVectors: concurrent queries share a pass, a lone query waits for none, repeats are cached.

The embedder here is the shipped hashing one behind a gate the test opens, so which queries share a
pass is decided by the test, not by timing luck.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import EmbeddingError
from memstrata.models import Vectors
from memstrata.retrieval.query_vectors import QueryVectors


class GatedEmbedder:
    """Hashing vectors; each pass records its texts and, while ``hold`` is set, waits for ``go``."""

    def __init__(self, fail_on: str | None = None) -> None:
        self._inner = HashingEmbedder(64)
        self.name = "gated-hashing"
        self.dimensions = 64
        self.passes: list[list[str]] = []
        self.entered = threading.Event()
        self.go = threading.Event()
        self.hold = False
        self.fail_on = fail_on

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.passes.append(list(texts))
        self.entered.set()
        if self.hold:
            assert self.go.wait(10)
        if self.fail_on in texts:
            raise EmbeddingError("the model fell over")
        return self._inner.embed(texts)


def _waiters(queries: QueryVectors) -> int:
    """Queries queued behind the running pass."""
    with queries._lock:
        return len(queries._queue)


def _until(check: Callable[[], bool], seconds: float = 10.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.002)


def test_a_lone_query_runs_at_once_in_its_own_pass() -> None:
    emb = GatedEmbedder()
    queries = QueryVectors(emb)
    np.testing.assert_array_equal(
        queries.vector("where is Maya"), HashingEmbedder(64).embed(["where is Maya"])[0]
    )
    st = queries.status()
    assert (st.queries, st.passes, st.batched, st.largest) == (1, 1, 0, 1)
    assert st.wait_ms_max < 1000  # no gathering window (a slow machine may pause a thread a while)


def test_queries_arriving_during_a_pass_share_the_next_one() -> None:
    emb = GatedEmbedder()
    emb.hold = True
    queries = QueryVectors(emb)
    texts = [f"question number {i}" for i in range(9)]
    with ThreadPoolExecutor(max_workers=9) as pool:
        first = pool.submit(queries.vector, texts[0])
        assert emb.entered.wait(10)
        rest = [pool.submit(queries.vector, t) for t in texts[1:]]
        _until(lambda: _waiters(queries) == 8)
        emb.hold = False
        emb.go.set()
        got = [first.result(10)] + [f.result(10) for f in rest]
    # Eight queries, one pass over the weights; the pool's threads reach the queue in any order.
    assert [emb.passes[0], sorted(emb.passes[1])] == [texts[:1], texts[1:]]
    assert len(emb.passes) == 2
    expected = HashingEmbedder(64).embed(texts)
    for row, vector in zip(expected, got, strict=True):
        np.testing.assert_array_equal(vector, row)
    st = queries.status()
    assert (st.queries, st.passes, st.batched, st.largest) == (9, 2, 8, 8)


def test_a_pass_holds_at_most_max_batch_queries_and_the_rest_follow() -> None:
    emb = GatedEmbedder()
    emb.hold = True
    queries = QueryVectors(emb, max_batch=3)
    with ThreadPoolExecutor(max_workers=8) as pool:
        first = pool.submit(queries.vector, "q0")
        assert emb.entered.wait(10)
        rest = [pool.submit(queries.vector, f"q{i}") for i in range(1, 8)]
        _until(lambda: _waiters(queries) == 7)
        emb.hold = False
        emb.go.set()
        for f in [first, *rest]:
            f.result(10)
    assert [len(p) for p in emb.passes] == [1, 3, 3, 1]
    assert sorted(t for p in emb.passes for t in p) == sorted(f"q{i}" for i in range(8))


def test_the_same_text_is_embedded_once_and_then_cached() -> None:
    emb = GatedEmbedder()
    emb.hold = True
    queries = QueryVectors(emb)
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(queries.vector, "a")
        assert emb.entered.wait(10)
        twins = [pool.submit(queries.vector, "b"), pool.submit(queries.vector, "b")]
        _until(lambda: _waiters(queries) == 2)
        emb.hold = False
        emb.go.set()
        first.result(10)
        one, two = (f.result(10) for f in twins)
    np.testing.assert_array_equal(one, two)
    assert emb.passes == [["a"], ["b"]]  # one row for both
    queries.vector("a")
    assert len(emb.passes) == 2
    st = queries.status()
    assert (st.queries, st.cached, st.cache_entries) == (4, 1, 2)


def test_the_cache_is_bounded_and_drops_the_least_recently_used() -> None:
    emb = GatedEmbedder()
    queries = QueryVectors(emb, cache_size=2)
    for text in ("a", "b", "a", "c", "a", "b"):
        queries.vector(text)
    # a, b embedded; a cached; c embedded (b dropped); a cached; b embedded again
    assert emb.passes == [["a"], ["b"], ["c"], ["b"]]
    assert queries.status().cache_entries == 2


def test_a_returned_vector_cannot_change_the_cached_one() -> None:
    queries = QueryVectors(GatedEmbedder())
    queries.vector("a")[:] = 0.0
    assert np.linalg.norm(queries.vector("a")) == pytest.approx(1.0)


def test_a_failed_pass_raises_to_each_of_its_queries_and_the_queue_moves_on() -> None:
    emb = GatedEmbedder(fail_on="boom")
    emb.hold = True
    queries = QueryVectors(emb)
    with ThreadPoolExecutor(max_workers=3) as pool:
        first = pool.submit(queries.vector, "fine")
        assert emb.entered.wait(10)
        doomed = [pool.submit(queries.vector, "boom"), pool.submit(queries.vector, "also in the pass")]
        _until(lambda: _waiters(queries) == 2)
        emb.hold = False
        emb.go.set()
        assert first.result(10).shape == (64,)
        for f in doomed:
            with pytest.raises(EmbeddingError, match="fell over"):
                f.result(10)
    assert queries.vector("after").shape == (64,)  # nobody holds the pass
    assert queries.status().cache_entries == 2  # failures are not cached


def test_a_call_with_several_texts_makes_them_in_one_pass_cached_ones_aside() -> None:
    emb = GatedEmbedder()
    queries = QueryVectors(emb)
    queries.vector("the user")
    got = queries.vectors(["where do I live", "where does the user live", "the user"])
    assert emb.passes == [["the user"], ["where do I live", "where does the user live"]]
    want = HashingEmbedder(64).embed(["where do I live", "where does the user live", "the user"])
    for vector, expected in zip(got, want, strict=True):
        np.testing.assert_array_equal(vector, expected)
    st = queries.status()
    assert (st.queries, st.cached, st.passes) == (4, 1, 2)


def test_texts_cut_by_max_batch_all_leave_the_queue_even_when_a_pass_fails() -> None:
    emb = GatedEmbedder(fail_on="boom")
    queries = QueryVectors(emb, max_batch=2)
    with pytest.raises(EmbeddingError, match="fell over"):
        queries.vectors(["boom", "a", "b"])
    assert emb.passes == [["boom", "a"], ["b"]]
    assert _waiters(queries) == 0
    assert queries.vector("after").shape == (64,)  # nobody was left holding the lead


def test_bad_limits_are_refused() -> None:
    with pytest.raises(ValueError, match="max_batch"):
        QueryVectors(GatedEmbedder(), max_batch=0)
