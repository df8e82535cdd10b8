"""Erasing a tenant from the PostgreSQL store, and giving the space back.

``erase_rows`` deletes every row of the tenant in one transaction: messages and atoms (their
keyword index is a column of the same rows), vectors, scene membership and pipeline state.
``compact`` then rewrites the tables with ``VACUUM FULL``: a plain delete only marks rows dead,
and their bytes stay in the table files until the space is reused. ``VACUUM FULL`` takes an
exclusive lock on each table while it rewrites it (other processes wait), and the write-ahead log
keeps the old bytes until its segments are recycled (checkpoints; archives, if you keep them).
"""

from __future__ import annotations

import psycopg

from memstrata.models import Erased, Tenant
from memstrata.stores.postgres.db import Database, Row

_RECORDS = {"messages": "messages", "atoms": "atoms"}
_STATE = {
    "scene_members": "scene_members",
    "sessions": "pipeline_sessions",
    "tenant_states": "pipeline_tenants",
}
_TABLES = (
    "messages", "atoms", "vectors_l0", "vectors_l1", "scene_members", "pipeline_sessions",
    "pipeline_tenants", "scenes", "scene_index", "scene_snapshots", "persona", "persona_snapshots",
    "set_aside",
)  # fmt: skip


def erase_rows(db: Database, tenant: Tenant) -> Erased:
    """Delete every row of ``tenant`` in one transaction; returns how many of each kind."""
    who = (tenant.user_id, tenant.agent_id)
    counts: dict[str, int] = {"vectors": 0}
    with db.tx() as c:
        for layer in ("vectors_l0", "vectors_l1"):  # counted first: deleting records cascades to them
            if c.execute("SELECT to_regclass(%s) IS NOT NULL AS e", (layer,)).fetchone()["e"]:  # type: ignore[index]
                row = c.execute(
                    f"SELECT count(*) AS n FROM {layer} WHERE user_id = %s AND agent_id = %s", who
                )
                counts["vectors"] += int(row.fetchone()["n"])  # type: ignore[index]
        for kind, table in {**_RECORDS, **_STATE}.items():
            counts[kind] = c.execute(
                f"DELETE FROM {table} WHERE user_id = %s AND agent_id = %s", who
            ).rowcount
    return Erased(**counts)


def compact(db: Database) -> list[str]:
    """``VACUUM FULL`` of every table that holds tenant data. Returns what could not be done."""
    with db.errors(), db.pool.connection() as conn:  # autocommit: VACUUM runs outside a transaction
        for table in _TABLES:
            if _exists(conn, table):
                conn.execute(f"VACUUM FULL {table}")
    return []


def _exists(conn: psycopg.Connection[Row], table: str) -> bool:
    found = conn.execute("SELECT to_regclass(%s) IS NOT NULL AS e", (table,)).fetchone()
    return bool(found and found["e"])


def tenants(db: Database) -> list[Tenant]:
    """Every tenant with a row anywhere (records, vectors, membership or pipeline state)."""
    tables = ["messages", "atoms", "scene_members", "pipeline_sessions", "pipeline_tenants"]
    tables += [
        t
        for t in ("vectors_l0", "vectors_l1")
        if db.query("SELECT to_regclass(%s) IS NOT NULL AS e", (t,))[0]["e"]
    ]
    union = " UNION ".join(f"SELECT user_id, agent_id FROM {t}" for t in tables)
    found = db.query(f"SELECT user_id, agent_id FROM ({union}) AS t ORDER BY user_id, agent_id")
    return [Tenant(r["user_id"], r["agent_id"]) for r in found]
