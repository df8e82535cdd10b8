"""The scheduler's durable state on either SQL store, written once in its ``Dialect``: reading and
saving sessions, tenants and the retention sweep, and the backlog. What differs stays in each store:
how ``update_session`` and ``update_tenant`` keep other writers out while they read, change and
save (SQLite's one writer connection, PostgreSQL's row locks)."""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any, Protocol

from memstrata.models import SessionState, SweepState, Tenant, TenantState
from memstrata.stores import sql
from memstrata.stores.sql_reads import Queries


class Executes(Protocol):
    """A connection inside a transaction (``sqlite3.Connection``, ``psycopg.Connection``)."""

    def execute(self, sql: str, params: Any, /) -> Any: ...


class Transacts(Queries, Protocol):
    """A database that reads, and writes in transactions (both stores' ``Database``)."""

    def tx(self) -> AbstractContextManager[Executes]: ...


class SqlPipelineState:
    """``PipelineState`` but for its two ``update_*`` steps, which each store makes atomic its way."""

    _db: Transacts
    _dialect: sql.Dialect

    def session(self, tenant: Tenant, session_key: str) -> SessionState:
        m = self._dialect.mark
        found = self._db.query(
            f"SELECT {sql.SESSION_COLS} FROM pipeline_sessions "
            f"WHERE user_id = {m} AND agent_id = {m} AND session_key = {m}",
            [tenant.user_id, tenant.agent_id, session_key],
        )
        return sql.session_state(found[0]) if found else SessionState(tenant, session_key)

    def sessions(self) -> list[SessionState]:
        order = self._dialect.insertion
        found = self._db.query(f"SELECT {sql.SESSION_COLS} FROM pipeline_sessions ORDER BY {order}")
        return [sql.session_state(r) for r in found]

    def armed(self, *, due_by: int | None = None, limit: int | None = None) -> list[SessionState]:
        m = self._dialect.mark
        # Read through the partial index pipeline_sessions_armed, in its order.
        query = f"SELECT {sql.SESSION_COLS} FROM pipeline_sessions WHERE fire_at IS NOT NULL"
        params: list[object] = []
        if due_by is not None:
            query += f" AND fire_at <= {m}"
            params.append(due_by)
        query += f" ORDER BY fire_at, {self._dialect.insertion}"
        if limit is not None:
            query += f" LIMIT {m}"
            params.append(limit)
        return [sql.session_state(r) for r in self._db.query(query, params)]

    def backlog(self) -> list[tuple[Tenant, str, int]]:
        """Sessions with messages after their cursor, the one waiting longest first."""
        found = self._db.query(
            "SELECT m.user_id, m.agent_id, m.session_key, COUNT(*) AS lag FROM messages m "
            "LEFT JOIN pipeline_sessions p ON p.user_id = m.user_id AND p.agent_id = m.agent_id "
            "AND p.session_key = m.session_key WHERE m.seq > COALESCE(p.cursor, 0) "
            "GROUP BY m.user_id, m.agent_id, m.session_key ORDER BY MIN(m.seq)"
        )
        return [(Tenant(r["user_id"], r["agent_id"]), str(r["session_key"]), int(r["lag"])) for r in found]

    def tenant(self, tenant: Tenant) -> TenantState:
        m = self._dialect.mark
        found = self._db.query(
            f"{_TENANTS} WHERE user_id = {m} AND agent_id = {m}", [tenant.user_id, tenant.agent_id]
        )
        return sql.tenant_state(found[0], self._dialect) if found else TenantState(tenant)

    def tenants(self, *, waiting: bool = False) -> list[TenantState]:
        where = " WHERE l2_fire_at IS NOT NULL OR l3_requested > l3_done" if waiting else ""
        found = self._db.query(f"{_TENANTS}{where} ORDER BY {self._dialect.insertion}")
        return [sql.tenant_state(r, self._dialect) for r in found]

    def sweep(self) -> SweepState:
        found = self._db.query(f"SELECT {', '.join(sql.SWEEP_FIELDS)} FROM pipeline_sweep WHERE id = 1")
        return SweepState(**{name: found[0][name] for name in sql.SWEEP_FIELDS}) if found else SweepState()

    def save_session(self, state: SessionState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.session_upsert(state, self._dialect))

    def save_tenant(self, state: TenantState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.tenant_upsert(state, self._dialect))

    def save_sweep(self, state: SweepState) -> None:
        with self._db.tx() as c:
            c.execute(*sql.sweep_upsert(state, self._dialect))


_TENANTS = f"SELECT user_id, agent_id, {', '.join(sql.TENANT_FIELDS)} FROM pipeline_tenants"
