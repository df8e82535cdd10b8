"""L1 atom store on SQLite: versioned atoms; a commit moves the session's L1 cursor atomically."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import replace

from memstrata.models import Atom, Tenant
from memstrata.stores import sql
from memstrata.stores.sql_reads import AtomReads
from memstrata.stores.sqlite import rows
from memstrata.stores.sqlite.db import Database

# Only a repeated id is skipped (a retried window): any other constraint failure raises.
_INSERT = (
    "INSERT INTO atoms (id, user_id, agent_id, session_key, type, priority, content, scene_name, "
    "source_message_ids, metadata, event_time, created_at, updated_at, version, superseded_by, pinned, "
    "expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
    "ON CONFLICT (user_id, agent_id, id) DO NOTHING"
)
_CURSOR = (
    "INSERT INTO pipeline_sessions (user_id, agent_id, session_key, cursor) VALUES (?, ?, ?, ?) "
    "ON CONFLICT (user_id, agent_id, session_key) DO UPDATE SET cursor = MAX(cursor, excluded.cursor)"
)


def event_time(a: Atom) -> int:
    """When the atom's content happened or was said: ``metadata['message_time']`` (ms) if set."""
    value = a.metadata.get("message_time")
    return int(value) if isinstance(value, int | float) else a.created_at


class SqliteAtomStore(AtomReads):
    _db: Database
    _dialect = sql.SQLITE

    def __init__(self, db: Database) -> None:
        self._db = db

    def commit(
        self,
        tenant: Tenant,
        new: Sequence[tuple[Atom, str]],
        superseded: Mapping[str, str],
        cursor: tuple[str, int] | None,
    ) -> list[Atom]:
        stored: list[Atom] = []
        with self._db.tx() as c:
            for a, body in new:
                cur = c.execute(_INSERT, _params(tenant, a))
                if cur.rowcount == 0:  # id exists: a retried window writes nothing twice
                    continue
                seq = int(cur.lastrowid or 0)
                c.execute("INSERT INTO atoms_fts (rowid, body) VALUES (?, ?)", (seq, body))
                stored.append(replace(a, seq=seq))
            for old, new_id in superseded.items():
                c.execute(
                    "UPDATE atoms SET superseded_by = ? WHERE user_id = ? AND agent_id = ? AND id = ? "
                    "AND superseded_by IS NULL",
                    (new_id, tenant.user_id, tenant.agent_id, old),
                )
            if cursor is not None:
                c.execute(_CURSOR, (tenant.user_id, tenant.agent_id, cursor[0], cursor[1]))
        return stored

    def by_seq(self, tenant: Tenant, seqs: Sequence[int]) -> list[Atom]:
        if not seqs:
            return []
        marks = ",".join("?" * len(seqs))
        found = self._db.query(
            # Unary + keeps the planner on the primary key: the tenant index would scan the tenant.
            f"SELECT {rows.ATOM_COLS} FROM atoms WHERE +user_id = ? AND +agent_id = ? AND seq IN ({marks})",
            [tenant.user_id, tenant.agent_id, *seqs],
        )
        by = {r["seq"]: rows.atom(r) for r in found}
        return [by[s] for s in seqs if s in by]

    def get(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        return [
            rows.atom(r)
            for r in self._db.query(
                f"SELECT {rows.ATOM_COLS} FROM atoms WHERE user_id = ? AND agent_id = ? AND id IN ({marks}) "
                "ORDER BY seq",
                [tenant.user_id, tenant.agent_id, *ids],
            )
        ]

    def delete(self, tenant: Tenant, ids: Sequence[str]) -> list[Atom]:
        removed: dict[int, Atom] = {}
        with self._db.tx() as c:
            frontier, column = list(dict.fromkeys(ids)), "id"
            while frontier:
                fresh = [a for a in _select(c, tenant, column, frontier) if a.seq not in removed]
                removed.update((a.seq, a) for a in fresh)
                c.executemany("DELETE FROM atoms_fts WHERE rowid = ?", [(a.seq,) for a in fresh])
                c.executemany("DELETE FROM atoms WHERE seq = ?", [(a.seq,) for a in fresh])
                # An older version points at its successor: follow the chain back to the first.
                frontier, column = [a.id for a in fresh], "superseded_by"
        return sorted(removed.values(), key=lambda a: a.seq)

    def amend(self, tenant: Tenant, atoms: Sequence[Atom]) -> list[Atom]:
        with self._db.tx() as c:
            c.executemany(
                "UPDATE atoms SET metadata = ?, event_time = ?, pinned = ?, expires_at = ? "
                "WHERE user_id = ? AND agent_id = ? AND id = ?",
                [
                    (
                        json.dumps(dict(a.metadata), default=str),
                        event_time(a),
                        int(a.pinned),
                        a.expires_at,
                        tenant.user_id,
                        tenant.agent_id,
                        a.id,
                    )
                    for a in atoms
                ],
            )
        return self.get(tenant, [a.id for a in atoms])

    def citing(self, tenant: Tenant, message_ids: Sequence[str]) -> list[Atom]:
        found: dict[int, Atom] = {}
        for chunk in rows.chunks(list(dict.fromkeys(message_ids))):
            for r in self._db.query(
                f"SELECT {rows.ATOM_COLS} FROM atoms WHERE user_id = ? AND agent_id = ? AND EXISTS "
                "(SELECT 1 FROM json_each(atoms.source_message_ids) j "
                f"WHERE j.value IN ({','.join('?' * len(chunk))}))",
                [tenant.user_id, tenant.agent_id, *chunk],
            ):
                found[r["seq"]] = rows.atom(r)
        return [found[s] for s in sorted(found)]

    def sweepable(self, now: int, older_than: int | None, limit: int, after_seq: int = 0) -> list[Atom]:
        due = "(expires_at IS NOT NULL AND expires_at <= ?)"
        params: list[object] = [after_seq, now]
        if older_than is not None:
            due = f"({due} OR updated_at < ?)"
            params.append(older_than)
        return [
            rows.atom(r)
            for r in self._db.query(
                f"SELECT {rows.ATOM_COLS} FROM atoms WHERE seq > ? AND pinned = 0 AND {due} "
                "ORDER BY seq LIMIT ?",
                [*params, limit],
            )
        ]


def _select(c: sqlite3.Connection, tenant: Tenant, column: str, keys: list[str]) -> list[Atom]:
    found: list[Atom] = []
    for chunk in rows.chunks(keys):
        cur = c.execute(
            f"SELECT {rows.ATOM_COLS} FROM atoms WHERE user_id = ? AND agent_id = ? "
            f"AND {column} IN ({','.join('?' * len(chunk))})",
            [tenant.user_id, tenant.agent_id, *chunk],
        )
        cur.row_factory = sqlite3.Row
        found += [rows.atom(r) for r in cur.fetchall()]
    return found


def _params(tenant: Tenant, a: Atom) -> tuple[object, ...]:
    return (
        a.id,
        tenant.user_id,
        tenant.agent_id,
        a.session_key,
        str(a.type),
        a.priority,
        a.content,
        a.scene_name,
        json.dumps(list(a.source_message_ids)),
        json.dumps(dict(a.metadata), default=str),
        event_time(a),
        a.created_at,
        a.updated_at,
        a.version,
        a.superseded_by,
        int(a.pinned),
        a.expires_at,
    )
