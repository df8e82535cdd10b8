"""The SQLite database of a store: one writer connection with explicit transactions, and a
reader connection per thread.

The writer runs in autocommit mode; ``tx()`` opens ``BEGIN IMMEDIATE`` so a writer never upgrades
a read lock mid-transaction, and a re-entrant lock serialises writers across threads (the async
core calls the store from worker threads). ``query()`` reads through the calling thread's own
read-only connection, so a search never waits for a capture's or the pipeline's write to commit:
in WAL mode each statement reads the last committed state, as it did once the lock was free. The
thread inside a transaction reads through the writer instead (it sees its own uncommitted rows).
Measured: under 50 agents, recall and capture had queued behind each other on the one lock
(docs/benchmarks.md, issue 28).

When the disk refuses (full, read-only, no permission, I/O error, a damaged file), every call raises
one ``StorageError`` naming the database file; a failed write transaction is rolled back, so what
was committed before stays readable. Another process holding the write lock is such a refusal
too, after ``WRITE_WAIT_MS``: a capture waits about a second, not the ten seconds readers allow,
then fails with a 503 saying the database is locked (it had hung 25 s). ``write_problem`` says
whether a write could begin now, for ``status`` and health.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import weakref
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from memstrata.errors import StorageError, StoreError, storage_errors
from memstrata.stores.files.modes import create_private, make_dirs
from memstrata.stores.sqlite import migrations

# SQLite's primary result codes that mean "the storage refused", in the words of a status line.
_STORAGE_CODES = {
    3: "permission denied",  # SQLITE_PERM
    5: "the database is locked by another process",  # SQLITE_BUSY, after the busy timeout
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


READ_WAIT_MS = 10_000  # a reader waits this long for a lock (WAL readers rarely wait at all)
WRITE_WAIT_MS = 1_000  # the writer waits this long for another process's write lock, then fails


def _configure(conn: sqlite3.Connection) -> None:
    conn.execute(f"PRAGMA busy_timeout={READ_WAIT_MS}")
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
        self._writing: int | None = None  # the thread inside ``tx()``
        self._local = threading.local()  # this thread's reader
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()  # a dead thread's goes with it
        # Guards the readers and their setup. Not ``lock``: a thread opening its reader must not
        # wait for the writer's transaction to end.
        self._readers_lock = threading.Lock()
        self._reader_setup: list[str] = []  # statements every reader runs once (temp tables)
        self._closed = False
        self._refused: str | None = None  # why the last write failed, until one succeeds
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
            make_dirs(path.parent)
            create_private(path)  # 0600; SQLite gives its -wal and -shm files the same mode
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=10)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            _configure(conn)
            conn.execute(f"PRAGMA busy_timeout={WRITE_WAIT_MS}")
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
            try:
                with self._errors():
                    self.conn.execute("BEGIN IMMEDIATE")
            except StorageError as exc:
                self._refused = exc.cause
                raise
            self._depth, self._writing = 1, threading.get_ident()
            try:
                with self._errors():
                    yield self.conn
                    self.conn.execute("COMMIT")
                self._refused = None
            except BaseException:
                # A failed COMMIT (disk full) can leave the transaction open: end it.
                if self.conn.in_transaction:
                    with suppress(sqlite3.Error):
                        self.conn.execute("ROLLBACK")
                raise
            finally:
                self._depth, self._writing = 0, None

    def write_problem(self) -> str | None:
        """None when a write transaction could begin now (within ``WRITE_WAIT_MS``, as a capture
        would), else why not, in words (another process holds the write lock, the disk refuses).
        While this process's own writer is at work the answer is the last write's outcome."""
        if self.read_only:
            return None
        if not self.lock.acquire(timeout=WRITE_WAIT_MS / 1000):
            return self._said(self._refused)
        try:
            if self._depth or self._closed:
                return None
            # With the writer's own wait: a worker's commit in progress is no problem, a lock
            # that outlasts what a capture would wait for is.
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                self.conn.execute("ROLLBACK")
            except sqlite3.Error as exc:
                return self._said(storage_cause(exc) or str(exc))
            return None
        finally:
            self.lock.release()

    def _said(self, cause: str | None) -> str | None:
        return f"cannot write {self.path}: {cause}" if cause else None

    def query(self, sql: str, params: Sequence[object] = ()) -> list[sqlite3.Row]:
        """Rows of one read statement: through this thread's reader, or through the writer for
        the thread inside ``tx()`` and for a read-only database (one connection, nothing writes)."""
        if self.read_only or self._writing == threading.get_ident():
            with self.lock, self._errors("cannot read"):
                return _rows(self.conn, sql, params)
        reader = self._reader()
        with reader.lock, self._errors("cannot read"):
            return _rows(reader.conn, sql, params)

    def for_every_reader(self, sql: str) -> None:
        """Run ``sql`` on the writer now and on each reader connection, now and when one opens
        (a ``temp`` table is per connection)."""
        with self.lock, self._readers_lock:
            self.conn.execute(sql)
            self._reader_setup.append(sql)
            for reader in list(self._readers):
                with reader.lock:
                    reader.conn.execute(sql)

    def _reader(self) -> _Reader:
        reader: _Reader | None = getattr(self._local, "reader", None)
        if reader is not None:
            return reader
        with self._readers_lock:
            if self._closed:
                raise StoreError(f"the database {self.path} is closed")
            with self._errors("cannot open"):
                conn = _open_uri(self.path, "mode=ro")
                try:
                    for sql in self._reader_setup:
                        conn.execute(sql)
                except BaseException:
                    conn.close()
                    raise
            reader = _Reader(conn)
            self._readers.add(reader)
        self._local.reader = reader
        return reader

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
        """Close the writer and every reader (a reader's running statement finishes first)."""
        with self.lock, self._readers_lock:
            self._closed = True
            for reader in list(self._readers):
                with reader.lock:
                    reader.conn.close()
            self._readers.clear()
            self.conn.close()


class _Reader:
    """One thread's read connection; its lock only makes ``close`` wait for a running statement."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()


def _rows(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[sqlite3.Row]:
    cur = conn.execute(sql, params)
    cur.row_factory = sqlite3.Row
    return cur.fetchall()
