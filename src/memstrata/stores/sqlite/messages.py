"""L0 message log on SQLite."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from memstrata.models import Message, Tenant
from memstrata.stores import sql
from memstrata.stores.sql_reads import MessageReads
from memstrata.stores.sqlite import rows
from memstrata.stores.sqlite.db import Database

# Only a repeated id is skipped: ``OR IGNORE`` would also skip a row breaking NOT NULL or CHECK,
# and capture would report that loss as a duplicate.
_INSERT = (
    "INSERT INTO messages (id, user_id, agent_id, session_key, session_id, role, name, content, "
    "timestamp, recorded_at, metadata) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (user_id, agent_id, id) DO NOTHING"
)


class SqliteMessageLog(MessageReads):
    _db: Database
    _dialect = sql.SQLITE

    def __init__(self, db: Database) -> None:
        self._db = db

    def append(self, items: Sequence[tuple[Message, str]]) -> list[Message]:
        stored: list[Message] = []
        with self._db.tx() as c:
            # Known ids are skipped before inserting: a conflicting insert would still use up a seq.
            known = self._known(c, items)
            for m, body in items:
                if (m.tenant, m.id) in known:
                    continue
                cur = c.execute(
                    _INSERT,
                    (
                        m.id,
                        m.tenant.user_id,
                        m.tenant.agent_id,
                        m.session_key,
                        m.session_id,
                        str(m.role),
                        m.name,
                        m.content,
                        m.timestamp,
                        m.recorded_at,
                        json.dumps(m.metadata, default=str),
                    ),
                )
                if cur.rowcount == 0:  # this tenant already has the id: idempotent capture
                    continue
                seq = int(cur.lastrowid or 0)
                c.execute("INSERT INTO messages_fts (rowid, body) VALUES (?, ?)", (seq, body))
                stored.append(replace(m, seq=seq))
        return stored

    @staticmethod
    def _known(c: sqlite3.Connection, items: Sequence[tuple[Message, str]]) -> set[tuple[Tenant, str]]:
        by_tenant: dict[Tenant, list[str]] = {}
        for m, _ in items:
            by_tenant.setdefault(m.tenant, []).append(m.id)
        known: set[tuple[Tenant, str]] = set()
        for t, ids in by_tenant.items():
            for i in range(0, len(ids), 500):
                chunk = ids[i : i + 500]
                found = c.execute(
                    f"SELECT id FROM messages WHERE user_id = ? AND agent_id = ? AND id IN ({','.join('?' * len(chunk))})",
                    [t.user_id, t.agent_id, *chunk],
                )
                known.update((t, row[0]) for row in found)
        return known

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Message]:
        if not seqs:
            return []
        marks = ",".join("?" * len(seqs))
        found = self._db.query(
            f"SELECT {rows.MESSAGE_COLS} FROM messages "
            # Unary + keeps the planner on the primary key: the tenant index would scan the tenant.
            f"WHERE +user_id = ? AND +agent_id = ? AND seq IN ({marks})",
            [tenant.user_id, tenant.agent_id, *seqs],
        )
        by = {r["seq"]: rows.message(r) for r in found}
        return [by[s] for s in seqs if s in by]

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Message]:
        found: list[Message] = []
        for chunk in rows.chunks(list(dict.fromkeys(ids))):
            found += [
                rows.message(r)
                for r in self._db.query(
                    f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE user_id = ? AND agent_id = ? "
                    f"AND id IN ({','.join('?' * len(chunk))})",
                    [tenant.user_id, tenant.agent_id, *chunk],
                )
            ]
        return sorted(found, key=lambda m: m.seq)

    def delete(
        self, tenant: Tenant, ids: Sequence[str] = (), session_keys: Sequence[str] = ()
    ) -> list[Message]:
        removed: list[Message] = []
        with self._db.tx() as c:
            for column, keys in (("id", ids), ("session_key", session_keys)):
                for chunk in rows.chunks(list(dict.fromkeys(keys))):
                    where = f"user_id = ? AND agent_id = ? AND {column} IN ({','.join('?' * len(chunk))})"
                    params = [tenant.user_id, tenant.agent_id, *chunk]
                    cur = c.execute(f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE {where}", params)
                    cur.row_factory = sqlite3.Row
                    found = [rows.message(r) for r in cur.fetchall()]
                    c.executemany("DELETE FROM messages_fts WHERE rowid = ?", [(m.seq,) for m in found])
                    c.execute(f"DELETE FROM messages WHERE {where}", params)
                    removed += found
        return sorted(removed, key=lambda m: m.seq)
