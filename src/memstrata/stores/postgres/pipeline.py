"""Durable scheduler state on PostgreSQL: all but the updates is ``SqlPipelineState``; an update
locks its row (``SELECT ... FOR UPDATE``) so no other process's update interleaves."""

from __future__ import annotations

from collections.abc import Callable

from memstrata.models import SessionState, Tenant, TenantState
from memstrata.stores import sql
from memstrata.stores.postgres.db import Database
from memstrata.stores.sql_pipeline import SqlPipelineState


class PostgresPipelineState(SqlPipelineState):
    _db: Database
    _dialect = sql.POSTGRES

    def __init__(self, db: Database) -> None:
        self._db = db

    def update_session(
        self, tenant: Tenant, session_key: str, change: Callable[[SessionState], object]
    ) -> SessionState:
        key = (tenant.user_id, tenant.agent_id, session_key)
        with self._db.tx() as c:  # the row lock keeps other processes' updates out until commit
            c.execute(
                "INSERT INTO pipeline_sessions (user_id, agent_id, session_key) VALUES (%s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                key,
            )
            row = c.execute(
                f"SELECT {sql.SESSION_COLS} FROM pipeline_sessions WHERE user_id = %s AND agent_id = %s "
                "AND session_key = %s FOR UPDATE",
                key,
            ).fetchone()
            assert row is not None
            state = sql.session_state(row)
            change(state)
            c.execute(*sql.session_upsert(state, self._dialect))
        return state

    def update_tenant(self, tenant: Tenant, change: Callable[[TenantState], object]) -> TenantState:
        key = (tenant.user_id, tenant.agent_id)
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO pipeline_tenants (user_id, agent_id) VALUES (%s, %s) ON CONFLICT DO NOTHING", key
            )
            row = c.execute(
                f"SELECT user_id, agent_id, {', '.join(sql.TENANT_FIELDS)} FROM pipeline_tenants "
                "WHERE user_id = %s AND agent_id = %s FOR UPDATE",
                key,
            ).fetchone()
            assert row is not None
            state = sql.tenant_state(row, self._dialect)
            change(state)
            c.execute(*sql.tenant_upsert(state, self._dialect))
        return state
