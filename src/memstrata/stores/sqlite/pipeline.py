"""Durable scheduler state on SQLite: all but the updates is ``SqlPipelineState``; in an update, the
one writer connection makes a read, a change and a save one step."""

from __future__ import annotations

from collections.abc import Callable

from memstrata.models import SessionState, Tenant, TenantState
from memstrata.stores import sql
from memstrata.stores.sql_pipeline import SqlPipelineState
from memstrata.stores.sqlite.db import Database


class SqlitePipelineState(SqlPipelineState):
    _db: Database
    _dialect = sql.SQLITE

    def __init__(self, db: Database) -> None:
        self._db = db

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
