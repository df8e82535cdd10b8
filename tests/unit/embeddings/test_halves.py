"""Two halves of a layer on two cores: the same result as one core, whatever the helper does."""

from __future__ import annotations

import threading
import time
from concurrent.futures import Future

import numpy as np
import pytest

from memstrata.embeddings import halves, local
from memstrata.embeddings.local import LocalEmbedder, bundled_local_model


def test_both_halves_are_computed_in_order() -> None:
    first, second = halves.on_two_cores(lambda half: np.full(3, half, dtype=np.float32))
    assert first.tolist() == [0, 0, 0] and second.tolist() == [1, 1, 1]


def _busy_helpers(release: threading.Event) -> list[Future[bool]]:
    """Every helper busy until ``release`` is set."""
    pool = halves._pool()
    return [pool.submit(release.wait) for _ in range(pool._max_workers)]


def test_a_busy_helper_leaves_both_halves_to_the_caller() -> None:
    release = threading.Event()
    blockers = _busy_helpers(release)
    callers: list[str] = []

    def work(half: int) -> np.ndarray:
        callers.append(threading.current_thread().name)
        return np.full(2, half, dtype=np.float32)

    try:
        first, second = halves.on_two_cores(work)
        assert (first.tolist(), second.tolist()) == ([0, 0], [1, 1])
        assert callers == [threading.current_thread().name] * 2  # both ran here
        assert not any(b.done() for b in blockers)
    finally:
        release.set()
        for b in blockers:
            b.result()


def test_spread_answers_in_order_and_the_caller_does_its_share() -> None:
    callers: set[str] = set()
    me = threading.current_thread().name
    caller_took_one = threading.Event()

    def work(i: int) -> int:
        callers.add(threading.current_thread().name)
        if threading.current_thread().name == me:
            caller_took_one.set()
        else:  # a helper waits for the caller's first share: it cannot drain everything first
            assert caller_took_one.wait(30)
        return i * i

    assert halves.spread(work, 8) == [i * i for i in range(8)]
    assert threading.current_thread().name in callers  # the caller is one of the threads
    assert halves.spread(work, 0) == []


def test_spread_with_busy_helpers_runs_everything_in_the_caller() -> None:
    release = threading.Event()
    blockers = _busy_helpers(release)
    callers: list[str] = []

    def work(i: int) -> int:
        callers.append(threading.current_thread().name)
        return i

    try:
        assert halves.spread(work, 5) == list(range(5))
        assert callers == [threading.current_thread().name] * 5
    finally:
        release.set()
        for b in blockers:
            b.result()


def test_spread_raises_the_first_error_after_every_share_ended() -> None:
    started: list[int] = []

    def work(i: int) -> int:
        started.append(i)
        if i == 1:
            raise ValueError("group 1")
        time.sleep(0.01)
        return i

    with pytest.raises(ValueError, match="group 1"):
        halves.spread(work, 50)
    assert len(started) < 50  # nothing new starts after the failure


@pytest.mark.skipif(bundled_local_model() is None, reason="the shipped model is not installed")
def test_a_batch_takes_one_thread_fewer_than_the_cores_it_spreads_over() -> None:
    embedder = LocalEmbedder()
    texts = [f"Sentence number {i} about the trip to Porto with Tom and Maya in June." for i in range(64)]
    embedder.embed(texts)
    helpers = [t for t in threading.enumerate() if t.name.startswith("memstrata-embed")]
    assert len(helpers) <= max(1, local._WORKERS - 1)


@pytest.mark.skipif(bundled_local_model() is None, reason="the shipped model is not installed")
def test_halved_layers_give_the_one_core_vectors() -> None:
    embedder = LocalEmbedder()
    embedder.embed(["warm up"])
    model, tokenizer = embedder._model()
    batch = [
        tokenizer.encode(t) for t in ("Where does Maya work?", "She moved to Porto in June 2025, with Tom.")
    ]
    whole = model.encode(batch)
    halved = model.encode(batch, halves.on_two_cores)
    assert float(np.min(np.sum(whole * halved, axis=1))) > 0.99999


@pytest.mark.skipif(bundled_local_model() is None, reason="the shipped model is not installed")
def test_query_passes_without_halves_stay_on_one_core_and_give_the_same_vectors(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = ["Where does Maya work these days, and since when exactly?"]
    halved = LocalEmbedder().embed_queries(texts)

    def no_helper(work: object) -> None:
        raise AssertionError("a query pass without halves asked for the second core")

    monkeypatch.setattr(local, "on_two_cores", no_helper)
    monkeypatch.setattr(local, "blas_runs_thin_products", lambda: False)  # thin passes: one core anyway
    monkeypatch.setattr(local, "_WORKERS", 2)  # a one-core machine never halves
    with pytest.raises(AssertionError, match="second core"):
        LocalEmbedder().embed_queries(texts)  # the check sees a halved pass
    one_core = LocalEmbedder(query_halves=False).embed_queries(texts)
    np.testing.assert_allclose(one_core, halved, atol=1e-5)
