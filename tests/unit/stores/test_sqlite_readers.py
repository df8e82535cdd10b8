"""The SQLite database's readers beside its one writer: a thread reads what was committed, the
thread inside a transaction reads its own rows, per-connection tables reach every reader, and
closing the database closes its readers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import pytest

from memstrata.errors import StoreError
from memstrata.stores.sqlite.db import Database

R = TypeVar("R")


@pytest.fixture
def open_db(tmp_path: Path) -> Iterator[Database]:
    db = Database(tmp_path / "memstrata.db")
    yield db
    db.close()


def in_thread(work: Callable[[], R]) -> R:
    """``work()`` run in a new thread (which gets a reader of its own)."""
    out: list[R] = []
    t = threading.Thread(target=lambda: out.append(work()))
    t.start()
    t.join()
    return out[0]


def meta(db: Database, key: str) -> str | None:
    return db.meta(key)


def test_another_thread_reads_what_the_writer_committed(open_db: Database) -> None:
    assert in_thread(lambda: meta(open_db, "k")) is None
    with open_db.tx() as c:
        c.execute("INSERT INTO meta (key, value) VALUES ('k', 'one')")
    assert in_thread(lambda: meta(open_db, "k")) == "one"
    assert meta(open_db, "k") == "one"  # this thread's own reader too


def test_uncommitted_rows_are_seen_by_their_transaction_alone(open_db: Database) -> None:
    seen: list[str | None] = []
    started, done = threading.Event(), threading.Event()

    def other() -> None:
        started.wait()
        seen.append(meta(open_db, "k"))  # waits for no lock: the writer's open transaction
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with open_db.tx() as c:
        c.execute("INSERT INTO meta (key, value) VALUES ('k', 'two')")
        assert meta(open_db, "k") == "two"  # read through the writer, inside the transaction
        started.set()
        assert done.wait(10)
    t.join()
    assert seen == [None]


def test_a_temp_table_reaches_readers_opened_before_and_after(open_db: Database) -> None:
    assert in_thread(lambda: meta(open_db, "k")) is None  # a reader opened before
    open_db.for_every_reader("CREATE TEMP TABLE t (x INTEGER)")
    assert in_thread(lambda: open_db.query("SELECT COUNT(*) AS n FROM temp.t")[0]["n"]) == 0
    assert open_db.query("SELECT COUNT(*) AS n FROM temp.t")[0]["n"] == 0


def test_a_closed_database_refuses_reads_from_every_thread(open_db: Database) -> None:
    assert meta(open_db, "k") is None  # this thread has a reader now
    open_db.close()
    with pytest.raises(StoreError):
        meta(open_db, "k")

    def read_elsewhere() -> str:
        try:
            meta(open_db, "k")
        except StoreError as exc:
            return exc.message
        return "read"

    assert "closed" in in_thread(read_elsewhere)
