"""Search memory atoms and raw messages: each route built from its declaration
(``routes.declared``)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway import requests as body
from memstrata.gateway import responses as out
from memstrata.gateway.routes.declared import body_route

router = APIRouter(prefix="/v1", tags=["search"])

body_route(
    router,
    ops.Search,
    body.SearchIn,
    out.SearchOut,
    "Search atoms (L1) and/or messages (L0) of one tenant, fused into one ranking.",
)
body_route(
    router,
    ops.SearchConversations,
    body.ConversationSearchIn,
    out.SearchOut,
    "Search raw messages (L0) only.",
)
