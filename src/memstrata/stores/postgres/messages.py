"""L0 message log on PostgreSQL."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memstrata.models import Message, Tenant
from memstrata.stores import sql
from memstrata.stores.postgres import rows
from memstrata.stores.postgres.db import Database
from memstrata.stores.postgres.migrations import SEARCH_CONFIG
from memstrata.stores.sql_reads import MessageReads

# Seqs must become visible in the order they are assigned (a reader's cursor never skips a row
# committed late), so inserts into one log take this transaction lock: short, and only writers wait.
APPEND_LOCK = 0x6D73_0000_0001
_INSERT = f"""
INSERT INTO messages (id, user_id, agent_id, session_key, session_id, role, name, content, timestamp,
                      recorded_at, tsv, dl, metadata)
SELECT u.id, u.user_id, u.agent_id, u.session_key, u.session_id, u.role, u.name, u.content, u.ts,
       u.recorded_at, x.v, memstrata_length(x.v), u.metadata::jsonb
FROM unnest(%s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::bigint[], %s::bigint[], %s::text[], %s::text[])
     WITH ORDINALITY AS u(id, user_id, agent_id, session_key, session_id, role, name, content, ts,
                          recorded_at, body, metadata, n)
CROSS JOIN LATERAL (SELECT to_tsvector('{SEARCH_CONFIG}', u.body) AS v) AS x
ORDER BY u.n
ON CONFLICT (user_id, agent_id, id) DO NOTHING
RETURNING seq, user_id, agent_id, id
"""


class PostgresMessageLog(MessageReads):
    _db: Database
    _dialect = sql.POSTGRES

    def __init__(self, db: Database) -> None:
        self._db = db

    def append(self, items: Sequence[tuple[Message, str]]) -> list[Message]:
        if not items:
            return []
        cols: list[list[object]] = [[] for _ in range(12)]
        for m, body in items:
            values = (
                rows.text(m.id),
                rows.text(m.tenant.user_id),
                rows.text(m.tenant.agent_id),
                rows.text(m.session_key),
                rows.text(m.session_id),
                str(m.role),
                rows.text(m.name) if m.name is not None else None,
                rows.text(m.content),
                m.timestamp,
                m.recorded_at,
                rows.text(body),
                rows.json_text(m.metadata),
            )
            for col, v in zip(cols, values, strict=True):
                col.append(v)
        with self._db.tx() as c:
            c.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
            found = c.execute(_INSERT, cols).fetchall()
        seqs = {(r["user_id"], r["agent_id"], r["id"]): int(r["seq"]) for r in found}
        stored: list[Message] = []
        for m, _ in items:
            seq = seqs.pop((rows.text(m.tenant.user_id), rows.text(m.tenant.agent_id), rows.text(m.id)), None)
            if seq is not None:  # an id the tenant had (or given twice) is stored once
                stored.append(replace(m, seq=seq))
        return stored

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Message]:
        if not seqs:
            return []
        found = self._db.query(
            f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE seq = ANY(%s) AND user_id = %s AND agent_id = %s",
            (list(seqs), tenant.user_id, tenant.agent_id),
        )
        by = {r["seq"]: rows.message(r) for r in found}
        return [by[s] for s in seqs if s in by]

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Message]:
        if not ids:
            return []
        found = self._db.query(
            f"SELECT {rows.MESSAGE_COLS} FROM messages WHERE user_id = %s AND agent_id = %s AND id = ANY(%s) "
            "ORDER BY seq",
            (tenant.user_id, tenant.agent_id, list(dict.fromkeys(ids))),
        )
        return [rows.message(r) for r in found]

    def delete(
        self, tenant: Tenant, ids: Sequence[str] = (), session_keys: Sequence[str] = ()
    ) -> list[Message]:
        if not ids and not session_keys:
            return []
        with self._db.tx() as c:  # the keyword index is a column and vectors cascade: one statement
            found = c.execute(
                f"DELETE FROM messages WHERE user_id = %s AND agent_id = %s "
                f"AND (id = ANY(%s) OR session_key = ANY(%s)) RETURNING {rows.MESSAGE_COLS}",
                (tenant.user_id, tenant.agent_id, list(ids), list(session_keys)),
            ).fetchall()
        return sorted((rows.message(r) for r in found), key=lambda m: m.seq)
