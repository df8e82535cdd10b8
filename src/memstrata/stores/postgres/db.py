"""A pool of PostgreSQL connections shared by the store parts, with explicit transactions.

The store ports are synchronous (the async core calls them from worker threads), so this is
psycopg 3's synchronous ``ConnectionPool``: each call borrows a connection for the length of one
query or one transaction and gives it back, so worker threads never wait on each other's
connections beyond the pool size. Connections run in autocommit mode; ``tx()`` opens a
transaction. Every connection has pgvector's types registered (vectors travel as float32 arrays).

A server that refuses (unreachable, disk full, out of connections) raises ``StorageError`` naming
the server (never its password); any other database error raises ``StoreError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool, PoolTimeout

from memstrata.errors import StorageError, StoreError
from memstrata.stores.postgres import migrations

Row = dict[str, Any]
# SQLSTATE classes that mean "the server refused", not "the query is wrong".
_REFUSALS = {
    "08": "the connection failed",  # connection exception
    "53": "the server is out of resources (disk, memory or connections)",  # insufficient resources
    "57": "the server is shutting down or was restarted",  # operator intervention
    "58": "the server had an I/O error",  # system error
}


def display_url(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def _configure(conn: psycopg.Connection[Any]) -> None:
    register_vector(conn)


class Database:
    """A connection pool to ``url``; migrated on open unless ``read_only`` (then only checked)."""

    def __init__(self, url: str, *, read_only: bool = False, max_connections: int = 8) -> None:
        self.url = url
        self.read_only = read_only
        self.where = display_url(url)
        with self.errors("cannot open"):
            with psycopg.connect(url, autocommit=True) as conn:
                if read_only:
                    migrations.check(conn)
                else:
                    migrations.apply(conn)
            self.pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
                url,
                min_size=1,
                max_size=max_connections,
                kwargs={"autocommit": True, "row_factory": dict_row},
                configure=_configure,
                open=False,
                timeout=30.0,
                name="memstrata",
            )
            self.pool.open(wait=True, timeout=30.0)

    @contextmanager
    def errors(self, action: str = "cannot write") -> Iterator[None]:
        """Server refusals leave as one ``StorageError``; other database errors as ``StoreError``."""
        try:
            yield
        except PoolTimeout as exc:
            raise StorageError(
                self.where, f"no connection within the pool's timeout ({exc})", action=action
            ) from exc
        except psycopg.Error as exc:
            state = getattr(exc, "sqlstate", None) or ""
            if isinstance(exc, psycopg.OperationalError) and not state:
                raise StorageError(self.where, _first_line(exc), action=action) from exc
            if state[:2] in _REFUSALS:
                cause = f"{_REFUSALS[state[:2]]}: {_first_line(exc)} ({state})"
                raise StorageError(self.where, cause, action=action) from exc
            raise StoreError(f"PostgreSQL error on {self.where}: {_first_line(exc)}") from exc

    @contextmanager
    def tx(self) -> Iterator[psycopg.Connection[Row]]:
        """A write transaction on one pooled connection: committed when the block ends, rolled back
        when it raises."""
        with self.errors(), self.pool.connection() as conn, conn.transaction():
            yield conn

    def query(self, sql: str, params: Sequence[object] | dict[str, object] = ()) -> list[Row]:
        with self.errors("cannot read"), self.pool.connection() as conn:
            return conn.execute(sql, params).fetchall()

    def meta(self, key: str) -> str | None:
        rows = self.query("SELECT value FROM meta WHERE key = %s", (key,))
        return str(rows[0]["value"]) if rows else None

    def close(self) -> None:
        self.pool.close()


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]
