"""Capture throughput (keyword-only) against a bare SQLite insert baseline measured in the same run.

    python bench/capture_throughput.py [--messages 20000] [--turns 2000]

Batched capture: messages/s through ``Memory.capture`` (sanitize, index text, FTS5, mirror,
scheduler state) vs plain ``INSERT`` of the same rows into a table with an FTS5 index.
Per-turn latency: one ``capture`` call per message (p50/p99), the agent's per-turn cost.
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
from _synthetic import sentences
from memstrata import Memory

BATCH = 500


def baseline(texts: list[str], folder: Path) -> float:
    db = sqlite3.connect(folder / "baseline.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=NORMAL")
    db.execute("CREATE TABLE m (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, content TEXT)")
    db.execute("CREATE VIRTUAL TABLE f USING fts5(body, tokenize='porter unicode61 remove_diacritics 2')")
    t0 = time.perf_counter()
    for i in range(0, len(texts), BATCH):
        db.execute("BEGIN")
        for j, t in enumerate(texts[i : i + BATCH], start=i):
            cur = db.execute("INSERT INTO m (id, content) VALUES (?, ?)", (f"b{j}", t))
            db.execute("INSERT INTO f (rowid, body) VALUES (?, ?)", (cur.lastrowid, t))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - t0
    db.close()
    return len(texts) / elapsed


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, default=20_000)
    ap.add_argument("--turns", type=int, default=2_000)
    a = ap.parse_args()
    texts = sentences(a.messages)
    folder = Path(tempfile.mkdtemp(prefix="bench-capture-"))
    base_rate = baseline(texts, folder)
    with Memory.open(folder / "mem", embedder=None) as mem:
        t0 = time.perf_counter()
        for i in range(0, len(texts), BATCH):
            batch = [
                {"role": "user", "content": t, "name": "Ann", "id": f"m{j}"}
                for j, t in enumerate(texts[i : i + BATCH], start=i)
            ]
            mem.capture(batch, session_key=f"s{i // 5000}")
        rate = len(texts) / (time.perf_counter() - t0)
        lat = []
        for i, t in enumerate(sentences(a.turns, seed=11)):
            t0 = time.perf_counter()
            mem.capture([{"role": "user", "content": t, "id": f"turn{i}"}], session_key="live")
            lat.append((time.perf_counter() - t0) * 1000)
        mem.close(flush=False)
    lat.sort()
    p50, p99 = statistics.median(lat), lat[int(0.99 * (len(lat) - 1))]
    print(
        f"capture_throughput: batched {rate:,.0f} msg/s vs bare sqlite+fts5 {base_rate:,.0f} msg/s "
        f"(x{rate / base_rate:.2f}); single-turn p50 {p50:.2f} ms p99 {p99:.2f} ms "
        f"({a.messages} batched, {a.turns} single, keyword-only)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
