"""Backups and set-aside documents of the PostgreSQL scene and persona stores: snapshot rows
numbered by an identity column (the id is ``<prefix><n>``, so ids sort by creation), pruned to a
count per tenant; unreadable documents are moved to ``set_aside`` and kept."""

from __future__ import annotations

import time

import psycopg

from memstrata.errors import StoreError
from memstrata.models import Backup, Tenant
from memstrata.stores.postgres.db import Row


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def set_aside(
    c: psycopg.Connection[Row], tenant: Tenant, path: str, table: str, name: str, problem: str
) -> str:
    """Move a tenant's unreadable document into ``set_aside`` (kept, never read); its new name."""
    where = "user_id = %s AND agent_id = %s" + (" AND name = %s" if table == "scenes" else "")
    params: list[object] = [tenant.user_id, tenant.agent_id]
    if table == "scenes":
        params.append(name)
    found = c.execute(f"DELETE FROM {table} WHERE {where} RETURNING text", params).fetchone()
    n = c.execute(
        "INSERT INTO set_aside (user_id, agent_id, path, text, problem, made_at) "
        "VALUES (%s, %s, %s, %s, %s, %s) RETURNING n",
        (tenant.user_id, tenant.agent_id, path, found["text"] if found else "", problem, now_ms()),
    ).fetchone()
    assert n is not None
    return f"set_aside #{n['n']}"


def prune(c: psycopg.Connection[Row], table: str, tenant: Tenant, keep: int) -> None:
    c.execute(
        f"DELETE FROM {table} WHERE user_id = %s AND agent_id = %s AND n NOT IN "
        f"(SELECT n FROM {table} WHERE user_id = %s AND agent_id = %s ORDER BY n DESC LIMIT %s)",
        (tenant.user_id, tenant.agent_id, tenant.user_id, tenant.agent_id, keep),
    )


def number_of(snapshot: str, prefix: str) -> int | None:
    """The row number a snapshot id ``<prefix><n>`` names; None for any other text."""
    number = snapshot.removeprefix(prefix)
    ok = snapshot.startswith(prefix) and number.isascii() and number.isdigit() and len(number) < 19
    return int(number) if ok else None


def as_backups(rows: list[Row], prefix: str) -> list[Backup]:
    """Snapshot rows (``n``, ``made_at``) as backups, in their order."""
    return [Backup(f"{prefix}{r['n']}", int(r["made_at"])) for r in rows]


def snapshot_row(
    c: psycopg.Connection[Row], table: str, cols: str, tenant: Tenant, snapshot: str, prefix: str
) -> Row:
    """The snapshot row ``snapshot`` names. Raises ``StoreError`` when it is gone (or never was)."""
    number = number_of(snapshot, prefix)
    found = (
        c.execute(
            f"SELECT {cols} FROM {table} WHERE n = %s AND user_id = %s AND agent_id = %s",
            (number, tenant.user_id, tenant.agent_id),
        ).fetchone()
        if number is not None
        else None
    )
    if found is None:
        raise StoreError(f"snapshot {snapshot!r} does not exist", tenant=str(tenant))
    return found
