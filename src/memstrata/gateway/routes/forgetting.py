"""Forgetting on purpose: erase a tenant, pin atoms, give them a time to live, sweep, rebuild."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from memstrata.gateway.access import check_names, check_user, principal_of, require_admin
from memstrata.gateway.context import Mem, names_in, reply, reply_list, tenant_of, who
from memstrata.gateway.records import AtomOut, ForgetOut, SceneEntryOut, SweepOut
from memstrata.gateway.requests import EmptyIn, OperationBody, PinIn, RebuildIn, TtlIn, parsed
from memstrata.gateway.routes.messages import IdQuery

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


@router.put("/atoms/{atom_id}/pin", response_model=AtomOut)
async def pin_atom(
    mem: Mem, atom_id: str, body: Annotated[OperationBody, Depends(parsed(PinIn))], request: Request
) -> Response:
    """Pin (``pinned: false``: unpin) the current atom in place (409 when it was superseded)."""
    return reply(AtomOut, await mem.pin_atom(atom_id, **body.arguments(), **who(tenant_of(request, body))))


@router.put("/atoms/{atom_id}/ttl", response_model=AtomOut)
async def set_atom_ttl(
    mem: Mem, atom_id: str, body: Annotated[OperationBody, Depends(parsed(TtlIn))], request: Request
) -> Response:
    """Give the current atom a time to live (``expires_at`` or ``ttl_seconds``; neither clears it)."""
    found = await mem.set_atom_ttl(atom_id, **body.arguments(), **who(tenant_of(request, body)))
    return reply(AtomOut, found)


@router.post("/pipeline/sweep", response_model=SweepOut)
async def sweep(mem: Mem, request: Request, body: EmptyIn | None = None) -> Response:
    """Run the retention sweep now (it also runs daily at ``retention.sweep_at``)."""
    require_admin(principal_of(request.scope), "the retention sweep")
    return reply(SweepOut, await mem.sweep())


@router.post("/scenes/rebuild", response_model=list[SceneEntryOut])
async def rebuild_scenes(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(RebuildIn))], request: Request
) -> Response:
    """Re-consolidate the tenant's scenes from its current atoms, then its persona; answers the
    new scene index."""
    return reply_list(SceneEntryOut, await mem.rebuild_scenes(**who(tenant_of(request, body))))
