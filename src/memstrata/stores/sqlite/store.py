"""The embedded backend: SQLite (WAL) for L0/L1/search/pipeline state, JSONL mirrors beside it."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path

from memstrata.models import Atom, AtomFilter, Message, MessageFilter, Tenant
from memstrata.stores.sqlite.atoms import SqliteAtomStore
from memstrata.stores.sqlite.db import Database
from memstrata.stores.sqlite.members import SqliteSceneMembers
from memstrata.stores.sqlite.messages import SqliteMessageLog
from memstrata.stores.sqlite.mirror import JsonlMirror, atom_line, message_line
from memstrata.stores.sqlite.ownership import WriterLock
from memstrata.stores.sqlite.pipeline import SqlitePipelineState
from memstrata.stores.sqlite.search import SqliteSearchIndex

log = logging.getLogger(__name__)
_TOP_UP_BATCH = 5000


class _MirroredMessageLog(SqliteMessageLog):
    def __init__(self, db: Database, mirror: JsonlMirror) -> None:
        super().__init__(db)
        self._mirror = mirror

    def append(self, items: Sequence[tuple[Message, str]]) -> list[Message]:
        stored = super().append(items)
        self._mirror.append((message_line(m) for m in stored), (m.recorded_at for m in stored))
        return stored


class _MirroredAtomStore(SqliteAtomStore):
    def __init__(self, db: Database, mirror: JsonlMirror) -> None:
        super().__init__(db)
        self._mirror = mirror

    def commit(
        self,
        tenant: Tenant,
        new: Sequence[tuple[Atom, str]],
        superseded: Mapping[str, str],
        cursor: tuple[str, int] | None,
    ) -> list[Atom]:
        stored = super().commit(tenant, new, superseded, cursor)
        self._mirror.append((atom_line(a) for a in stored), (a.created_at for a in stored))
        return stored


class SqliteStore:
    """``<home>/memstrata.db`` and the JSONL mirrors beside it.

    As the writer (the default) it takes the directory's writer lock (``ownership``), creates and
    migrates the database and tops up the mirrors; ``read_only`` opens an existing database
    without a lock and writes nothing (any write raises ``StoreError``).
    """

    def __init__(
        self, home: Path, *, read_only: bool = False, wait: float = 0.0, url: str | None = None
    ) -> None:
        self.home = home
        self.read_only = read_only
        self._owner: WriterLock | None = None
        if not read_only:
            self._owner = WriterLock(home, url=url)
            self._owner.acquire(wait)
        try:
            self.db = Database(home / "memstrata.db", read_only=read_only)
        except BaseException:
            self._release()
            raise
        self._conversations = JsonlMirror(home / "conversations")
        self._records = JsonlMirror(home / "records")
        self.messages = _MirroredMessageLog(self.db, self._conversations)
        self.atoms = _MirroredAtomStore(self.db, self._records)
        self.index = SqliteSearchIndex(self.db)
        self.pipeline = SqlitePipelineState(self.db)
        self.members = SqliteSceneMembers(self.db)
        if not read_only:
            self._top_up()

    def _top_up(self) -> None:
        mark = self._conversations.mark()
        while batch := self.messages.list(None, MessageFilter(), limit=_TOP_UP_BATCH, after_seq=mark):
            self._conversations.append((message_line(m) for m in batch), (m.recorded_at for m in batch))
            mark = batch[-1].seq
        mark = self._records.mark()
        flt = AtomFilter(include_superseded=True)
        while atoms := self.atoms.list(None, flt, limit=_TOP_UP_BATCH, after_seq=mark):
            self._records.append((atom_line(a) for a in atoms), (a.created_at for a in atoms))
            mark = atoms[-1].seq

    def close(self) -> None:
        try:
            self.db.close()
        finally:
            self._release()

    def _release(self) -> None:
        if self._owner is not None:
            self._owner.release()
            self._owner = None
