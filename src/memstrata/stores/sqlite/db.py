"""One SQLite connection shared by the store parts, with explicit transactions.

The connection runs in autocommit mode; ``tx()`` opens ``BEGIN IMMEDIATE`` so a writer never
upgrades a read lock mid-transaction. A re-entrant lock serialises use across threads (the async
core calls the store from worker threads).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from memstrata.errors import StoreError
from memstrata.stores.sqlite import migrations


class Database:
    """``read_only``: open an existing database without writing anything (no migration, no
    journal-mode change); any write then fails."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.read_only = read_only
        try:
            if read_only:
                if not path.is_file():
                    raise StoreError(
                        f"no memstrata data in {path.parent} (nothing has been stored there yet)"
                    )
                uri = f"file:{quote(str(path.resolve()))}?mode=ro"
                self.conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False)
            else:
                path.parent.mkdir(parents=True, exist_ok=True)
                self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
                self.conn.execute("PRAGMA journal_mode=WAL")
                self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA busy_timeout=10000")
            self.conn.execute("PRAGMA foreign_keys=ON")
        except sqlite3.Error as exc:
            raise StoreError(f"cannot open SQLite database {path}: {exc}") from exc
        self.lock = threading.RLock()
        self._depth = 0
        with self.lock:
            if read_only:
                migrations.check(self.conn)
            else:
                migrations.apply(self.conn)

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (nested calls join the outer one)."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            else:
                self.conn.execute("COMMIT")
            finally:
                self._depth = 0

    def query(self, sql: str, params: tuple[object, ...] | list[object] = ()) -> list[sqlite3.Row]:
        with self.lock:
            cur = self.conn.execute(sql, params)
            cur.row_factory = sqlite3.Row
            return cur.fetchall()

    def meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def close(self) -> None:
        with self.lock:
            self.conn.close()
