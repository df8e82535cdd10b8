"""What the LLM proxy adds to a model call, against the same scripted upstream called directly.

    python bench/proxy_overhead.py [--calls 200] [--streams 200] [--concurrency 20]

One run, one machine: a scripted OpenAI-compatible upstream on loopback (answers at once, or
streams ten events 10 ms apart, or sixteen 20 ms apart for the concurrent run) and a real
``memstrata serve`` in front of it, a process of its own as users run it, whose memory holds a few
hundred captured messages so recall does real work (hybrid search, hashing embedder).
``--in-process`` runs the gateway in this process instead (the method of the first figures: the
client, the upstream and the gateway then share one interpreter lock). Printed:

- non-streaming: latency p50/p95 direct and through the proxy, the difference, and recall's own
  p95 (``POST /v1/recall`` with the same prompts) as the target's baseline (added p95 <= recall
  p95 + 5 ms);
- streaming: time to first token direct and proxied (target: added p95 <= 15 ms), and proxied
  with recall off (``x-memstrata-recall: off``), which isolates the forwarding from recall;

  both measured in turn, request by request (direct, the third, proxied; then the next prompt),
  so that each figure and its baseline meet the same machine (whose speed drifts by as much as
  the targets over minutes on shared cores) and the same store. After each turn a pause
  (``SETTLE_S``, shorter than any model's answer) lets the work the proxied call's capture left
  behind (the answer's store, the pipeline run it wakes) end, so the next turn's three meet a
  settled server alike. The back-to-back line sends each proxied request the instant the last one
  ended, into that work, as no agent does (its next request waits for a model's answer at least);
- requests/s with ``--concurrency`` streams at once, direct and proxied, and how many proxied
  streams reached the client only after the upstream had finished (buffered: must be 0);
- after each phase, how many of its proxied requests went upstream without memories because
  recall was later than ``proxy.recall_timeout_ms`` (fail-open; the concurrent phase's, on two
  cores, are most of them).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _serve import server_env, serving
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream

TOPICS = [
    "garden",
    "bicycle",
    "sister",
    "recipe",
    "concert",
    "holiday",
    "laptop",
    "dentist",
    "piano",
    "marathon",
]


def pcts(values: list[float]) -> tuple[float, float]:
    ordered = sorted(values)
    return statistics.median(ordered), ordered[max(0, round(0.95 * len(ordered)) - 1)]


def seed(url: str, sessions: int = 30) -> None:
    for s in range(sessions):
        messages = []
        for t in range(10):
            topic = TOPICS[(s + t) % len(TOPICS)]
            messages.append(
                {
                    "role": "user",
                    "content": f"Session {s}: my {topic} story number {t} involves Lisbon and {s * t} friends.",
                }
            )
            messages.append({"role": "assistant", "content": f"Noted the {topic} story {t}."})
        httpx.post(
            url + "/v1/capture", json={"session_key": f"seed-{s}", "messages": messages}, timeout=60
        ).raise_for_status()


def body(i: int, stream: bool = False) -> dict[str, object]:
    prompt = f"What do you remember about my {TOPICS[i % len(TOPICS)]}? ({i})"
    return {
        "model": "m",
        "stream": stream,
        "messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": prompt}],
    }


# Each run asks its own prompts in its own sessions (indexes from its own base): the proxy reuses a
# turn's memories for a request that repeats the turn (an agent's tool loop), so a run that
# repeated the warm-up's prompts measured no recall for them.
WARM, OFF_BASE, CONCURRENT_BASE, BACK_BASE = 1_000_000, 100_000, 200_000, 300_000
# The pause after a proxied request in the interleaved runs: its capture's leftover work ends
# meanwhile (an agent's next request waits for a model's answer, far longer).
SETTLE_S = 0.05


def _timed(client: httpx.Client, url: str, payload: dict[str, object], headers: dict[str, str]) -> float:
    t0 = time.perf_counter()
    client.post(url, json=payload, headers=headers).raise_for_status()
    return (time.perf_counter() - t0) * 1000


def timed_calls(url: str, n: int, headers: dict[str, str], first: int = 0) -> list[float]:
    with httpx.Client(timeout=60) as client:
        return [
            _timed(client, url, body(i), {**headers, "x-memstrata-session": f"bench-{i}"})
            for i in range(first, first + n)
        ]


def recall_times(url: str, n: int, first: int = 0) -> list[float]:
    with httpx.Client(timeout=60) as client:
        return [_timed(client, url + "/v1/recall", {"query": prompt(i)}, {}) for i in range(first, first + n)]


def prompt(i: int) -> str:
    return str(body(i)["messages"][1]["content"])  # type: ignore[index]


def interleaved_calls(url: str, direct: str, proxied: str, n: int) -> tuple[list[float], ...]:
    """Direct, proxied and recall-alone times of the same prompts, one of each in turn, each turn
    on a settled server (see the module docstring): the three lists see the same machine and the
    same store (the proxied calls grow it)."""
    d: list[float] = []
    p: list[float] = []
    r: list[float] = []
    with httpx.Client(timeout=60) as client:
        for i in range(n):
            d.append(_timed(client, direct, body(i), {}))
            r.append(_timed(client, url + "/v1/recall", {"query": prompt(i)}, {}))
            p.append(_timed(client, proxied, body(i), {"x-memstrata-session": f"bench-{i}"}))
            time.sleep(SETTLE_S)
    return d, p, r


OFF = {"x-memstrata-recall": "off"}


async def stream_once(
    client: httpx.AsyncClient, url: str, i: int, extra: dict[str, str] | None = None
) -> tuple[float, float]:
    """(time to the first content chunk in ms, the monotonic time it arrived)."""
    t0 = time.perf_counter()
    async with client.stream(
        "POST",
        url,
        json=body(i, stream=True),
        headers={"x-memstrata-session": f"s-{i}", "x-bench-id": str(i), **(extra or {})},
    ) as r:
        first = None
        async for chunk in r.aiter_bytes():
            if first is None and b'"content": "' in chunk and b'"content": ""' not in chunk:
                first = (time.perf_counter() - t0) * 1000, time.monotonic()
        assert first is not None, "no content chunk"
        return first


async def streams(
    url: str, n: int, concurrency: int, extra: dict[str, str] | None = None, first: int = 0
) -> tuple[list[float], list[float], float]:
    """TTFTs, first-chunk arrival times (by request order) and requests/s; the requests' indexes
    (prompts, sessions, ``x-bench-id``) run from ``first``."""
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency * 2)
    async with httpx.AsyncClient(timeout=60, limits=limits) as client:

        async def one(i: int) -> tuple[float, float]:
            async with gate:
                return await stream_once(client, url, i, extra)

        t0 = time.perf_counter()
        got = await asyncio.gather(*(one(i) for i in range(first, first + n)))
        elapsed = time.perf_counter() - t0
    return [g[0] for g in got], [g[1] for g in got], n / elapsed


async def interleaved_streams(direct: str, proxied: str, n: int) -> tuple[list[float], ...]:
    """Times to first token direct, proxied and proxied with recall off, one of each in turn."""
    d: list[float] = []
    p: list[float] = []
    off: list[float] = []
    async with httpx.AsyncClient(timeout=60) as client:
        for i in range(n):
            d.append((await stream_once(client, direct, i))[0])
            off.append((await stream_once(client, proxied, OFF_BASE + i, OFF))[0])
            await asyncio.sleep(SETTLE_S)
            p.append((await stream_once(client, proxied, i))[0])
            await asyncio.sleep(SETTLE_S)
    return d, p, off


def non_streaming(url: str, direct: str, proxied: str, calls: int) -> None:
    timed_calls(direct, 20, {}, WARM), timed_calls(proxied, 20, {}, WARM), recall_times(url, 20, WARM)  # warm
    (d50, d95), (p50, p95), (r50, r95) = (pcts(t) for t in interleaved_calls(url, direct, proxied, calls))
    print(
        f"non-streaming ({calls} calls of each, interleaved): direct p50 {d50:.1f} p95 {d95:.1f} ms;"
        f" proxied p50 {p50:.1f} p95 {p95:.1f} ms; recall alone p50 {r50:.1f} p95 {r95:.1f} ms"
    )
    print(
        f"  added p50 {p50 - d50:.1f} ms, p95 {p95 - d95:.1f} ms; recall p95 {r95:.1f} ms (target: added p95 <= {r95 + 5:.1f})"
    )
    b50, b95 = pcts(timed_calls(proxied, calls, {}, BACK_BASE))
    print(
        f"  back to back (each proxied call the instant the last one ended, into the work its capture"
        f" left): proxied p50 {b50:.1f} p95 {b95:.1f} ms, added p50 {b50 - d50:.1f} p95 {b95 - d95:.1f} ms"
    )


def first_tokens(direct: str, proxied: str, n: int) -> None:
    asyncio.run(streams(direct, 20, 1, None, WARM)), asyncio.run(streams(proxied, 20, 1, None, WARM))
    (dt50, dt95), (pt50, pt95), (ot50, ot95) = (
        pcts(t) for t in asyncio.run(interleaved_streams(direct, proxied, n))
    )
    print(
        f"streaming TTFT ({n} streams of each, one at a time, interleaved): direct p50 {dt50:.1f} p95 {dt95:.1f} ms;"
        f" proxied p50 {pt50:.1f} p95 {pt95:.1f} ms"
    )
    print(
        f"  added TTFT p50 {pt50 - dt50:.1f} ms, p95 {pt95 - dt95:.1f} ms (recall included; target: p95 <= 15)"
    )
    print(
        f"  with x-memstrata-recall: off (forwarding and capture alone): proxied p50 {ot50:.1f} p95 {ot95:.1f} ms,"
        f" added p50 {ot50 - dt50:.1f} ms, p95 {ot95 - dt95:.1f} ms"
    )
    bt50, bt95 = pcts(asyncio.run(streams(proxied, n, 1, None, BACK_BASE))[0])
    print(
        f"  back to back (each proxied stream the instant the last one ended): proxied p50 {bt50:.1f}"
        f" p95 {bt95:.1f} ms, added p50 {bt50 - dt50:.1f} p95 {bt95 - dt95:.1f} ms"
    )


def concurrent(up: ScriptedUpstream, direct: str, proxied: str, n: int, concurrency: int) -> None:
    _, _, drps = asyncio.run(streams(direct, n, concurrency, None, CONCURRENT_BASE))
    mark = len(up.requests)
    _, arrivals, prps = asyncio.run(streams(proxied, n, concurrency, None, CONCURRENT_BASE))
    # A stream was buffered if its first chunk reached the client only after its upstream had
    # sent the last byte (matched per stream by a header the proxy passes on).
    # The upstream's thread notes a stream's end just after its last byte: wait for every note.
    deadline = time.monotonic() + 10
    while any(r.finished is None for r in up.requests[mark:]) and time.monotonic() < deadline:
        time.sleep(0.01)
    ends = {r.headers.get("x-bench-id"): r.finished or 0.0 for r in up.requests[mark:]}
    buffered = sum(
        1 for i, at in enumerate(arrivals, CONCURRENT_BASE) if at >= ends.get(str(i), float("inf"))
    )
    print(
        f"{concurrency} concurrent streams ({n}): direct {drps:.1f} req/s, proxied {prps:.1f} req/s ({prps / drps:.2f}x)"
    )
    print(f"  proxied streams whose first chunk arrived only after the upstream finished: {buffered} of {n}")


def gateway(home: Path, up: ScriptedUpstream, in_process: bool) -> AbstractContextManager[str]:
    """The URL of a gateway on ``home`` whose proxy forwards to ``up``."""
    if in_process:
        proxy = {"openai_url": up.openai_url, "anthropic_url": up.url}
        return _url(LiveServer(home, proxy=proxy))
    return _url(serving(home, server_env(**served_settings(up))))


def served_settings(up: ScriptedUpstream) -> dict[str, str]:
    """The served gateway's settings: the hashing embedder, the proxy in front of ``up``."""
    return {
        "embedding__provider": "hashing",
        "proxy__openai_url": up.openai_url,
        "proxy__anthropic_url": up.url,
    }


@contextmanager
def _url(server: AbstractContextManager[Any]) -> Iterator[str]:
    with server as running:
        yield running.url


@contextmanager
def late_recalls(url: str) -> Iterator[None]:
    """Print how many of the phase's proxied requests went without memories because recall was
    late (``proxy.recall_timeout_ms``): the run's counter alone does not say which phase's were."""
    before = _proxy_counters(url)
    yield
    after = _proxy_counters(url)
    late = after["recall_timeouts"] - before["recall_timeouts"]
    print(
        f"  recall later than the proxy's timeout: {late} of {after['requests'] - before['requests']} proxied requests"
    )


def _proxy_counters(url: str) -> dict[str, int]:
    counters: dict[str, int] = httpx.get(url + "/v1/status", timeout=30).json()["proxy"]
    return counters


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--streams", type=int, default=200)
    ap.add_argument("--concurrency", type=int, default=20)
    ap.add_argument("--in-process", action="store_true", help="the gateway in this process")
    a = ap.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        ScriptedUpstream() as up,
        gateway(Path(tmp) / "data", up, a.in_process) as url,
    ):
        print(f"gateway: {'in this process' if a.in_process else 'memstrata serve, its own process'}")
        seed(url)
        proxied = url + "/proxy/openai/v1/chat/completions"
        direct = up.openai_url + "/chat/completions"
        with late_recalls(url):
            non_streaming(url, direct, proxied, a.calls)
        up.default = Reply(text="one two three four five six seven eight", delay=0.01)
        with late_recalls(url):
            first_tokens(direct, proxied, a.calls // 2)
        # Longer streams here (16 events 20 ms apart): a buffered stream reaches its client
        # after the upstream's end however long it is; a forwarded one, on a busy event loop,
        # can be late by a few tens of ms, which a 100 ms stream would mistake for buffering.
        up.default = Reply(text=" ".join(f"w{i}" for i in range(15)), delay=0.02)
        with late_recalls(url):
            concurrent(up, direct, proxied, a.streams, a.concurrency)
        print(f"proxy counters: {httpx.get(url + '/v1/status').json()['proxy']}")


if __name__ == "__main__":
    main()
