"""SIGTERM with a large L1 backlog: ``memstrata serve`` exits within its grace period (plus 2 s),
with status 0, leaving what it could not extract to the durable backlog; after a restart every
message is extracted. (Before: 86 s to exit with 9,940 messages pending, port closed meanwhile.)"""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import httpx

from tests.security.conftest import ADMIN_KEY
from tests.support.serve_process import serve as start_serve

GRACE = 1.0  # short enough that the offline engine cannot drain 5,000 messages in it
SESSIONS, PER_SESSION, BATCH = 5, 1000, 100  # 5,000 messages
ENV = {
    "MEMSTRATA_API_KEY": ADMIN_KEY,
    "MEMSTRATA_EMBEDDING__PROVIDER": "none",
    "MEMSTRATA_SERVER__SHUTDOWN_GRACE_SECONDS": str(GRACE),
    # Nothing runs L1 while the backlog builds up: SIGTERM finds all of it pending.
    "MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS": "1000000",
    "MEMSTRATA_PIPELINE__WARM_UP": "false",
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "3600",
    # run-all waits for the worker to extract what the drain left, however slow the machine.
    "MEMSTRATA_SERVER__PIPELINE_WAIT_SECONDS": "540",
    "HF_HUB_OFFLINE": "1",
}
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def serve(home: Path) -> tuple[subprocess.Popen[str], str]:
    return start_serve(["--data-dir", str(home)], ENV)


def backlog(base: str) -> int:
    status = httpx.get(base + "/v1/status", headers=ADMIN, timeout=60).json()
    return sum(s["lag"] for s in status["sessions"])


def test_sigterm_with_5000_messages_pending_exits_in_time_and_loses_nothing(tmp_path: Path) -> None:
    home = tmp_path / "data"
    proc, base = serve(home)
    with httpx.Client(base_url=base, headers=ADMIN, timeout=60) as http:
        for s in range(SESSIONS):
            for start in range(0, PER_SESSION, BATCH):
                turns = [
                    {
                        "role": "user" if i % 2 == 0 else "assistant",
                        "content": f"On day {i} I walked {i % 7 + 1} km to the market.",
                        "id": f"s{s}-{i}",
                    }
                    for i in range(start, start + BATCH)
                ]
                assert (
                    http.post("/v1/capture", json={"messages": turns, "session_key": f"s{s}"}).status_code
                    == 200
                )
    assert backlog(base) == SESSIONS * PER_SESSION
    started = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    took = time.monotonic() - started
    assert proc.returncode == 0, err[-2000:]
    assert took <= GRACE + 2, f"exited after {took:.1f} s"
    assert "left for the next start" in err  # what did not fit is said

    proc, base = serve(home)
    try:
        left = backlog(base)
        assert 0 < left < SESSIONS * PER_SESSION  # the drain did some, not all
        assert (
            httpx.post(base + "/v1/pipeline/run-all", json={}, headers=ADMIN, timeout=600).status_code == 200
        )
        assert backlog(base) == 0
        counts = httpx.get(base + "/v1/counts", headers=ADMIN, timeout=60).json()
        assert counts["messages"] == SESSIONS * PER_SESSION  # stored exactly once
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert proc.returncode == 0
