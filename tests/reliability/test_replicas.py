"""Two pipeline replicas on one PostgreSQL database share the work through leases: interleaved
captures for 20 sessions across 5 tenants are extracted exactly once, nothing is lost, and when one
replica is SIGKILLed mid-run the other finishes its work.

Each replica is a real process (``tests/support/replica.py``: the background pipeline a server
runs) that logs every extraction it starts and finishes; this test captures from a third process
and reads the outcome from the database.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.models import AtomFilter, MessageFilter, Tenant

pytest.importorskip("psycopg")
from memstrata.stores.postgres.store import PostgresStore
from tests.support.replica import SETTINGS

REPO = Path(__file__).resolve().parents[2]
TENANTS = ["ana", "ben", "chen", "dora", "eli"]
SESSIONS = ["s0", "s1", "s2", "s3"]
ROUNDS = 6
CITIES = ["Lisbon", "Porto", "Oslo", "Kyoto", "Lima", "Quito", "Accra", "Hanoi"]
FACTS = [
    "I moved to {city} last year and I love the old town.",
    "My dog {name} loves long walks by the river.",
    "I work as a nurse at the {city} children's hospital.",
    "I started learning the violin in March with a teacher called {name}.",
    "My sister {name} lives in {city} with her two cats.",
    "I prefer green tea over coffee in the morning, says {name}.",
]


def turn(tenant: str, session: str, r: int) -> list[dict[str, object]]:
    n = TENANTS.index(tenant) * 7 + SESSIONS.index(session) * 3 + r
    text = FACTS[r % len(FACTS)].format(city=CITIES[n % len(CITIES)], name=f"Rex{n}")
    stamp = 1_700_000_000_000 + (r * 100 + n) * 1000
    return [
        {
            "role": "user",
            "name": tenant.title(),
            "content": text,
            "id": f"{tenant}-{session}-{r}-u",
            "timestamp": stamp,
        },
        {
            "role": "assistant",
            "content": "Thanks for telling me!",
            "id": f"{tenant}-{session}-{r}-a",
            "timestamp": stamp + 1,
        },
    ]


class Replicas:
    def __init__(self, url: str, log: Path) -> None:
        self.url, self.log = url, log
        self.procs: list[subprocess.Popen[str]] = []

    def start(self, *extra: str) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-m", "tests.support.replica", self.url, str(self.log), *extra],
            cwd=REPO,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "none"},
        )
        self.procs.append(proc)
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    def stop(self) -> None:
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()

    def events(self) -> list[dict[str, object]]:
        if not self.log.exists():
            return []
        return [json.loads(line) for line in self.log.read_text().splitlines()]


@pytest.fixture
def replicas(postgres_url: str, tmp_path: Path) -> Iterator[Replicas]:
    r = Replicas(postgres_url, tmp_path / "extractions.jsonl")
    yield r
    r.stop()


def capture_everything(url: str) -> None:
    """Interleaved captures, round by round across every session, from a process that runs no
    pipeline (``flush=False``: it leaves all the work to the replicas)."""
    mem = Memory.open(url, embedder=None, **SETTINGS)
    try:
        for r in range(ROUNDS):
            for tenant in TENANTS:
                for session in SESSIONS:
                    mem.capture(turn(tenant, session, r), session_key=session, user_id=tenant)
    finally:
        mem.close(flush=False)


def wait_until_idle(url: str, timeout: float = 240.0) -> PostgresStore:
    """The store once every session is extracted and every tenant's L2 and L3 have caught up."""
    store = PostgresStore(url, read_only=True)
    deadline, calm = time.monotonic() + timeout, 0
    while time.monotonic() < deadline:
        calm = calm + 1 if _idle(store) else 0
        if calm >= 3:
            return store
        time.sleep(0.5)
    store.close()
    raise AssertionError("the replicas did not finish the work in time")


def _idle(store: PostgresStore) -> bool:
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


def check_outcome(store: PostgresStore) -> None:
    """No lost message, no duplicate atom, scenes within the limit, a persona per tenant."""
    scenes = store.scene_store(keep=10)
    personas = store.persona_store(keep=3)
    for name in TENANTS:
        tenant = Tenant(name)
        messages = store.messages.list(tenant, MessageFilter(), limit=100_000)
        assert len(messages) == len(SESSIONS) * ROUNDS * 2
        for session in SESSIONS:
            last = max(m.seq for m in messages if m.session_key == session)
            assert store.pipeline.session(tenant, session).cursor == last  # every message extracted
        atoms = store.atoms.list(tenant, AtomFilter(include_superseded=True), limit=100_000)
        keys = Counter((a.content, a.source_message_ids) for a in atoms)
        assert max(keys.values()) == 1, [k for k, n in keys.items() if n > 1][:3]
        assert 1 <= len(scenes.load(tenant)) <= 15
        assert personas.read(tenant) is not None


def test_two_replicas_extract_every_window_exactly_once(replicas: Replicas, postgres_url: str) -> None:
    first, second = replicas.start("--pace", "0.2"), replicas.start("--pace", "0.2")
    capture_everything(postgres_url)
    store = wait_until_idle(postgres_url)
    try:
        check_outcome(store)
    finally:
        store.close()
    done = [(e["tenant"], e["session"], str(e["seqs"])) for e in replicas.events() if e["event"] == "done"]
    assert done and max(Counter(done).values()) == 1  # no window extracted twice
    by = Counter(e["pid"] for e in replicas.events() if e["event"] == "done")
    assert set(by) == {first.pid, second.pid}, by  # both replicas did part of the work


def test_a_killed_replicas_work_is_finished_by_the_other(replicas: Replicas, postgres_url: str) -> None:
    doomed = replicas.start("--hold-at", "3", "--pace", "0.1")
    replicas.start("--pace", "0.1")
    capture_everything(postgres_url)
    deadline = time.monotonic() + 120
    while (
        len(starts := [e for e in replicas.events() if e["pid"] == doomed.pid and e["event"] == "start"]) < 3
    ):
        assert time.monotonic() < deadline, "the doomed replica never reached its hold"
        time.sleep(0.2)
    held = starts[2]
    doomed.send_signal(signal.SIGKILL)  # mid-run: holding the session's lease, nothing committed
    doomed.wait(timeout=30)
    store = wait_until_idle(postgres_url)
    try:
        check_outcome(store)
    finally:
        store.close()
    survivor = [e for e in replicas.events() if e["pid"] != doomed.pid and e["event"] == "done"]
    assert any(  # the window it died in was extracted by the survivor once the lease was gone
        (e["tenant"], e["session"], e["seqs"][0]) == (held["tenant"], held["session"], held["seqs"][0])  # type: ignore[index]
        for e in survivor
    )
