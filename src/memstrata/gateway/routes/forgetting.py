"""Forgetting on purpose: erase a tenant, pin atoms, give them a time to live, sweep, rebuild
(each route built from its declaration, ``routes.declared``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request

from memstrata import operations as ops
from memstrata.gateway.access import check_names, check_user, principal_of
from memstrata.gateway.context import names_in
from memstrata.gateway.requests import ForgetQuery, PinIn, RebuildIn, TtlIn
from memstrata.gateway.responses import AtomOut, ForgetOut, SceneEntryOut, SweepOut
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["forgetting"])


def _reaches_all_of_it(request: Request, arguments: Mapping[str, Any]) -> None:
    """A scoped key erases only what it reaches whole (every agent needs a key for the user); a
    header naming another tenant is refused too (403)."""
    principal = principal_of(request.scope)
    check_names(principal, names_in(request.scope))
    check_user(principal, arguments["user_id"], arguments["agent_id"])


query_route(
    router,
    ops.Forget,
    ForgetOut,
    "Erase a tenant for good (every agent of ``user_id`` unless ``agent_id`` is given): every "
    "layer, index, mirror line and profile file; the database is rewritten so the text is gone "
    "from disk. The user is named explicitly (never taken from headers). Answers what was removed. "
    "A scoped key may erase only what it reaches whole (every agent needs a key for the user).",
    ForgetQuery,
    check=_reaches_all_of_it,
)


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
