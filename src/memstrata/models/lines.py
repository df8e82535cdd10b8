"""Records as JSON lines with every field and link, and back (the ``jsonl`` export layout).

A line names its tenant (``user_id``, ``agent_id``); messages keep their ``metadata``; atoms keep ``version``, ``superseded_by``,
``source_message_ids``, ``metadata``, ``pinned`` and ``expires_at``; ``seq`` is written for
reference and ignored on import (the importing store assigns its own).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memstrata.errors import InputError
from memstrata.models import Atom, AtomType, Message, Role, Scene, Tenant
from memstrata.models.validation import type_name


def message_line(m: Message) -> dict[str, Any]:
    return {
        "id": m.id,
        "user_id": m.tenant.user_id,
        "agent_id": m.tenant.agent_id,
        "session_key": m.session_key,
        "session_id": m.session_id,
        "role": str(m.role),
        "name": m.name,
        "content": m.content,
        "timestamp": m.timestamp,
        "recorded_at": m.recorded_at,
        "metadata": m.metadata,
        "seq": m.seq,
    }


def atom_line(a: Atom) -> dict[str, Any]:
    return {
        "id": a.id,
        "user_id": a.tenant.user_id,
        "agent_id": a.tenant.agent_id,
        "type": str(a.type),
        "priority": a.priority,
        "content": a.content,
        "scene_name": a.scene_name,
        "source_message_ids": list(a.source_message_ids),
        "metadata": a.metadata,
        "session_key": a.session_key,
        "created_at": a.created_at,
        "updated_at": a.updated_at,
        "version": a.version,
        "superseded_by": a.superseded_by,
        "pinned": a.pinned,
        "expires_at": a.expires_at,
        "seq": a.seq,
    }


def scene_line(tenant: Tenant, s: Scene) -> dict[str, Any]:
    return {
        "user_id": tenant.user_id,
        "agent_id": tenant.agent_id,
        "name": s.name,
        "summary": s.summary,
        "heat": s.heat,
        "created": s.created,
        "updated": s.updated,
        "body": s.body,
    }


def tenant_of(line: Mapping[str, Any]) -> Tenant:
    return Tenant(_str(line, "user_id"), _str(line, "agent_id"))


def message_of(line: Mapping[str, Any]) -> Message:
    """The message of a ``messages.jsonl`` line. Raises ``InputError`` naming the field."""
    role = _str(line, "role")
    if role not in (Role.USER, Role.ASSISTANT):
        raise InputError(f"must be 'user' or 'assistant', got {role!r}", item="role")
    return Message(
        id=_str(line, "id"),
        tenant=tenant_of(line),
        session_key=_str(line, "session_key"),
        session_id=_str(line, "session_id"),
        role=Role(role),
        content=_str(line, "content", empty=True),
        timestamp=_int(line, "timestamp"),
        recorded_at=_int(line, "recorded_at"),
        name=_opt_str(line, "name"),
        metadata=_object(line, "metadata"),
    )


def atom_of(line: Mapping[str, Any]) -> Atom:
    """The atom of an ``atoms.jsonl`` line. Raises ``InputError`` naming the field."""
    try:
        kind = AtomType(_str(line, "type"))
    except ValueError:
        raise InputError(f"unknown memory type {line.get('type')!r}", item="type") from None
    sources = line.get("source_message_ids", [])
    if not isinstance(sources, list) or not all(isinstance(i, str) for i in sources):
        raise InputError("expected an array of message ids", item="source_message_ids")
    metadata = _object(line, "metadata")
    expires = line.get("expires_at")
    return Atom(
        id=_str(line, "id"),
        tenant=tenant_of(line),
        type=kind,
        content=_str(line, "content"),
        priority=_int(line, "priority"),
        scene_name=_str(line, "scene_name", empty=True),
        source_message_ids=tuple(sources),
        metadata=dict(metadata),
        session_key=_str(line, "session_key", empty=True),
        created_at=_int(line, "created_at"),
        updated_at=_int(line, "updated_at"),
        version=_int(line, "version"),
        superseded_by=_opt_str(line, "superseded_by"),
        pinned=line.get("pinned") is True,
        expires_at=None if expires is None else _int(line, "expires_at"),
    )


def scene_of(line: Mapping[str, Any]) -> Scene:
    return Scene(
        name=_str(line, "name"),
        summary=_str(line, "summary", empty=True),
        heat=_int(line, "heat"),
        created=_int(line, "created"),
        updated=_int(line, "updated"),
        body=_str(line, "body", empty=True),
    )


def member_of(line: Mapping[str, Any]) -> tuple[Tenant, str, str]:
    """``(tenant, atom id, scene name)`` of a ``scene_members.jsonl`` line."""
    return tenant_of(line), _str(line, "atom_id"), _str(line, "scene")


def _str(line: Mapping[str, Any], key: str, *, empty: bool = False) -> str:
    value = line.get(key)
    if not isinstance(value, str) or (not empty and not value):
        raise InputError(
            f"expected a{'' if empty else ' non-empty'} string, got {type_name(value)}", item=key
        )
    return value


def _object(line: Mapping[str, Any], key: str) -> dict[str, Any]:
    """A JSON object field; absent (an older export): empty."""
    value = line.get(key, {})
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type_name(value)}", item=key)
    return dict(value)


def _opt_str(line: Mapping[str, Any], key: str) -> str | None:
    return None if line.get(key) is None else _str(line, key)


def _int(line: Mapping[str, Any], key: str) -> int:
    value = line.get(key)
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer, got {type_name(value)}", item=key)
    return value
