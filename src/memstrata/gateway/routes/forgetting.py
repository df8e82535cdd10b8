"""Forgetting on purpose: erase a tenant, pin atoms, give them a time to live, sweep, rebuild."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from memstrata import operations as ops
from memstrata.gateway.access import check_names, check_user, principal_of
from memstrata.gateway.context import Mem, names_in, reply
from memstrata.gateway.records import AtomOut, ForgetOut, SceneEntryOut, SweepOut
from memstrata.gateway.requests import PinIn, RebuildIn, TtlIn
from memstrata.gateway.routes.declared import IdQuery, body_route

router = APIRouter(prefix="/v1", tags=["forgetting"])
Required = Annotated[str, Query(min_length=1, max_length=512, description="The user to forget.")]


@router.delete("/tenants", response_model=ForgetOut)
async def forget(mem: Mem, user_id: Required, request: Request, agent_id: IdQuery = None) -> Response:
    """Erase a tenant for good (every agent of ``user_id`` unless ``agent_id`` is given): every
    layer, index, mirror line and profile file; the database is rewritten so the text is gone
    from disk. The user is named explicitly (never taken from headers). Answers what was removed.
    A scoped key may erase only what it reaches whole (every agent needs a key for the user)."""
    principal = principal_of(request.scope)
    check_names(principal, names_in(request.scope))  # a header naming another tenant: 403 too
    check_user(principal, user_id, agent_id)
    return reply(ForgetOut, await mem.forget(user_id=user_id, agent_id=agent_id))


body_route(
    router,
    ops.PinAtom,
    PinIn,
    AtomOut,
    "Pin (``pinned: false``: unpin) the current atom in place (409 when it was superseded).",
)
body_route(
    router,
    ops.SetAtomTtl,
    TtlIn,
    AtomOut,
    "Give the current atom a time to live (``expires_at`` or ``ttl_seconds``; neither clears it).",
)


body_route(
    router,
    ops.Sweep,
    None,
    SweepOut,
    "Run the retention sweep now (it also runs daily at ``retention.sweep_at``).",
    admin="the retention sweep",
)
body_route(
    router,
    ops.RebuildScenes,
    RebuildIn,
    SceneEntryOut,
    "Re-consolidate the tenant's scenes from its current atoms, then its persona; answers the new "
    "scene index.",
)
