"""Search latency while a full-speed import runs through the same `memstrata serve`, against idle.

    python bench/search_during_import.py [DATA.json] [--pairs 3] [--idle-seconds 20]
                                         [--process] [--embedder default]

Each pair starts a real `memstrata serve` (with its worker process, at its lower priority) on a
fresh data directory, gives a probe tenant 200 synthetic messages (and waits until the worker has
embedded them), then measures `POST /v1/search` of that tenant, one client asking again 50 ms
after each answer (a new question each time, so the query cache never answers):

- idle: for `--idle-seconds`, nothing else running;
- import: while `memstrata --url URL import` (another process, as a user would run it) sends the
  file through the server as fast as it goes (in parts of whole sessions under the server's 1 MiB
  body limit, one after another), and until the server's worker has caught
  up with what it brought (every record embedded, no L1 backlog; at most 600 s). Without
  `--process` the import only captures (`--no-process`) and the worker does the rest on its own
  timers; with it each request answers once its sessions are extracted, consolidated and their
  personas written: the server marks them due and waits for its worker's cursors
  (`pipeline/handoff.py`; before it, the server ran that pipeline in its own process).

Prints per pair the p50/p95 of each phase and the ratio import p95 / idle p95 (issue 51's target:
at most 2x), and the phase lengths. DATA defaults to the BEAM dev set (`../shared/data/beam`).
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
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving
from _synthetic import queries, sentences

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "beam" / "beam-dev.json"
PAUSE = 0.05  # the searcher's pause between an answer and its next question
PROBE = "probe"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Searcher(threading.Thread):
    """Searches the probe tenant until stopped; ``ms`` holds each answer's wall time."""

    def __init__(self, url: str, asked: list[str]) -> None:
        super().__init__(daemon=True)
        self._url, self._asked = url, asked
        self.stop = threading.Event()
        self.ms: list[float] = []
        self.errors: list[str] = []

    def run(self) -> None:
        with httpx.Client(base_url=self._url, timeout=60) as http:
            n = 0
            while not self.stop.is_set():
                body = {"query": self._asked[n % len(self._asked)], "user_id": PROBE, "layers": ["L0", "L1"]}
                n += 1
                t0 = time.perf_counter()
                try:
                    r = http.post("/v1/search", json=body)
                except httpx.HTTPError as exc:  # the server is gone: say so, stop asking
                    self.errors.append(repr(exc))
                    return
                self.ms.append((time.perf_counter() - t0) * 1000)
                if r.status_code != 200:
                    self.errors.append(f"{r.status_code} {r.text[:200]}")
                self.stop.wait(PAUSE)


def caught_up(http: httpx.Client) -> bool:
    status = http.get("/v1/status").json()
    return status["unembedded"] == 0 and not any(s["lag"] for s in status["sessions"])


def seed_probe(http: httpx.Client) -> None:
    texts = sentences(200, seed=11)
    for i in range(0, len(texts), 20):
        messages = [
            {"role": "user", "content": t, "id": f"p{i + j}"} for j, t in enumerate(texts[i : i + 20])
        ]
        body = {"user_id": PROBE, "session_key": "probe", "messages": messages}
        http.post("/v1/capture", json=body).raise_for_status()
    http.post("/v1/search", json={"query": "warm up", "user_id": PROBE}).raise_for_status()
    deadline = time.monotonic() + 120
    while http.get("/v1/status").json()["unembedded"] and time.monotonic() < deadline:
        time.sleep(0.2)


def phase(url: str, asked: list[str], work: object) -> tuple[list[float], float, list[str]]:
    """Searches while ``work()`` runs; the latencies, the seconds it took and the errors."""
    searcher = Searcher(url, asked)
    searcher.start()
    t0 = time.monotonic()
    work()  # type: ignore[operator]
    took = time.monotonic() - t0
    searcher.stop.set()
    searcher.join()
    return searcher.ms, took, searcher.errors


def parts(data: Path, limit: int = 900_000) -> list[Path]:
    """``data`` (seed format) as files of whole sessions under ``limit`` bytes each: a request
    body through the server holds at most 1 MiB (``server.max_body_bytes``)."""
    sessions = json.loads(data.read_text())["sessions"]
    out: list[list[dict[str, object]]] = [[]]
    size = 0
    for session in sessions:
        length = len(json.dumps(session))
        if out[-1] and size + length > limit:
            out.append([])
            size = 0
        out[-1].append(session)
        size += length
    folder = Path(tempfile.mkdtemp(prefix="bench-sdi-parts-"))
    paths = [folder / f"part{i}.json" for i in range(len(out))]
    for path, chunk in zip(paths, out, strict=True):
        path.write_text(json.dumps({"sessions": chunk}))
    return paths


def import_and_catch_up(url: str, data: Path, process: bool, env: dict[str, str]) -> None:
    """``memstrata --url URL import`` of each part of ``data`` in turn, then the worker's catch-up."""
    for part in parts(data):
        command = [sys.executable, "-m", "memstrata", "--url", url, "import", str(part)]
        done = subprocess.run(
            [*command, *([] if process else ["--no-process"])], env=env, capture_output=True, text=True
        )
        if done.returncode != 0:
            raise SystemExit(f"the import failed: {done.stdout[-1000:]} {done.stderr[-2000:]}")
        print(f"  import: {' '.join(done.stdout.split())[:200]}", flush=True)
    deadline = time.monotonic() + 600
    with httpx.Client(base_url=url, timeout=60) as http:
        while not caught_up(http) and time.monotonic() < deadline:
            time.sleep(0.5)


def one_pair(n: int, args: argparse.Namespace, env: dict[str, str]) -> float:
    home = Path(tempfile.mkdtemp(prefix="bench-sdi-")) / "home"
    asked = queries(4000, seed=100 + n)
    with serving(home, env) as served, httpx.Client(base_url=served.url, timeout=60) as http:
        seed_probe(http)
        idle, idle_s, e1 = phase(served.url, asked[:2000], lambda: time.sleep(args.idle_seconds))
        busy, busy_s, e2 = phase(
            served.url, asked[2000:], lambda: import_and_catch_up(served.url, args.data, args.process, env)
        )
    ratio = pct(busy, 0.95) / pct(idle, 0.95)
    load = os.getloadavg()[0]
    print(
        f"pair {n}: search p50/p95 idle {statistics.median(idle):.1f}/{pct(idle, 0.95):.1f} ms "
        f"({len(idle)} in {idle_s:.0f} s), during import {statistics.median(busy):.1f}/"
        f"{pct(busy, 0.95):.1f} ms ({len(busy)} in {busy_s:.0f} s): x{ratio:.2f}; "
        f"errors {len(e1) + len(e2)}; load average {load:.1f}",
        flush=True,
    )
    for err in (e1 + e2)[:5]:
        print("  error:", err)
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", nargs="?", type=Path, default=DATA)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--idle-seconds", type=float, default=20.0)
    parser.add_argument(
        "--process", action="store_true", help="each import request waits until its sessions are processed"
    )
    parser.add_argument("--embedder", default="default", help="default (the local model) or hashing")
    args = parser.parse_args()
    env = server_env(**({} if args.embedder == "default" else {"embedding__provider": args.embedder}))
    ratios = [one_pair(n + 1, args, env) for n in range(args.pairs)]
    mode = (
        "with process (each request waits for it)"
        if args.process
        else "capture only, the worker does the rest"
    )
    print(
        f"search_during_import: {args.data.name}, {mode}, embedder {args.embedder}: search p95 during "
        f"import / idle x{', x'.join(f'{r:.2f}' for r in ratios)} (target: at most x2)"
    )


if __name__ == "__main__":
    main()
