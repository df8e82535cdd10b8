"""Search memory atoms and raw messages."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.records import SearchOut
from memstrata.gateway.requests import ConversationSearchIn, SearchIn

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchOut)
async def search(mem: Mem, body: SearchIn, request: Request) -> Response:
    """Search atoms (L1) and/or messages (L0) of one tenant, best first by relevance (``score``
    in [0, 1]); hits below ``min_score`` (default: the server's ``search.min_score``) are left out."""
    result = await mem.search(
        body.query,
        limit=body.limit,
        layers=body.layers,
        mode=body.mode,
        min_score=body.min_score,
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
        min_score=body.min_score,
        **who(tenant_of(request, body)),
    )
    return reply(SearchOut, result)
