"""The PostgreSQL backend: every layer and all pipeline state in one database.

L0 messages, L1 atoms, their keyword indexes and vectors, the scheduler's state, scene membership
(``PostgresStore``), and L2 scenes, their index and backups, the L3 persona and its backups
(``PostgresSceneStore``, ``PostgresPersonaStore`` over the same pool) are rows: no file is written,
so any number of processes on any machines can share one database. There are no JSONL mirrors
(``check`` and ``repair`` have nothing to do) and no writer lock: several processes may write, and
the pipeline's work is shared out by ``leases`` (advisory locks).
"""

from __future__ import annotations

from memstrata.models import Erased, Tenant
from memstrata.stores.postgres import erasure
from memstrata.stores.postgres.atoms import PostgresAtomStore
from memstrata.stores.postgres.db import Database
from memstrata.stores.postgres.leases import AdvisoryLeases
from memstrata.stores.postgres.members import PostgresSceneMembers
from memstrata.stores.postgres.messages import PostgresMessageLog
from memstrata.stores.postgres.persona import PostgresPersonaStore
from memstrata.stores.postgres.pipeline import PostgresPipelineState
from memstrata.stores.postgres.scenes import PostgresSceneStore
from memstrata.stores.postgres.search import PostgresSearchIndex
from memstrata.stores.sql import POSTGRES
from memstrata.stores.sql_keys import SqlKeyStore


class PostgresStore:
    """Opens ``url`` (``postgresql://user:password@host:port/database``), migrating it unless
    ``read_only`` (then the schema is only checked: ``SchemaError`` when it is behind or ahead).
    Raises ``StorageError`` when the server cannot be reached."""

    def __init__(self, url: str, *, read_only: bool = False, max_connections: int = 8) -> None:
        self.url = url
        self.read_only = read_only
        self.db = Database(url, read_only=read_only, max_connections=max_connections)
        self.messages = PostgresMessageLog(self.db)
        self.atoms = PostgresAtomStore(self.db)
        self.index = PostgresSearchIndex(self.db)
        self.pipeline = PostgresPipelineState(self.db)
        self.members = PostgresSceneMembers(self.db)
        self.leases = AdvisoryLeases(self.db)
        self.keys = SqlKeyStore(self.db, POSTGRES)

    def scene_store(self, *, keep: int) -> PostgresSceneStore:
        """The L2 store over this database (``keep`` scene snapshots per tenant)."""
        return PostgresSceneStore(self.db, keep=keep)

    def persona_store(self, *, keep: int) -> PostgresPersonaStore:
        """The L3 store over this database (``keep`` persona snapshots per tenant)."""
        return PostgresPersonaStore(self.db, keep=keep)

    def check(self) -> list[str]:
        return []  # no mirrors to compare

    def tenants(self) -> list[Tenant]:
        return erasure.tenants(self.db)

    def erase(self, tenant: Tenant) -> Erased:
        return erasure.erase_rows(self.db, tenant)

    def compact(self) -> list[str]:
        return erasure.compact(self.db)

    def repair(self) -> list[str]:
        return []

    def close(self) -> None:
        try:
            self.leases.close()
        finally:
            self.db.close()
