"""How long one store write of the retention sweep (or of an L1 run's vectors) holds SQLite's
write lock, by its size.

    python bench/sweep_delete.py [N ...]   (default: 1000 5000 20000)

For each N: a fresh store with one session of N messages, their 384-dimension vectors written in
one ``put_vectors`` (as an L1 run wrote a session's atoms' vectors before ``WRITE_BATCH``), then
the sweep's two writes for the whole session, as the sweep did them before it deleted in
batches (``forgetting/sweep.py``, ``DELETE_BATCH``): ``messages.delete`` (rows and keyword rows,
one transaction) and ``index.drop_vectors``. Prints the lock hold (BEGIN to COMMIT) of each, the
changes SQLite counted, and the delete call's whole time (with the JSONL mirror's rewrite, which
holds the mirror's lock file, not SQLite's).
"""

from __future__ import annotations

import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from memstrata.models import Layer, Message, MessageFilter, Role, Tenant
from memstrata.stores.sqlite import db as sqlite_db
from memstrata.stores.sqlite.store import SqliteStore

T = Tenant("u")
TEXT = "I moved my pottery class to Thursday evening because the studio changed hours. " * 3
held: list[tuple[float, int]] = []  # (seconds, changes) of each outermost transaction
_original = sqlite_db.Database.tx


@contextmanager
def _timed(self: sqlite_db.Database) -> Iterator[object]:
    outer = not (self._depth and self._writing == threading.get_ident())
    with _original(self) as conn:
        t0, before = time.monotonic(), conn.total_changes
        yield conn
        changes = conn.total_changes - before
    if outer:
        held.append((time.monotonic() - t0, changes))


def one(n: int) -> str:
    with tempfile.TemporaryDirectory() as d:
        store = SqliteStore(Path(d))
        for start in range(0, n, 2000):
            batch = range(start, min(n, start + 2000))
            store.messages.append(
                [(Message(f"m{i}", T, "s", "s1", Role.USER, TEXT, 1000 + i, 1000 + i), TEXT) for i in batch]
            )
        seqs = [m.seq for m in store.messages.list(T, MessageFilter(), limit=n + 1)]
        vectors = np.random.default_rng(0).random((n, 384), dtype=np.float32)
        held.clear()
        store.index.put_vectors(T, Layer.L0, seqs, vectors)
        put = held.pop()[0]
        t0 = time.monotonic()
        gone = store.messages.delete(T, [f"m{i}" for i in range(n)])
        call = time.monotonic() - t0
        store.index.drop_vectors(T, Layer.L0, [m.seq for m in gone])
        (delete, delete_changes), (drop, drop_changes) = held
        store.close()
    return (
        f"N={n}: put_vectors holds {put * 1000:.0f} ms; messages.delete {delete * 1000:.0f} ms ({delete_changes} changes; the call with "
        f"the mirror's rewrite {call * 1000:.0f} ms), drop_vectors {drop * 1000:.0f} ms ({drop_changes} changes)"
    )


def main() -> None:
    sqlite_db.Database.tx = _timed  # type: ignore[method-assign, assignment]
    for n in [int(a) for a in sys.argv[1:]] or [1000, 5000, 20000]:
        print(one(n), flush=True)


if __name__ == "__main__":
    main()
