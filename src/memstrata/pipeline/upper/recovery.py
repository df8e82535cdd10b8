"""Putting a tenant's upper layers right again, apart from scheduling runs: after a stop or a
crash (``recover`` on open: restore the backups of interrupted runs, rebuild a scene index that is
out of step, arm the L2 timer of atoms a kill left unarmed), before a run (an interrupted run of
a dead process is restored by whoever claims the tenant next), and on request (``repair_files``
sets unreadable scene and persona files aside and restores their newest readable backups).

All state lives in the store (``TenantState``); the scheduler hands in its state book, so every
change goes through the same per-tenant serialisation.
"""

from __future__ import annotations

import logging
from asyncio import to_thread
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager

from memstrata.errors import StoreError
from memstrata.layers.l2 import index as scene_index
from memstrata.models import AtomFilter, FileProblem, Tenant, TenantState
from memstrata.pipeline.keyed import lease_key
from memstrata.pipeline.upper import rules
from memstrata.ports import Clock, Store, UpperLayers
from memstrata.settings import PipelineSettings

log = logging.getLogger(__name__)
Mutate = Callable[[Tenant, Callable[[TenantState], object]], TenantState]
Hold = Callable[[Tenant], AbstractAsyncContextManager[None]]


class UpperRecovery:
    """Restores, repairs and re-arms tenants' L2/L3 state (see the module docstring)."""

    def __init__(
        self, store: Store, upper: UpperLayers, clock: Clock, settings: PipelineSettings, mutate: Mutate
    ) -> None:
        self._store = store
        self._upper = upper
        self._clock = clock
        self._s = settings
        self._mutate = mutate

    def has_atoms_after(self, tenant: Tenant, cursor: int) -> bool:
        """Whether the tenant has unexpired atoms past ``cursor`` (expired ones are not consolidated)."""
        flt = AtomFilter(at=self._clock.now_ms())
        return bool(self._store.atoms.list(tenant, flt, limit=1, after_seq=cursor))

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
                hit += self.restore_if_interrupted(st.tenant)
            finally:
                self._store.leases.release(key)
        return hit

    def restore_if_interrupted(self, tenant: Tenant) -> int:
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
        if not self.has_atoms_after(state.tenant, state.l2_cursor):
            return 0
        now = self._clock.now_ms()
        st = self._mutate(state.tenant, lambda s: rules.on_unarmed_atoms(s, now, self._s))
        log.info("%s has atoms past its L2 cursor and no L2 timer: armed for %s", state.tenant, st.l2_fire_at)
        return 1

    def file_problems(self, known: Iterable[Tenant]) -> list[FileProblem]:
        """Unreadable scene, index and persona files of these tenants and of those with profiles."""
        found: list[FileProblem] = []
        for tenant in dict.fromkeys([*known, *self._upper.scenes.tenants()]):
            found += self._upper.scenes.check(tenant) + self._upper.persona.check(tenant)
        return found

    async def repair_files(self, known: Iterable[Tenant], hold: Hold) -> list[FileProblem]:
        """Set unreadable files aside and restore their newest readable backups, tenant by tenant
        under each tenant's lock (``hold``: the scheduler's)."""
        done: list[FileProblem] = []
        for tenant in dict.fromkeys([*known, *self._upper.scenes.tenants()]):
            async with hold(tenant):
                done += await to_thread(self._upper.scenes.repair, tenant)
                done += await to_thread(self._upper.persona.repair, tenant)
        return done
