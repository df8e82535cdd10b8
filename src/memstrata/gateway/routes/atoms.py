"""L1: list, get, correct (a new version) and delete memory atoms."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.records import AtomOut, DeletedOut
from memstrata.gateway.requests import (
    AtomPatchIn,
    AtomsQuery,
    DeleteAtomsIn,
    ListingQuery,
    OperationBody,
    parsed,
    queried,
)
from memstrata.gateway.routes.messages import IdQuery

router = APIRouter(prefix="/v1", tags=["L1 atoms"])


@router.get("/atoms", response_model=list[AtomOut])
async def list_atoms(
    mem: Mem, request: Request, query: Annotated[ListingQuery, Depends(queried(AtomsQuery))]
) -> Response:
    """Atoms by ascending seq (current ones unless ``include_superseded``)."""
    t = tenant(request, query.user_id, query.agent_id)
    if query.all_tenants:
        require_admin(principal_of(request.scope), "all_tenants")
    user = None if query.all_tenants else t.user_id
    return reply_list(AtomOut, await mem.atoms(**query.arguments(), user_id=user, agent_id=t.agent_id))


@router.get("/atoms/{atom_id}", response_model=AtomOut)
async def get_atom(
    mem: Mem, atom_id: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """One atom of the tenant, current or superseded (404 when it has none with this id)."""
    return reply(AtomOut, await mem.get_atom(atom_id, **who(tenant(request, user_id, agent_id))))


@router.patch("/atoms/{atom_id}", response_model=AtomOut)
async def update_atom(
    mem: Mem, atom_id: str, body: Annotated[OperationBody, Depends(parsed(AtomPatchIn))], request: Request
) -> Response:
    """Correct an atom: answers the new version, which supersedes it (409 when it was already
    superseded, unless ``follow``)."""
    found = await mem.update_atom(atom_id, **body.arguments(), **who(tenant_of(request, body)))
    return reply(AtomOut, found)


@router.post("/atoms/delete", response_model=DeletedOut)
async def delete_atoms(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(DeleteAtomsIn))], request: Request
) -> Response:
    """Delete atoms and their older versions; answers the ids deleted."""
    deleted = await mem.delete_atoms(**body.arguments(), **who(tenant_of(request, body)))
    return reply(DeletedOut, DeletedOut(deleted=deleted))
