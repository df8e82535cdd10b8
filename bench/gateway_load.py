"""The HTTP gateway under load: N agents capturing and recalling against one `memstrata serve`.

    python bench/gateway_load.py [--clients 50] [--seconds 20] [--think-ms 200] [--ramp-ms THINK]
                                 [--embedder hashing] [--query-process on|off]
                                 [--cold]

Each client is an agent of its own tenant, running turns until the time is up: `POST /v1/recall`
for the user's message, a pause standing for the model call (`--think-ms`), `POST /v1/capture` of
the user's message and the reply, the same pause again for the user's next message. Every tenth
turn a `GET /v1/health` rides along as the same-run baseline (the cost of the HTTP path alone).
The server is a real `memstrata serve` subprocess on loopback with its worker process running the
pipeline (L1 and L2 work competes with the requests for the cores, as in production); the load generator runs
in this process, on the same machine. `--think-ms 0` saturates the server instead.

Before the clock starts, one turn of a tenant of its own warms the server up: a new store
chooses its embedding model at its first capture, and a server's local model then starts its query
process, so the first seconds of a cold run measure loading, not load (`--cold` skips it: then
the clients' first recalls run while the model loads; docs/benchmarks.md). Its time is printed.

Clients start at random offsets within the first `--ramp-ms` (default: one think time), as agents
of different users do; `--ramp-ms 0` starts all of them at the same instant instead, and then the
first recalls queue behind each other: 50 simultaneous first requests measured recall p95 81 ms
against 12 ms for the same run's later turns (docs/benchmarks.md).

Prints requests/s and p50/p95/p99 per route (client-side, wall clock), the server's peak RSS, and
checks that every message a 200 acknowledged is stored exactly once (and nothing else is), and
how long after the load the server's worker caught up with the embeddings (captures do not wait
for it). A line gives the pipeline as the load ended (atoms, the L1 backlog). A last line gives
the server's query-embedding figures from `/v1/status` (passes, batched queries, cache hits, the
query process's passes), when it has an embedder. `--query-process off` keeps the local model's
query passes in the server's process (`embedding.query_process`, on in `memstrata serve`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving
from _synthetic import queries, sentences


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def children_peak_rss_mb(pid: int) -> float:
    """The peak RSS of the server's child processes (its query and batch processes), summed."""
    tasks = Path(f"/proc/{pid}/task").iterdir()  # a child is listed under the thread that started it
    children = [child for task in tasks for child in (task / "children").read_text().split()]
    return sum(peak_rss_mb(int(child)) for child in children)


class Stats:
    def __init__(self) -> None:
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.errors: list[str] = []
        self.acked: dict[str, list[str]] = defaultdict(list)  # user -> message ids stored
        self.vectors_after: float | None = None  # seconds until every record had its vector
        self.pipeline_at_end: dict[str, Any] | None = None  # /v1/status as the load ended
        self.warm_up: float | None = None  # seconds of the warm-up turn (None: started cold)

    async def timed(self, name: str, call: Any) -> httpx.Response | None:
        t0 = time.perf_counter()
        try:
            r: httpx.Response = await call
        except httpx.HTTPError as exc:
            self.errors.append(f"{name}: {type(exc).__name__}")
            return None
        self.ms[name].append((time.perf_counter() - t0) * 1000)
        if r.status_code != 200:
            self.errors.append(f"{name}: {r.status_code} {r.text[:200]}")
        return r


async def agent(
    n: int, http: httpx.AsyncClient, stats: Stats, until: float, think: float, ramp: float
) -> None:
    user, rng = f"agent-{n}", random.Random(n)
    said, asked = sentences(400, seed=n), queries(400, seed=n + 10_000)
    turn = 0
    await asyncio.sleep(ramp * rng.random())
    while time.monotonic() < until:
        await stats.timed(
            "recall", http.post("/v1/recall", json={"query": asked[turn % 400], "user_id": user})
        )
        await asyncio.sleep(think * rng.uniform(0.5, 1.5))
        ids = [f"{user}-{turn}-u", f"{user}-{turn}-a"]
        body = {
            "user_id": user,
            "session_key": f"chat-{turn // 20}",
            "messages": [
                {"role": "user", "content": said[turn % 400], "id": ids[0]},
                {"role": "assistant", "content": f"Noted about {said[(turn + 7) % 400]}", "id": ids[1]},
            ],
        }
        r = await stats.timed("capture", http.post("/v1/capture", json=body))
        if r is not None and r.status_code == 200:
            stats.acked[user] += [m["id"] for m in r.json()["stored"]]
        if turn % 10 == 0:
            await stats.timed("health", http.get("/v1/health"))
        turn += 1
        await asyncio.sleep(think * rng.uniform(0.5, 1.5))


async def stored_ids(http: httpx.AsyncClient, user: str) -> list[str]:
    ids: list[str] = []
    after = 0
    while True:
        page = (
            await http.get("/v1/messages", params={"user_id": user, "after_seq": after, "limit": 1000})
        ).json()
        if not page:
            return ids
        ids += [m["id"] for m in page]
        after = page[-1]["seq"]


async def warm_up(http: httpx.AsyncClient, limit: float = 120.0) -> float:
    """One turn of a tenant of its own before the clock starts, then wait until the server's
    embedder is ready (a new store chooses its model at its first capture, and a server's local
    model then starts its query and batch processes). Returns the seconds it took."""
    t0 = time.monotonic()
    message = {"role": "user", "content": sentences(1, seed=-1)[0], "id": "warm-up-0"}
    turn = {"user_id": "warm-up", "session_key": "warm-up", "messages": [message]}
    (await http.post("/v1/capture", json=turn)).raise_for_status()
    asked = {"query": queries(1, seed=-1)[0], "user_id": "warm-up"}
    (await http.post("/v1/recall", json=asked)).raise_for_status()
    while time.monotonic() - t0 < limit:
        embedding = (await http.get("/v1/status")).json().get("query_embedding")
        busy = ("starting", "restarting")
        if embedding is None or embedding["process"] not in busy:
            break
        await asyncio.sleep(0.1)
    return time.monotonic() - t0


async def run(
    url: str, clients: int, seconds: float, think: float, ramp: float, *, cold: bool = False
) -> tuple[Stats, float, bool]:
    gc.freeze()  # the load generator's own full GC passes would add to every latency it measures
    stats = Stats()
    limits = httpx.Limits(max_connections=clients + 5, max_keepalive_connections=clients + 5)
    async with httpx.AsyncClient(base_url=url, timeout=60, limits=limits) as http:
        stats.warm_up = None if cold else await warm_up(http)
        started = time.monotonic()
        await asyncio.gather(*(agent(n, http, stats, started + seconds, think, ramp) for n in range(clients)))
        elapsed = time.monotonic() - started
        stats.pipeline_at_end = (await http.get("/v1/status")).json()
        once = True
        for n in range(clients):
            user = f"agent-{n}"
            stored = await stored_ids(http, user)
            once &= sorted(stored) == sorted(stats.acked[user]) and len(stored) == len(set(stored))
        stats.vectors_after = await vectors_caught_up(http)
    return stats, elapsed, once


async def vectors_caught_up(http: httpx.AsyncClient, limit: float = 120.0) -> float | None:
    """Seconds after the load until no record waits for a vector (a server embeds captured
    messages in the background), or None when it did not happen within ``limit``."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit:
        if (await http.get("/v1/status")).json()["unembedded"] == 0:
            return time.monotonic() - t0
        await asyncio.sleep(0.2)
    return None


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--clients", type=int, default=50)
    p.add_argument("--seconds", type=float, default=20.0)
    p.add_argument("--think-ms", type=float, default=200.0, help="Pause for the model, and for the user.")
    p.add_argument(
        "--ramp-ms", type=float, default=None, help="Spread of client start times (default: --think-ms)."
    )
    p.add_argument(
        "--embedder", default="hashing", help="hashing (default), none, or default (the installed model)."
    )
    p.add_argument(
        "--query-process", choices=("on", "off"), default="on", help="The local model's query process."
    )
    p.add_argument(
        "--cold",
        action="store_true",
        help="No warm-up turn: the clients' first turns meet a server whose model is not chosen yet.",
    )
    a = p.parse_args()
    ramp = a.think_ms if a.ramp_ms is None else a.ramp_ms
    settings = {
        "embedding__query_process": "true" if a.query_process == "on" else "false",
    }
    if a.embedder != "default":
        settings["embedding__provider"] = a.embedder
    env = server_env(**settings)
    with tempfile.TemporaryDirectory() as tmp, serving(Path(tmp) / "data", env) as server:
        stats, elapsed, once = asyncio.run(
            run(server.url, a.clients, a.seconds, a.think_ms / 1000, ramp / 1000, cold=a.cold)
        )
        rss = peak_rss_mb(server.proc.pid)
        child_rss = children_peak_rss_mb(server.proc.pid)
        embedder = httpx.get(server.url + "/v1/health").json()["embedder"]
        status = httpx.get(server.url + "/v1/status", timeout=60).json()
        batching = status.get("query_embedding")
    total = sum(len(v) for v in stats.ms.values())
    print(f"{'route':<8} {'n':>7} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'mean ms':>8}")
    for name in ("capture", "recall", "health"):
        v = stats.ms[name]
        print(
            f"{name:<8} {len(v):>7} {pct(v, 0.5):>8.1f} {pct(v, 0.95):>8.1f} {pct(v, 0.99):>8.1f} {statistics.fmean(v) if v else 0:>8.1f}"
        )
    for err in stats.errors[:10]:
        print("error:", err)
    captured = sum(len(v) for v in stats.acked.values())
    cap, rec = stats.ms["capture"], stats.ms["recall"]
    after = stats.vectors_after
    vectors = "NO (still waiting after 120 s)" if after is None else f"yes, {after:.1f} s after the load"
    print(
        f"gateway_load: {a.clients} clients, {elapsed:.0f} s, think {a.think_ms:.0f} ms, ramp {ramp:.0f} ms, embedder {embedder}: "
        f"{total / elapsed:.0f} req/s; capture p99 {pct(cap, 0.99):.1f} ms, recall p95 {pct(rec, 0.95):.1f} ms; "
        f"health p95 {pct(stats.ms['health'], 0.95):.1f} ms (baseline); peak server RSS {rss:.0f} MB"
        f"{f' (+{child_rss:.0f} MB its child processes)' if child_rss else ''}; "
        f"{captured} messages captured, each stored exactly once: {'yes' if once else 'NO'}; "
        f"every vector made: {vectors}; errors {len(stats.errors)}; "
        + ("started cold" if stats.warm_up is None else f"warm-up turn {stats.warm_up:.1f} s")
    )
    end = stats.pipeline_at_end
    if end is not None:
        lag = [x["lag"] for x in end["sessions"] if x["lag"]]
        print(
            f"pipeline at the load's end (the server's workers run it): {end['atoms']} atoms, "
            f"L1 backlog {sum(lag)} messages in {len(lag)} sessions"
        )
    if batching:
        b = batching
        print(
            f"query embeddings: {b['queries']} queries, {b['cached']} cached, {b['passes']} passes, "
            f"{b['batched']} batched (largest {b['largest']}), wait max {b['wait_ms_max']:.1f} ms; "
            f"query process {b['process']}: {b['process_passes']} passes, {b['process_failures']} failures"
        )


if __name__ == "__main__":
    main()
