"""L1: list, get, correct (a new version) and delete memory atoms (all but the listing built
from their declarations, ``routes.declared``)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata import operations as ops
from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply_list, tenant
from memstrata.gateway.records import AtomOut, DeletedOut
from memstrata.gateway.requests import (
    AtomPatchIn,
    AtomsQuery,
    DeleteAtomsIn,
    ListingQuery,
    queried,
)
from memstrata.gateway.routes.declared import body_route, query_route

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


query_route(
    router,
    ops.GetAtom,
    AtomOut,
    "One atom of the tenant, current or superseded (404 when it has none with this id).",
)
body_route(
    router,
    ops.UpdateAtom,
    AtomPatchIn,
    AtomOut,
    "Correct an atom: answers the new version, which supersedes it (409 when it was already "
    "superseded, unless ``follow``).",
)
body_route(
    router,
    ops.DeleteAtoms,
    DeleteAtomsIn,
    DeletedOut,
    "Delete atoms and their older versions; answers the ids deleted.",
)
