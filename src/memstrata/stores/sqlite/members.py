"""Which scene holds each consolidated atom, per tenant, on SQLite.

``replace`` writes only what changed (rows gone, rows new or moved to another scene), in one
transaction: it had deleted and inserted the tenant's whole membership each time, so one L2 run or
one swept atom held the write lock for every consolidated atom the tenant has, while a server's
capture waits at most ``WRITE_WAIT_MS`` for it
(``tests/reliability/test_worker_write_size.py``).
"""

from __future__ import annotations

from collections.abc import Mapping

from memstrata.models import Tenant
from memstrata.stores.sqlite.db import Database


class SqliteSceneMembers:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, tenant: Tenant) -> dict[str, str]:
        rows = self._db.query(
            "SELECT atom_id, scene FROM scene_members WHERE user_id = ? AND agent_id = ?",
            (tenant.user_id, tenant.agent_id),
        )
        return {r["atom_id"]: r["scene"] for r in rows}

    def replace(self, tenant: Tenant, membership: Mapping[str, str]) -> None:
        who = (tenant.user_id, tenant.agent_id)
        with self._db.tx() as c:
            # Read inside the transaction (through the writer): what another process committed
            # before it began counts.
            now = dict(
                c.execute("SELECT atom_id, scene FROM scene_members WHERE user_id = ? AND agent_id = ?", who)
            )
            c.executemany(
                "DELETE FROM scene_members WHERE user_id = ? AND agent_id = ? AND atom_id = ?",
                [(*who, atom_id) for atom_id in now.keys() - membership.keys()],
            )
            c.executemany(
                "INSERT INTO scene_members (user_id, agent_id, atom_id, scene) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (user_id, agent_id, atom_id) DO UPDATE SET scene = excluded.scene",
                [
                    (*who, atom_id, scene)
                    for atom_id, scene in membership.items()
                    if now.get(atom_id) != scene
                ],
            )
