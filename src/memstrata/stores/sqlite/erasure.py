"""Erasing a tenant from the embedded store, and giving the space back so the text is gone.

``erase_rows`` deletes, in one transaction, every row of the tenant: messages and atoms with their
FTS5 rows, vectors, scene membership and pipeline state. ``compact`` then makes the bytes go:
SQLite only marks deleted rows' pages free (and FTS5 only marks deleted index entries), so the
text would stay readable in the file. With ``secure_delete`` on, the FTS5 indexes merged into one
segment each (``optimize`` drops the deleted entries), ``VACUUM`` rewrites the whole database and
``wal_checkpoint(TRUNCATE)`` copies it into the main file and cuts the WAL to nothing.
"""

from __future__ import annotations

import logging
import time

from memstrata.models import Erased, Tenant
from memstrata.stores.sqlite.db import WRITE_WAIT_MS, Database

log = logging.getLogger(__name__)
_FTS = {"messages": "messages_fts", "atoms": "atoms_fts"}
_STATE_TABLES = {
    "scene_members": "scene_members",
    "sessions": "pipeline_sessions",
    "tenant_states": "pipeline_tenants",
}
CHECKPOINT_TRIES = 5  # each waits up to CHECKPOINT_WAIT_MS for readers to move on
CHECKPOINT_WAIT_MS = 200


def erase_rows(db: Database, tenant: Tenant) -> Erased:
    """Delete every row of ``tenant`` in one transaction; returns how many of each kind."""
    who = (tenant.user_id, tenant.agent_id)
    counts: dict[str, int] = {}
    db.run("PRAGMA secure_delete = ON")  # freed pages are zeroed from here on
    with db.tx() as c:
        for table, fts in _FTS.items():
            seqs = [
                (r[0],) for r in c.execute(f"SELECT seq FROM {table} WHERE user_id = ? AND agent_id = ?", who)
            ]
            c.executemany(f"DELETE FROM {fts} WHERE rowid = ?", seqs)
            counts[table] = c.execute(f"DELETE FROM {table} WHERE user_id = ? AND agent_id = ?", who).rowcount
        counts["vectors"] = c.execute("DELETE FROM vectors WHERE user_id = ? AND agent_id = ?", who).rowcount
        for kind, table in _STATE_TABLES.items():
            counts[kind] = c.execute(f"DELETE FROM {table} WHERE user_id = ? AND agent_id = ?", who).rowcount
    return Erased(**counts)


def compact(db: Database) -> list[str]:
    """Make deleted rows' bytes leave the files (see the module docstring). Returns what could not
    be done, in words (empty: everything was rewritten and the WAL is empty)."""
    db.run("PRAGMA secure_delete = ON")
    try:
        for fts in _FTS.values():
            db.run(f"INSERT INTO {fts} ({fts}) VALUES ('optimize')")
        db.run("VACUUM")
        # TRUNCATE waits (the busy handler) for readers of an older snapshot: briefly, not 10 s.
        db.run(f"PRAGMA busy_timeout = {CHECKPOINT_WAIT_MS}")
        for _ in range(CHECKPOINT_TRIES):
            busy, _frames, _done = db.run("PRAGMA wal_checkpoint(TRUNCATE)")[0]
            if not busy:
                return []
            time.sleep(CHECKPOINT_WAIT_MS / 1000)
    finally:
        db.run(f"PRAGMA busy_timeout = {WRITE_WAIT_MS}")  # the writer's usual wait
        db.run("PRAGMA secure_delete = OFF")
    note = f"{db.path.name}-wal could not be truncated: another process is reading the database"
    log.warning("%s; the next forget or checkpoint truncates it", note)
    return [note]


def tenants(db: Database) -> list[Tenant]:
    """Every tenant with a row anywhere (records, vectors, membership or pipeline state)."""
    tables = ("messages", "atoms", "vectors", "scene_members", "pipeline_sessions", "pipeline_tenants")
    union = " UNION ".join(f"SELECT user_id, agent_id FROM {t}" for t in tables)
    found = db.query(f"SELECT user_id, agent_id FROM ({union}) ORDER BY user_id, agent_id")
    return [Tenant(r["user_id"], r["agent_id"]) for r in found]
