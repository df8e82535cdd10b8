"""A server's pipeline calls, done by its workers (issue 51).

A server answers requests only: ``end_session``, ``run_all``, ``run_pending`` and an import with
``process`` sent to it run no stage in its process. Each marks its work due in the durable state
the workers poll (a session's L1 timer, a tenant's L2 timer and L3 request: the store is the
queue), then waits until the durable cursors reach what was there when it asked: a session's L1
cursor its last message, a tenant's L2 cursor its last atom, its persona runs the request it made,
no record without a vector. A run that fails meanwhile ends the wait for its key (the failure is
recorded in its state, as a run in the caller's process records it, and retried). Past the
deadline the call raises ``NotDoneError``, and nothing is lost: the messages are stored, the work
stays marked due, and the workers go on with it.
"""

from __future__ import annotations

import asyncio
import time
from asyncio import to_thread
from collections.abc import Callable, Hashable, Iterable
from functools import partial
from typing import TypeVar

from memstrata.errors import NotDoneError
from memstrata.models import Tenant
from memstrata.pipeline.coordinator import Pipeline, RunAllReport
from memstrata.pipeline.l1 import rules as l1_rules
from memstrata.pipeline.l1.scheduler import L1Tally
from memstrata.pipeline.upper import rules as upper_rules
from memstrata.pipeline.upper.scheduler import TenantScheduler
from memstrata.ports import Clock, Store
from memstrata.settings import PipelineSettings

K = TypeVar("K", bound=Hashable)
Key = tuple[Tenant, str]
POLL_SECONDS = 0.2  # how often the durable cursors are read while a call waits for its workers
Done = Callable[[int, int], None]  # (keys done, keys failed) after each change


class Handoff:
    """The pipeline calls of a memory whose pipeline runs in worker processes (a server's)."""

    def __init__(
        self, store: Store, pipeline: Pipeline, clock: Clock, settings: PipelineSettings, wait_seconds: float
    ) -> None:
        self._store = store
        self._pipeline = pipeline
        self._clock = clock
        self._s = settings
        self.wait_seconds = wait_seconds

    def deadline(self) -> float:
        """When a call made now stops waiting (``time.monotonic``)."""
        return time.monotonic() + self.wait_seconds

    async def end_session(self, tenant: Tenant, session_key: str) -> None:
        """The session's backlog extracted by a worker, waited for."""
        await self.sessions([(tenant, session_key)], L1Tally(), self.deadline())

    async def sessions(
        self, keys: Iterable[Key], tally: L1Tally, deadline: float, on_done: Done | None = None
    ) -> None:
        """Every session of ``keys`` with messages after its cursor marked due and waited for;
        ``tally`` counts those that ran and those that failed (atoms: ``atom_counts``)."""
        l1 = self._pipeline.sessions

        def demand() -> dict[Key, int]:
            targets = {key: l1.demand(*key) for key in dict.fromkeys(keys)}
            return {key: seq for key, seq in targets.items() if seq is not None}

        pending = await to_thread(demand)
        tally.runs += len(pending)
        _, failed = await self._wait(
            pending, lambda key, seq: l1.demanded(*key, seq), "sessions still to extract", deadline, on_done
        )
        tally.failed += failed

    async def run_all(self, deadline: float | None = None) -> RunAllReport:
        """``Pipeline.run_all`` by the workers: every session backlog extracted, then L2 on every
        tenant with atoms past its cursor, L3 on every one that needs a persona, and a vector for
        every record."""
        deadline = deadline if deadline is not None else self.deadline()
        await self._pipeline.warm(everything=True)  # a server folds its own recalls' heat
        backlog = await to_thread(self._store.pipeline.backlog)
        keys = [(t, k) for t, k, _ in backlog]
        before = await to_thread(self.atom_counts, [t for t, _ in keys])
        tally = L1Tally()
        await self.sessions(keys, tally, deadline)
        tally.atoms = await to_thread(self.atoms_since, before)
        upper = self._pipeline.tenants
        if upper is None:
            await self._embedded(deadline)
            return RunAllReport(tally.runs, 0, tally.failed, tally.atoms)
        known = await to_thread(self._pipeline.known_tenants)
        l2, l3 = await self._upper(upper, known, known, deadline)
        await self._embedded(deadline)
        states = await to_thread(upper.status)
        failing = {t.tenant for t in states if t.l2_error or t.l3_error}
        return RunAllReport(
            tally.runs, len(l2) + len(l3), tally.failed, tally.atoms, len(failing & set(known))
        )

    async def run_due(self) -> int:
        """``Pipeline.run_due`` by the workers: what is due now done (each session's backlog, each
        tenant's L2 and L3). Returns the sessions and tenants that were due."""
        deadline = self.deadline()
        now = self._clock.now_ms()
        armed = await to_thread(partial(self._store.pipeline.armed, due_by=now))
        keys = [(s.tenant, s.session_key) for s in armed if l1_rules.is_due(s, now)]
        tally = L1Tally()
        await self.sessions(keys, tally, deadline)
        upper = self._pipeline.tenants
        if upper is None:
            return len(keys)
        states = await to_thread(partial(self._store.pipeline.tenants, waiting=True))
        l2 = [s.tenant for s in states if upper_rules.l2_is_due(s, now)]
        l3 = [s.tenant for s in states if upper_rules.l3_is_due(s, now, self._s)]
        await self._upper(upper, l2, l3, deadline)
        return len(keys) + len(set(l2) | set(l3))

    async def _upper(
        self, upper: TenantScheduler, l2: Iterable[Tenant], l3: Iterable[Tenant], deadline: float
    ) -> tuple[list[tuple[Tenant, int]], list[tuple[Tenant, int]]]:
        """L2 of ``l2``'s tenants, then L3 of ``l3``'s, marked due and waited for; returns the
        (tenant, target) pairs each waited for."""
        l2_targets = await to_thread(_targets, l2, upper.demand_l2)
        await self._wait(dict(l2_targets), upper.demanded_l2, "tenants still to consolidate (L2)", deadline)
        l3_targets = await to_thread(_targets, l3, upper.demand_l3)
        await self._wait(dict(l3_targets), upper.demanded_l3, "personas still to write (L3)", deadline)
        return l2_targets, l3_targets

    def atom_counts(self, tenants: Iterable[Tenant]) -> dict[Tenant, int]:
        """Each tenant's current atoms (``atoms_since`` says what a call's runs added)."""
        return {t: self._store.atoms.count(t) for t in dict.fromkeys(tenants)}

    def atoms_since(self, before: dict[Tenant, int]) -> int:
        return sum(max(0, self._store.atoms.count(t) - n) for t, n in before.items())

    async def _embedded(self, deadline: float) -> None:
        """Until no record waits for a vector (the workers embed the backlog on their own)."""
        backlog = self._pipeline.embedding
        await self._wait(
            {"vectors": 0}, lambda _k, _t: not backlog.pending() or None, "records to embed", deadline
        )

    async def _wait(
        self,
        pending: dict[K, int],
        check: Callable[[K, int], bool | None],
        what: str,
        deadline: float,
        on_done: Done | None = None,
    ) -> tuple[int, int]:
        """Read each key's state until ``check`` says it is done (True) or failed (False), or
        ``deadline`` passes (``NotDoneError``). Returns (done, failed)."""
        done = failed = 0
        while pending:

            def poll(keys: list[tuple[K, int]]) -> list[tuple[K, bool]]:
                return [(key, r) for key, target in keys if (r := check(key, target)) is not None]

            for key, ok in await to_thread(poll, list(pending.items())):
                del pending[key]
                done, failed = done + ok, failed + (not ok)
                if on_done is not None:
                    on_done(done, failed)
            if not pending:
                break
            if time.monotonic() >= deadline:
                raise NotDoneError(
                    f"the pipeline's workers did not finish within {self.wait_seconds:g} s: "
                    f"{len(pending)} {what} (is a `memstrata worker` running on this store?). "
                    "Nothing is lost: the work stays marked due in the store and the workers go on "
                    "with it; ask again to wait again."
                )
            await asyncio.sleep(POLL_SECONDS)
        return done, failed


def _targets(tenants: Iterable[Tenant], demand: Callable[[Tenant], int | None]) -> list[tuple[Tenant, int]]:
    return [(t, n) for t in dict.fromkeys(tenants) if (n := demand(t)) is not None]
