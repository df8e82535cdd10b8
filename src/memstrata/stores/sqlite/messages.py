"""L0 message log on SQLite."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import replace

from memstrata.models import Message, MessageFilter, Tenant
from memstrata.stores.sqlite import rows
from memstrata.stores.sqlite.db import Database

# Only a repeated id is skipped: ``OR IGNORE`` would also skip a row breaking NOT NULL or CHECK,
# and capture would report that loss as a duplicate.
_INSERT = (
    "INSERT INTO messages (id, user_id, agent_id, session_key, session_id, role, name, content, "
    "timestamp, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (user_id, agent_id, id) DO NOTHING"
)


class SqliteMessageLog:
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

    def last(self, tenant: Tenant, session_key: str) -> Message | None:
        found = self._db.query(
            f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE user_id = ? AND agent_id = ? "
            "AND session_key = ? ORDER BY seq DESC LIMIT 1",
            (tenant.user_id, tenant.agent_id, session_key),
        )
        return rows.message(found[0]) if found else None

    def after(self, tenant: Tenant, session_key: str, after_seq: int, limit: int) -> list[Message]:
        return [
            rows.message(r)
            for r in self._db.query(
                f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE user_id = ? AND agent_id = ? "
                "AND session_key = ? AND seq > ? ORDER BY seq LIMIT ?",
                (tenant.user_id, tenant.agent_id, session_key, after_seq, limit),
            )
        ]

    def before(self, tenant: Tenant, session_key: str, before_seq: int, limit: int) -> list[Message]:
        found = self._db.query(
            f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE user_id = ? AND agent_id = ? "
            "AND session_key = ? AND seq < ? ORDER BY seq DESC LIMIT ?",
            (tenant.user_id, tenant.agent_id, session_key, before_seq, limit),
        )
        return [rows.message(r) for r in reversed(found)]

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

    def sessions(self, tenant: Tenant | None) -> list[tuple[Tenant, str]]:
        where, params = rows.tenant_clause(tenant)
        found = self._db.query(
            "SELECT user_id, agent_id, session_key, MIN(seq) AS first FROM messages "
            f"{'WHERE ' + ' AND '.join(where) if where else ''} "
            "GROUP BY user_id, agent_id, session_key ORDER BY first",
            params,
        )
        return [(Tenant(r["user_id"], r["agent_id"]), str(r["session_key"])) for r in found]

    def tally(self, tenant: Tenant, flt: MessageFilter) -> int:
        where, params = rows.tenant_clause(tenant)
        fw, fp = rows.filter_clause(flt)
        clause = " AND ".join([*where, *fw])
        return int(
            self._db.query(f"SELECT COUNT(*) AS n FROM messages WHERE {clause}", [*params, *fp])[0]["n"]
        )

    def list(
        self, tenant: Tenant | None, flt: MessageFilter, *, limit: int, after_seq: int = 0
    ) -> list[Message]:
        where, params = rows.tenant_clause(tenant)
        fw, fp = rows.filter_clause(flt)
        clauses = ["seq > ?", *where, *fw]
        return [
            rows.message(r)
            for r in self._db.query(
                f"SELECT {rows.MESSAGE_COLS} FROM messages "
                f"WHERE {' AND '.join(clauses)} ORDER BY seq LIMIT ?",
                [after_seq, *params, *fp, limit],
            )
        ]

    def count(self, tenant: Tenant | None) -> int:
        where, params = rows.tenant_clause(tenant)
        clause = " AND ".join([*where, "1 = 1"])
        return int(self._db.query(f"SELECT COUNT(*) AS n FROM messages WHERE {clause}", params)[0]["n"])
