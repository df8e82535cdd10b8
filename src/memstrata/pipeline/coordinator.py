"""The whole pipeline: the embedding backlog, L1 per session, then L2 and L3 per tenant (when the
memory has them), and the daily retention sweep (``forgetting.sweep``).

``run_due`` drives everything that is due to idle; ``run_all`` processes every backlog now, due or
not (import, CLI); ``serve`` is the background loop. ``exclusive()`` holds every stage off while a
caller writes several layers at once (a TencentDB-Agent-Memory import).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from asyncio import to_thread
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass

from memstrata.errors import ConfigError
from memstrata.forgetting.sweep import Sweeper
from memstrata.models import Degradations, Status, Tenant
from memstrata.pipeline.embedding import EmbeddingBacklog
from memstrata.pipeline.l1.scheduler import L1Tally, Scheduler
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.ports import Clock, Store
from memstrata.recall.heat import HeatLedger
from memstrata.retrieval.reindex import stale_index
from memstrata.retrieval.vectors import VectorState

IDLE_POLL_SECONDS = 5.0
HEAT_FLUSH_SECONDS = 10.0  # recalls' heat notes wait at most about this long (plus a poll)
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RunAllReport:
    """What ``run_all`` did, per layer: runs attempted (``l1`` sessions, ``upper`` L2 and L3
    runs), how many failed (each is recorded in ``status`` and retried later) and the atoms L1
    committed. ``l1`` is 0 when every session was already extracted (by ``end_session`` or the
    background loop): ``atoms`` then is 0 too, and the store's count is in ``status``."""

    l1: int
    upper: int  # L2 and L3 runs
    l1_failed: int = 0
    atoms: int = 0
    upper_failed: int = 0  # tenants whose L2 or L3 run is failing after this call

    @property
    def ok(self) -> bool:
        """Nothing failed."""
        return not (self.l1_failed or self.upper_failed)


class Pipeline:
    """L1 sessions and, when present, L2/L3 tenants, driven together."""

    def __init__(
        self,
        store: Store,
        sessions: Scheduler,
        tenants: TenantScheduler | None,
        embedding: EmbeddingBacklog,
        clock: Clock,
        sweeper: Sweeper | None = None,
        degradations: Degradations | None = None,
    ) -> None:
        self._store = store
        self.degradations = degradations if degradations is not None else Degradations()
        self.sessions = sessions
        self.tenants = tenants
        self.embedding = embedding
        self.sweeper = sweeper
        self._clock = clock
        self._wake: asyncio.Event | None = None
        self._exclusive: asyncio.Lock | None = None
        self.heat = HeatLedger()
        # How long the loop sleeps with no timer armed: a capture in this process wakes it sooner;
        # a worker's captures come from other processes, so it looks more often.
        self.idle_poll = IDLE_POLL_SECONDS

    @contextlib.asynccontextmanager
    async def exclusive(self) -> AsyncIterator[None]:
        """No stage runs while the caller holds this (stages in flight finish first)."""
        async with self._lock():
            yield

    def _lock(self) -> asyncio.Lock:
        if self._exclusive is None:
            self._exclusive = asyncio.Lock()
        return self._exclusive

    def recover(self) -> None:
        """Re-arm L1 backlogs, restore L2/L3 runs a crash interrupted and arm L2 for atoms that
        have no timer."""
        self.sessions.recover()
        if self.tenants is not None:
            self.tenants.recovery.recover(self.known_tenants())

    def wake(self) -> None:
        """Tell the background loop to look again (call from the event loop's thread)."""
        if self._wake is not None:
            self._wake.set()

    async def warm(self, *, everything: bool = False) -> None:
        """Fold recalls' heat notes into the scenes: those older than ``HEAT_FLUSH_SECONDS``, or
        all of them. Each tenant under its L2/L3 lock; a failure is logged (heat is a hint)."""
        if self.tenants is None:
            return
        now = self._clock.now_ms()
        for tenant in self.heat.due(now, 0 if everything else round(HEAT_FLUSH_SECONDS * 1000)):
            try:
                async with self.tenants.hold(tenant):
                    notes = self.heat.take(tenant)
                    await to_thread(self.tenants.warm, tenant, notes)
            except Exception as exc:  # noqa: BLE001 - heat is a hint: never worth a failed run
                log.warning("raising the scene heat of %s failed: %s", tenant, exc)

    async def run_due(self) -> int:
        """Run every stage that is due now, vectors and L1 first, until none is. Returns runs
        attempted (an embedding batch counts as one)."""
        ran = 0
        await self.warm()
        async with self._lock():
            while True:
                step = await self._sweep_due()
                step += 1 if await to_thread(self.embedding.drain) else 0
                step += await self.sessions.run_due()
                if self.tenants is not None:
                    step += await self.tenants.run_due()
                if not step:
                    return ran
                ran += step

    async def run_all(self) -> RunAllReport:
        """Vectors for every record without one, L1 on every session backlog, then L2 and L3 on
        every tenant with new atoms, due or not."""
        await self.warm(everything=True)
        async with self._lock():
            await self._sweep_due()
            while await to_thread(functools.partial(self.embedding.drain, force=True)):
                pass
            tally = L1Tally()
            await self.sessions.flush(tally=tally)
            if self.tenants is None:
                return RunAllReport(tally.runs, 0, tally.failed, tally.atoms)
            known = await to_thread(self.known_tenants)
            upper = await self.tenants.flush(known)
            states = await to_thread(self.tenants.status)
            failing = {t.tenant for t in states if t.l2_error or t.l3_error}
            return RunAllReport(tally.runs, upper, tally.failed, tally.atoms, len(failing & set(known)))

    async def _sweep_due(self) -> int:
        """Run the retention sweep when it is due; 1 when it removed or flagged anything. A failure
        is recorded in the sweep's state (``status``) and retried later, never raised here."""
        if self.sweeper is None:
            return 0
        try:
            report = await self.sweeper.run_due()
        except Exception:  # noqa: BLE001 - recorded by the sweeper; other stages go on
            return 0
        return int(report is not None and (report.removed() + report.marked) > 0)

    def tenants_hold(self, tenant: Tenant) -> contextlib.AbstractAsyncContextManager[None]:
        """The tenant's L2/L3 lock: every write to its scenes, index or persona happens under it."""
        assert self.tenants is not None
        return self.tenants.hold(tenant)

    def on_atoms(self, tenant: Tenant) -> None:
        """Atoms were written for ``tenant`` outside L1 (an import): arm its L2 timer."""
        if self.tenants is not None:
            self.tenants.on_l1_atoms(tenant)

    def on_removed(self, tenant: Tenant, scenes: Sequence[str]) -> None:
        """Atoms of ``tenant`` were removed: its scenes that held them and its persona are rewritten."""
        if self.tenants is not None:
            self.tenants.on_removed(tenant, scenes)

    def request_persona(self, tenant: Tenant, reason: str) -> None:
        if self.tenants is None:
            raise ConfigError("this memory has no L2/L3 pipeline")
        self.tenants.request_persona(tenant, reason)

    def status(self, vectors: VectorState, read_only: bool) -> Status:
        """Every session's and tenant's state, counts, the embedder and what is degraded."""
        problems = [f"embedding backlog: {self.embedding.last_error}"] if self.embedding.last_error else []
        sweep_problem = self.sweeper.problem() if self.sweeper is not None else None
        problems += [sweep_problem] if sweep_problem else []
        problems += self._store.check()
        problems += [stale] if (stale := stale_index(self._store.index)) else []
        if self.tenants is not None:
            problems += [str(p) for p in self.tenants.recovery.file_problems(self.known_tenants())]
        return Status(
            tuple(self.sessions.status()),
            self._store.messages.count(None),
            self._store.atoms.count(None),
            vectors.embedder.name if vectors.embedder else None,
            vectors.note,
            tuple(self.tenants.status()) if self.tenants is not None else (),
            strategy="hybrid" if vectors.embedder is not None and vectors.note is None else "keyword",
            unembedded=self.embedding.pending(),
            read_only=read_only,
            problems=tuple(problems),
            last_sweep=self.sweeper.last_run() if self.sweeper is not None else None,
            query_embedding=vectors.queries.status() if vectors.queries is not None else None,
            degradations=self.degradations.snapshot(),
        )

    def known_tenants(self) -> list[Tenant]:
        """Tenants the pipeline has state for (sessions or L2/L3), in first-seen order."""
        found = [s.tenant for s in self._store.pipeline.sessions()]
        found += [s.tenant for s in self._store.pipeline.tenants()]
        return list(dict.fromkeys(found))

    async def serve(self) -> None:
        """Background loop: run what is due, sleep until the next timer or a capture wakes it."""
        self._wake = asyncio.Event()
        while True:
            await self.run_due()
            timers = [await to_thread(self.sessions.next_fire)]
            if self.tenants is not None:
                timers.append(await to_thread(self.tenants.next_fire))
            if self.sweeper is not None:
                timers.append(await to_thread(self.sweeper.next_fire))
            timers.append(self.embedding.next_fire())
            armed = [t for t in timers if t is not None]
            delay = (min(armed) - self._clock.now_ms()) / 1000 if armed else self.idle_poll
            # asyncio.timeout, not wait_for: on Python 3.11 wait_for swallows a cancel that arrives
            # as the event is set (a capture right before close), and the loop then never stopped.
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(min(max(delay, 0.05), self.idle_poll)):
                    await self._wake.wait()
            self._wake.clear()
