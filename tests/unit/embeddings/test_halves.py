"""Two halves of a layer on two cores: the same result as one core, whatever the helper does."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from memstrata.embeddings import halves, local
from memstrata.embeddings.local import LocalEmbedder, bundled_local_model


def test_both_halves_are_computed_in_order() -> None:
    first, second = halves.on_two_cores(lambda half: np.full(3, half, dtype=np.float32))
    assert first.tolist() == [0, 0, 0] and second.tolist() == [1, 1, 1]


def test_a_busy_helper_leaves_both_halves_to_the_caller() -> None:
    release = threading.Event()
    blocker = halves._pool().submit(release.wait)  # the helper is busy until released
    callers: list[str] = []

    def work(half: int) -> np.ndarray:
        callers.append(threading.current_thread().name)
        return np.full(2, half, dtype=np.float32)

    try:
        first, second = halves.on_two_cores(work)
        assert (first.tolist(), second.tolist()) == ([0, 0], [1, 1])
        assert callers == [threading.current_thread().name] * 2  # both ran here
        assert not blocker.done()
    finally:
        release.set()
        blocker.result()


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
