"""The SQLite index's kept vector matrices: vectors of later records are appended to the matrix a
search keeps, and every other change makes it read again, so a search through the kept matrix
finds what a search through a matrix read afresh finds, whatever the order of the changes."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from threadpoolctl import threadpool_info

from memstrata.models import Layer, Message, MessageFilter, Role, Tenant, Vectors
from memstrata.stores.sqlite.search import SqliteSearchIndex, _Matrix
from memstrata.stores.sqlite.store import SqliteStore

A = Tenant("a", "main")
B = Tenant("b", "main")


def message(mid: str, tenant: Tenant) -> tuple[Message, str]:
    m = Message(mid, tenant, "s", "s-1", Role.USER, f"text of {mid}", 1_000, 1_001)
    return m, m.content


def unit_rows(seed: int, n: int, dim: int = 8) -> Vectors:
    m = np.random.default_rng(seed).normal(size=(n, dim))
    out: Vectors = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


def test_a_matrix_appends_later_rows_into_its_room_and_old_views_never_see_them() -> None:
    first = _Matrix.of(np.array([1, 2], dtype=np.int64), unit_rows(0, 2))
    grown = first.appended([5], unit_rows(1, 1))
    assert grown is not None and grown.seqs.tolist() == [1, 2, 5]
    again = grown.appended([6, 9], unit_rows(2, 2))
    assert again is not None and again.seqs.tolist() == [1, 2, 5, 6, 9]
    assert len(again.seq_room) >= 5 and grown.seqs.tolist() == [1, 2, 5] and first.seqs.tolist() == [1, 2]
    np.testing.assert_array_equal(again.vectors[:3], grown.vectors)
    # Not later than its last record, out of order, or of another size: read again instead.
    assert again.appended([9], unit_rows(3, 1)) is None
    assert again.appended([12, 11], unit_rows(3, 2)) is None
    assert again.appended([12], unit_rows(3, 1, dim=4)) is None


Step = tuple[str, int, int]  # (what, tenant index, how many or which)
STEPS = st.lists(
    st.tuples(
        st.sampled_from(["capture", "reembed", "drop", "search"]), st.integers(0, 1), st.integers(1, 4)
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None)
@given(steps=STEPS)
def test_searching_the_kept_matrix_finds_what_a_fresh_read_finds(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Step]
) -> None:
    home = tmp_path_factory.mktemp("m")
    store = SqliteStore(home / "data")
    try:
        kept = store.index
        tenants, n = (A, B), 0
        made: dict[Tenant, list[int]] = {A: [], B: []}
        query = unit_rows(99, 1)[0]
        for what, who, count in steps:
            tenant = tenants[who]
            if what == "capture":
                stored = store.messages.append([message(f"m{n + i}", tenant) for i in range(count)])
                n += count
                seqs = [m.seq for m in stored]
                kept.put_vectors(tenant, Layer.L0, seqs, unit_rows(n, len(seqs)))
                made[tenant] += seqs
            elif what == "reembed" and made[tenant]:
                seqs = made[tenant][-count:]
                kept.put_vectors(tenant, Layer.L0, seqs, unit_rows(n + 500, len(seqs)))
            elif what == "drop" and made[tenant]:
                gone = made[tenant][:count]
                kept.drop_vectors(tenant, Layer.L0, gone)
                made[tenant] = made[tenant][count:]
            fresh = SqliteSearchIndex(store.db)
            for t in tenants:
                got = kept.vector(t, MessageFilter(), query, 50)
                want = fresh.vector(t, MessageFilter(), query, 50)
                assert [h.seq for h in got] == [h.seq for h in want]
                np.testing.assert_allclose([h.score for h in got], [h.score for h in want], atol=1e-6)
    finally:
        store.close()


def test_a_matrix_read_while_vectors_change_is_not_kept(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "data")
    try:
        index = store.index
        first = store.messages.append([message("m0", A)])
        index.put_vectors(A, Layer.L0, [first[0].seq], unit_rows(0, 1))
        # A search reads the matrix in another thread; new vectors are written and committed
        # before it finishes: the matrix it read may predate them, so it must not be kept.
        reading, written = threading.Event(), threading.Event()
        query = store.db.query

        def slow_query(sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
            found = query(sql, params)
            if sql.startswith("SELECT seq, vec FROM vectors"):
                reading.set()
                written.wait(10)
            return found

        store.db.query = slow_query  # type: ignore[method-assign]
        t = threading.Thread(target=lambda: index.vector(A, MessageFilter(), unit_rows(0, 1)[0], 10))
        t.start()
        assert reading.wait(10)
        store.db.query = query  # type: ignore[method-assign]
        later = store.messages.append([message("m1", A)])
        index.put_vectors(A, Layer.L0, [later[0].seq], unit_rows(1, 1))
        written.set()
        t.join(10)
        hits = index.vector(A, MessageFilter(), unit_rows(1, 1)[0], 10)
        assert {h.seq for h in hits} == {first[0].seq, later[0].seq}
    finally:
        store.close()


BLAS_THREADS: list[int] = []  # what _BlasProbe saw, one entry a product


def numpy_blas() -> list[dict[str, Any]]:
    """The BLAS libraries numpy's own wheel loaded (another package may load one of its own)."""
    return [lib for lib in threadpool_info() if lib["user_api"] == "blas" and "numpy" in lib["filepath"]]


class _BlasProbe(np.ndarray):
    """A matrix whose product records how many threads BLAS had for it."""

    def __matmul__(self, other: Vectors) -> Vectors:  # type: ignore[override]
        BLAS_THREADS.append(max(lib["num_threads"] for lib in numpy_blas()))
        product: Vectors = np.asarray(self) @ other
        return product


def test_the_cosine_product_runs_on_one_blas_thread(tmp_path: Path) -> None:
    # Beside a busy core OpenBLAS' two threads stalled each other: searches in a loop ran 75-94 a
    # second against 175-344 on one thread (docs/benchmarks.md).
    if not numpy_blas():
        pytest.skip("no BLAS library of numpy's own wheel here")
    store = SqliteStore(tmp_path / "data")
    try:
        index = store.index
        stored = store.messages.append([message(f"m{i}", A) for i in range(3)])
        index.put_vectors(A, Layer.L0, [m.seq for m in stored], unit_rows(0, 3))
        index.vector(A, MessageFilter(), unit_rows(1, 1)[0], 2)  # reads and keeps the matrix
        kept = index._cache[(A, Layer.L0)]
        probe = kept.vectors.view(_BlasProbe)
        index._cache[(A, Layer.L0)] = _Matrix(kept.seqs, probe, kept.seq_room, kept.vector_room)
        BLAS_THREADS.clear()
        hits = index.vector(A, MessageFilter(), unit_rows(1, 1)[0], 2)
        assert len(hits) == 2 and BLAS_THREADS == [1]
    finally:
        store.close()
