"""L0: list, get, delete and count raw messages (all but the listing built from their
declarations, ``routes.declared``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata import operations as ops
from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply_list, tenant
from memstrata.gateway.records import CountsOut, DeletedOut, MessageOut
from memstrata.gateway.requests import (
    CountsQuery,
    DeleteMessagesIn,
    ListingQuery,
    MessagesQuery,
    queried,
)
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["L0 messages"])


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


query_route(
    router, ops.GetMessage, MessageOut, "One message of the tenant (404 when it has none with this id)."
)
body_route(
    router,
    ops.DeleteMessages,
    DeleteMessagesIn,
    DeletedOut,
    "Delete messages by id and/or whole sessions; answers the ids deleted.",
)
query_route(
    router,
    ops.Counts,
    CountsOut,
    "Records per layer: messages (session, time), current atoms (type, time), scenes (name prefix), "
    "persona (0 or 1).",
    CountsQuery,
)
