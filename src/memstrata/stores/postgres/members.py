"""Which scene holds each consolidated atom, per tenant, on PostgreSQL."""

from __future__ import annotations

from collections.abc import Mapping

from memstrata.models import Tenant
from memstrata.stores.postgres.db import Database


class PostgresSceneMembers:
    def __init__(self, db: Database) -> None:
        self._db = db

    def get(self, tenant: Tenant) -> dict[str, str]:
        found = self._db.query(
            "SELECT atom_id, scene FROM scene_members WHERE user_id = %s AND agent_id = %s",
            (tenant.user_id, tenant.agent_id),
        )
        return {r["atom_id"]: r["scene"] for r in found}

    def replace(self, tenant: Tenant, membership: Mapping[str, str]) -> None:
        with self._db.tx() as c:
            c.execute(
                "DELETE FROM scene_members WHERE user_id = %s AND agent_id = %s",
                (tenant.user_id, tenant.agent_id),
            )
            c.execute(
                "INSERT INTO scene_members (user_id, agent_id, atom_id, scene) "
                "SELECT %s, %s, u.atom_id, u.scene FROM unnest(%s::text[], %s::text[]) AS u(atom_id, scene)",
                (tenant.user_id, tenant.agent_id, list(membership), list(membership.values())),
            )
