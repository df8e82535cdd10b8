"""One SQLite connection shared by the store parts, with explicit transactions.

The connection runs in autocommit mode; ``tx()`` opens ``BEGIN IMMEDIATE`` so a writer never
upgrades a read lock mid-transaction. A re-entrant lock serialises use across threads (the async
core calls the store from worker threads).

When the disk refuses (full, read-only, no permission, I/O error, a damaged file), every call raises
one ``StorageError`` naming the database file; a failed write transaction is rolled back, so what
was committed before stays readable.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from memstrata.atomic import storage_errors
from memstrata.errors import StorageError, StoreError
from memstrata.stores.sqlite import migrations

# SQLite's primary result codes that mean "the storage refused", in the words of a status line.
_STORAGE_CODES = {
    3: "permission denied",  # SQLITE_PERM
    8: "the database is read-only",  # SQLITE_READONLY
    10: "disk input/output error",  # SQLITE_IOERR
    11: "the database file is damaged",  # SQLITE_CORRUPT
    13: "the disk is full",  # SQLITE_FULL
    14: "the database file cannot be opened",  # SQLITE_CANTOPEN
    26: "the file is not a database",  # SQLITE_NOTADB
}


def storage_cause(exc: sqlite3.Error) -> str | None:
    """A short reason when ``exc`` is a storage failure (``the disk is full (SQLITE_FULL)``), else None."""
    code = getattr(exc, "sqlite_errorcode", None)
    if code is None or (code & 0xFF) not in _STORAGE_CODES:
        return None
    name = getattr(exc, "sqlite_errorname", "") or ""
    return f"{_STORAGE_CODES[code & 0xFF]} ({name})" if name else _STORAGE_CODES[code & 0xFF]


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA busy_timeout=10000")
    conn.execute("PRAGMA foreign_keys=ON")


def _read_only_fs(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _connect_read_only(path: Path) -> sqlite3.Connection:
    """``mode=ro``; on a read-only file system, where SQLite cannot create the WAL's ``-shm``
    companion, ``immutable=1`` (safe there: nobody can change the file)."""
    if not path.is_file():
        raise StoreError(f"no memstrata data in {path.parent} (nothing has been stored there yet)")
    try:
        return _open_uri(path, "mode=ro")
    except sqlite3.Error:
        if not _read_only_fs(path.parent):
            raise
        return _open_uri(path, "immutable=1")


def _open_uri(path: Path, options: str) -> sqlite3.Connection:
    uri = f"{path.resolve().as_uri()}?{options}"
    conn = sqlite3.connect(uri, uri=True, isolation_level=None, check_same_thread=False, timeout=10)
    try:
        _configure(conn)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()  # opening is lazy: read now
    except BaseException:
        conn.close()
        raise
    return conn


class Database:
    """``path`` opened (created and migrated unless ``read_only``)."""

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.read_only = read_only
        self.lock = threading.RLock()
        self._depth = 0
        with self._errors("cannot open"):
            self.conn = self._connect(path, read_only)
            try:
                with self.lock:
                    if read_only:
                        migrations.check(self.conn)
                    else:
                        migrations.apply(self.conn)
            except BaseException:
                self.conn.close()
                raise

    @staticmethod
    def _connect(path: Path, read_only: bool) -> sqlite3.Connection:
        if read_only:
            return _connect_read_only(path)
        with storage_errors(path.parent):
            path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            _configure(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    @contextmanager
    def _errors(self, action: str = "cannot write") -> Iterator[None]:
        """SQLite storage failures leave as one ``StorageError``; other SQLite errors as ``StoreError``."""
        try:
            yield
        except sqlite3.Error as exc:
            cause = storage_cause(exc)
            if cause is not None:
                if _read_only_fs(self.path.parent):  # SQLite says "cannot open": say why
                    cause = f"the file system is read-only ({getattr(exc, 'sqlite_errorname', '')})"
                raise StorageError(str(self.path), cause, action=action) from exc
            raise StoreError(f"SQLite error on {self.path}: {exc}") from exc

    @contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (nested calls join the outer one). Raises ``StorageError`` when the
        disk refuses; the transaction is then rolled back."""
        with self.lock:
            if self._depth:
                self._depth += 1
                try:
                    yield self.conn
                finally:
                    self._depth -= 1
                return
            with self._errors():
                self.conn.execute("BEGIN IMMEDIATE")
            self._depth = 1
            try:
                with self._errors():
                    yield self.conn
                    self.conn.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (disk full) can leave the transaction open: end it.
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0

    def query(self, sql: str, params: tuple[object, ...] | list[object] = ()) -> list[sqlite3.Row]:
        with self.lock, self._errors("cannot read"):
            cur = self.conn.execute(sql, params)
            cur.row_factory = sqlite3.Row
            return cur.fetchall()

    def run(self, sql: str) -> list[tuple[object, ...]]:
        """One statement outside any transaction (``VACUUM``, ``PRAGMA``), under the lock; storage
        failures raise ``StorageError`` as in ``tx``."""
        with self.lock, self._errors():
            if self._depth:
                raise StoreError(f"{sql.split()[0]} cannot run inside a transaction")
            return list(self.conn.execute(sql).fetchall())

    def meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = ?", (key,))
        return str(rows[0]["value"]) if rows else None

    def close(self) -> None:
        with self.lock:
            self.conn.close()
