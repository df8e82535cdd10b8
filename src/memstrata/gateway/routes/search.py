"""Search memory atoms and raw messages."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.records import SearchOut
from memstrata.gateway.requests import ConversationSearchIn, SearchIn

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchOut)
async def search(mem: Mem, body: SearchIn, request: Request) -> Response:
    """Search atoms (L1) and/or messages (L0) of one tenant, fused into one ranking."""
    result = await mem.search(
        body.query,
        limit=body.limit,
        layers=body.layers,
        mode=body.mode,
        type=body.type,
        scene=body.scene,
        session_key=body.session_key,
        since=body.since,
        until=body.until,
        include_superseded=body.include_superseded,
        **who(tenant_of(request, body)),
    )
    return reply(SearchOut, result)


@router.post("/search/conversations", response_model=SearchOut)
async def search_conversations(mem: Mem, body: ConversationSearchIn, request: Request) -> Response:
    """Search raw messages (L0) only."""
    result = await mem.search_conversations(
        body.query,
        limit=body.limit,
        session_key=body.session_key,
        mode=body.mode,
        since=body.since,
        until=body.until,
        **who(tenant_of(request, body)),
    )
    return reply(SearchOut, result)
