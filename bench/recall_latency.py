"""Recall latency on a tenant with 10k atoms (hybrid, real MiniLM, warm), beside plain search.

    python bench/recall_latency.py [--atoms 10000] [--queries 200]

The atoms are synthetic (seeded sentences) written straight through the store with their MiniLM
vectors, so the set-up does not measure the pipeline. Then, on a warm memory, each query runs
``recall`` (persona, scene index and a hybrid search of L1+L0, query embedding included) and a
plain ``search`` of the same layers: the plain search is the baseline of the same run.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _synthetic import queries, sentences
from memstrata import Memory
from memstrata.embeddings.sentence_transformers import SentenceTransformerEmbedder
from memstrata.models import Atom, AtomType, Layer, Tenant
from memstrata.retrieval.documents import atom_body
from memstrata.wiring import open_store

TENANT = Tenant("bench")
BATCH = 500


def fill(home: Path, n: int, embedder: SentenceTransformerEmbedder) -> float:
    store = open_store(home)
    store.index.reset_vectors(embedder.name)
    t0 = time.perf_counter()
    texts = sentences(n)
    for i in range(0, n, BATCH):
        atoms = [
            Atom(
                f"a{j}",
                TENANT,
                AtomType.EPISODIC,
                t,
                50,
                "synthetic",
                (f"m{j}",),
                {"message_time": 1_700_000_000_000 + j},
                "s",
                1,
                1,
            )
            for j, t in enumerate(texts[i : i + BATCH], start=i)
        ]
        stored = store.atoms.commit(TENANT, [(a, atom_body(a)) for a in atoms], {}, None)
        vectors = embedder.embed([a.content for a in stored])
        store.index.put_vectors(TENANT, Layer.L1, [a.seq for a in stored], vectors)
    store.close()
    return time.perf_counter() - t0


def pct(xs: list[float], p: float) -> float:
    return sorted(xs)[int(p * (len(xs) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--atoms", type=int, default=10_000)
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-recall-"))
    embedder = SentenceTransformerEmbedder()
    fill_s = fill(home, a.atoms, embedder)
    qs = queries(a.queries)
    with Memory.open(home, embedder=embedder) as mem:
        assert len(mem.atoms(user_id=TENANT.user_id, limit=10)) == 10
        for q in qs[:20]:  # warm: model, matrices, caches
            mem.recall(q, user_id=TENANT.user_id)
        rec, srch, emb = [], [], []
        for q in qs:
            t0 = time.perf_counter()
            embedder.embed([q])
            emb.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            r = mem.recall(q, user_id=TENANT.user_id)
            rec.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            mem.search(q, user_id=TENANT.user_id, layers=("L1", "L0"), limit=5)
            srch.append((time.perf_counter() - t0) * 1000)
        assert r.strategy == "hybrid", r.degradations
        mem.close(flush=False)
    print(
        f"recall_latency: {a.atoms} atoms, hybrid MiniLM, warm: recall p50 {statistics.median(rec):.1f} "
        f"p95 {pct(rec, 0.95):.1f} ms vs plain search p50 {statistics.median(srch):.1f} p95 {pct(srch, 0.95):.1f} ms "
        f"(x{pct(rec, 0.95) / pct(srch, 0.95):.2f} at p95); query embedding alone p50 {statistics.median(emb):.1f} "
        f"p95 {pct(emb, 0.95):.1f} ms; set-up {fill_s:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
