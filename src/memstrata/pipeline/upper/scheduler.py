"""When L2 and L3 run, per tenant. All state lives in the store (``TenantState``); this object
holds locks only, so a restart resumes where the last process stopped.

One run per tenant at a time (L2 and L3 share the tenant's lock, and its lease across processes:
both touch its scenes and persona); at most ``workers`` runs at once across tenants. Each run is
bracketed by a backup: the backup id is saved before the engine starts and cleared when the run
ends, and a failure restores it, so a layer is never left half-written. A run a crash interrupted
is restored by whoever claims the tenant next (``recovery``: on open, or before a run of another
process once the dead one's lease is gone). L2 and L3 runs share one skeleton (``_run``): the
tenant's lock and lease, an interrupted run restored, the layer's step, and on failure its backup
restored and the failure recorded.
"""

from __future__ import annotations

import asyncio
import logging
from asyncio import to_thread
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from functools import partial
from typing import TypeVar

from memstrata.models import AtomFilter, Tenant, TenantState, TenantStatus
from memstrata.pipeline.keyed import KeyedRuns, StateBook, claimed, lease_key, log_failure, waited
from memstrata.pipeline.upper import rules
from memstrata.pipeline.upper.l2_runner import L2Report, L2Runner
from memstrata.pipeline.upper.l3_runner import L3Report, L3Runner
from memstrata.pipeline.upper.recovery import UpperRecovery
from memstrata.ports import Clock, Store, UpperLayers
from memstrata.recall.heat import warm_scenes
from memstrata.settings import PersonaSettings, PipelineSettings

log = logging.getLogger(__name__)
R = TypeVar("R")
# How long a write to a tenant's profile waits for an L2 or L3 run another process is doing.
HOLD_SECONDS = 30.0
_PAGE = 1000  # atoms read at once looking for a tenant's last one


class _Undo:
    """How to put a layer back if its run fails, set once the run has made its backup."""

    restore: Callable[[], None] | None = None


class TenantScheduler:
    """Arms, runs and records L2 and L3 per tenant (see the module docstring)."""

    def __init__(
        self,
        store: Store,
        upper: UpperLayers,
        clock: Clock,
        settings: PipelineSettings,
        persona: PersonaSettings,
    ) -> None:
        self._store = store
        self._upper = upper
        self._clock = clock
        self._s = settings
        self._p = persona
        self._l2 = L2Runner(store, upper, clock, settings, persona)
        self._l3 = L3Runner(store, upper, clock)
        self._runs: KeyedRuns[Tenant] = KeyedRuns(settings.workers)
        self._book: StateBook[Tenant, TenantState] = StateBook(store.pipeline.update_tenant)
        self.recovery = UpperRecovery(store, upper, clock, settings, self._book.mutate)

    # --- state transitions (sync: called from worker threads too) -----------------------------

    def _mutate(self, tenant: Tenant, change: Callable[[TenantState], object]) -> TenantState:
        return self._book.mutate(tenant, change)

    def on_l1_atoms(self, tenant: Tenant) -> None:
        """An L1 run wrote atoms for ``tenant``: arm its L2 timer (downward-only)."""
        now = self._clock.now_ms()
        self._mutate(tenant, lambda st: rules.on_l1_atoms(st, now, self._s))

    def request_persona(self, tenant: Tenant, reason: str) -> None:
        """An explicit L3 request (coalesced with any pending one)."""
        self._mutate(tenant, lambda st: rules.request_l3(st, [reason]))

    def on_removed(self, tenant: Tenant, scenes: Iterable[str]) -> None:
        """Atoms of ``tenant`` were removed: rewrite the ``scenes`` that held them and the persona."""
        names = tuple(scenes)
        has_persona = self._upper.persona.read(tenant) is not None
        now = self._clock.now_ms()
        self._mutate(tenant, lambda st: rules.on_removed(st, names, has_persona, now))

    def request_rebuild(self, tenant: Tenant) -> None:
        """Re-consolidate the tenant's scenes from its current atoms at the next L2 run."""
        now = self._clock.now_ms()
        self._mutate(tenant, lambda st: rules.on_rebuild(st, now))

    def forget(self, tenant: Tenant) -> None:
        """The tenant was erased: drop what is held for it in memory (its lock)."""
        self._runs.forget(tenant)

    # --- running --------------------------------------------------------------------------------

    def next_fire(self) -> int | None:
        """The earliest L2 timer or L3 retry time, ms (None: nothing armed)."""
        times: list[int] = []
        for st in self._store.pipeline.tenants(waiting=True):
            if st.l2_fire_at is not None:
                times.append(st.l2_fire_at)
            if rules.l3_is_due(st, 1 << 62, self._s):
                times.append(st.l3_fire_at or 0)
        return min(times) if times else None

    async def run_due(self) -> int:
        """Run every L2 and L3 that is due now, repeatedly, until none is. Returns runs attempted."""
        ran = 0
        while True:
            now = self._clock.now_ms()
            states = await to_thread(partial(self._store.pipeline.tenants, waiting=True))
            l2 = [s.tenant for s in states if rules.l2_is_due(s, now)]
            l3 = [s.tenant for s in states if rules.l3_is_due(s, now, self._s) and s.tenant not in l2]
            if not l2 and not l3:
                return ran
            await asyncio.gather(*(self.run_l2(t) for t in l2), *(self.run_l3(t) for t in l3))
            ran += len(l2) + len(l3)

    async def flush(self, tenants: Iterable[Tenant]) -> int:
        """Run L2 now on every given tenant with atoms after its cursor, then L3 on every one with a
        request or atoms since its last persona, due or not. Returns runs attempted."""
        chosen = list(dict.fromkeys(tenants))
        behind = [t for t in chosen if await to_thread(self._behind, t)]
        await asyncio.gather(*(self.run_l2(t, force=True) for t in behind))
        stale = [t for t in chosen if await to_thread(self._needs_persona, t)]
        await asyncio.gather(*(self.run_l3(t, force=True) for t in stale))
        return len(behind) + len(stale)

    def _behind(self, tenant: Tenant) -> bool:
        cursor = self._store.pipeline.tenant(tenant).l2_cursor
        return self.recovery.has_atoms_after(tenant, cursor)

    def _needs_persona(self, tenant: Tenant) -> bool:
        st = self._store.pipeline.tenant(tenant)
        return st.l3_requested > st.l3_done or (st.new_atoms > 0 and st.last_l2 is not None)

    # --- a server's calls, run by its workers (``pipeline.handoff``) ----------------------------

    def demand_l2(self, tenant: Tenant) -> int | None:
        """Mark the tenant's L2 due now when atoms wait past its cursor, for the workers to run;
        the seq its cursor must reach (the last of those atoms), or None."""
        cursor = self._store.pipeline.tenant(tenant).l2_cursor
        flt, last = AtomFilter(at=self._clock.now_ms()), None
        while page := self._store.atoms.list(tenant, flt, limit=_PAGE, after_seq=cursor):
            last = cursor = page[-1].seq
            if len(page) < _PAGE:
                break
        if last is None:
            return None
        now = self._clock.now_ms()
        self._mutate(tenant, lambda st: rules.on_demand(st, now))
        return last

    def demanded_l2(self, tenant: Tenant, target: int) -> bool | None:
        """Where a ``demand_l2`` stands: True when the cursor reached ``target`` (or no atom waits
        past it), False when a run failed since, None while waiting (marked due again when a run
        that ended meanwhile armed it later)."""
        st = self._store.pipeline.tenant(tenant)
        if st.l2_cursor >= target or not self.recovery.has_atoms_after(tenant, st.l2_cursor):
            return True
        if st.l2_attempts:
            return False
        now = self._clock.now_ms()
        if st.l2_fire_at is None or st.l2_fire_at > now:
            self._mutate(tenant, lambda s: not s.l2_attempts and rules.on_demand(s, now))
        return None

    def demand_l3(self, tenant: Tenant) -> int | None:
        """Ask for the tenant's persona now when it has a request or atoms since the last one (as
        ``flush``); the request count its runs must reach, or None."""
        if not self._needs_persona(tenant):
            return None
        return self._mutate(tenant, lambda st: rules.flush_l3(st, "pipeline flush")).l3_requested

    def demanded_l3(self, tenant: Tenant, target: int) -> bool | None:
        """Where a ``demand_l3`` stands: True when done, False when a run failed since, None while
        waiting."""
        st = self._store.pipeline.tenant(tenant)
        if st.l3_done >= target:
            return True
        return False if st.l3_attempts else None

    @asynccontextmanager
    async def hold(self, tenant: Tenant) -> AsyncIterator[None]:
        """The tenant's lock and its lease: every write to its profile outside a run (an edit, a
        repair, recalls' heat, the sweep) happens under it. A run in this process or another is
        waited for (``ConflictError`` after ``HOLD_SECONDS``); no run slot is taken, so a
        caller never queues behind other tenants' runs."""
        lease = lease_key("upper", tenant)
        async with (
            self._runs.lock(tenant),
            waited(self._store.leases, lease, HOLD_SECONDS, "the profile", tenant),
        ):
            yield

    async def _run(
        self, tenant: Tenant, layer: str, step: Callable[[TenantState, _Undo], Awaitable[R | None]]
    ) -> R | None:
        """The skeleton of an L2 or L3 run: under the tenant's lock and lease (another process
        running it: nothing to do), an interrupted run restored first, then ``step`` with the
        tenant's state. A failure restores what ``step`` backed up (``undo``), is recorded in the
        state, logged, and retried later."""
        async with self._runs.hold(tenant):
            undo = _Undo()
            try:
                async with claimed(self._store.leases, lease_key("upper", tenant)) as mine:
                    if not mine:  # another process runs this tenant's L2 or L3 now
                        return None
                    await to_thread(self.recovery.restore_if_interrupted, tenant)
                    state = await to_thread(self._store.pipeline.tenant, tenant)
                    return await step(state, undo)
            except Exception as exc:  # noqa: BLE001 - every failure is restored, recorded and retried
                await self._recover_from(tenant, layer, exc, undo.restore)
                return None

    async def run_l2(self, tenant: Tenant, *, force: bool = False) -> L2Report | None:
        """One L2 run (when due, or ``force``). Failures are recorded, logged and retried later."""

        async def step(state: TenantState, undo: _Undo) -> L2Report | None:
            if not force and not rules.l2_is_due(state, self._clock.now_ms()):
                return None
            snapshot = await to_thread(self._snapshot, tenant, state)
            if snapshot is not None:
                undo.restore = lambda: self._upper.scenes.restore(tenant, snapshot)
            report = await self._l2.run(
                tenant, state.l2_cursor, rewrite=state.l2_rewrite, rebuild=state.l2_rebuild
            )
            await to_thread(self._l2_done, tenant, report)
            return report

        return await self._run(tenant, "L2", step)

    def _snapshot(self, tenant: Tenant, state: TenantState) -> str | None:
        """Back up the scenes and record the backup durably, when the run has atoms to consolidate
        or scenes to rewrite. A run without either (the periodic re-check) only tidies and
        rebuilds the index."""
        if not (
            state.l2_rewrite or state.l2_rebuild or self.recovery.has_atoms_after(tenant, state.l2_cursor)
        ):
            return None
        snapshot = self._upper.scenes.backup(tenant)
        self._mutate(tenant, lambda st: setattr(st, "l2_snapshot", snapshot))
        return snapshot

    def _l2_done(self, tenant: Tenant, report: L2Report) -> None:
        now = self._clock.now_ms()
        outcome = rules.L2Outcome(
            report.cursor,
            report.consolidated,
            report.persona_requests,
            has_persona=self._upper.persona.read(tenant) is not None,
            has_scenes=report.scenes > 0,
            behind=self.recovery.has_atoms_after(tenant, report.cursor),
        )
        self._mutate(tenant, lambda st: rules.on_l2_success(st, outcome, now, self._s, self._p))

    async def run_l3(self, tenant: Tenant, *, force: bool = False) -> L3Report | None:
        """One L3 run (when due, or ``force``: the pending request, or a new one, is due now)."""
        if force:
            await to_thread(self._mutate, tenant, lambda st: rules.flush_l3(st, "pipeline flush"))

        async def step(state: TenantState, undo: _Undo) -> L3Report | None:
            if not rules.l3_is_due(state, self._clock.now_ms(), self._s):
                return None
            snapshot = await to_thread(self._upper.persona.backup, tenant)
            start = await to_thread(self._l3_start, tenant, snapshot)
            undo.restore = lambda: self._upper.persona.restore(tenant, snapshot)
            report = await self._l3.run(tenant, state)
            now = self._clock.now_ms()
            await to_thread(self._mutate, tenant, lambda st: rules.on_l3_success(st, start, now))
            return report

        return await self._run(tenant, "L3", step)

    async def _recover_from(
        self, tenant: Tenant, layer: str, exc: Exception, restore: Callable[[], None] | None
    ) -> None:
        """Put the layer back as it was and record the failure in the tenant's state. A failure
        here too (the disk itself) is logged: it never stops another tenant's runs."""
        try:
            if restore is not None:
                await to_thread(restore)
        except Exception as second:  # noqa: BLE001 - logged; the next open restores from state
            log.error("%s of %s: restoring the backup failed too: %s", layer, tenant, second)
        try:
            await to_thread(self._failed, tenant, layer, exc)
        except Exception as second:  # noqa: BLE001 - logged; nothing else can be done here
            log.error(
                "%s of %s failed (%s) and the failure could not be recorded: %s", layer, tenant, exc, second
            )

    def _l3_start(self, tenant: Tenant, snapshot: str | None) -> rules.L3Start:
        starts: list[rules.L3Start] = []
        self._mutate(tenant, lambda st: starts.append(rules.on_l3_start(st, snapshot)))
        return starts[0]

    def _failed(self, tenant: Tenant, layer: str, exc: BaseException) -> None:
        now = self._clock.now_ms()
        message = f"{type(exc).__name__}: {exc}"
        if layer == "L2":
            st = self._mutate(tenant, lambda s: rules.on_l2_failure(s, message, now, self._s))
            attempts = st.l2_attempts
        else:
            st = self._mutate(tenant, lambda s: rules.on_l3_failure(s, message, now, self._s))
            attempts = st.l3_attempts
        log_failure(log, f"{layer} run for {tenant}", attempts, exc, ", backup restored")

    def warm(self, tenant: Tenant, recalls: Sequence[Sequence[str]]) -> None:
        """Fold recalls' atoms into scene heat (the caller holds the tenant's lock)."""
        warm_scenes(self._upper.scenes, tenant, recalls)

    def status(self) -> list[TenantStatus]:
        return [
            TenantStatus(
                s.tenant,
                s.l2_cursor,
                s.l2_fire_at,
                s.l2_attempts,
                s.l2_error,
                s.new_atoms,
                s.l3_requested > s.l3_done,
                s.l3_attempts,
                s.l3_error,
                s.last_l2,
                s.last_l3,
            )
            for s in self._store.pipeline.tenants()
        ]
