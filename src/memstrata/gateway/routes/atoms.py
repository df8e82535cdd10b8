"""L1: list, get, correct (a new version) and delete memory atoms."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Query, Request, Response

from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.records import AtomOut, DeletedOut
from memstrata.gateway.requests import AtomPatchIn, DeleteAtomsIn, OperationBody, parsed
from memstrata.gateway.routes.messages import IdQuery, Limit, Millis, Seq

router = APIRouter(prefix="/v1", tags=["L1 atoms"])


@router.get("/atoms", response_model=list[AtomOut])
async def list_atoms(
    mem: Mem,
    request: Request,
    user_id: IdQuery = None,
    agent_id: IdQuery = None,
    type: Annotated[str | None, Query(pattern="^(persona|episodic|instruction)$")] = None,
    scene: Annotated[str | None, Query(max_length=200)] = None,
    since: Millis = None,
    until: Millis = None,
    include_superseded: bool = False,
    limit: Limit = 100,
    after_seq: Seq = 0,
    all_tenants: bool = False,
) -> Response:
    """Atoms by ascending seq (current ones unless ``include_superseded``)."""
    t = tenant(request, user_id, agent_id)
    found = await mem.atoms(
        user_id=None if all_tenants else t.user_id,
        agent_id=t.agent_id,
        type=type,
        scene=scene,
        since=since,
        until=until,
        include_superseded=include_superseded,
        limit=limit,
        after_seq=after_seq,
    )
    return reply_list(AtomOut, found)


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
