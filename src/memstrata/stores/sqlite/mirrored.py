"""Keeping a JSONL mirror equal to its table: top-up, agreement checks, rewrites.

The database is the truth. After each commit the new records are appended (under the database
lock, so lines go out in ``seq`` order). When a write to the mirror fails (disk full, read-only
folder) the commit stands, the failure is remembered, and the next commit or open tops the mirror
up from its mark. On open the mirror is compared with the table cheaply (its highest line against
the table's highest ``seq`` and the record at that ``seq``); when it is ahead (the database was
replaced, or lost its ``-wal``) or holds another record there, it is rewritten from the table.

A ``shared`` mirror is one the other processes of the data directory write too (a server and its
workers: the server captures messages and remembers notes, a worker commits L1's atoms and sweeps).
Its writes take a lock file beside the folder, one process at a time, and an append is a top-up
from the mark read again from the files: a record another process committed first but has not
mirrored yet goes out first, so the lines stay in ``seq`` order (SQLite commits one writer at a
time, so every ``seq`` below a committed one is committed too). Rewrites and prunes take a second
lock file (``.<folder>.rewrite.lock``), one at a time, before the database lock and the first.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from memstrata.errors import StorageError, storage_errors
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.modes import FILE_MODE
from memstrata.stores.sqlite.db import Database
from memstrata.stores.sqlite.mirror import JsonlMirror, Key, Tail, mirror_files, read_tail
from memstrata.stores.sqlite.mirror_repair import (
    Findings,
    build,
    compare,
    count_lines,
    finish_interrupted,
    rewrite,
    swap_in,
)

log = logging.getLogger(__name__)
PAGE = 5000


@dataclass(frozen=True, slots=True)
class Source:
    """What a mirror copies: ``table``'s records after a ``seq``, as lines, with the ms that names a
    rewritten line's file (the record's write time as the database knows it)."""

    table: str
    page: Callable[[int, int], Sequence[Any]]  # (after_seq, limit) -> records by seq
    line: Callable[[Any], dict[str, Any]]
    stamp: Callable[[Any], int]


class MirrorKeeper:
    """One mirror folder and the table it copies (see the module docstring)."""

    def __init__(
        self,
        db: Database,
        folder: Path,
        source: Source,
        *,
        writable: bool = True,
        shared: bool = False,
        owner: bool = True,
    ) -> None:
        self._db = db
        # Not thread-local: the database lock already keeps this process's threads apart.
        self._shared = (
            FileLock(
                folder.parent / f".{folder.name}.lock", mode=FILE_MODE, thread_local=False, is_singleton=False
            )
            if shared and writable
            else None
        )
        # One rewrite at a time: this process's threads (the lock), then every process (the file).
        self._rewriting = threading.Lock()
        self._shared_rewrite = (
            FileLock(
                folder.parent / f".{folder.name}.rewrite.lock",
                mode=FILE_MODE,
                thread_local=False,
                is_singleton=False,
            )
            if shared and writable
            else None
        )
        self._source = source
        self.folder = folder
        self.error: str | None = None  # the last write failure, until a write succeeds
        self.rewritten: str | None = None  # why open rewrote the mirror (None: it did not)
        self._writable = writable
        if writable and owner:  # a worker leaves this to the owner, which did it before it started
            try:
                finish_interrupted(folder)
            except OSError as exc:
                self.error = f"cannot finish the interrupted rewrite of {folder}: {exc}"
        self.mirror = JsonlMirror(folder, writable=writable)

    def open_sync(self) -> None:
        """Rewrite the mirror when it disagrees with the table, else top it up. Never raises for a
        refused write: reads must keep working (the failure is kept in ``error``)."""
        with self.exclusive(), self._db.lock, self._other_writers():
            reason = self._quick_disagreement(self.mirror.tail())
            if reason is not None:
                log.warning("%s: %s; rewriting it from the database", self.folder, reason)
                self._guarded(self._rewrite)
                if self.error is None:
                    self.rewritten = reason
            else:
                self._guarded(self._top_up)

    def committed(self, records: Sequence[Any]) -> None:
        """Mirror records just committed (call under the database lock, in commit order)."""
        if not records:
            return
        if self._shared is not None:
            self._guarded(self._shared_top_up)
        elif self.error is None:
            self._guarded(lambda: self.mirror.append([self._source.line(r) for r in records]))
        else:
            self._guarded(self._top_up)

    def check(self, *, full: bool = True) -> str | None:
        """None when the mirror agrees with the table, else what differs. ``full`` compares every
        line with every record; otherwise the files' ends are checked against the table and lines
        are counted (no parsing)."""
        with self._db.lock:
            if full:
                found = compare(self.folder, self._keys())
                difference = None if found.agree() else found.describe()
            else:
                difference = self._quick_check()
        if difference is None:
            return None
        note = f"{self.folder.name}/ disagrees with the database: {difference}"
        return f"{note} (last write failed: {self.error})" if self.error else note

    def _quick_check(self) -> str | None:
        if (reason := self._quick_disagreement(read_tail(self.folder, trim=False))) is not None:
            return reason
        rows = self._db.query(f"SELECT COUNT(*) AS n FROM {self._source.table}")[0]["n"]
        lines = count_lines(self.folder)
        if lines < rows:
            return f"{rows - lines} records missing"
        return f"{lines - rows} lines more than records" if lines > rows else None

    def repair(self) -> Findings | None:
        """Rewrite the mirror from the table when it disagrees; returns what differed (None: nothing
        to do). Raises ``StorageError`` when the rewrite cannot be written."""
        with self.exclusive(), self._db.lock, self._other_writers():
            found = compare(self.folder, self._keys())
            if found.agree() and self.error is None:
                return None
            self._rewrite()
            self.error = None
            return found

    def removed(self) -> None:
        """Records were deleted from the table: rewrite the mirror without them. The new folder is
        built from the table outside the database lock and the mirror's (appends go on meanwhile);
        under them only the records committed since are added and the folders swapped, so a
        capture in another process waits for a few lines and two renames, not for the whole mirror
        (``bench/lock_hold.py``). Call outside the database lock. Raises ``StorageError`` (the old
        mirror then stays, with the deleted lines; ``repair`` rewrites it)."""
        if not self._writable:
            return
        s = self._source
        with self.exclusive():
            _, top = build(self.folder, ([(s.line(r), s.stamp(r)) for r in page] for page in self._pages(0)))
            with self._db.lock, self._other_writers():
                swap_in(self.folder, ([(s.line(r), s.stamp(r)) for r in page] for page in self._pages(top)))
                self.mirror.reset()
                self.error = None

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """No other rewrite or prune of this mirror, by any process, while the caller holds this.
        Take it before the database lock (``removed`` takes them in that order)."""
        with self._rewriting:
            if self._shared_rewrite is None:
                yield
                return
            try:
                self._shared_rewrite.acquire()
            except OSError as exc:
                raise StorageError(
                    str(self._shared_rewrite.lock_file), str(exc), action="cannot lock"
                ) from exc
            try:
                yield
            finally:
                self._shared_rewrite.release()

    def prune(self, doomed: Callable[[dict[str, Any]], bool]) -> int:
        """Rewrite each file without the lines ``doomed`` picks (a forgotten tenant's); every
        other line keeps its bytes, its file and its place, and each file is replaced atomically
        (a file left empty is removed). Returns the lines removed. Raises ``StorageError``. The
        caller holds ``exclusive`` (a rewrite built before the tenant's rows went would bring
        its lines back)."""
        if not self._writable:
            return 0
        removed = 0
        with self._db.lock, self._other_writers():
            for path in mirror_files(self.folder):
                kept, dropped = _without(path, doomed)
                if not dropped:
                    continue
                if kept:
                    atomic_write(path, b"".join(kept))
                else:
                    with storage_errors(path):
                        path.unlink()
                removed += dropped
            self.mirror.reset()
        return removed

    # --- internals ------------------------------------------------------------------------------

    @contextlib.contextmanager
    def _other_writers(self) -> Iterator[None]:
        """For a shared mirror: the other processes' writes held off, and the mark read again."""
        if self._shared is None:
            yield
            return
        try:
            self._shared.acquire()
        except OSError as exc:
            raise StorageError(str(self._shared.lock_file), str(exc), action="cannot lock") from exc
        try:
            self.mirror.refresh()
            yield
        finally:
            self._shared.release()

    def _guarded(self, write: Callable[[], object]) -> None:
        if not self._writable:
            return
        try:
            write()
        except StorageError as exc:
            if self.error is None:
                log.warning("mirror %s is behind the database (caught up later): %s", self.folder, exc)
            self.error = str(exc)
        else:
            self.error = None

    def _quick_disagreement(self, tail: Tail) -> str | None:
        if tail.problem is not None:
            return tail.problem
        top = self._db.query(f"SELECT COALESCE(MAX(seq), 0) AS n FROM {self._source.table}")[0]["n"]
        if tail.seq > top:
            return f"its last line (seq {tail.seq}) is past the database's last record (seq {top})"
        if tail.seq and tail.key not in (None, *self._key_at(tail.seq)):
            return f"its line for seq {tail.seq} is not the database's record at that seq"
        return None

    def _key_at(self, seq: int) -> list[Key]:
        rows = self._db.query(f"SELECT user_id, agent_id, id FROM {self._source.table} WHERE seq = ?", (seq,))
        return [(r["user_id"], r["agent_id"], r["id"]) for r in rows]

    def _keys(self) -> Iterator[tuple[int, Key]]:
        after = 0
        while rows := self._db.query(
            f"SELECT seq, user_id, agent_id, id FROM {self._source.table} WHERE seq > ? ORDER BY seq LIMIT ?",
            (after, PAGE),
        ):
            for r in rows:
                yield int(r["seq"]), (r["user_id"], r["agent_id"], r["id"])
            after = int(rows[-1]["seq"])

    def _pages(self, after: int) -> Iterator[Sequence[Any]]:
        while records := self._source.page(after, PAGE):
            yield records
            after = records[-1].seq

    def _shared_top_up(self) -> None:
        with self._other_writers():
            self._top_up()

    def _top_up(self) -> None:
        for records in self._pages(self.mirror.mark()):
            self.mirror.append([self._source.line(r) for r in records])

    def _rewrite(self) -> None:
        s = self._source
        n = rewrite(self.folder, ([(s.line(r), s.stamp(r)) for r in page] for page in self._pages(0)))
        self.mirror.reset()
        log.info("rewrote %s from the database: %d lines", self.folder, n)


def _without(path: Path, doomed: Callable[[dict[str, Any]], bool]) -> tuple[list[bytes], int]:
    """The lines of ``path`` that ``doomed`` does not pick (unreadable lines are kept as they are),
    and how many it picked."""
    kept: list[bytes] = []
    dropped = 0
    with storage_errors(path, "cannot read"), open(path, "rb") as fh:
        for raw in fh:
            try:
                line = json.loads(raw)
            except ValueError:
                line = None
            if isinstance(line, dict) and doomed(line):
                dropped += 1
            else:
                kept.append(raw)
    return kept, dropped
