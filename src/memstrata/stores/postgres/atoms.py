"""L1 atom store on PostgreSQL: versioned atoms; a commit moves the session's L1 cursor atomically."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace

from memstrata.models import Atom, Tenant
from memstrata.stores import sql
from memstrata.stores.postgres import rows
from memstrata.stores.postgres.db import Database
from memstrata.stores.postgres.migrations import SEARCH_CONFIG
from memstrata.stores.sql_reads import AtomReads

APPEND_LOCK = 0x6D73_0000_0002  # see messages.APPEND_LOCK: atom seqs become visible in order
_INSERT = f"""
INSERT INTO atoms (id, user_id, agent_id, session_key, type, priority, content, scene_name,
                   source_message_ids, metadata, event_time, created_at, updated_at, version,
                   superseded_by, pinned, expires_at, tsv, dl)
SELECT u.id, %s, %s, u.session_key, u.type, u.priority, u.content, u.scene_name, u.sources::jsonb,
       u.metadata::jsonb, u.event_time, u.created_at, u.updated_at, u.version, u.superseded_by,
       u.pinned, u.expires_at, x.v, memstrata_length(x.v)
FROM unnest(%s::text[], %s::text[], %s::text[], %s::int[], %s::text[], %s::text[], %s::text[], %s::text[],
            %s::bigint[], %s::bigint[], %s::bigint[], %s::int[], %s::text[], %s::boolean[], %s::bigint[],
            %s::text[])
     WITH ORDINALITY AS u(id, session_key, type, priority, content, scene_name, sources, metadata,
                          event_time, created_at, updated_at, version, superseded_by, pinned, expires_at,
                          body, n)
CROSS JOIN LATERAL (SELECT to_tsvector('{SEARCH_CONFIG}', u.body) AS v) AS x
ORDER BY u.n
ON CONFLICT (user_id, agent_id, id) DO NOTHING
RETURNING seq, id
"""
_CURSOR = (
    "INSERT INTO pipeline_sessions (user_id, agent_id, session_key, cursor) VALUES (%s, %s, %s, %s) "
    "ON CONFLICT (user_id, agent_id, session_key) "
    "DO UPDATE SET cursor = GREATEST(pipeline_sessions.cursor, excluded.cursor)"
)


def event_time(a: Atom) -> int:
    """When the atom's content happened or was said: ``metadata['message_time']`` (ms) if set."""
    value = a.metadata.get("message_time")
    return int(value) if isinstance(value, int | float) else a.created_at


def _columns(new: Sequence[tuple[Atom, str]]) -> list[list[object]]:
    cols: list[list[object]] = [[] for _ in range(16)]
    for a, body in new:
        values = (
            rows.text(a.id),
            rows.text(a.session_key),
            str(a.type),
            a.priority,
            rows.text(a.content),
            rows.text(a.scene_name),
            rows.json_text(list(a.source_message_ids)),
            rows.json_text(dict(a.metadata)),
            event_time(a),
            a.created_at,
            a.updated_at,
            a.version,
            a.superseded_by,
            a.pinned,
            a.expires_at,
            rows.text(body),
        )
        for col, v in zip(cols, values, strict=True):
            col.append(v)
    return cols


class PostgresAtomStore(AtomReads):
    _db: Database
    _dialect = sql.POSTGRES

    def __init__(self, db: Database) -> None:
        self._db = db

    def commit(
        self,
        tenant: Tenant,
        new: Sequence[tuple[Atom, str]],
        superseded: Mapping[str, str],
        cursor: tuple[str, int] | None,
    ) -> list[Atom]:
        seqs: dict[str, int] = {}
        with self._db.tx() as c:
            if new:
                c.execute("SELECT pg_advisory_xact_lock(%s)", (APPEND_LOCK,))
                found = c.execute(_INSERT, [tenant.user_id, tenant.agent_id, *_columns(new)]).fetchall()
                seqs = {r["id"]: int(r["seq"]) for r in found}
            for old, new_id in superseded.items():
                c.execute(
                    "UPDATE atoms SET superseded_by = %s WHERE user_id = %s AND agent_id = %s AND id = %s "
                    "AND superseded_by IS NULL",
                    (new_id, tenant.user_id, tenant.agent_id, old),
                )
            if cursor is not None:
                c.execute(_CURSOR, (tenant.user_id, tenant.agent_id, cursor[0], cursor[1]))
        stored = []
        for a, _ in new:
            seq = seqs.pop(rows.text(a.id), None)
            if seq is not None:  # an id that exists is skipped: a retried window writes nothing twice
                stored.append(replace(a, seq=seq))
        return stored

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Atom]:
        if not seqs:
            return []
        found = self._db.query(
            f"SELECT {rows.ATOM_COLS} FROM atoms WHERE seq = ANY(%s) AND user_id = %s AND agent_id = %s",
            (list(seqs), tenant.user_id, tenant.agent_id),
        )
        by = {r["seq"]: rows.atom(r) for r in found}
        return [by[s] for s in seqs if s in by]

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        if not ids:
            return []
        return [
            rows.atom(r)
            for r in self._db.query(
                f"SELECT {rows.ATOM_COLS} FROM atoms WHERE user_id = %s AND agent_id = %s AND id = ANY(%s) "
                "ORDER BY seq",
                (tenant.user_id, tenant.agent_id, list(ids)),
            )
        ]

    def delete(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        if not ids:
            return []
        with self._db.tx() as c:
            # The atoms named, then every older version pointing at one of them, transitively.
            found = c.execute(
                f"""
                WITH RECURSIVE chain AS (
                    SELECT seq, id FROM atoms WHERE user_id = %s AND agent_id = %s AND id = ANY(%s)
                    UNION
                    SELECT a.seq, a.id FROM atoms a JOIN chain ON a.superseded_by = chain.id
                    WHERE a.user_id = %s AND a.agent_id = %s
                )
                DELETE FROM atoms WHERE seq IN (SELECT seq FROM chain) RETURNING {rows.ATOM_COLS}
                """,
                (tenant.user_id, tenant.agent_id, list(ids), tenant.user_id, tenant.agent_id),
            ).fetchall()
        return sorted((rows.atom(r) for r in found), key=lambda a: a.seq)

    def amend(self, tenant: Tenant, atoms: Sequence[Atom]) -> list[Atom]:
        if not atoms:
            return []
        with self._db.tx() as c:
            c.cursor().executemany(
                "UPDATE atoms SET metadata = %s::jsonb, event_time = %s, pinned = %s, expires_at = %s "
                "WHERE user_id = %s AND agent_id = %s AND id = %s",
                [
                    (rows.json_text(dict(a.metadata)), event_time(a), a.pinned, a.expires_at,
                     tenant.user_id, tenant.agent_id, a.id)
                    for a in atoms
                ],
            )  # fmt: skip
        return self.get(tenant, [a.id for a in atoms])

    def citing(self, tenant: Tenant, message_ids: Sequence[str]) -> list[Atom]:
        if not message_ids:
            return []
        found = self._db.query(
            f"SELECT {rows.ATOM_COLS} FROM atoms WHERE user_id = %s AND agent_id = %s "
            "AND source_message_ids ?| %s ORDER BY seq",
            (tenant.user_id, tenant.agent_id, list(dict.fromkeys(message_ids))),
        )
        return [rows.atom(r) for r in found]

    def sweepable(self, now: int, older_than: int | None, limit: int, after_seq: int = 0) -> list[Atom]:
        due = "(expires_at IS NOT NULL AND expires_at <= %s)"
        params: list[object] = [after_seq, now]
        if older_than is not None:
            due = f"({due} OR updated_at < %s)"
            params.append(older_than)
        found = self._db.query(
            f"SELECT {rows.ATOM_COLS} FROM atoms WHERE seq > %s AND NOT pinned AND {due} ORDER BY seq LIMIT %s",
            [*params, limit],
        )
        return [rows.atom(r) for r in found]
