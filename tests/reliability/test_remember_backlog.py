"""A call someone waits on never queues behind background work (issue 48 item 2).

Before: with 1,875 sessions waiting for extraction, ``POST /v1/remember`` for a tenant with no
backlog gave no answer in 240 s (it waited for one of the run slots the background extraction
held), while search and capture answered at once. Here ``memstrata serve`` opens a data
directory holding a 2,000-session backlog; while its worker extracts it, ``remember`` (another
tenant), ``search`` and ``capture`` are timed: each p95 under 1 s, the backlog still there
after the last call. In a library process (``background=True``), remember must not wait for the
pipeline's run slots either.
"""

from __future__ import annotations

import asyncio
import signal
import time
from pathlib import Path

import httpx
import pytest

from memstrata import Memory
from memstrata.memory import AsyncMemory
from tests.reliability.test_worker_crash import wait_mid_run
from tests.support.serve_process import serve
from tests.support.store_counts import counts

pytest.importorskip("fastapi")

SESSIONS, PER_SESSION = 2000, 6
CALLS = 20
LIMIT_SECONDS = 1.0
ENV = {
    "MEMSTRATA_EMBEDDING__PROVIDER": "hashing",
    "MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS": "1000000",
    "MEMSTRATA_PIPELINE__WARM_UP": "false",
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "0.1",
    "HF_HUB_OFFLINE": "1",
}


def build_backlog(home: Path) -> None:
    """2,000 sessions captured, none extracted (the process leaves them to the next: flush=False)."""
    mem = Memory.open(home, embedder=None)
    try:
        for s in range(SESSIONS):
            turns = [
                {
                    "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"Session {s}: I bought {i} apples.",
                }
                for i in range(PER_SESSION)
            ]
            mem.capture(turns, session_key=f"s{s}", user_id=f"u{s % 50}")
    finally:
        mem.close(flush=False)


def p95(seconds: list[float]) -> float:
    return sorted(seconds)[max(0, round(0.95 * len(seconds)) - 1)]


def timed(call: object) -> float:
    start = time.perf_counter()
    reply = call()  # type: ignore[operator]
    took = time.perf_counter() - start
    assert reply.status_code == 200, reply.text
    return took


def test_remember_search_and_capture_answer_in_time_beside_a_2000_session_backlog(tmp_path: Path) -> None:
    home = tmp_path / "data"
    build_backlog(home)
    proc, base = serve(["--data-dir", str(home)], ENV)
    try:
        wait_mid_run(home)  # the worker is extracting
        before = counts(home)[1]
        remember, search, capture = [], [], []
        with httpx.Client(base_url=base, timeout=30) as http:
            for n in range(CALLS):
                note = {"text": f"My bike lock code is {n:04d}.", "user_id": "carol"}
                remember.append(timed(lambda note=note: http.post("/v1/remember", json=note)))
                query = {"query": "apples", "user_id": f"u{n}"}
                search.append(timed(lambda query=query: http.post("/v1/search", json=query)))
                turn = {
                    "messages": [{"role": "user", "content": f"Hi {n}"}],
                    "session_key": "c",
                    "user_id": "dan",
                }
                capture.append(timed(lambda turn=turn: http.post("/v1/capture", json=turn)))
        _, atoms, behind = counts(home)
        figures = {
            k: round(p95(v), 3) for k, v in (("remember", remember), ("search", search), ("capture", capture))
        }
        print(f"p95 seconds while {atoms - before} atoms were extracted, {behind} messages behind: {figures}")
        assert behind > 0 and atoms - before > CALLS, "no backlog was being extracted meanwhile"
        assert max(figures.values()) < LIMIT_SECONDS, figures
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=60)


async def test_a_library_remember_does_not_wait_for_the_pipelines_run_slots(tmp_path: Path) -> None:
    """The pipeline runs in this process (``background=True``, one run slot): its runs hold the
    slot back to back, and remember, which needs only its own session, never waits for it."""
    home = tmp_path / "lib"
    build_backlog(home)
    mem = await AsyncMemory.open(
        home, embedder=None, background=True, pipeline={"workers": 1, "l1_idle_timeout_seconds": 0.1}
    )
    try:
        await asyncio.to_thread(wait_mid_run, home)  # the loop is into the backlog
        took = []
        for n in range(CALLS):
            start = time.perf_counter()
            await asyncio.wait_for(mem.remember(f"My desk is number {n}.", user_id="erin"), 60)
            took.append(time.perf_counter() - start)
        assert counts(home)[2] > 0, "the pipeline finished before the calls"
        assert p95(took) < LIMIT_SECONDS, took
    finally:
        await mem.close(flush=False)
