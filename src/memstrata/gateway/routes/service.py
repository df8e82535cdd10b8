"""Health, status, tenants, pipeline control and import (all but health built from their
declarations, ``routes.declared``; health runs no operation: it answers from the status shared by
probes, without a key)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import APIRouter, Request, Response

from memstrata import operations as ops
from memstrata.gateway.access import principal_of
from memstrata.gateway.context import ProbedStatus, check_seed, reply
from memstrata.gateway.requests import ImportIn, PersonaRequestIn
from memstrata.gateway.responses import (
    DoneOut,
    EmbeddedOut,
    HealthOut,
    ImportOut,
    PipelineHealth,
    RepairedOut,
    RunAllOut,
    RunsOut,
    StatusOut,
    TenantOut,
)
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["service"])


@router.get("/health", response_model=HealthOut)
async def health(st: ProbedStatus, request: Request) -> Response:
    """Liveness and a summary: version, store, embedder, pipeline lag and the number of failing
    sessions and tenants (at most 2 s old: probes share one status). Open without a key; the
    errors themselves name tenants, sessions and scene files, so only the admin key sees them."""
    errors = [f"{s.tenant} {s.session_key}: {s.last_error}" for s in st.sessions if s.last_error]
    errors += [f"{t.tenant} L2: {t.l2_error}" for t in st.tenants if t.l2_error]
    errors += [f"{t.tenant} L3: {t.l3_error}" for t in st.tenants if t.l3_error]
    errors += list(st.problems)
    pipeline = PipelineHealth(
        sessions=len(st.sessions), lag=sum(s.lag for s in st.sessions), failing=len(errors)
    )
    health = HealthOut(
        status="degraded" if errors else "ok",
        version=request.app.version,
        store=request.app.state.store_name,
        embedder=st.embedder,
        pipeline=pipeline,
        last_errors=errors[:20] if principal_of(request.scope).admin else [],
    )
    return reply(HealthOut, health)


def _with_proxy(request: Request, status: Any) -> StatusOut:
    """The memory's status and the server's own: its LLM proxy's counters."""
    out = StatusOut.model_validate(status)
    proxy = getattr(request.app.state, "proxy", None)
    if proxy is not None:
        out.proxy = proxy.stats.snapshot()
    return out


query_route(
    router,
    ops.Status,
    StatusOut,
    "Pipeline queues, cursors, lag and the last error of every session (L1) and tenant (L2/L3), "
    "and the LLM proxy's counters (its degradations among them).",
    admin="the status of every tenant",
    answer=_with_proxy,
)

query_route(router, ops.Tenants, TenantOut, "Every tenant with messages or scenes.", admin="listing tenants")
body_route(
    router,
    ops.RunPending,
    None,
    RunsOut,
    "Run every pipeline stage that is due now, until none is (the background loop does this on its own).",
    admin="running the pipeline",
)
body_route(
    router,
    ops.RunAll,
    None,
    RunAllOut,
    "Process everything now, due or not: L1 on every backlog, then L2 and L3.",
    admin="running the pipeline",
)
body_route(
    router,
    ops.RequestPersona,
    PersonaRequestIn,
    DoneOut,
    "Ask for the tenant's persona to be rewritten at the next pipeline run.",
)
body_route(
    router,
    ops.Repair,
    None,
    RepairedOut,
    "Make the store and the profile files whole again (mirrors, unreadable scene and persona "
    "files); answers one line per repair.",
    admin="repairing the store",
)
body_route(
    router,
    ops.Reindex,
    None,
    EmbeddedOut,
    "Embed every record without a vector (all of them after an embedder change).",
    admin="reindexing the store",
)


def _seed_tenants(request: Request, arguments: Mapping[str, Any]) -> None:
    check_seed(request, arguments["data"])


body_route(
    router,
    ops.ImportSeed,
    ImportIn,
    ImportOut,
    "Import seed history; sessions naming no tenant go to the request's tenant.",
    check=_seed_tenants,
)
