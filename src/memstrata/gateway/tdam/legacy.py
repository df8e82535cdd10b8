"""TDAM's v1 routes: ``GET /health``, ``POST /recall``, ``/capture``, ``/search/memories``,
``/search/conversations``, ``/session/end``, ``/seed``.

From ``MemoryCore/src/gateway/server.ts`` (handlers) and ``types.ts`` (request and response
fields). ``/recall`` is the host's ``before_prompt`` and ``/capture`` its ``turn_committed``, as
in TDAM's core (``handleBeforeRecall`` / ``handleTurnCommitted``)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import Request
from pydantic import Field, StringConstraints

from memstrata.errors import InputError
from memstrata.gateway.context import Mem, ProbedStatus, who
from memstrata.gateway.tdam.common import TdamBody, ok, tenant
from memstrata.interchange.seed import parse_seed
from memstrata.recall import memory_line

Key = Annotated[str, StringConstraints(min_length=1, max_length=512)]
Query = Annotated[str, StringConstraints(min_length=1, max_length=20_000)]
Limit = Annotated[int, Field(ge=1, le=100)]
STARTED = time.time()


class RecallIn(TdamBody):
    query: Query
    session_key: Key


class CaptureIn(TdamBody):
    user_content: Annotated[str, StringConstraints(min_length=1, max_length=200_000)]
    assistant_content: Annotated[str, StringConstraints(min_length=1, max_length=200_000)]
    session_key: Key
    session_id: Key | None = None
    messages: Annotated[list[dict[str, Any]], Field(max_length=5000)] | None = None


class MemorySearchIn(TdamBody):
    query: Query
    limit: Limit = 5
    type: Annotated[str, StringConstraints(max_length=64)] | None = None
    scene: Annotated[str, StringConstraints(max_length=200)] | None = None


class ConversationSearchIn(TdamBody):
    query: Query
    limit: Limit = 5
    session_key: Key | None = None


class SessionEndIn(TdamBody):
    session_key: Key


class SeedIn(TdamBody):
    data: dict[str, Any] | list[Any]
    session_key: Key | None = None
    strict_round_role: bool | None = None
    auto_fill_timestamps: bool | None = None
    config_override: dict[str, Any] | None = None


async def health(st: ProbedStatus, request: Request) -> dict[str, Any]:
    """Open without a key, like TDAM's (orchestrators probe it); the status is shared by probes."""
    failing = any(s.last_error for s in st.sessions) or any(t.l2_error or t.l3_error for t in st.tenants)
    return {
        "status": "degraded" if failing else "ok",
        "version": request.app.version,
        "uptime": int(time.time() - STARTED),
        "stores": {"vectorStore": True, "embeddingService": st.embedder is not None},
    }


async def recall(mem: Mem, body: RecallIn, request: Request) -> dict[str, Any]:
    r = await mem.before_prompt(body.query, session_key=body.session_key, **who(tenant(request, body)))
    context = "\n\n".join(part for part in (r.system_context, r.prepend_context) if part)
    return {
        "context": context,
        "strategy": r.strategy,
        "memory_count": len(r.hits),
        "code": 0,
        "message": "ok" if not r.degradations else "; ".join(r.degradations),
        "retryable": False,
    }


async def capture(mem: Mem, body: CaptureIn, request: Request) -> dict[str, Any]:
    messages = body.messages or [
        {"role": "user", "content": body.user_content},
        {"role": "assistant", "content": body.assistant_content},
    ]
    r = await mem.turn_committed(
        messages, session_key=body.session_key, session_id=body.session_id, **who(tenant(request, body))
    )
    return {"l0_recorded": len(r.stored), "scheduler_notified": bool(r.stored)}


async def search_memories(mem: Mem, body: MemorySearchIn, request: Request) -> dict[str, Any]:
    kind = body.type or None
    if kind is not None and kind not in ("persona", "episodic", "instruction"):
        raise InputError(f"unknown memory type {kind!r}", item="type")
    r = await mem.search(
        body.query,
        limit=body.limit,
        layers=("L1",),
        type=kind,
        scene=body.scene,
        **who(tenant(request, body)),
    )
    return {"results": "\n".join(memory_line(h, 400) for h in r), "total": len(r), "strategy": r.strategy}


async def search_conversations(mem: Mem, body: ConversationSearchIn, request: Request) -> dict[str, Any]:
    r = await mem.search_conversations(
        body.query, limit=body.limit, session_key=body.session_key, **who(tenant(request, body))
    )
    return {"results": "\n".join(memory_line(h, 400) for h in r), "total": len(r)}


async def session_end(mem: Mem, body: SessionEndIn, request: Request) -> dict[str, Any]:
    await mem.end_session(body.session_key, **who(tenant(request, body)))
    return {"flushed": True}


async def seed(mem: Mem, body: SeedIn, request: Request) -> dict[str, Any]:
    """Import and extract (L1) now, as TDAM's blocking seed does; L2/L3 follow in the background."""
    data: Any = body.data
    if body.session_key:  # the fallback session key of sessions that name none
        sessions = data.get("sessions") if isinstance(data, dict) else data
        for s in sessions if isinstance(sessions, list) else []:
            if isinstance(s, dict) and not s.get("sessionKey"):
                s["sessionKey"] = body.session_key
    started = time.perf_counter()
    r = await mem.import_seed(data, process=True, **who(tenant(request, body)))
    messages = [m for s in parse_seed(data) for m in s.messages]  # valid: the import read it
    return {
        "sessions_processed": r.sessions,
        "rounds_processed": sum(1 for m in messages if str(m.role) == "user"),
        "messages_processed": len(messages),
        "l0_recorded": r.stored,
        "duration_ms": round((time.perf_counter() - started) * 1000),
        "output_dir": "",
    }


async def pipeline_status(mem: Mem) -> dict[str, Any]:
    """``/v2/pipeline/status``: per layer, what is outstanding. memstrata has no task queue: a
    session with unextracted messages counts as a queued L1 task, a tenant with an armed L2
    timer as a queued L2 task, a tenant owed a persona as a queued L3 task."""
    st = await mem.status()
    layers = {
        "l1": sorted({s.session_key for s in st.sessions if s.lag > 0}),
        "l2": sorted({str(t.tenant) for t in st.tenants if t.l2_fire_at is not None}),
        "l3": sorted({str(t.tenant) for t in st.tenants if t.l3_pending}),
    }
    return ok(
        {
            name: {
                "queued": len(keys),
                "running": 0,
                "queued_sessions": keys,
                "running_sessions": [],
                "idle": not keys,
            }
            for name, keys in layers.items()
        }
    )
