"""The worker's write transactions stay small: on SQLite a server's capture waits at most
``WRITE_WAIT_MS`` (1 s) for another process's write lock, then answers 503 and, for a proxied
turn, the capture is lost. The retention sweep deleted a session's every expired message in one
transaction, and each L2 run or swept atom rewrote the tenant's whole scene membership.

Timing on a shared machine is noise, so these tests count what a transaction writes: SQLite's
``total_changes`` from BEGIN to COMMIT (a deleted message is about four: its row and its keyword
index's). ``bench/sweep_delete.py`` (shared 2-core machine, load 2.5): one session's 20,000
messages in one transaction held the lock 350 ms (80,380 changes), their vectors 169 ms more;
about 4.4 us a change. A worker at nice 10 beside busy nice-0 processes gets down to a tenth of a
core, so ``MAX_CHANGES`` (about 18 ms of lock, 0.2 s at a tenth) stays well under the 1 s a
capture waits; the old single transaction passed it from about 5,000 messages at a tenth.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from memstrata import FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.forgetting.sweep import Sweeper, SweepPolicy
from memstrata.models import Atom, AtomType, Layer, Message, MessageFilter, Role, Tenant
from memstrata.retrieval.vectors import VectorState
from memstrata.stores.sqlite import db as sqlite_db
from memstrata.stores.sqlite.store import SqliteStore

T = Tenant("ann")
DAY_MS = 86_400_000
MAX_CHANGES = 4_000  # what one worker transaction may change (see the module docstring)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "data")
    yield s
    s.close()


@contextmanager
def rows_per_transaction(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """The changes each outermost write transaction made, in order, while the block runs."""
    changed: list[int] = []
    original = sqlite_db.Database.tx

    @contextmanager
    def counted(self: sqlite_db.Database) -> Iterator[object]:
        outer = not (self._depth and self._writing == threading.get_ident())
        with original(self) as conn:
            before = conn.total_changes
            yield conn
            after = conn.total_changes
        if outer:
            changed.append(after - before)

    with monkeypatch.context() as m:
        m.setattr(sqlite_db.Database, "tx", counted)
        yield changed


def stored_session(store: SqliteStore, n: int, said_at: int) -> list[int]:
    """``n`` messages of one session said at ``said_at``, extracted by L1 (the cursor past them)
    and embedded; returns their seqs."""
    for start in range(0, n, 1000):
        store.messages.append(
            [
                (
                    Message(f"m{i}", T, "s", "s", Role.USER, f"turn {i} about the garden", said_at, said_at),
                    "x",
                )
                for i in range(start, min(n, start + 1000))
            ]
        )
    seqs = [m.seq for m in store.messages.list(T, MessageFilter(), limit=n + 1)]
    store.atoms.commit(T, [], {}, ("s", seqs[-1]))
    vectors = np.random.default_rng(0).random((n, 16), dtype=np.float32)
    for i in range(0, n, 256):
        store.index.put_vectors(T, Layer.L0, seqs[i : i + 256], vectors[i : i + 256])
    return seqs


def test_the_sweep_deletes_a_long_session_in_transactions_of_bounded_size(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = MAX_CHANGES  # in one transaction: about 4n changes
    clock = FakeClock(10 * DAY_MS)
    stored_session(store, n, said_at=DAY_MS)
    sweeper = Sweeper(store, clock, SweepPolicy(message_days=1, keep_last=2))
    with rows_per_transaction(monkeypatch) as changed:
        report = asyncio.run(sweeper.run())
    assert report.messages == n - 2  # the session's newest two stay
    assert store.messages.count(T) == 2
    assert store.index.count_missing_vectors(Layer.L0) == 0  # the swept messages' vectors went too
    assert max(changed) <= MAX_CHANGES, f"a sweep transaction made {max(changed)} changes"


def test_the_sweep_deletes_many_expired_atoms_in_transactions_of_bounded_size(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = 2_000  # the sweep dropped a page (1,000) in one transaction: about 5,000 changes
    atoms = [
        Atom(f"a{i}", T, AtomType.EPISODIC, f"fact {i} about the garden", expires_at=DAY_MS, seq=0)
        for i in range(n)
    ]
    store.atoms.commit(T, [(a, a.content) for a in atoms], {}, None)
    store.members.replace(T, {a.id: "garden.md" for a in atoms})
    sweeper = Sweeper(store, FakeClock(2 * DAY_MS), SweepPolicy())
    with rows_per_transaction(monkeypatch) as changed:
        report = asyncio.run(sweeper.run())
    assert report.expired == n
    assert store.atoms.count(T) == 0
    assert store.members.get(T) == {}
    assert max(changed) <= MAX_CHANGES, f"a sweep transaction made {max(changed)} changes"


def test_an_l1_run_s_atoms_get_their_vectors_in_transactions_of_bounded_size(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = MAX_CHANGES + 1_000  # a long session's backlog: one L1 run embeds all its atoms at once
    atoms = [Atom(f"a{i}", T, AtomType.EPISODIC, f"fact {i} about the garden") for i in range(n)]
    stored = store.atoms.commit(T, [(a, a.content) for a in atoms], {}, None)
    vectors = VectorState(store.index, HashingEmbedder(16))
    with rows_per_transaction(monkeypatch) as changed:
        assert vectors.embed_atoms(T, stored) == []
    assert store.index.count_missing_vectors(Layer.L1) == 0
    assert max(changed) <= MAX_CHANGES, f"a vector transaction made {max(changed)} changes"


def test_changing_one_atom_s_scene_writes_that_row_not_the_tenant_s_whole_membership(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    members = {f"a{i}": f"scene-{i % 7}.md" for i in range(MAX_CHANGES)}  # replaced whole: 2 x 4,000 changes
    store.members.replace(T, members)
    del members["a1"]  # an atom swept or deleted: its scene loses it
    members["a2"] = "moved.md"  # L2 moved another
    with rows_per_transaction(monkeypatch) as changed:
        store.members.replace(T, members)
    assert store.members.get(T) == members
    assert changed == [2]
