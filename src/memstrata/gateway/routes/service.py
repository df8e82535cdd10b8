"""Health, status, tenants, pipeline control and import."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata.gateway.context import Mem, ProbedStatus, reply, reply_list, tenant_of, who
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

router = APIRouter(prefix="/v1", tags=["service"])


@router.get("/health", response_model=HealthOut)
async def health(st: ProbedStatus, request: Request) -> Response:
    """Liveness and a summary: version, store, embedder, pipeline lag and the last errors (at
    most 2 s old: probes share one status). Open without a key."""
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
        last_errors=errors[:20],
    )
    return reply(HealthOut, health)


@router.get("/status", response_model=StatusOut)
async def status(mem: Mem) -> Response:
    """Pipeline queues, cursors, lag and the last error of every session (L1) and tenant (L2/L3)."""
    return reply(StatusOut, await mem.status())


@router.get("/tenants", response_model=list[TenantOut])
async def tenants(mem: Mem) -> Response:
    """Every tenant with messages or scenes."""
    return reply_list(TenantOut, await mem.tenants())


@router.post("/pipeline/run", response_model=RunsOut)
async def run_pending(mem: Mem, body: EmptyIn | None = None) -> Response:
    """Run every pipeline stage that is due now, until none is (the background loop does this
    on its own)."""
    return reply(RunsOut, RunsOut(runs=await mem.run_pending()))


@router.post("/pipeline/run-all", response_model=RunAllOut)
async def run_all(mem: Mem, body: EmptyIn | None = None) -> Response:
    """Process everything now, due or not: L1 on every backlog, then L2 and L3."""
    return reply(RunAllOut, await mem.run_all())


@router.post("/persona/request", response_model=DoneOut)
async def request_persona(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(PersonaRequestIn))], request: Request
) -> Response:
    """Ask for the tenant's persona to be rewritten at the next pipeline run."""
    await mem.request_persona(**body.arguments(), **who(tenant_of(request, body)))
    return reply(DoneOut, DoneOut())


@router.post("/repair", response_model=RepairedOut)
async def repair(mem: Mem, body: EmptyIn | None = None) -> Response:
    """Make the store and the profile files whole again (mirrors, unreadable scene and persona
    files); answers one line per repair."""
    return reply(RepairedOut, RepairedOut(repaired=await mem.repair()))


@router.post("/reindex", response_model=EmbeddedOut)
async def reindex(mem: Mem, body: EmptyIn | None = None) -> Response:
    """Embed every record without a vector (all of them after an embedder change)."""
    return reply(EmbeddedOut, EmbeddedOut(embedded=await mem.reindex()))


@router.post("/import", response_model=ImportOut)
async def import_seed(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(ImportIn))], request: Request
) -> Response:
    """Import seed history; sessions naming no tenant go to the request's tenant."""
    found = await mem.import_seed(**body.arguments(), **who(tenant_of(request, body)))
    return reply(ImportOut, found)
