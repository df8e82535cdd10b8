"""The two-core matrix product used for short inputs: same result as one core, whatever the helper does."""

from __future__ import annotations

import threading

import numpy as np

from memstrata.embeddings import halves


def _pair(rows: int, inner: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    return rng.standard_normal((rows, inner), dtype=np.float32), rng.standard_normal(
        (inner, cols), dtype=np.float32
    )


def test_split_product_equals_numpy() -> None:
    x, w = _pair(18, 384, 1537)  # an odd width: the halves differ by one column
    np.testing.assert_allclose(halves.split_matmul(x, w), x @ w, rtol=1e-5, atol=1e-4)


def test_split_product_writes_into_a_given_view() -> None:
    x, w = _pair(5, 64, 32)
    target = np.full((10, 32), 9.0, dtype=np.float32)
    halves.split_matmul(x, w, out=target[2:7])
    np.testing.assert_allclose(target[2:7], x @ w, rtol=1e-5, atol=1e-4)
    assert (target[:2] == 9.0).all() and (target[7:] == 9.0).all()


def test_a_busy_helper_leaves_the_whole_product_to_the_caller() -> None:
    x, w = _pair(4, 32, 48)
    release = threading.Event()
    blocker = halves._pool().submit(release.wait)  # the helper is busy until released
    try:
        np.testing.assert_allclose(halves.split_matmul(x, w), x @ w, rtol=1e-5, atol=1e-4)
        assert not blocker.done()  # the product finished without the helper
    finally:
        release.set()
        blocker.result()
