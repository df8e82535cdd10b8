"""Two ``memstrata serve`` processes on one PostgreSQL database, as deployed behind a load balancer:
interleaved captures for 20 sessions across 5 tenants go to either server; both run the pipeline;
one is SIGKILLed while work is pending and the other finishes everything.

(What each replica extracted, window by window, is checked in ``test_replicas.py``, whose replicas
log their extractions; here the servers are the real command.)
"""

from __future__ import annotations

import signal
import subprocess
from collections.abc import Iterator

import httpx
import pytest

from tests.reliability.test_replicas import ROUNDS, SESSIONS, TENANTS, check_outcome, turn, wait_until_idle
from tests.support.serve_process import serve

pytest.importorskip("psycopg")
pytest.importorskip("fastapi")

ENV = {
    "MEMSTRATA_EMBEDDING__PROVIDER": "none",
    "MEMSTRATA_PIPELINE__EVERY_N_CONVERSATIONS": "3",
    "MEMSTRATA_PIPELINE__WARM_UP": "false",
    "MEMSTRATA_PIPELINE__L1_IDLE_TIMEOUT_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__RETRY_DELAY_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__L2_DELAY_AFTER_L1_SECONDS": "0.5",
    "MEMSTRATA_PIPELINE__L2_MIN_INTERVAL_SECONDS": "1",
    "MEMSTRATA_PERSONA__TRIGGER_EVERY_N": "5",
    "HF_HUB_OFFLINE": "1",
}


def start(url: str) -> tuple[subprocess.Popen[str], str]:
    return serve(["--store", url], ENV)


@pytest.fixture
def two_servers(postgres_url: str) -> Iterator[list[tuple[subprocess.Popen[str], str]]]:
    servers = [start(postgres_url), start(postgres_url)]
    yield servers
    for proc, _ in servers:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc, _ in servers:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def test_two_servers_share_the_work_and_one_survives_the_other(
    two_servers: list[tuple[subprocess.Popen[str], str]], postgres_url: str
) -> None:
    (doomed, first), (_, second) = two_servers
    with httpx.Client(timeout=30) as http:
        n = 0
        for r in range(ROUNDS):
            for tenant in TENANTS:
                for session in SESSIONS:
                    body = {"user_id": tenant, "session_key": session, "messages": turn(tenant, session, r)}
                    reply = http.post((first, second)[n % 2] + "/v1/capture", json=body)
                    assert reply.status_code == 200, reply.text
                    n += 1
    doomed.send_signal(signal.SIGKILL)  # while the captured work is being done, by both
    doomed.wait(timeout=30)
    store = wait_until_idle(postgres_url)
    try:
        check_outcome(store)
    finally:
        store.close()
