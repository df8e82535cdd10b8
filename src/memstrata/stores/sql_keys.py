"""The scoped API keys on either SQL store, written once in its ``Dialect``: one ``api_keys``
table (id, digest, label, reach as JSON, created and revoked times). No cache: every lookup reads
the row, so a key revoked through one replica fails on every replica at its next request."""

from __future__ import annotations

import json
from typing import Any

from memstrata.models import ApiKey, Reach
from memstrata.stores import sql
from memstrata.stores.sql_pipeline import Transacts

_COLS = "id, label, tenants, created_at, revoked_at"


def _reach(value: Any) -> Reach:
    """The JSON column (text on SQLite, decoded already on PostgreSQL) as ``Reach``."""
    pairs: list[list[str | None]] = json.loads(value) if isinstance(value, str) else value
    return tuple((str(user), None if agent is None else str(agent)) for user, agent in pairs or ())


def _key(row: sql.Row) -> ApiKey:
    return ApiKey(
        id=row["id"],
        label=row["label"],
        tenants=_reach(row["tenants"]),
        created_at=int(row["created_at"]),
        revoked_at=None if row["revoked_at"] is None else int(row["revoked_at"]),
    )


class SqlKeyStore:
    """``KeyStore`` over a store's ``Database`` in its ``Dialect``."""

    def __init__(self, db: Transacts, dialect: sql.Dialect) -> None:
        self._db = db
        self._dialect = dialect

    def add(self, key: ApiKey, digest: str) -> None:
        m = self._dialect.marks(6)
        with self._db.tx() as c:
            c.execute(
                f"INSERT INTO api_keys (id, digest, label, tenants, created_at, revoked_at) VALUES ({m})",
                [key.id, digest, key.label, json.dumps(key.tenants), key.created_at, key.revoked_at],
            )

    def find(self, digest: str) -> ApiKey | None:
        found = self._db.query(f"SELECT {_COLS} FROM api_keys WHERE digest = {self._dialect.mark}", [digest])
        return _key(found[0]) if found else None

    def list(self) -> list[ApiKey]:
        return [_key(r) for r in self._db.query(f"SELECT {_COLS} FROM api_keys ORDER BY created_at, id")]

    def revoke(self, key_id: str, at: int) -> ApiKey | None:
        m = self._dialect.mark
        with self._db.tx() as c:
            c.execute(
                f"UPDATE api_keys SET revoked_at = {m} WHERE id = {m} AND revoked_at IS NULL", [at, key_id]
            )
        found = self._db.query(f"SELECT {_COLS} FROM api_keys WHERE id = {m}", [key_id])
        return _key(found[0]) if found else None
