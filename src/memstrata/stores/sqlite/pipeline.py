"""Durable scheduler state on SQLite: the reads are ``PipelineReads``; one writer connection makes a
read, a change and a save one step."""

from __future__ import annotations

from collections.abc import Callable

from memstrata.models import SessionState, SweepState, Tenant, TenantState
from memstrata.stores import sql
from memstrata.stores.sql_reads import PipelineReads
from memstrata.stores.sqlite.db import Database


class SqlitePipelineState(PipelineReads):
    _db: Database
    _dialect = sql.SQLITE

    def __init__(self, db: Database) -> None:
        self._db = db

    def save_session(self, state: SessionState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.session_upsert(state, self._dialect))

    def save_tenant(self, state: TenantState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.tenant_upsert(state, self._dialect))

    def save_sweep(self, state: SweepState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.sweep_upsert(state, self._dialect))

    def update_session(
        self, tenant: Tenant, session_key: str, change: Callable[[SessionState], object]
    ) -> SessionState:
        with self._db.tx():  # one writer connection: the transaction makes the three steps one
            state = self.session(tenant, session_key)
            change(state)
            self.save_session(state)
        return state

    def update_tenant(self, tenant: Tenant, change: Callable[[TenantState], object]) -> TenantState:
        with self._db.tx():
            state = self.tenant(tenant)
            change(state)
            self.save_tenant(state)
        return state
