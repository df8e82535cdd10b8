"""Search memory atoms and raw messages."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata.gateway.context import Mem, reply, tenant_of, who
from memstrata.gateway.records import SearchOut
from memstrata.gateway.requests import ConversationSearchIn, OperationBody, SearchIn, parsed

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchOut)
async def search(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(SearchIn))], request: Request
) -> Response:
    """Search atoms (L1) and/or messages (L0) of one tenant, fused into one ranking."""
    return reply(SearchOut, await mem.search(**body.arguments(), **who(tenant_of(request, body))))


@router.post("/search/conversations", response_model=SearchOut)
async def search_conversations(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(ConversationSearchIn))], request: Request
) -> Response:
    """Search raw messages (L0) only."""
    result = await mem.search_conversations(**body.arguments(), **who(tenant_of(request, body)))
    return reply(SearchOut, result)
