"""L0 record: turn what a caller hands to ``capture`` into stored messages.

Sanitizes each message (dropping noise), gives it an id and a timestamp when missing, and builds
the text the search index holds for it (with the previous turn as context).
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from memstrata.errors import ValidationError
from memstrata.layers.l0 import sanitize
from memstrata.models import Message, NewMessage, Role, Tenant
from memstrata.retrieval.documents import message_body


@dataclass(frozen=True, slots=True)
class CaptureResult:
    """What ``capture`` did: stored messages (with seq), ids skipped as already stored, ids dropped
    as noise, and any degradation (e.g. embedding failed: vectors will be filled by reindex)."""

    stored: tuple[Message, ...]
    duplicates: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    degradations: tuple[str, ...] = ()


def message_id(tenant: Tenant, session_key: str, m: NewMessage, index: int, now: int) -> str:
    """The caller's id, else a stable hash when the message has a timestamp (so a retried capture
    stores it once), else a random id."""
    if m.id:
        return m.id
    if m.timestamp is None:
        return uuid.uuid4().hex
    raw = f"{tenant}|{session_key}|{m.role}|{m.timestamp}|{index}|{m.content}"
    return hashlib.blake2b(raw.encode("utf-8"), digest_size=12).hexdigest()


def to_role(value: Role | str, item: str) -> Role:
    try:
        return Role(str(value).lower())
    except ValueError:
        raise ValidationError(f"role must be 'user' or 'assistant', got {value!r}", item=item) from None


def prepare(
    tenant: Tenant,
    session_key: str,
    session_id: str,
    batch: Sequence[NewMessage],
    previous: Message | None,
    now: int,
    *,
    with_previous: bool = True,
) -> tuple[list[tuple[Message, str]], list[str]]:
    """Messages ready for ``MessageLog.append`` (each with its index text), and the ids dropped."""
    ready: list[tuple[Message, str]] = []
    dropped: list[str] = []
    for i, new in enumerate(batch):
        item = f"messages[{i}]"
        role = to_role(new.role, f"{item}.role")
        if not isinstance(new.content, str):
            raise ValidationError("content must be a string", item=f"{item}.content")
        mid = message_id(tenant, session_key, new, i, now)
        text = sanitize(role, new.content)
        if text is None:
            dropped.append(mid)
            continue
        m = Message(
            id=mid,
            tenant=tenant,
            session_key=session_key,
            session_id=session_id,
            role=role,
            content=text,
            timestamp=new.timestamp if new.timestamp is not None else now,
            recorded_at=now,
            name=new.name or None,
        )
        ready.append((m, message_body(m, previous, with_previous=with_previous)))
        previous = m
    return ready, dropped
