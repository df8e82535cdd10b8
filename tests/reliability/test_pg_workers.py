"""Several machines: two ``memstrata serve --workers 0`` and two ``memstrata worker`` processes on one
PostgreSQL database, as deployed with the pipeline on its own hosts.

Captures for 40 sessions across 5 tenants go to either server while no worker runs; then both
workers start, and one is SIGKILLed mid-run (atoms committed, messages still behind). The
other takes its work over (the dead worker's leases went with its connection) and finishes:
every captured message stored once and extracted, no atom twice, no twin scenes (two scenes of
one topic that concurrent L2 runs would make), a persona per tenant.

An import sent with ``process`` to a server with ``--workers 0`` is done by the workers (the
server marks it due and waits for the cursors), one of them SIGKILLed mid-run: the call answers
once the survivor has finished, with the same checks.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest

from memstrata.models import AtomFilter, MessageFilter, Tenant
from tests.reliability.test_serve_replicas import ENV
from tests.support.serve_process import wait_up
from tests.support.sockets import free_port

pytest.importorskip("psycopg")
pytest.importorskip("fastapi")
from memstrata.stores.postgres.store import PostgresStore

TENANTS = ["ana", "ben", "chen", "dora", "eli"]
SESSIONS = [f"s{i}" for i in range(8)]
ROUNDS = 10  # 800 messages: long enough to kill a worker mid-run
TOPICS = ["I moved to {x} last year.", "My dog {x} loves the river.", "I work as a nurse in {x}."]


def start(*args: str, url: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "memstrata", *args],
        env={**os.environ, **ENV, **(env or {}), "MEMSTRATA_STORE__URL": url},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    for proc in procs:
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def turn(tenant: str, session: str, r: int) -> list[dict[str, object]]:
    n = TENANTS.index(tenant) * 100 + SESSIONS.index(session) * 10 + r
    text = TOPICS[r % len(TOPICS)].format(x=f"Place{n}")
    return [
        {"role": "user", "content": text, "id": f"{tenant}-{session}-{r}-u"},
        {"role": "assistant", "content": "Thanks for telling me!", "id": f"{tenant}-{session}-{r}-a"},
    ]


def progress(store: PostgresStore) -> tuple[int, int]:
    """(atoms committed, messages still behind their session's cursor)."""
    atoms = sum(store.atoms.count(Tenant(t)) for t in TENANTS)
    return atoms, sum(n for _, _, n in store.pipeline.backlog())


def idle(store: PostgresStore) -> bool:
    if store.pipeline.backlog():
        return False
    states = {s.tenant: s for s in store.pipeline.tenants()}
    for name in TENANTS:
        st = states.get(Tenant(name))
        atoms = store.atoms.list(Tenant(name), AtomFilter(include_superseded=True), limit=100_000)
        if not atoms or st is None or st.l2_cursor < atoms[-1].seq or st.l3_requested > st.l3_done:
            return False
        if st.l2_snapshot is not None or st.l3_running:
            return False
    return True


def test_two_servers_and_two_workers_share_one_database(
    postgres_url: str, processes: list[subprocess.Popen[str]]
) -> None:
    ports = [free_port(), free_port()]
    for port in ports:
        processes.append(start("serve", "--workers", "0", "--port", str(port), url=postgres_url))
    bases = [f"http://127.0.0.1:{p}" for p in ports]
    for proc, base in zip(processes, bases, strict=True):
        wait_up(proc, base)
    with httpx.Client(timeout=30) as http:
        n = 0
        for r in range(ROUNDS):
            for tenant in TENANTS:
                for session in SESSIONS:
                    body = {"user_id": tenant, "session_key": session, "messages": turn(tenant, session, r)}
                    reply = http.post(bases[n % 2] + "/v1/capture", json=body)
                    assert reply.status_code == 200, reply.text
                    n += 1
    store = PostgresStore(postgres_url, read_only=True)
    try:
        assert progress(store) == (0, n * 2)  # the servers extract nothing themselves
        doomed = start("worker", "--nice", "0", url=postgres_url)
        processes.append(doomed)
        processes.append(start("worker", "--nice", "0", url=postgres_url))
        deadline = time.monotonic() + 120
        while not ((now := progress(store))[0] and now[1]):
            assert time.monotonic() < deadline and not (now[0] and not now[1]), now
            time.sleep(0.02)
        doomed.send_signal(signal.SIGKILL)  # mid-run, holding leases
        doomed.wait(timeout=30)
        killed_at = progress(store)
        assert killed_at[1] > 0
        deadline, calm = time.monotonic() + 240, 0
        while calm < 3:
            assert time.monotonic() < deadline, f"the surviving worker did not finish: {progress(store)}"
            calm = calm + 1 if idle(store) else 0
            time.sleep(0.5)
        assert progress(store)[0] > killed_at[0]  # the survivor took the work over
        check(store, n * 2)
    finally:
        store.close()


def check(store: PostgresStore, captured: int) -> None:
    scenes, personas = store.scene_store(keep=10), store.persona_store(keep=3)
    total = 0
    for name in TENANTS:
        tenant = Tenant(name)
        messages = store.messages.list(tenant, MessageFilter(), limit=100_000)
        total += len(messages)
        for session in SESSIONS:
            last = max(m.seq for m in messages if m.session_key == session)
            assert store.pipeline.session(tenant, session).cursor == last  # every message extracted
        atoms = store.atoms.list(tenant, AtomFilter(include_superseded=True), limit=100_000)
        keys = Counter((a.content, a.source_message_ids) for a in atoms)
        assert max(keys.values()) == 1, [k for k, c in keys.items() if c > 1][:3]  # extracted once
        names = [s.name for s in scenes.load(tenant)]
        stems = Counter(re.sub(r"[-_]\d+$", "", name.removesuffix(".md")) for name in names)
        assert names and max(stems.values()) == 1, names  # no twin scenes
        assert personas.read(tenant) is not None
    assert total == captured  # stored once


def test_an_import_sent_to_a_server_is_done_by_workers_one_of_them_killed(
    postgres_url: str, processes: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    env = {"MEMSTRATA_SERVER__PIPELINE_WAIT_SECONDS": "240"}
    processes.append(start("serve", "--workers", "0", "--port", str(port), url=postgres_url, env=env))
    base = f"http://127.0.0.1:{port}"
    wait_up(processes[0], base)
    doomed = start("worker", "--nice", "0", url=postgres_url)
    processes += [doomed, start("worker", "--nice", "0", url=postgres_url)]
    sessions = [
        {
            "sessionKey": session,
            "userId": tenant,
            "conversations": [[m for r in range(ROUNDS) for m in turn(tenant, session, r)]],
        }
        for tenant in TENANTS
        for session in SESSIONS
    ]
    answers: list[httpx.Response] = []
    body = {"data": {"sessions": sessions}, "process": True}
    call = threading.Thread(
        target=lambda: answers.append(httpx.post(base + "/v1/import", json=body, timeout=300))
    )
    call.start()
    store = PostgresStore(postgres_url, read_only=True)
    try:
        deadline = time.monotonic() + 120
        while not ((now := progress(store))[0] and now[1]):
            assert time.monotonic() < deadline and call.is_alive(), (now, answers)
            time.sleep(0.02)
        doomed.send_signal(signal.SIGKILL)  # mid-run, holding leases, while the server waits
        doomed.wait(timeout=30)
        call.join(timeout=280)
        (answer,) = answers
        assert answer.status_code == 200, answer.text
        report = answer.json()
        assert report["failed"] == 0 and report["stored"] == len(TENANTS) * len(SESSIONS) * ROUNDS * 2, report
        assert idle(store)  # answered once every cursor reached what was captured, and L2 and L3 ran
        check(store, report["stored"])
    finally:
        store.close()
