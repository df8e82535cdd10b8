"""The whole pipeline: L1 per session, then L2 and L3 per tenant (when the memory has them).

``run_due`` drives everything that is due to idle; ``run_all`` processes every backlog now, due or
not (import, CLI); ``serve`` is the background loop.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass

from memstrata.models import Tenant
from memstrata.pipeline.l1.scheduler import Scheduler
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.ports import Clock, Store

IDLE_POLL_SECONDS = 5.0


@dataclass(frozen=True, slots=True)
class RunAllReport:
    """Runs attempted by ``run_all``, per layer."""

    l1: int
    upper: int  # L2 and L3 runs


class Pipeline:
    """L1 sessions and, when present, L2/L3 tenants, driven together."""

    def __init__(
        self, store: Store, sessions: Scheduler, tenants: TenantScheduler | None, clock: Clock
    ) -> None:
        self._store = store
        self.sessions = sessions
        self.tenants = tenants
        self._clock = clock
        self._wake: asyncio.Event | None = None

    def recover(self) -> None:
        """Re-arm L1 backlogs, restore L2/L3 runs a crash interrupted and arm L2 for atoms that
        have no timer."""
        self.sessions.recover()
        if self.tenants is not None:
            self.tenants.recover(self.known_tenants())

    def wake(self) -> None:
        """Tell the background loop to look again (call from the event loop's thread)."""
        if self._wake is not None:
            self._wake.set()

    async def run_due(self) -> int:
        """Run every stage that is due now, L1 first, until none is. Returns runs attempted."""
        ran = 0
        while True:
            step = await self.sessions.run_due()
            if self.tenants is not None:
                step += await self.tenants.run_due()
            if not step:
                return ran
            ran += step

    async def run_all(self) -> RunAllReport:
        """L1 on every session backlog, then L2 and L3 on every tenant with new atoms, due or not."""
        l1 = await self.sessions.flush()
        if self.tenants is None:
            return RunAllReport(l1, 0)
        known = await asyncio.to_thread(self.known_tenants)
        return RunAllReport(l1, await self.tenants.flush(known))

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
            timers = [await asyncio.to_thread(self.sessions.next_fire)]
            if self.tenants is not None:
                timers.append(await asyncio.to_thread(self.tenants.next_fire))
            armed = [t for t in timers if t is not None]
            delay = (min(armed) - self._clock.now_ms()) / 1000 if armed else IDLE_POLL_SECONDS
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake.wait(), timeout=min(max(delay, 0.05), IDLE_POLL_SECONDS))
            self._wake.clear()
