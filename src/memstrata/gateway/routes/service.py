"""Health, status, tenants, pipeline control and import."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata import operations as ops
from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, ProbedStatus, check_seed, reply, reply_list, tenant_of, who
from memstrata.gateway.records import (
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
from memstrata.gateway.requests import EmptyIn, ImportIn, OperationBody, PersonaRequestIn, parsed
from memstrata.gateway.routes.declared import body_route

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


@router.get("/status", response_model=StatusOut)
async def status(mem: Mem, request: Request) -> Response:
    """Pipeline queues, cursors, lag and the last error of every session (L1) and tenant (L2/L3),
    and the LLM proxy's counters (its degradations among them)."""
    require_admin(principal_of(request.scope), "the status of every tenant")
    out = StatusOut.model_validate(await mem.status())
    proxy = getattr(request.app.state, "proxy", None)
    if proxy is not None:
        out.proxy = proxy.stats.snapshot()
    return reply(StatusOut, out)


@router.get("/tenants", response_model=list[TenantOut])
async def tenants(mem: Mem, request: Request) -> Response:
    """Every tenant with messages or scenes."""
    require_admin(principal_of(request.scope), "listing tenants")
    return reply_list(TenantOut, await mem.tenants())


@router.post("/pipeline/run", response_model=RunsOut)
async def run_pending(mem: Mem, request: Request, body: EmptyIn | None = None) -> Response:
    """Run every pipeline stage that is due now, until none is (the background loop does this
    on its own)."""
    require_admin(principal_of(request.scope), "running the pipeline")
    return reply(RunsOut, RunsOut(runs=await mem.run_pending()))


@router.post("/pipeline/run-all", response_model=RunAllOut)
async def run_all(mem: Mem, request: Request, body: EmptyIn | None = None) -> Response:
    """Process everything now, due or not: L1 on every backlog, then L2 and L3."""
    require_admin(principal_of(request.scope), "running the pipeline")
    return reply(RunAllOut, await mem.run_all())


body_route(
    router,
    ops.RequestPersona,
    PersonaRequestIn,
    DoneOut,
    "Ask for the tenant's persona to be rewritten at the next pipeline run.",
)


@router.post("/repair", response_model=RepairedOut)
async def repair(mem: Mem, request: Request, body: EmptyIn | None = None) -> Response:
    """Make the store and the profile files whole again (mirrors, unreadable scene and persona
    files); answers one line per repair."""
    require_admin(principal_of(request.scope), "repairing the store")
    return reply(RepairedOut, RepairedOut(repaired=await mem.repair()))


@router.post("/reindex", response_model=EmbeddedOut)
async def reindex(mem: Mem, request: Request, body: EmptyIn | None = None) -> Response:
    """Embed every record without a vector (all of them after an embedder change)."""
    require_admin(principal_of(request.scope), "reindexing the store")
    return reply(EmbeddedOut, EmbeddedOut(embedded=await mem.reindex()))


@router.post("/import", response_model=ImportOut)
async def import_seed(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(ImportIn))], request: Request
) -> Response:
    """Import seed history; sessions naming no tenant go to the request's tenant."""
    check_seed(request, body.arguments()["data"])
    found = await mem.import_seed(**body.arguments(), **who(tenant_of(request, body)))
    return reply(ImportOut, found)
