"""Which scene holds each consolidated atom, per tenant, on SQLite."""

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
        with self._db.tx() as c:
            c.execute(
                "DELETE FROM scene_members WHERE user_id = ? AND agent_id = ?",
                (tenant.user_id, tenant.agent_id),
            )
            c.executemany(
                "INSERT INTO scene_members (user_id, agent_id, atom_id, scene) VALUES (?, ?, ?, ?)",
                [(tenant.user_id, tenant.agent_id, atom_id, scene) for atom_id, scene in membership.items()],
            )
