"""Two versions of the proxy, side by side: added time to first token of each, prompt by prompt.

    python bench/proxy_ab.py --base-src /tmp/base/src [--streams 100] [--rounds 3] [--whole]

``proxy_overhead.py`` measures one version; two of its runs a few minutes apart differ by as much
as a change is worth on a shared 2-core machine (its p95 moved by 2-7 ms between runs of the same
code). Here two real ``memstrata serve`` processes, the same scripted upstream and the same seed:
A runs the code under ``--base-src`` (``PYTHONPATH``; e.g. ``git archive <rev> src | tar -x -C
/tmp/base``), B this tree. Each prompt is streamed direct, then through A and B in turn (the order
alternating), each after the same settling pause, so both versions meet the same moment of the
machine. Printed per round: added time to first token p50 / p95 of each, and B's p95 over A's.
``--whole`` times non-streamed calls instead (the upstream answers at once): the added latency
of the whole answer, where the proxy's own forwarding is not hidden behind a model's first
event.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving
from proxy_overhead import SETTLE_S, body, pcts, seed, served_settings, stream_once
from tests.support.llm_upstream import Reply, ScriptedUpstream

ROUND_BASE = 10_000_000  # each round's prompts and sessions are its own (no turn is reused)


def _env(up: ScriptedUpstream, python_path: str | None) -> dict[str, str]:
    env = server_env(**served_settings(up))  # the gateway proxy_overhead.py measures
    env.pop("PYTHONPATH", None)
    if python_path:
        env["PYTHONPATH"] = python_path
    return env


async def paired(direct: str, a: str, b: str, n: int, base: int, whole: bool) -> tuple[list[float], ...]:
    """Time to first token (``whole``: to the whole answer) direct, through A and through B, for
    ``n`` prompts from ``base``."""
    d: list[float] = []
    got: dict[str, list[float]] = {a: [], b: []}
    async with httpx.AsyncClient(timeout=60) as client:

        async def timed(url: str, i: int) -> float:
            if not whole:
                return (await stream_once(client, url, i))[0]
            t0 = time.perf_counter()
            sent = await client.post(url, json=body(i), headers={"x-memstrata-session": f"s-{i}"})
            sent.raise_for_status()
            return (time.perf_counter() - t0) * 1000

        for i in range(base, base + 20):  # warm both, on prompts the measured ones do not repeat
            for url in (a, b):
                await timed(url, i)
        for i in range(base + 100, base + 100 + n):
            d.append(await timed(direct, i))
            for url in (a, b) if i % 2 else (b, a):
                await asyncio.sleep(SETTLE_S)
                got[url].append(await timed(url, i))
    return d, got[a], got[b]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--base-src", required=True, help="the other version's src directory (A)")
    ap.add_argument("--streams", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--whole", action="store_true", help="non-streamed calls: added latency, not TTFT")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp, ScriptedUpstream() as up:
        home = Path(tmp)
        with serving(home / "a", _env(up, args.base_src)) as a, serving(home / "b", _env(up, None)) as b:
            for served in (a, b):
                seed(served.url)
            up.default = Reply(text="one two three four five six seven eight", delay=0.01)
            what = "latency" if args.whole else "TTFT"
            direct, route = up.openai_url + "/chat/completions", "/proxy/openai/v1/chat/completions"
            for r in range(args.rounds):
                times = paired(
                    direct, a.url + route, b.url + route, args.streams, ROUND_BASE * (r + 1), args.whole
                )
                (d50, d95), (a50, a95), (b50, b95) = (pcts(t) for t in asyncio.run(times))
                print(
                    f"round {r + 1}: added {what} p50 / p95: A (base) {a50 - d50:.1f} / {a95 - d95:.1f} ms,"
                    f" B (this tree) {b50 - d50:.1f} / {b95 - d95:.1f} ms; B/A at p95"
                    f" {(b95 - d95) / max(a95 - d95, 0.1):.2f}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
