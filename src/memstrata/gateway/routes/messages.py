"""L0: list, get, delete and count raw messages, each route built from its declaration
(``routes.declared``)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway.requests import CountsQuery, DeleteMessagesIn, MessagesQuery
from memstrata.gateway.responses import CountsOut, DeletedOut, MessageOut
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["L0 messages"])


query_route(
    router,
    ops.Messages,
    MessageOut,
    "Stored messages by ascending seq (page with ``after_seq``); ``all_tenants`` lists every tenant "
    "(administration).",
    MessagesQuery,
)
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
