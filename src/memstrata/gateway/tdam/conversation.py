"""TDAM L0: ``/v3/conversation/{add,query,search,delete,count}`` (and ``/v2`` but count).

From ``MemoryCore/src/gateway/v2-router.ts`` (handlers) and ``v2-schemas.ts`` /
``generated/schemas.ts`` (fields and bounds)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import Request
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from memstrata.errors import InputError
from memstrata.gateway.context import Mem, who
from memstrata.gateway.tdam.common import TdamBody, iso, millis, ok, tenant

Session = Annotated[str, StringConstraints(max_length=512)]
Time = Annotated[str, StringConstraints(max_length=64)]


class ConversationItem(BaseModel):
    model_config = ConfigDict(extra="ignore")
    role: Literal["user", "assistant"]
    content: Annotated[str, StringConstraints(min_length=1, max_length=8192)]
    timestamp: Time | None = None
    recorded_at: Time | None = None


class AddIn(TdamBody):
    session_id: Session | None = None
    messages: Annotated[list[ConversationItem], Field(min_length=1, max_length=100)]


class QueryIn(TdamBody):
    session_id: Session | None = None
    limit: Annotated[int, Field(ge=1, le=100)] = 20
    offset: Annotated[int, Field(ge=0, le=100_000)] = 0
    time_start: Time | None = None
    time_end: Time | None = None


class SearchIn(TdamBody):
    query: Annotated[str, StringConstraints(min_length=1, max_length=2048)]
    limit: Annotated[int, Field(ge=1, le=100)] = 5
    session_id: Session | None = None
    time_start: Time | None = None
    time_end: Time | None = None


class DeleteIn(TdamBody):
    message_ids: Annotated[list[Session], Field(min_length=1, max_length=5000)] | None = None
    session_ids: Annotated[list[Session], Field(min_length=1, max_length=100)] | None = None
    session_id: Session | None = None


class CountIn(TdamBody):
    session_id: Session | None = None
    time_start: Time | None = None
    time_end: Time | None = None


def _item(m: Any) -> dict[str, Any]:
    return {
        "id": m.id,
        "session_id": m.session_key,
        "user_id": m.tenant.user_id,
        "agent_id": m.tenant.agent_id,
        "role": str(m.role),
        "content": m.content,
        "timestamp": iso(m.timestamp),
    }


async def add(mem: Mem, body: AddIn, request: Request) -> dict[str, Any]:
    """Append messages to L0. Answers ``accepted_ids`` (stored now or already stored)."""
    messages = [
        {"role": m.role, "content": m.content, "timestamp": millis(m.timestamp, f"messages[{i}].timestamp")}
        for i, m in enumerate(body.messages)
    ]
    r = await mem.capture(messages, session_key=body.session_id or "default", **who(tenant(request, body)))
    accepted = [m.id for m in r.stored] + list(r.duplicates)
    return ok(
        {"accepted_ids": accepted, "accepted_versions": ["v1"] * len(accepted), "total_count": len(accepted)}
    )


async def query(mem: Mem, request: Request, body: QueryIn | None = None) -> dict[str, Any]:
    """A page of the tenant's messages (``offset``/``limit``) and the total."""
    body = body or QueryIn()
    t, since, until = (
        tenant(request, body),
        millis(body.time_start, "time_start"),
        millis(body.time_end, "time_end"),
    )
    found = await mem.messages(
        session_key=body.session_id, since=since, until=until, limit=body.offset + body.limit, **who(t)
    )
    total = await mem.counts(session_key=body.session_id, since=since, until=until, **who(t))
    return ok({"messages": [_item(m) for m in found[body.offset :]], "total": total.messages})


async def search(mem: Mem, body: SearchIn, request: Request) -> dict[str, Any]:
    """Search L0. Answers ``messages`` (TDAM's server field) and the same list as ``items``, which
    TDAM's Hermes client reads."""
    r = await mem.search_conversations(
        body.query,
        limit=body.limit,
        session_key=body.session_id,
        since=millis(body.time_start, "time_start"),
        until=millis(body.time_end, "time_end"),
        **who(tenant(request, body)),
    )
    hits = [
        {
            "id": h.id,
            "role": h.metadata.get("role"),
            "content": h.content,
            "timestamp": iso(h.metadata.get("timestamp")),
            "session_id": h.metadata.get("session_key"),
            "score": h.score,
        }
        for h in r.hits
    ]
    return ok({"messages": hits, "items": hits})


async def delete(mem: Mem, body: DeleteIn, request: Request) -> dict[str, Any]:
    """Delete messages by id and/or whole sessions (``session_id`` is TDAM's deprecated form)."""
    sessions = [*(body.session_ids or []), *([body.session_id] if body.session_id else [])]
    message_ids = [i.strip() for i in body.message_ids or [] if i.strip()]
    if not message_ids and not [s for s in sessions if s.strip()]:
        raise InputError("At least one of message_ids or session_ids must be provided", item="message_ids")
    deleted = await mem.delete_messages(message_ids, session_keys=sessions, **who(tenant(request, body)))
    return ok({"deleted_count": len(deleted)})


async def count(mem: Mem, request: Request, body: CountIn | None = None) -> dict[str, Any]:
    body = body or CountIn()
    found = await mem.counts(
        session_key=body.session_id,
        since=millis(body.time_start, "time_start"),
        until=millis(body.time_end, "time_end"),
        **who(tenant(request, body)),
    )
    return ok({"total": found.messages})


ROUTES = {"add": add, "query": query, "search": search, "delete": delete, "count": count}
