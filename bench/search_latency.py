"""Search latency as the store grows: keyword and hybrid p50/p95 at 10k and 100k messages.

    python bench/search_latency.py [--sizes 10000,100000] [--queries 200]

Messages are synthetic (seeded), all in one tenant: the worst case for a per-tenant search.
Vectors come from the hashing embedder at 384 dimensions (the MiniLM size): the cost measured is
the store's (FTS5, numpy top-K, hydration, fusion), not the model's. The baseline, measured in the
same run, is a bare FTS5 ``MATCH ... ORDER BY rank LIMIT 10`` on the same database.
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import queries, sentences
from memstrata import Memory
from memstrata.embeddings.hashing import HashingEmbedder

BATCH = 1000


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[int(p * (len(xs) - 1))]


def fill(mem: Memory, n: int) -> None:
    texts = sentences(n)
    for i in range(0, n, BATCH):
        batch = [
            {"role": "user", "content": t, "id": f"m{j}", "name": "Ann"}
            for j, t in enumerate(texts[i : i + BATCH], start=i)
        ]
        mem.capture(batch, session_key=f"s{i // 10_000}", user_id="big")


def timed(fn: object, queries: list[str]) -> list[float]:
    out = []
    for q in queries:
        t0 = time.perf_counter()
        fn(q)  # type: ignore[operator]
        out.append((time.perf_counter() - t0) * 1000)
    return out


def run(n: int, n_queries: int) -> str:
    home = Path(tempfile.mkdtemp(prefix=f"bench-search-{n}-"))
    qs = queries(n_queries)
    with Memory.open(home, embedder=HashingEmbedder(384)) as mem:
        t0 = time.perf_counter()
        fill(mem, n)
        fill_s = time.perf_counter() - t0
        mem.search_conversations("warm up", user_id="big", mode="hybrid")
        kw = timed(lambda q: mem.search_conversations(q, user_id="big", mode="keyword", limit=10), qs)
        hy = timed(lambda q: mem.search_conversations(q, user_id="big", mode="hybrid", limit=10), qs)
        mem.close(flush=False)
    db = sqlite3.connect(home / "memstrata.db")
    base = timed(
        lambda q: db.execute(
            "SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rank LIMIT 10",
            (" OR ".join(f'"{w}"' for w in q.split()),),
        ).fetchall(),
        qs,
    )
    return (
        f"search_latency n={n}: keyword p50 {statistics.median(kw):.1f} p95 {pct(kw, 0.95):.1f} ms; "
        f"hybrid p50 {statistics.median(hy):.1f} p95 {pct(hy, 0.95):.1f} ms; bare fts5 p50 "
        f"{statistics.median(base):.1f} p95 {pct(base, 0.95):.1f} ms (keyword x{pct(kw, 0.95) / pct(base, 0.95):.1f} at p95)"
        f"; fill {n / fill_s:,.0f} msg/s"
    )


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    for n in (int(x) for x in a.sizes.split(",")):
        print(run(n, a.queries), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
