"""L0: list, get, delete and count raw messages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.records import CountsOut, DeletedOut, MessageOut
from memstrata.gateway.requests import DeleteMessagesIn, OperationBody, parsed

router = APIRouter(prefix="/v1", tags=["L0 messages"])
IdQuery = Annotated[str | None, Query(min_length=1, max_length=512)]
Millis = Annotated[int | None, Query(ge=0, le=10**15)]
Limit = Annotated[int, Query(ge=1, le=1000)]
Seq = Annotated[int, Query(ge=0, le=2**62)]
Text = Annotated[str | None, Query(min_length=1, max_length=512)]


@router.get("/messages", response_model=list[MessageOut])
async def list_messages(
    mem: Mem,
    request: Request,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    session_key: Text = None,
    since: Millis = None,
    until: Millis = None,
    limit: Limit = 100,
    after_seq: Seq = 0,
    all_tenants: bool = False,
) -> Response:
    """Stored messages by ascending seq (page with ``after_seq``); ``all_tenants`` lists every
    tenant (administration)."""
    t = tenant(request, user_id, agent_id)
    found = await mem.messages(
        user_id=None if all_tenants else t.user_id,
        agent_id=t.agent_id,
        session_key=session_key,
        since=since,
        until=until,
        limit=limit,
        after_seq=after_seq,
    )
    return reply_list(MessageOut, found)


@router.get("/messages/{message_id:path}", response_model=MessageOut)
async def get_message(
    mem: Mem, message_id: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """One message of the tenant (404 when it has none with this id)."""
    found = await mem.get_message(message_id, **who(tenant(request, user_id, agent_id)))
    return reply(MessageOut, found)


@router.post("/messages/delete", response_model=DeletedOut)
async def delete_messages(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(DeleteMessagesIn))], request: Request
) -> Response:
    """Delete messages by id and/or whole sessions; answers the ids deleted."""
    deleted = await mem.delete_messages(**body.arguments(), **who(tenant_of(request, body)))
    return reply(DeletedOut, DeletedOut(deleted=deleted))


@router.get("/counts", response_model=CountsOut)
async def counts(
    mem: Mem,
    request: Request,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    session_key: Text = None,
    type: Annotated[str | None, Query(pattern="^(persona|episodic|instruction)$")] = None,
    since: Millis = None,
    until: Millis = None,
    scene_prefix: Annotated[str | None, Query(max_length=512)] = None,
) -> Response:
    """Records per layer: messages (session, time), current atoms (type, time), scenes (name
    prefix), persona (0 or 1)."""
    found = await mem.counts(
        session_key=session_key,
        type=type,
        since=since,
        until=until,
        scene_prefix=scene_prefix,
        **who(tenant(request, user_id, agent_id)),
    )
    return reply(CountsOut, found)
