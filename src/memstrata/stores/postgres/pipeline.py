"""Durable scheduler state on PostgreSQL."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import fields

import psycopg

from memstrata.models import SessionState, SweepState, Tenant, TenantState
from memstrata.stores import sql
from memstrata.stores.postgres.db import Database, Row

_COLS = sql.SESSION_COLS
_TENANT_FIELDS = sql.TENANT_FIELDS
_SWEEP_FIELDS = [f.name for f in fields(SweepState)]


def _state(r: Row) -> SessionState:
    return sql.session_state(r)


def _tenant_state(r: Row) -> TenantState:
    return sql.tenant_state(r, sql.POSTGRES)


class PostgresPipelineState:
    def __init__(self, db: Database) -> None:
        self._db = db

    def session(self, tenant: Tenant, session_key: str) -> SessionState:
        found = self._db.query(
            f"SELECT {_COLS} FROM pipeline_sessions WHERE user_id = %s AND agent_id = %s AND session_key = %s",
            (tenant.user_id, tenant.agent_id, session_key),
        )
        return _state(found[0]) if found else SessionState(tenant, session_key)

    def save_session(self, state: SessionState) -> None:
        with self._db.tx() as c:
            _save_session(c, state)

    def sessions(self) -> list[SessionState]:
        return [_state(r) for r in self._db.query(f"SELECT {_COLS} FROM pipeline_sessions ORDER BY n")]

    def backlog(self) -> list[tuple[Tenant, str, int]]:
        found = self._db.query(
            "SELECT m.user_id, m.agent_id, m.session_key, count(*) AS lag FROM messages m "
            "LEFT JOIN pipeline_sessions p ON p.user_id = m.user_id AND p.agent_id = m.agent_id "
            "AND p.session_key = m.session_key WHERE m.seq > COALESCE(p.cursor, 0) "
            "GROUP BY m.user_id, m.agent_id, m.session_key ORDER BY MIN(m.seq)"
        )
        return [(Tenant(r["user_id"], r["agent_id"]), str(r["session_key"]), int(r["lag"])) for r in found]

    def tenant(self, tenant: Tenant) -> TenantState:
        found = self._db.query(
            f"SELECT user_id, agent_id, {', '.join(_TENANT_FIELDS)} FROM pipeline_tenants "
            "WHERE user_id = %s AND agent_id = %s",
            (tenant.user_id, tenant.agent_id),
        )
        return _tenant_state(found[0]) if found else TenantState(tenant)

    def save_tenant(self, state: TenantState) -> None:
        with self._db.tx() as c:
            _save_tenant(c, state)

    def tenants(self) -> list[TenantState]:
        return [
            _tenant_state(r)
            for r in self._db.query(
                f"SELECT user_id, agent_id, {', '.join(_TENANT_FIELDS)} FROM pipeline_tenants ORDER BY n"
            )
        ]

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
                f"SELECT {_COLS} FROM pipeline_sessions WHERE user_id = %s AND agent_id = %s "
                "AND session_key = %s FOR UPDATE",
                key,
            ).fetchone()
            assert row is not None
            state = _state(row)
            change(state)
            _save_session(c, state)
        return state

    def update_tenant(self, tenant: Tenant, change: Callable[[TenantState], object]) -> TenantState:
        key = (tenant.user_id, tenant.agent_id)
        with self._db.tx() as c:
            c.execute(
                "INSERT INTO pipeline_tenants (user_id, agent_id) VALUES (%s, %s) ON CONFLICT DO NOTHING", key
            )
            row = c.execute(
                f"SELECT user_id, agent_id, {', '.join(_TENANT_FIELDS)} FROM pipeline_tenants "
                "WHERE user_id = %s AND agent_id = %s FOR UPDATE",
                key,
            ).fetchone()
            assert row is not None
            state = _tenant_state(row)
            change(state)
            _save_tenant(c, state)
        return state

    def sweep(self) -> SweepState:
        found = self._db.query(f"SELECT {', '.join(_SWEEP_FIELDS)} FROM pipeline_sweep WHERE id = 1")
        return SweepState(**{name: found[0][name] for name in _SWEEP_FIELDS}) if found else SweepState()

    def save_sweep(self, state: SweepState) -> None:
        cols = ", ".join(_SWEEP_FIELDS)
        updates = ", ".join(f"{c} = excluded.{c}" for c in _SWEEP_FIELDS)
        with self._db.tx() as c:
            c.execute(
                f"INSERT INTO pipeline_sweep (id, {cols}) VALUES (1, {', '.join(['%s'] * len(_SWEEP_FIELDS))}) "
                f"ON CONFLICT (id) DO UPDATE SET {updates}",
                [getattr(state, name) for name in _SWEEP_FIELDS],
            )


def _save_session(c: psycopg.Connection[Row], state: SessionState) -> None:
    t = state.tenant
    # The cursor is left out on purpose: only AtomStore.commit moves it, with the atoms.
    c.execute(
        "INSERT INTO pipeline_sessions (user_id, agent_id, session_key, pending, runs, fire_at, "
        "attempts, last_error, last_activity) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
        "ON CONFLICT (user_id, agent_id, session_key) DO UPDATE SET pending = excluded.pending, "
        "runs = excluded.runs, fire_at = excluded.fire_at, attempts = excluded.attempts, "
        "last_error = excluded.last_error, last_activity = excluded.last_activity",
        (
            t.user_id,
            t.agent_id,
            state.session_key,
            state.pending,
            state.runs,
            state.fire_at,
            state.attempts,
            state.last_error,
            state.last_activity,
        ),
    )


def _save_tenant(c: psycopg.Connection[Row], state: TenantState) -> None:
    values: list[object] = [getattr(state, name) for name in _TENANT_FIELDS]
    for name in sql.TENANT_TUPLES:
        values[_TENANT_FIELDS.index(name)] = json.dumps(list(getattr(state, name)))
    cols = ", ".join(_TENANT_FIELDS)
    updates = ", ".join(f"{c} = excluded.{c}" for c in _TENANT_FIELDS)
    c.execute(
        f"INSERT INTO pipeline_tenants (user_id, agent_id, {cols}) "
        f"VALUES (%s, %s, {', '.join(['%s'] * len(_TENANT_FIELDS))}) "
        f"ON CONFLICT (user_id, agent_id) DO UPDATE SET {updates}",
        [state.tenant.user_id, state.tenant.agent_id, *values],
    )
