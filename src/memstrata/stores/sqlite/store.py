"""The embedded backend: SQLite (WAL) for L0/L1/search/pipeline state, JSONL mirrors beside it."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from memstrata.models import Atom, AtomFilter, Erased, Message, MessageFilter, Tenant
from memstrata.models.lines import atom_line, message_line
from memstrata.stores.sql import SQLITE
from memstrata.stores.sql_keys import SqlKeyStore
from memstrata.stores.sqlite import erasure
from memstrata.stores.sqlite.atoms import SqliteAtomStore
from memstrata.stores.sqlite.db import Database
from memstrata.stores.sqlite.leases import FileLeases, LocalLeases, leases_for
from memstrata.stores.sqlite.members import SqliteSceneMembers
from memstrata.stores.sqlite.messages import SqliteMessageLog
from memstrata.stores.sqlite.mirrored import MirrorKeeper, Source
from memstrata.stores.sqlite.ownership import WriterLock, wait_for_owner
from memstrata.stores.sqlite.pipeline import SqlitePipelineState
from memstrata.stores.sqlite.search import SqliteSearchIndex

log = logging.getLogger(__name__)


class _MirroredMessageLog(SqliteMessageLog):
    def __init__(self, db: Database, keeper: MirrorKeeper) -> None:
        super().__init__(db)
        self._keeper = keeper

    def append(self, items: Sequence[tuple[Message, str]]) -> list[Message]:
        with self._db.lock:  # commit and mirror together, so lines go out in seq order
            stored = super().append(items)
            self._keeper.committed(stored)
        return stored

    def delete(
        self, tenant: Tenant, ids: Sequence[str] = (), session_keys: Sequence[str] = ()
    ) -> list[Message]:
        removed = super().delete(tenant, ids, session_keys)
        if removed:  # a deleted record leaves the mirror too (rewritten from the table)
            self._keeper.removed()
        return removed


class _MirroredAtomStore(SqliteAtomStore):
    def __init__(self, db: Database, keeper: MirrorKeeper) -> None:
        super().__init__(db)
        self._keeper = keeper

    def commit(
        self,
        tenant: Tenant,
        new: Sequence[tuple[Atom, str]],
        superseded: Mapping[str, str],
        cursor: tuple[str, int] | None,
    ) -> list[Atom]:
        with self._db.lock:
            stored = super().commit(tenant, new, superseded, cursor)
            self._keeper.committed(stored)
        return stored

    def delete(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        removed = super().delete(tenant, ids)
        if removed:  # a deleted record leaves the mirror too (rewritten from the table)
            self._keeper.removed()
        return removed


class SqliteStore:
    """Opens ``<home>/memstrata.db`` and keeps the JSONL mirrors equal to it.

    A writer (the default) takes the directory's writer lock (``ownership``; waiting up to
    ``wait`` seconds, recording ``url`` for a server), creates and migrates the database and, on
    open, rewrites a mirror that disagrees with it or tops it up. ``read_only=True`` takes no lock,
    opens the database read-only and writes nothing at all (a reader beside a writer, or a full or
    read-only disk). Raises ``DirectoryLockedError`` when another process writes the directory,
    ``StorageError`` when the disk refuses to open the database, ``SchemaError`` for an unknown
    schema.

    ``shared``: the owner shares the directory with its workers (``memstrata serve``): the mirrors
    are written one process at a time (``mirrored``). ``joins``: this process is a worker of the
    owner with that pid (waiting up to ``wait`` seconds for it to open the directory); it takes
    no lock, and its mirrors are shared. Claims (``leases``) exclude every process of the directory.
    """

    def __init__(
        self,
        home: Path,
        *,
        read_only: bool = False,
        wait: float = 0.0,
        url: str | None = None,
        shared: bool = False,
        joins: int | None = None,
    ) -> None:
        self.home = home
        self.read_only = read_only
        self.joins = joins
        self._owner: WriterLock | None = None
        if joins is not None and not read_only:
            wait_for_owner(home, joins, wait)
        elif not read_only:
            self._owner = WriterLock(home, url=url)
            self._owner.acquire(wait)
        try:
            self._open(home, read_only, shared or joins is not None, owner=joins is None)
        except BaseException:
            if hasattr(self, "db"):
                self.db.close()
            self._release()
            raise

    def _open(self, home: Path, read_only: bool, shared: bool, *, owner: bool) -> None:
        self.db = Database(home / "memstrata.db", read_only=read_only)
        self.messages = SqliteMessageLog(self.db)
        self.atoms = SqliteAtomStore(self.db)
        flt = AtomFilter(include_superseded=True)
        self._mirrors = (
            MirrorKeeper(
                self.db,
                home / "conversations",
                Source(
                    "messages",
                    lambda after, n: self.messages.list(None, MessageFilter(), limit=n, after_seq=after),
                    message_line,
                    lambda m: m.recorded_at,
                ),
                writable=not read_only,
                shared=shared,
                owner=owner,
            ),
            MirrorKeeper(
                self.db,
                home / "records",
                Source(
                    "atoms",
                    lambda after, n: self.atoms.list(None, flt, limit=n, after_seq=after),
                    atom_line,
                    lambda a: a.created_at,
                ),
                writable=not read_only,
                shared=shared,
                owner=owner,
            ),
        )
        if not read_only:
            self.messages = _MirroredMessageLog(self.db, self._mirrors[0])
            self.atoms = _MirroredAtomStore(self.db, self._mirrors[1])
        self.index = SqliteSearchIndex(self.db, shared=shared)
        self.pipeline = SqlitePipelineState(self.db)
        self.members = SqliteSceneMembers(self.db)
        self.leases = LocalLeases() if read_only else leases_for(home)
        self.keys = SqlKeyStore(self.db, SQLITE)
        for keeper in self._mirrors:
            keeper.open_sync()

    def mirror_check(self, *, full: bool = True) -> str | None:
        """None when both JSONL mirrors hold exactly one line per database record, else one line per
        mirror saying what differs (and the write that failed, if one did), joined by ``; ``.

        ``full`` compares every line with every record (about 15 µs a line: 0.5 s for 36,500);
        ``full=False`` checks the files' ends against the database and counts lines, without
        parsing them (about 40 ms for 36,500 lines): enough for a status line. Both hold the
        database lock while they read."""
        notes = [note for keeper in self._mirrors if (note := keeper.check(full=full)) is not None]
        return "; ".join(notes) + " (`memstrata repair` rewrites it)" if notes else None

    def repair_mirrors(self) -> list[str]:
        """Rewrite every mirror that disagrees with the database from the database (a whole folder
        swapped in at once). Returns one line per mirror rewritten (by this call, or by this store's
        open). Raises ``StorageError`` when the disk refuses (the old mirror then stays as it was)."""
        done = []
        for keeper in self._mirrors:
            if keeper.rewritten is not None:
                done.append(f"{keeper.folder.name}/ rewritten from the database on open ({keeper.rewritten})")
                keeper.rewritten = None
            found = keeper.repair()
            if found is not None:
                done.append(f"{keeper.folder.name}/ rewritten from the database (was: {found.describe()})")
        return done

    def tenants(self) -> list[Tenant]:
        return erasure.tenants(self.db)

    def erase(self, tenant: Tenant) -> Erased:
        """Every row of the tenant in one transaction, then its lines in both mirrors (the other
        lines keep their bytes). Run again after a crash, it finishes the job."""
        with contextlib.ExitStack() as held:
            for keeper in self._mirrors:  # no rewrite in flight brings the lines back
                held.enter_context(keeper.exclusive())
            held.enter_context(self.db.lock)
            erased = erasure.erase_rows(self.db, tenant)
            self.index.evict(tenant)
            who = (tenant.user_id, tenant.agent_id)
            lines = sum(
                keeper.prune(lambda line: (line.get("user_id"), line.get("agent_id")) == who)
                for keeper in self._mirrors
            )
        return replace(erased, mirror_lines=lines)

    def compact(self) -> list[str]:
        return erasure.compact(self.db)

    def check(self) -> list[str]:
        found = [self.db.write_problem(), self.mirror_check(full=False)]
        return [note for note in found if note]

    def repair(self) -> list[str]:
        return self.repair_mirrors()

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            if isinstance(self.leases, FileLeases):
                self.leases.close()
            self._release()

    def _release(self) -> None:
        if self._owner is not None:
            self._owner.release()
            self._owner = None
