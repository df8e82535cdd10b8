"""``AdvisoryLeases``: the ``Leases`` of the PostgreSQL store, as session-level advisory locks.

Every claim of this process is held by one dedicated connection (not a pooled one):
``pg_try_advisory_lock`` never waits, and when the process dies its connection closes and the
server drops all its locks at once, so work a dead replica held is free for another immediately
(a host that vanishes without closing its sockets is noticed by TCP keepalives, set on this
connection to give up after about 25 seconds). No clocks, timeouts or heartbeats are involved.

If the lease connection itself breaks, its claims are gone: ``claim`` reports the error
(``StorageError``) and the next claim reconnects. A run already under way finishes; its work is
idempotent (atom ids per window, cursors that only move forward), so a second replica that
claimed the same key meanwhile duplicates effort, never data.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

import psycopg
from psycopg.conninfo import make_conninfo

from memstrata.stores.postgres.db import Database

# Both ends probe an idle connection after 10 s, every 5 s, and give up after 3 misses.
_KEEPALIVE: dict[str, str | int] = {
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "options": "-c tcp_keepalives_idle=10 -c tcp_keepalives_interval=5 -c tcp_keepalives_count=3",
}


class AdvisoryLeases:
    def __init__(self, db: Database) -> None:
        self._db = db
        self._lock = threading.Lock()
        self._conn: psycopg.Connection[Any] | None = None
        self._held: set[str] = set()

    def claim(self, key: str) -> bool:
        with self._lock, self._db.errors("cannot claim work"):
            if key in self._held:  # advisory locks nest per connection: a second claim must fail
                return False
            conn = self._connection()
            try:
                row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)).fetchone()
            except psycopg.OperationalError:
                self._drop()
                raise
            if row is None or not row[0]:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        with self._lock:
            if key not in self._held:
                return
            self._held.discard(key)
            if self._conn is None:
                return
            try:
                self._conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
            except psycopg.Error:
                self._drop()  # the connection is gone, and every claim with it

    def close(self) -> None:
        with self._lock:
            self._drop()

    def _connection(self) -> psycopg.Connection[Any]:
        if self._conn is None or self._conn.closed:
            self._held.clear()  # claims of a lost connection are gone
            self._conn = psycopg.connect(make_conninfo(self._db.url, **_KEEPALIVE), autocommit=True)
        return self._conn

    def _drop(self) -> None:
        self._held.clear()
        if self._conn is not None:
            conn, self._conn = self._conn, None
            with contextlib.suppress(psycopg.Error):
                conn.close()
