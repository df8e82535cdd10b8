"""How long the worker's write transactions hold SQLite's lock while a server captures (issue 51).

    python bench/lock_hold.py [--data /work/shared/data/locomo/locomo-dev.json] [--rate 4]
                              [--embedder default|hashing] [--limit 900]

On SQLite a `memstrata serve` and its worker share one database file, and a capture waits at most
`WRITE_WAIT_MS` (1 s) for another process's write lock before it answers 503 `store_unavailable`.
This bench imports `--data` with the pipeline deferred (`import --no-process`), then runs a real
`memstrata serve` with its worker over that backlog (L1 extraction, the embedding backlog, L2/L3)
while a client captures a two-message turn `--rate` times a second through HTTP (every fifth call
a `remember` instead). Phase 2 restarts the server with L0 retention of one day and the sweep due
a minute later, asks for `POST /v1/reindex` (which runs in the server's process) and waits for
the sweep; the client keeps capturing. Every process runs with `bench/_lockhold` on its path: its
`sitecustomize` logs each outermost `Database.tx()` (its kind: the store method and the first
caller outside the stores; the wait for `BEGIN IMMEDIATE`; the hold from BEGIN to COMMIT).

Prints, per process role and kind of transaction, the count, p99 and max hold; the server's
longest wait for the lock; capture and remember latency p50/p99/max and the count of non-200s
(503s by name); the 1-minute load average at each phase's end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _serve import Served, server_env, start, stop

HERE = Path(__file__).parent
SITE = HERE / "_lockhold"


class Client:
    """Captures at a steady rate in a thread until stopped; records each call's latency and status."""

    def __init__(self, url: str, rate: float, first: int = 0) -> None:
        self.url, self.period = url, 1.0 / rate
        self.ms: dict[str, list[float]] = defaultdict(list)
        self.failed: dict[str, int] = defaultdict(int)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._n = first  # ids go on across phases: each call stores something new

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        with httpx.Client(timeout=60) as http:
            next_at = time.monotonic()
            while not self._stop.is_set():
                self._one(http)
                next_at += self.period
                self._stop.wait(max(0.0, next_at - time.monotonic()))

    def _one(self, http: httpx.Client) -> None:
        n, self._n = self._n, self._n + 1
        body: dict[str, object]
        if n % 5 == 4:
            route, body = "remember", {"user_id": "bench-user", "text": f"The user's note number {n}."}
        else:
            said = f"Turn {n}: I moved my pottery class to Thursday evening, note {n}."
            route = "capture"
            body = {
                "user_id": "bench-user",
                "session_key": f"live-{n // 40}",
                "messages": [
                    {"role": "user", "content": said, "id": f"u-{n}"},
                    {"role": "assistant", "content": f"Noted, turn {n}.", "id": f"a-{n}"},
                ],
            }
        t0 = time.monotonic()
        try:
            r = http.post(f"{self.url}/v1/{route}", json=body)
            status = str(r.status_code) if r.status_code == 200 else f"{r.status_code} {_code(r)}"
        except httpx.HTTPError as exc:
            status = f"error {type(exc).__name__}"
        self.ms[route].append((time.monotonic() - t0) * 1000)
        if status != "200":
            self.failed[f"{route} {status}"] += 1


def _code(r: httpx.Response) -> str:
    try:
        return str(r.json().get("error", {}).get("code", ""))
    except ValueError:
        return ""


def idle(served: Served) -> bool:
    """Whether the imported backlog is done: no L1 or L2/L3 work left for its tenants, and at most
    a few seconds' captures without a vector (the client's own turns keep arriving)."""
    s = httpx.get(served.url + "/v1/status", timeout=60).json()
    l1 = sum(x["pending"] for x in s["sessions"] if x["tenant"]["user_id"] != "bench-user")
    upper = sum(
        1
        for t in s["tenants"]
        if t["tenant"]["user_id"] != "bench-user" and (t["l2_fire_at"] is not None or t["l3_pending"])
    )
    print(f"  backlog: L1 {l1}, unembedded {s['unembedded']}, L2/L3 due {upper}, atoms {s['atoms']}")
    return l1 == 0 and s["unembedded"] < 50 and upper == 0


def wait_for(served: Served, done, limit: float, every: float = 10.0) -> float:  # type: ignore[no-untyped-def]
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and not done(served):
        time.sleep(every)
    return time.monotonic() - t0


def swept(served: Served) -> bool:
    s = httpx.get(served.url + "/v1/status", timeout=60).json()
    return s["last_sweep"] is not None and s["last_sweep"] > swept.after  # type: ignore[attr-defined]


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else 0.0


def report(logs: Path, since: float, until: float, client: Client, load: float) -> None:
    rows = [json.loads(line) for f in logs.glob("tx-*.jsonl") for line in f.read_text().splitlines()]
    rows = [r for r in rows if since <= r["t"] < until]
    by: dict[tuple[str, str], list[dict]] = defaultdict(list)  # type: ignore[type-arg]
    for r in rows:
        by[(r["role"], r["kind"])].append(r)
    print(f"\n{'role':7} {'transaction kind':60} {'n':>6} {'p99 hold':>9} {'max hold':>9} {'max wait':>9}")
    for (role, kind), rs in sorted(by.items(), key=lambda kv: -max(r["hold_ms"] or 0 for r in kv[1])):
        holds = [r["hold_ms"] for r in rs if r["hold_ms"] is not None]
        waits = [r["wait_ms"] for r in rs]
        print(
            f"{role:7} {kind[:60]:60} {len(rs):6} {pct(holds, 0.99):8.1f}ms {max(holds, default=0):8.1f}ms "
            f"{max(waits):8.1f}ms"
        )
    errors = [r for r in rows if r["error"]]
    print(f"transactions that failed: {len(errors)} {sorted({r['error'] for r in errors})[:3]}")
    for route, ms in client.ms.items():
        print(
            f"{route}: n {len(ms)}, p50 {pct(ms, 0.5):.0f} ms, p99 {pct(ms, 0.99):.0f} ms, "
            f"max {max(ms):.0f} ms, mean {statistics.mean(ms):.0f} ms"
        )
    print(f"non-200 answers: {dict(client.failed) or 'none'}")
    print(f"1-min load average at the phase's end: {load:.2f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="/work/shared/data/locomo/locomo-dev.json")
    ap.add_argument("--rate", type=float, default=4.0, help="client calls per second")
    ap.add_argument("--embedder", default="default")
    ap.add_argument("--limit", type=float, default=900.0, help="seconds each phase may take at most")
    args = ap.parse_args()
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]  # each figure as it comes
    with tempfile.TemporaryDirectory(prefix="lockhold-") as tmp:
        home, logs = Path(tmp) / "home", Path(tmp) / "logs"
        logs.mkdir()
        # "default": the configured default (auto: the shipped local model), as a user runs it.
        env = server_env() if args.embedder == "default" else server_env(embedding__provider=args.embedder)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (env.get("PYTHONPATH"), str(SITE)) if p)
        t0 = time.monotonic()
        subprocess.run(
            [sys.executable, "-m", "memstrata", "import", args.data, "--no-process", "--data-dir", str(home)],
            env=env, check=True, stdout=subprocess.DEVNULL,
        )  # fmt: skip
        print(f"imported {args.data} (pipeline deferred) in {time.monotonic() - t0:.0f} s")
        env["LOCKHOLD_BENCH_DIR"] = str(logs)
        phase(1, home, env, logs, args, first=0)
        # Phase 2: one day of L0 retention, the sweep due in a minute or two (UTC), and a reindex.
        at = datetime.now(UTC) + timedelta(minutes=1, seconds=30)
        env.update(
            MEMSTRATA_CAPTURE__RETENTION_DAYS="1",
            MEMSTRATA_CAPTURE__RETENTION_KEEP_LAST="5",
            MEMSTRATA_RETENTION__SWEEP_AT=at.strftime("%H:%M"),
            MEMSTRATA_RETENTION__TIMEZONE="UTC",
        )
        phase(2, home, env, logs, args, first=1_000_000)


def phase(n: int, home: Path, env: dict[str, str], logs: Path, args: argparse.Namespace, first: int) -> None:
    """Phase 1: the worker over the imported backlog. Phase 2: a reindex, then the sweep."""
    served = start(home, env)
    client = Client(served.url, args.rate, first)
    since = time.time()
    client.start()
    try:
        if n == 1:
            took = wait_for(served, idle, args.limit)
        else:
            swept.after = httpx.get(served.url + "/v1/status", timeout=60).json()["last_sweep"] or 0  # type: ignore[attr-defined]
            t1 = time.monotonic()
            r = httpx.post(served.url + "/v1/reindex", timeout=args.limit)
            print(f"reindex: {r.status_code} {r.text[:80]} in {time.monotonic() - t1:.0f} s")
            took = wait_for(served, swept, args.limit, every=5.0)
            wait_for(served, idle, 60.0)  # the scenes the sweep left to L2/L3
        load = os.getloadavg()[0]
    finally:
        client.stop()
        until = time.time()
        stop(served)
    print(f"\n== phase {n} ({'the backlog' if n == 1 else 'reindex, the sweep'}): {took:.0f} s")
    report(logs, since, until, client, load)


if __name__ == "__main__":
    main()
