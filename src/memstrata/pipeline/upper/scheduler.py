"""When L2 and L3 run, per tenant. All state lives in the store (``TenantState``); this object
holds locks only, so a restart resumes where the last process stopped.

One run per tenant at a time (L2 and L3 share the tenant's lock, and its lease across processes:
both touch its scenes and persona); at most ``workers`` runs at once across tenants. Each run is
bracketed by a backup: the backup id is saved before the engine starts and cleared when the run
ends, and a failure restores it, so a layer is never left half-written. A run a crash interrupted
is restored by whoever claims the tenant next (``recover`` on open, or a run of another process
once the dead one's lease is gone).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager

from memstrata.errors import StoreError
from memstrata.layers.l2 import index as scene_index
from memstrata.models import AtomFilter, FileProblem, Tenant, TenantState, TenantStatus
from memstrata.pipeline.keyed import KeyedRuns, StateBook, claimed, lease_key, log_failure
from memstrata.pipeline.upper import rules
from memstrata.pipeline.upper.l2_runner import L2Report, L2Runner
from memstrata.pipeline.upper.l3_runner import L3Report, L3Runner
from memstrata.ports import Clock, Store, UpperLayers
from memstrata.recall.heat import warm_scenes
from memstrata.settings import PersonaSettings, PipelineSettings

log = logging.getLogger(__name__)


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

    def recover(self, known: Iterable[Tenant]) -> int:
        """After a stop or a crash: restore the backups of runs a crash interrupted (those tenants
        are due at once), then arm the L2 timer of every tenant (of ``known`` and those with L2/L3
        state) that has atoms past its L2 cursor but no timer. Returns the tenants touched."""
        restored = self._restore_interrupted()
        states = {st.tenant: st for st in self._store.pipeline.tenants()}
        for tenant in states:
            self._repair_index(tenant)
        armed = 0
        for tenant in dict.fromkeys([*known, *states]):
            armed += self._arm_if_unscheduled(states.get(tenant) or TenantState(tenant))
        return restored + armed

    def _restore_interrupted(self) -> int:
        hit = 0
        for st in self._store.pipeline.tenants():
            if st.l2_snapshot is None and not st.l3_running:
                continue
            key = lease_key("upper", st.tenant)
            if not self._store.leases.claim(key):
                continue  # a live process is running it: its run is not interrupted
            try:
                hit += self._restore_if_interrupted(st.tenant)
            finally:
                self._store.leases.release(key)
        return hit

    def _restore_if_interrupted(self, tenant: Tenant) -> int:
        """Restore the backups of a run that was interrupted (its state still names them) and make
        the tenant due at once. Call holding the tenant's lease. Returns 1 when it restored."""
        st = self._store.pipeline.tenant(tenant)
        if st.l2_snapshot is None and not st.l3_running:
            return 0
        if st.l2_snapshot is not None:
            log.warning("restoring the scenes of %s: an L2 run was interrupted", tenant)
            self._upper.scenes.restore(tenant, st.l2_snapshot)
        if st.l3_running:
            log.warning("restoring the persona of %s: an L3 run was interrupted", tenant)
            self._upper.persona.restore(tenant, st.l3_snapshot)
        now = self._clock.now_ms()
        self._mutate(tenant, lambda s: rules.on_restart(s, now))
        return 1

    def _repair_index(self, tenant: Tenant) -> None:
        """Rebuild the scene index file from the stored membership and the scene files when it is
        missing, unreadable or out of step with them (never fatal: logged and left for L2)."""
        try:
            membership = self._store.members.get(tenant)
            if not membership:
                return
            try:
                indexed = {i: e.name for e in self._upper.scenes.index(tenant) for i in e.atom_ids}
            except StoreError:
                indexed = {}
            if indexed == membership:
                return
            scenes = self._upper.scenes.load(tenant)
            seqs = {a.id: a.seq for a in self._store.atoms.get(tenant, list(membership))}
            self._upper.scenes.save_index(tenant, scene_index.rebuild(scenes, membership, seqs))
            log.warning("%s: the scene index was missing or out of step; rebuilt from the store", tenant)
        except Exception as exc:  # noqa: BLE001 - a repair must never stop the open; L2 retries
            log.error("%s: rebuilding the scene index failed: %s", tenant, exc)

    def _arm_if_unscheduled(self, state: TenantState) -> int:
        """Atoms an L1 run committed can outlive their arming (a kill between the two): arm from
        what is stored. Returns 1 when it armed a timer."""
        if state.l2_fire_at is not None or rules.l2_gave_up(state, self._s):
            return 0
        if not self._has_atoms_after(state.tenant, state.l2_cursor):
            return 0
        now = self._clock.now_ms()
        st = self._mutate(state.tenant, lambda s: rules.on_unarmed_atoms(s, now, self._s))
        log.info("%s has atoms past its L2 cursor and no L2 timer: armed for %s", state.tenant, st.l2_fire_at)
        return 1

    # --- running --------------------------------------------------------------------------------

    def next_fire(self) -> int | None:
        """The earliest L2 timer or L3 retry time, ms (None: nothing armed)."""
        times: list[int] = []
        for st in self._store.pipeline.tenants():
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
            states = await asyncio.to_thread(self._store.pipeline.tenants)
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
        behind = [t for t in chosen if await asyncio.to_thread(self._behind, t)]
        await asyncio.gather(*(self.run_l2(t, force=True) for t in behind))
        stale = [t for t in chosen if await asyncio.to_thread(self._needs_persona, t)]
        await asyncio.gather(*(self.run_l3(t, force=True) for t in stale))
        return len(behind) + len(stale)

    def _behind(self, tenant: Tenant) -> bool:
        cursor = self._store.pipeline.tenant(tenant).l2_cursor
        return self._has_atoms_after(tenant, cursor)

    def _has_atoms_after(self, tenant: Tenant, cursor: int) -> bool:
        flt = AtomFilter(at=self._clock.now_ms())  # expired atoms are not consolidated
        return bool(self._store.atoms.list(tenant, flt, limit=1, after_seq=cursor))

    def _needs_persona(self, tenant: Tenant) -> bool:
        st = self._store.pipeline.tenant(tenant)
        return st.l3_requested > st.l3_done or (st.new_atoms > 0 and st.last_l2 is not None)

    def hold(self, tenant: Tenant) -> AbstractAsyncContextManager[None]:
        """The tenant's run lock (and a worker slot): every write to its profile happens under it."""
        return self._runs.hold(tenant)

    async def run_l2(self, tenant: Tenant, *, force: bool = False) -> L2Report | None:
        """One L2 run (when due, or ``force``). Failures are recorded, logged and retried later."""
        async with self.hold(tenant):
            snapshot: str | None = None
            try:
                async with claimed(self._store.leases, lease_key("upper", tenant)) as mine:
                    if not mine:  # another process runs this tenant's L2 or L3 now
                        return None
                    await asyncio.to_thread(self._restore_if_interrupted, tenant)
                    state = await asyncio.to_thread(self._store.pipeline.tenant, tenant)
                    if not force and not rules.l2_is_due(state, self._clock.now_ms()):
                        return None
                    snapshot = await asyncio.to_thread(self._snapshot, tenant, state)
                    report = await self._l2.run(
                        tenant, state.l2_cursor, rewrite=state.l2_rewrite, rebuild=state.l2_rebuild
                    )
                    await asyncio.to_thread(self._l2_done, tenant, report)
                    return report
            except Exception as exc:  # noqa: BLE001 - every failure is restored, recorded and retried
                await self._recover_from(tenant, "L2", exc, lambda: self._restore_scenes(tenant, snapshot))
                return None

    def _snapshot(self, tenant: Tenant, state: TenantState) -> str | None:
        """Back up the scenes and record the backup durably, when the run has atoms to consolidate
        or scenes to rewrite. A run without either (the periodic re-check) only tidies and
        rebuilds the index."""
        if not (state.l2_rewrite or state.l2_rebuild or self._has_atoms_after(tenant, state.l2_cursor)):
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
            behind=self._has_atoms_after(tenant, report.cursor),
        )
        self._mutate(tenant, lambda st: rules.on_l2_success(st, outcome, now, self._s, self._p))

    async def run_l3(self, tenant: Tenant, *, force: bool = False) -> L3Report | None:
        """One L3 run (when due, or ``force``: the pending request, or a new one, is due now)."""
        if force:
            await asyncio.to_thread(self._mutate, tenant, lambda st: rules.flush_l3(st, "pipeline flush"))
        async with self.hold(tenant):
            started = False
            snapshot: str | None = None
            try:
                async with claimed(self._store.leases, lease_key("upper", tenant)) as mine:
                    if not mine:  # another process runs this tenant's L2 or L3 now
                        return None
                    await asyncio.to_thread(self._restore_if_interrupted, tenant)
                    state = await asyncio.to_thread(self._store.pipeline.tenant, tenant)
                    if not rules.l3_is_due(state, self._clock.now_ms(), self._s):
                        return None
                    snapshot = await asyncio.to_thread(self._upper.persona.backup, tenant)
                    start = await asyncio.to_thread(self._l3_start, tenant, snapshot)
                    started = True
                    report = await self._l3.run(tenant, state)
                    now = self._clock.now_ms()
                    await asyncio.to_thread(
                        self._mutate, tenant, lambda st: rules.on_l3_success(st, start, now)
                    )
                    return report
            except Exception as exc:  # noqa: BLE001 - every failure is restored, recorded and retried
                restore = (lambda: self._upper.persona.restore(tenant, snapshot)) if started else None
                await self._recover_from(tenant, "L3", exc, restore)
                return None

    def _restore_scenes(self, tenant: Tenant, snapshot: str | None) -> None:
        if snapshot is not None:
            self._upper.scenes.restore(tenant, snapshot)

    async def _recover_from(
        self, tenant: Tenant, layer: str, exc: Exception, restore: Callable[[], None] | None
    ) -> None:
        """Put the layer back as it was and record the failure in the tenant's state. A failure
        here too (the disk itself) is logged: it never stops another tenant's runs."""
        try:
            if restore is not None:
                await asyncio.to_thread(restore)
        except Exception as second:  # noqa: BLE001 - logged; the next open restores from state
            log.error("%s of %s: restoring the backup failed too: %s", layer, tenant, second)
        try:
            await asyncio.to_thread(self._failed, tenant, layer, exc)
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

    def file_problems(self, known: Iterable[Tenant]) -> list[FileProblem]:
        """Unreadable scene, index and persona files of these tenants and of those with profiles."""
        found: list[FileProblem] = []
        for tenant in dict.fromkeys([*known, *self._upper.scenes.tenants()]):
            found += self._upper.scenes.check(tenant) + self._upper.persona.check(tenant)
        return found

    async def repair_files(self, known: Iterable[Tenant]) -> list[FileProblem]:
        """Set unreadable files aside and restore their newest readable backups, tenant by tenant
        under each tenant's lock."""
        done: list[FileProblem] = []
        for tenant in dict.fromkeys([*known, *self._upper.scenes.tenants()]):
            async with self.hold(tenant):
                done += await asyncio.to_thread(self._upper.scenes.repair, tenant)
                done += await asyncio.to_thread(self._upper.persona.repair, tenant)
        return done

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
