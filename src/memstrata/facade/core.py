"""What every part of the facade shares: the parts a memory is made of, the pipeline built from
them, and the checks every writing method makes."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from memstrata.errors import ReadOnlyError
from memstrata.forgetting.sweep import Sweeper, SweepPolicy
from memstrata.layers.l0.recorder import Recorder
from memstrata.models import (
    Tenant,
)
from memstrata.pipeline.coordinator import Pipeline
from memstrata.pipeline.embedding import EmbeddingBacklog
from memstrata.pipeline.l1.runner import L1Runner
from memstrata.pipeline.l1.scheduler import Scheduler
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.retrieval.search import Searcher
from memstrata.settings import Settings
from memstrata.wiring import Parts

Progress = Callable[[str, int, int], None]  # (stage, done, total)


class FacadeCore:
    """The state behind ``AsyncMemory``: built from ``Parts`` by ``AsyncMemory.open``. Parts
    without ``upper`` (scene and persona stores and writers) make a memory whose pipeline stops at
    L1 (tests of L1 rules use that)."""

    def __init__(self, parts: Parts, settings: Settings) -> None:
        self.settings = settings
        self.read_only = parts.read_only
        self._store = parts.store
        self._clock = parts.clock
        self._vectors = parts.vectors
        self._upper = parts.upper
        self._searcher = Searcher(parts.store, parts.vectors, parts.clock.now_ms)
        p = settings.pipeline
        runner = L1Runner(parts.store, parts.extractor, parts.deduplicator, parts.vectors, parts.clock, p)
        tenants = None
        if parts.upper is not None:
            tenants = TenantScheduler(parts.store, parts.upper, parts.clock, p, settings.persona)
        self._scheduler = Scheduler(
            parts.store, runner, parts.clock, p, tenants.on_l1_atoms if tenants else None
        )
        backlog = EmbeddingBacklog(parts.store, parts.vectors, parts.clock, p.retry_delay_seconds)
        sweeper = Sweeper(
            parts.store,
            parts.clock,
            SweepPolicy.of(settings),
            tenants.hold if tenants else None,
            tenants.on_removed if tenants else None,
        )
        self._pipeline = Pipeline(
            parts.store, self._scheduler, tenants, backlog, parts.clock, sweeper, parts.degradations
        )
        self._recorder = Recorder(
            parts.store,
            parts.clock,
            parts.vectors,
            max_chars=settings.capture.max_message_chars,
            with_previous=settings.search.context_previous,
            on_stored=self._scheduler.on_capture,
        )
        if not self.read_only:
            self._pipeline.recover()
        self._background: asyncio.Task[None] | None = None

    def _writable(self, what: str) -> None:
        if self.read_only:
            raise ReadOnlyError(f"cannot {what}: this memory was opened read-only")

    def _forgotten(self, tenant: Tenant) -> None:
        """Drop what this process holds in memory for an erased tenant (sessions to flush on
        close; topic classes add their own)."""
        self._scheduler.forget(tenant)

    def _tenant_lock(self, tenant: Tenant) -> contextlib.AbstractAsyncContextManager[object]:
        """The tenant's L2/L3 lock, so a scene or persona edit never races a run."""
        if self._upper is None:
            return contextlib.nullcontext()
        return self._pipeline.tenants_hold(tenant)
