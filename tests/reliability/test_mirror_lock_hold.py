"""A delete holds a JSONL mirror's lock for what changed meanwhile, not for the whole mirror.

On a data directory a server and its worker write the mirrors in turn under a lock file per
folder; a capture in the server waits for it before it answers. A deleted record leaves the mirror
by a rewrite from the table, and the delete did the whole rewrite under that lock (and under its
process's database lock): compare every line, then write every line again. The retention sweep
deletes session by session, so a sweep held the lock once per session for the whole mirror:
``bench/lock_hold.py`` saw capture max 1,111 ms and remember p99 2,642 ms during a sweep with no
SQLite wait above 8.5 ms; one delete of 10 of 20,000 messages held the lock 452 ms (shared
2-core machine). Now the new folder is built outside the locks; under them only the records
committed since the build read the table are written, and the folders swapped.

Timing on a shared machine is noise, so the first test counts lines written while the lock is
held; the second holds the lock as another process would and shows the delete builds everything
before it, then adds what was committed meanwhile.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import pytest
from filelock import FileLock

from memstrata.models import Atom, AtomType, Message, Role, Tenant
from memstrata.stores.sqlite import mirror_repair, mirrored
from memstrata.stores.sqlite.messages import SqliteMessageLog
from memstrata.stores.sqlite.mirror import mirror_files
from memstrata.stores.sqlite.store import SqliteStore

T = Tenant("ann")
N = 5_000


def message(i: int) -> tuple[Message, str]:
    text = f"Message {i}: I moved my pottery class to Thursday evening."
    return Message(f"m{i}", T, "s", "s", Role.USER, text, 1_000, 1_000 + i), text


def atom(i: int) -> tuple[Atom, str]:
    text = f"The user keeps note {i} about pottery."
    return Atom(f"a{i}", T, AtomType.EPISODIC, text, created_at=1_000 + i, updated_at=1_000 + i), text


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteStore]:
    s = SqliteStore(tmp_path / "data", shared=True)  # a server's: its workers write the mirrors too
    for i in range(0, N, 1_000):
        s.messages.append([message(j) for j in range(i, i + 1_000)])
        s.atoms.commit(T, [atom(j) for j in range(i, i + 1_000)], {}, None)
    yield s
    s.close()


@contextmanager
def lines_written(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, int]]:
    """Lines a rewrite writes while the mirror's lock is held (``locked``) and while it is not."""
    held = threading.local()
    written = {"locked": 0, "unlocked": 0}
    other_writers = mirrored.MirrorKeeper._other_writers
    write_days = mirror_repair._write_days

    @contextmanager
    def holding(self: mirrored.MirrorKeeper) -> Iterator[None]:
        with other_writers(self):
            held.on = True
            try:
                yield
            finally:
                held.on = False

    def counted(new: Path, page: Sequence[tuple[dict[str, Any], int]]) -> set[Path]:
        written["locked" if getattr(held, "on", False) else "unlocked"] += len(page)
        return write_days(new, page)

    monkeypatch.setattr(mirrored.MirrorKeeper, "_other_writers", holding)
    monkeypatch.setattr(mirror_repair, "_write_days", counted)
    yield written


def test_a_delete_writes_no_line_of_the_mirror_under_its_lock(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    with lines_written(monkeypatch) as written:
        assert len(store.messages.delete(T, [f"m{i}" for i in range(10)])) == 10
        assert len(store.atoms.delete(T, [f"a{i}" for i in range(10)])) == 10
    # The old delete: 2 x 4,990 lines under the lock (and every line compared there first).
    assert written == {"locked": 0, "unlocked": 2 * (N - 10)}
    assert store.mirror_check(full=True) is None


def test_a_delete_builds_the_mirror_while_another_process_holds_the_lock(store: SqliteStore) -> None:
    folder = store.home / "conversations"
    worker = SqliteStore(store.home, joins=os.getpid())
    other = FileLock(folder.parent / f".{folder.name}.lock")  # as another process's capture holds it
    other.acquire()
    deleting = threading.Thread(target=store.messages.delete, args=(T, [f"m{i}" for i in range(10)]))
    try:
        deleting.start()
        new = folder.parent / f".{folder.name}.rewrite"
        deadline = time.monotonic() + 60
        while _lines(new) < N - 10:  # the whole new mirror, written with the lock held elsewhere
            assert time.monotonic() < deadline and deleting.is_alive(), _lines(new)
            time.sleep(0.01)
        # Another process (a worker's store: its own database lock) commits a message the mirror
        # has not caught up with yet.
        SqliteMessageLog(worker.db).append([message(N)])
        assert deleting.is_alive()  # the swap waits for the lock
    finally:
        other.release()
        deleting.join(timeout=60)
        worker.close()
    assert not deleting.is_alive()
    assert store.mirror_check(full=True) is None  # the deleted lines gone, the late one there


def _lines(folder: Path) -> int:
    total = 0
    for path in mirror_files(folder):
        with suppress(FileNotFoundError):
            total += path.read_bytes().count(b"\n")
    return total
