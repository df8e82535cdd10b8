"""Row <-> record conversion and filter clauses shared by the PostgreSQL store parts."""

from __future__ import annotations

import json
from typing import Any

from memstrata.models import Atom, AtomFilter, AtomType, Message, MessageFilter, Role, Tenant

Row = dict[str, Any]
MESSAGE_COLS = (
    "seq, id, user_id, agent_id, session_key, session_id, role, name, content, timestamp, recorded_at"
)
ATOM_COLS = (
    "seq, id, user_id, agent_id, session_key, type, priority, content, scene_name, source_message_ids, "
    "metadata, created_at, updated_at, version, superseded_by, pinned, expires_at"
)


def message(row: Row) -> Message:
    return Message(
        id=row["id"],
        tenant=Tenant(row["user_id"], row["agent_id"]),
        session_key=row["session_key"],
        session_id=row["session_id"],
        role=Role(row["role"]),
        name=row["name"],
        content=row["content"],
        timestamp=row["timestamp"],
        recorded_at=row["recorded_at"],
        seq=row["seq"],
    )


def atom(row: Row) -> Atom:
    return Atom(
        id=row["id"],
        tenant=Tenant(row["user_id"], row["agent_id"]),
        type=AtomType(row["type"]),
        content=row["content"],
        priority=row["priority"],
        scene_name=row["scene_name"],
        source_message_ids=tuple(row["source_message_ids"]),
        metadata=dict(row["metadata"]),
        session_key=row["session_key"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        version=row["version"],
        superseded_by=row["superseded_by"],
        seq=row["seq"],
        pinned=bool(row["pinned"]),
        expires_at=row["expires_at"],
    )


def tenant_clause(tenant: Tenant | None, alias: str = "") -> tuple[list[str], list[object]]:
    if tenant is None:
        return [], []
    p = f"{alias}." if alias else ""
    return [f"{p}user_id = %s", f"{p}agent_id = %s"], [tenant.user_id, tenant.agent_id]


def filter_clause(flt: MessageFilter | AtomFilter, alias: str = "") -> tuple[list[str], list[object]]:
    """SQL conditions for a filter (joined with AND by the caller)."""
    p = f"{alias}." if alias else ""
    where: list[str] = []
    params: list[object] = []
    if isinstance(flt, MessageFilter):
        time_col = f"{p}timestamp"
        if flt.session_key is not None:
            where.append(f"{p}session_key = %s")
            params.append(flt.session_key)
    else:
        time_col = f"{p}event_time"
        if flt.type is not None:
            where.append(f"{p}type = %s")
            params.append(str(flt.type))
        if flt.scene:
            where.append(f"strpos(lower({p}scene_name), %s) > 0")
            params.append(flt.scene.lower())
        if not flt.include_superseded:
            where.append(f"{p}superseded_by IS NULL")
        if flt.at is not None:
            where.append(f"({p}expires_at IS NULL OR {p}expires_at > %s OR {p}pinned)")
            params.append(flt.at)
    if flt.since is not None:
        where.append(f"{time_col} >= %s")
        params.append(flt.since)
    if flt.until is not None:
        where.append(f"{time_col} < %s")
        params.append(flt.until)
    return where, params


def json_text(value: object) -> str:
    """``value`` as JSON that ``jsonb`` accepts (every string through ``text``)."""
    return json.dumps(_clean(value), default=str)


def _clean(value: object) -> object:
    if isinstance(value, str):
        return text(value)
    if isinstance(value, dict):
        return {text(str(k)): _clean(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_clean(v) for v in value]
    return value


def text(value: str) -> str:
    """``value`` as PostgreSQL stores text: NUL bytes (which it refuses) dropped, a lone surrogate
    (no UTF-8 for it) replaced by ``?``."""
    return value.replace("\0", "").encode("utf-8", errors="replace").decode("utf-8")
