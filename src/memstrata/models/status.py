"""What ``status`` reports: the pipeline per session and per tenant, and the memory as a whole."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from memstrata.models.records import Tenant


@dataclass(frozen=True, slots=True)
class SessionStatus:
    tenant: Tenant
    session_key: str
    cursor: int
    pending: int
    lag: int  # stored messages not yet extracted
    fire_at: int | None
    attempts: int
    last_error: str | None


@dataclass(frozen=True, slots=True)
class TenantStatus:
    """A tenant's L2/L3 state as ``status`` reports it."""

    tenant: Tenant
    l2_cursor: int
    l2_fire_at: int | None
    l2_attempts: int
    l2_error: str | None
    new_atoms: int  # consolidated since the last persona
    l3_pending: bool
    l3_attempts: int
    l3_error: str | None
    last_l2: int | None
    last_l3: int | None


QueryProcessState = Literal["off", "starting", "running", "restarting", "given up", "closed"]


@dataclass(frozen=True, slots=True)
class QueryPassReport:
    """An embedder's query side: a server's query process (``embeddings/query_process.py``): its
    state, the passes it ran and its failures (each answered in the server's own process instead)."""

    process: QueryProcessState = "off"
    process_passes: int = 0
    process_failures: int = 0


@dataclass(frozen=True, slots=True)
class QueryEmbeddingStatus:
    """Search queries' embeddings since the memory opened: ``queries`` asked for, ``cached`` of them
    answered from the cache, ``passes`` forward passes run for the rest, ``batched`` queries that
    shared a pass with another, ``largest`` pass, ``wait_ms_max``/``wait_ms_total`` queued behind a
    running pass; ``process``, ``process_passes``, ``process_failures``: a server's query process
    (``QueryPassReport``)."""

    queries: int = 0
    cached: int = 0
    passes: int = 0
    batched: int = 0
    largest: int = 0
    wait_ms_total: float = 0.0
    wait_ms_max: float = 0.0
    cache_entries: int = 0
    process: QueryProcessState = "off"
    process_passes: int = 0
    process_failures: int = 0


@dataclass(frozen=True, slots=True)
class Status:
    """A memory's health. ``embedder`` names the model (None: keyword search only); ``strategy``
    is what a default search runs now (``hybrid`` or ``keyword``); ``vectors_note`` says why stored
    vectors cannot be used; ``unembedded`` counts records waiting for a vector; ``problems`` lists
    what the store found wrong (unreadable files, mirrors out of step, embedding failures, a
    failing retention sweep); ``last_sweep`` is when the retention sweep last ran;
    ``query_embedding``: how search queries were embedded (batched, cached), None without an
    embedder; ``degradations`` counts what the engines got by without since the memory opened."""

    sessions: tuple[SessionStatus, ...]
    messages: int
    atoms: int
    embedder: str | None
    vectors_note: str | None
    tenants: tuple[TenantStatus, ...] = ()
    strategy: str = "keyword"
    unembedded: int = 0
    read_only: bool = False
    problems: tuple[str, ...] = ()
    last_sweep: int | None = None  # when the retention sweep last ran, ms
    query_embedding: QueryEmbeddingStatus | None = None

    # What the engines got by without, by name (see ``models.degradations``): a server without
    # structured outputs, prompts shrunk to fit the context, truncated replies, dropped items.
    degradations: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Counts:
    """How many records a tenant holds per layer (filters apply where they mean something)."""

    messages: int
    atoms: int
    scenes: int
    persona: int  # 1 when the tenant has a persona
