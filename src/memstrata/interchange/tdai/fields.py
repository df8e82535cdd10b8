"""Fields of TencentDB-Agent-Memory JSONL lines: one conversations line -> a message, one records
line -> an atom. camelCase and snake_case both read; optional fields may be missing or null.
Raises ``InputError`` naming the field when a line cannot be read."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any
from urllib.parse import unquote

from memstrata.errors import InputError
from memstrata.interchange.seed import parse_timestamp
from memstrata.models import DEFAULT, Atom, AtomType, NewMessage, Role, Tenant
from memstrata.models.validation import type_name

# ``superseded_by`` of a record flagged superseded or deleted without naming its successor.
SUPERSEDED = "(superseded)"
_LEGACY_TYPES = {"episode": AtomType.EPISODIC, "preference": AtomType.PERSONA}
_IMPORTANCE = {"high": 80, "medium": 50, "low": 20}  # pre-v3 records had an importance, no priority
_METADATA_NAMES = {  # TDAI and camelCase spellings -> memstrata's
    "activity_start_time": "activity_start",
    "activity_end_time": "activity_end",
    "activityStart": "activity_start",
    "activityEnd": "activity_end",
    "activityStartTime": "activity_start",
    "activityEndTime": "activity_end",
}
_DAY_FILE = re.compile(r"(\d{4}-\d{2}-\d{2})")


def _get(obj: Mapping[str, Any], *keys: str) -> Any:
    """The first of ``keys`` present with a value that is not null or an empty string."""
    for key in keys:
        value = obj.get(key)
        if value is not None and value != "":
            return value
    return None


def _text(obj: Mapping[str, Any], *keys: str) -> str | None:
    value = _get(obj, *keys)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InputError(f"expected a string, got {type_name(value)}", item=keys[0])
    return value


def line_tenant(obj: Mapping[str, Any]) -> Tenant:
    """The tenant a line names (``userId``/``agentId``), ``default`` for what it leaves out."""
    return Tenant(_text(obj, "userId", "user_id") or DEFAULT, _text(obj, "agentId", "agent_id") or DEFAULT)


def profile_tenant(folder: str) -> Tenant:
    """The tenant of a profile folder: ``u=<user>,a=<agent>`` (percent-encoded) or ``<user>``."""
    user, sep, agent = folder.partition(",a=")
    if sep and user.startswith("u="):
        return Tenant(unquote(user[2:]) or DEFAULT, unquote(agent) or DEFAULT)
    return Tenant(unquote(folder) or DEFAULT)


def _time(obj: Mapping[str, Any], *keys: str) -> int | None:
    return parse_timestamp(_get(obj, *keys), keys[0])


def recorded_at(obj: Mapping[str, Any]) -> int | None:
    """When the line's message was stored (``recordedAt``), kept by the import; None when absent."""
    return _time(obj, "recordedAt", "recorded_at")


def parse_message(obj: Mapping[str, Any]) -> tuple[Tenant, str, str, NewMessage]:
    """``(tenant, session key, session id, message)`` of one conversations line."""
    role = (_text(obj, "role") or "").lower()
    if role not in (Role.USER, Role.ASSISTANT):
        raise InputError(f"must be 'user' or 'assistant', got {obj.get('role')!r}", item="role")
    content = obj.get("content")
    if not isinstance(content, str):
        raise InputError(f"expected a string, got {type_name(content)}", item="content")
    tenant = line_tenant(obj)
    key = _text(obj, "sessionKey", "session_key") or DEFAULT
    session_id = _text(obj, "sessionId", "session_id") or key
    timestamp = _time(obj, "timestamp") or _time(obj, "recordedAt", "recorded_at")
    mid = _text(obj, "id", "messageId", "message_id") or _stable_id(
        "msg", tenant, key, role, timestamp, content
    )
    name = _text(obj, "name", "speaker")
    metadata = obj.get("metadata")  # memstrata's exports only; checked at capture
    if metadata is not None and not isinstance(metadata, dict):
        raise InputError(f"expected an object, got {type_name(metadata)}", item="metadata")
    return tenant, key, session_id, NewMessage(Role(role), content, mid, name, timestamp, metadata)


def parse_atom(obj: Mapping[str, Any], day_ms: int) -> Atom:
    """The atom of one records line; ``day_ms`` (the file's date) stands in for missing times."""
    content = _text(obj, "content")
    if content is None or not content.strip():
        raise InputError("is required", item="content")
    tenant = line_tenant(obj)
    first = _first_time(obj.get("timestamps"))
    created = _time(obj, "createdAt", "created_at", "created") or first or day_ms
    updated = _time(obj, "updatedAt", "updated_at", "updated") or created
    atom_type = _atom_type(obj)
    session_key = _text(obj, "sessionKey", "session_key") or ""
    aid = _text(obj, "id", "recordId", "record_id") or _stable_id(
        "m", tenant, session_key, atom_type, content
    )
    version = _get(obj, "version")
    return Atom(
        id=aid,
        tenant=tenant,
        type=atom_type,
        content=content.strip(),
        priority=_priority(obj),
        scene_name=_text(obj, "scene_name", "sceneName", "scene") or "",
        source_message_ids=_ids(_get(obj, "source_message_ids", "sourceMessageIds")),
        metadata=_metadata(_get(obj, "metadata")),
        session_key=session_key,
        created_at=created,
        updated_at=updated,
        version=version if isinstance(version, int) and not isinstance(version, bool) and version > 0 else 1,
        superseded_by=_superseded_by(obj),
        pinned=obj.get("pinned") is True,
        expires_at=_time(obj, "expiresAt", "expires_at"),
    )


def _atom_type(obj: Mapping[str, Any]) -> AtomType:
    raw = (_text(obj, "type", "memoryType", "memory_type") or "").strip().lower()
    if raw in _LEGACY_TYPES:
        return _LEGACY_TYPES[raw]
    try:
        return AtomType(raw)
    except ValueError:
        raise InputError(f"unknown memory type {raw!r}", item="type") from None


def _priority(obj: Mapping[str, Any]) -> int:
    value = _get(obj, "priority")
    if value is None:
        importance = _get(obj, "importance")
        return _IMPORTANCE.get(str(importance).lower(), 50) if importance is not None else 50
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(f"expected a number, got {type_name(value)}", item="priority")
    return max(-1, min(100, round(value)))


def _ids(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError("expected an array of message ids", item="source_message_ids")
    return tuple(dict.fromkeys(value))


def _metadata(value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {type_name(value)}", item="metadata")
    out: dict[str, Any] = {}
    for key, v in value.items():
        name = _METADATA_NAMES.get(str(key), str(key))
        if name not in out or key == name:  # memstrata's own spelling wins over an alias
            out[name] = v
    return out


def _superseded_by(obj: Mapping[str, Any]) -> str | None:
    successor = _text(obj, "superseded_by", "supersededBy")
    if successor:
        return successor
    flagged = any(obj.get(k) is True for k in ("superseded", "deleted", "isDeleted", "is_deleted"))
    status = str(obj.get("status", "")).lower()
    return SUPERSEDED if flagged or status in ("superseded", "deleted") else None


def _first_time(value: Any) -> int | None:
    """The first parseable entry of TDAI's ``timestamps`` trail."""
    if isinstance(value, list):
        for v in value:
            try:
                ms = parse_timestamp(v, "timestamps")
            except InputError:
                continue
            if ms is not None:
                return ms
    return None


def with_message_time(atom: Atom, times: Mapping[tuple[Tenant, str], int]) -> Atom:
    """Add ``metadata['message_time']`` (when its messages were said, as memstrata's L1 does) from
    the imported source messages, unless the record has one."""
    if "message_time" in atom.metadata:
        return atom
    said = [times[(atom.tenant, s)] for s in atom.source_message_ids if (atom.tenant, s) in times]
    return replace(atom, metadata={**atom.metadata, "message_time": max(said)}) if said else atom


def day_ms(where: str) -> int:
    """Midnight UTC of the ``YYYY-MM-DD`` in a file name, else 0."""
    match = _DAY_FILE.search(where.rsplit("/", 1)[-1])
    if match is None:
        return 0
    try:
        return int(datetime.strptime(match.group(1), "%Y-%m-%d").replace(tzinfo=UTC).timestamp() * 1000)
    except ValueError:
        return 0


def _stable_id(prefix: str, *parts: object) -> str:
    """An id for a line without one, the same on every import of the same line."""
    raw = "|".join(str(p) for p in parts)
    return f"{prefix}_{hashlib.blake2b(raw.encode('utf-8'), digest_size=10).hexdigest()}"
