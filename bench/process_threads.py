"""Every process and thread of a real `memstrata serve` with its worker, idle after some work.

    python bench/process_threads.py [--embedder default|hashing] [--clients 50] [--seconds 10]
                                    [--settle 3]

Starts `memstrata serve` on a fresh data directory (the default embedder is the shipped local
model), puts it under `bench/gateway_load.py`'s load for a while (`--clients` agents capturing and
recalling, a second's thought between requests; `--seconds 0`: a few turns of one agent), so every
pool has grown to what that load asks of it, waits until the worker has caught up, lets it
settle, then lists each process of the tree (the server, its worker, their children) with its
threads: Python threads by name (``threading.enumerate()``, asked for with SIGUSR1 through a
``sitecustomize`` this script puts first on the children's path), and the native ones (BLAS,
OpenMP, torch) by what is left of ``/proc/PID/task``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving
from _synthetic import queries, sentences
from gateway_load import run as load

# Loaded by every Python process of the tree (PYTHONPATH is inherited): SIGUSR1 writes its
# threads, ``name native_id`` a line, to DIR/PID.threads.
_HOOK = """
import os, signal, threading
def _census(signum, frame):
    lines = [f"{t.name}\\t{t.native_id}" for t in threading.enumerate()]
    with open(os.path.join({out!r}, f"{os.getpid()}.threads"), "w") as f:
        f.write("\\n".join(lines))
signal.signal(signal.SIGUSR1, _census)
"""


def tree(pid: int) -> list[int]:
    """``pid`` and its descendants, parents first."""
    found = [pid]
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            found += tree(int(child))
    return found


def describe(pid: int, out: Path) -> tuple[str, Counter[str]]:
    """The process's command line and its threads grouped by name."""
    cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    tasks = {int(t.name) for t in Path(f"/proc/{pid}/task").iterdir()}
    report = out / f"{pid}.threads"
    report.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not report.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    python: dict[int, str] = {}
    if report.exists():
        time.sleep(0.05)  # written in one go; let the writer close it
        for line in report.read_text().splitlines():
            name, _, tid = line.partition("\t")
            python[int(tid)] = re.sub(r"_\d+$", "_N", re.sub(r"-\d+( \(.*\))?$", "-N", name))
    counts: Counter[str] = Counter()
    for task in tasks:
        if task in python:
            counts[f"py:{python[task]}"] += 1
        else:
            comm = Path(f"/proc/{pid}/task/{task}/comm").read_text().strip()
            counts[f"native:{comm}"] += 1
    return cmd, counts


def exercise(url: str, turns: int = 20) -> None:
    with httpx.Client(base_url=url, timeout=60) as http:
        for i, text in enumerate(sentences(turns, seed=3)):
            message = {"role": "user", "content": text, "id": f"m{i}"}
            body = {"user_id": "census", "session_key": "s", "messages": [message]}
            http.post("/v1/capture", json=body).raise_for_status()
        for query in queries(3, seed=3):
            http.post("/v1/recall", json={"query": query, "user_id": "census"}).raise_for_status()
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            status = http.get("/v1/status").json()
            embedding = status.get("query_embedding") or {}
            if embedding.get("process") not in ("starting", "restarting") and not status["unembedded"]:
                break
            time.sleep(0.2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="default", help="default (the local model) or hashing")
    parser.add_argument("--clients", type=int, default=50, help="agents of the load (see gateway_load.py)")
    parser.add_argument("--seconds", type=float, default=10.0, help="how long the load lasts (0: none)")
    parser.add_argument("--settle", type=float, default=3.0, help="idle seconds before counting")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-threads-"))
    hook = tmp / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_HOOK.replace("{out!r}", repr(str(tmp))))
    settings = {} if args.embedder == "default" else {"embedding__provider": args.embedder}
    env = server_env(**settings)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hook), env.get("PYTHONPATH", "")) if p)
    with serving(tmp / "home", env) as served:
        if args.seconds > 0:
            asyncio.run(load(served.url, args.clients, args.seconds, 1.0, 1.0))
        exercise(served.url)
        time.sleep(args.settle)
        total = 0
        for pid in tree(served.proc.pid):
            cmd, counts = describe(pid, tmp)
            total += sum(counts.values())
            print(f"pid {pid}: {sum(counts.values())} threads  ({cmd[:110]})")
            for name, n in sorted(counts.items()):
                print(f"    {n:3d}  {name}")
        print(f"process_threads: {total} threads in {len(tree(served.proc.pid))} processes")


if __name__ == "__main__":
    main()
