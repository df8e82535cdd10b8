"""L1: list, get, correct (a new version) and delete memory atoms, each route built from its
declaration (``routes.declared``)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway.requests import AtomPatchIn, AtomsQuery, DeleteAtomsIn
from memstrata.gateway.responses import AtomOut, DeletedOut
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["L1 atoms"])


query_route(
    router,
    ops.Atoms,
    AtomOut,
    "Atoms by ascending seq (current ones unless ``include_superseded``).",
    AtomsQuery,
)
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
