"""Durable scheduler state on SQLite."""

from __future__ import annotations

import sqlite3

from memstrata.models import Tenant
from memstrata.ports import SessionState
from memstrata.stores.sqlite.db import Database

_COLS = "user_id, agent_id, session_key, cursor, pending, runs, fire_at, attempts, last_error, last_activity"


def _state(r: sqlite3.Row) -> SessionState:
    return SessionState(
        tenant=Tenant(r["user_id"], r["agent_id"]),
        session_key=r["session_key"],
        cursor=r["cursor"],
        pending=r["pending"],
        runs=r["runs"],
        fire_at=r["fire_at"],
        attempts=r["attempts"],
        last_error=r["last_error"],
        last_activity=r["last_activity"],
    )


class SqlitePipelineState:
    def __init__(self, db: Database) -> None:
        self._db = db

    def session(self, tenant: Tenant, session_key: str) -> SessionState:
        found = self._db.query(
            f"SELECT {_COLS} FROM pipeline_sessions WHERE user_id = ? AND agent_id = ? AND session_key = ?",
            (tenant.user_id, tenant.agent_id, session_key),
        )
        return _state(found[0]) if found else SessionState(tenant, session_key)

    def save_session(self, state: SessionState) -> None:
        t = state.tenant
        with self._db.tx() as c:
            # The cursor is left out on purpose: only AtomStore.commit moves it, with the atoms.
            c.execute(
                "INSERT INTO pipeline_sessions (user_id, agent_id, session_key, pending, runs, fire_at, "
                "attempts, last_error, last_activity) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
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

    def sessions(self) -> list[SessionState]:
        return [_state(r) for r in self._db.query(f"SELECT {_COLS} FROM pipeline_sessions ORDER BY rowid")]

    def backlog(self) -> list[tuple[Tenant, str, int]]:
        found = self._db.query(
            "SELECT m.user_id, m.agent_id, m.session_key, SUM(m.seq > COALESCE(p.cursor, 0)) AS lag "
            "FROM messages m "
            "LEFT JOIN pipeline_sessions p ON p.user_id = m.user_id AND p.agent_id = m.agent_id "
            "AND p.session_key = m.session_key GROUP BY m.user_id, m.agent_id, m.session_key "
            "HAVING lag > 0 ORDER BY MIN(m.seq)"
        )
        return [(Tenant(r["user_id"], r["agent_id"]), str(r["session_key"]), int(r["lag"])) for r in found]
