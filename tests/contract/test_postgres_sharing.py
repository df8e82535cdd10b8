"""What several processes sharing one PostgreSQL database rely on, with two store objects standing
for two processes (each has its own connections): leases have one holder across them and die with
their holder's connection, and state updates from both never lose each other's changes."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from memstrata.models import Tenant

pytest.importorskip("psycopg")
from memstrata.stores.postgres.store import PostgresStore

A = Tenant("alice")


def eventually(check: Callable[[], bool], seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


@pytest.fixture
def two_processes(postgres_url: str) -> Iterator[tuple[PostgresStore, PostgresStore]]:
    first, second = PostgresStore(postgres_url), PostgresStore(postgres_url)
    yield first, second
    first.close()
    second.close()


def test_a_lease_held_by_one_process_is_refused_to_the_other(
    two_processes: tuple[PostgresStore, PostgresStore],
) -> None:
    first, second = two_processes
    assert first.leases.claim("l2 alice")
    assert not second.leases.claim("l2 alice")
    first.leases.release("l2 alice")
    assert second.leases.claim("l2 alice")
    assert not first.leases.claim("l2 alice")


def test_a_dead_holders_leases_are_free_at_once(postgres_url: str) -> None:
    holder, other = PostgresStore(postgres_url), PostgresStore(postgres_url)
    try:
        assert holder.leases.claim("l1 alice s") and holder.leases.claim("upper alice")
        holder.close()  # what the server sees when a process dies: its connections close
        # The server drops the locks as soon as it has processed the disconnect (milliseconds).
        assert eventually(lambda: other.leases.claim("l1 alice s"))
        assert other.leases.claim("upper alice")
    finally:
        other.close()


def test_updates_from_two_processes_are_never_lost(
    two_processes: tuple[PostgresStore, PostgresStore],
) -> None:
    stores = [*two_processes] * 20

    def bump(store: PostgresStore) -> None:
        store.pipeline.update_session(A, "s", lambda st: setattr(st, "pending", st.pending + 1))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(bump, stores))
    assert two_processes[0].pipeline.session(A, "s").pending == 40
