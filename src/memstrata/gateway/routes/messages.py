"""L0: list, get, delete and count raw messages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.records import CountsOut, DeletedOut, MessageOut
from memstrata.gateway.requests import (
    CountsQuery,
    DeleteMessagesIn,
    ListingQuery,
    MessagesQuery,
    OperationBody,
    OperationQuery,
    parsed,
    queried,
)

router = APIRouter(prefix="/v1", tags=["L0 messages"])
IdQuery = Annotated[str | None, Query(min_length=1, max_length=512)]


@router.get("/messages", response_model=list[MessageOut])
async def list_messages(
    mem: Mem, request: Request, query: Annotated[ListingQuery, Depends(queried(MessagesQuery))]
) -> Response:
    """Stored messages by ascending seq (page with ``after_seq``); ``all_tenants`` lists every
    tenant (administration)."""
    t = tenant(request, query.user_id, query.agent_id)
    if query.all_tenants:
        require_admin(principal_of(request.scope), "all_tenants")
    user = None if query.all_tenants else t.user_id
    return reply_list(MessageOut, await mem.messages(**query.arguments(), user_id=user, agent_id=t.agent_id))


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
    mem: Mem, request: Request, query: Annotated[OperationQuery, Depends(queried(CountsQuery))]
) -> Response:
    """Records per layer: messages (session, time), current atoms (type, time), scenes (name
    prefix), persona (0 or 1)."""
    found = await mem.counts(**query.arguments(), **who(tenant(request, query.user_id, query.agent_id)))
    return reply(CountsOut, found)
