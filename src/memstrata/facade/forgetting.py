"""Forgetting on purpose: erase a tenant for good, pin atoms and give them a time to live, run
the retention sweep, rebuild a tenant's scenes (logic in ``memstrata.forgetting``)."""

from __future__ import annotations

import asyncio
import math

from memstrata import operations as ops
from memstrata.errors import ConfigError, EngineError, InputError
from memstrata.facade.core import FacadeCore, operation
from memstrata.forgetting import erase
from memstrata.layers.l0.times import epoch_ms
from memstrata.models import Atom, ForgetReport, SceneEntry, SweepReport, Tenant
from memstrata.operations import arguments as args


class ForgetMethods(FacadeCore):
    @operation(ops.Forget)
    async def forget(self, op: ops.Forget) -> ForgetReport:
        self._writable("forget a tenant")
        user = args.name(op.user_id, "user_id")
        agent = None if op.agent_id is None else args.name(op.agent_id, "agent_id")
        async with self._pipeline.exclusive():
            tenants = erase.chosen(await asyncio.to_thread(self._stored_tenants), user, agent)
            parts = []
            for tenant in tenants:
                async with self._tenant_lock(tenant):
                    self._pipeline.heat.take(tenant)  # recalls' heat notes must not write it back
                    parts.append(
                        await asyncio.to_thread(erase.erase_tenant, self._store, self._upper, tenant)
                    )
                self._forgotten(tenant)
            notes = await asyncio.to_thread(self._store.compact)
        return erase.report(tenants, parts, notes)

    def _stored_tenants(self) -> list[Tenant]:
        found = self._store.tenants() + self._pipeline.known_tenants()
        found += self._upper.scenes.tenants() if self._upper is not None else []
        return list(dict.fromkeys(found))

    @operation(ops.PinAtom)
    async def pin_atom(self, op: ops.PinAtom) -> Atom:
        self._writable("pin an atom")
        tenant = args.tenant(op.user_id, op.agent_id)
        return await asyncio.to_thread(self._data.pin_atom, tenant, op.atom_id, bool(op.pinned))

    @operation(ops.SetAtomTtl)
    async def set_atom_ttl(self, op: ops.SetAtomTtl) -> Atom:
        self._writable("set an atom's time to live")
        expires_at, ttl_seconds = op.expires_at, op.ttl_seconds
        if expires_at is not None and ttl_seconds is not None:
            raise InputError("give expires_at or ttl_seconds, not both", item="ttl_seconds")
        when = epoch_ms(expires_at, "expires_at")
        if ttl_seconds is not None:
            if isinstance(ttl_seconds, bool) or not math.isfinite(ttl_seconds) or ttl_seconds <= 0:
                raise InputError(
                    f"must be a number of seconds above 0, got {ttl_seconds!r}", item="ttl_seconds"
                )
            when = self._clock.now_ms() + round(ttl_seconds * 1000)
        tenant = args.tenant(op.user_id, op.agent_id)
        return await asyncio.to_thread(self._data.set_ttl, tenant, op.atom_id, when)

    @operation(ops.Sweep)
    async def sweep(self, op: ops.Sweep) -> SweepReport:
        self._writable("sweep")
        assert self._pipeline.sweeper is not None
        async with self._pipeline.exclusive():
            report = await self._pipeline.sweeper.run()
        self._pipeline.wake()
        return report

    @operation(ops.RebuildScenes)
    async def rebuild_scenes(self, op: ops.RebuildScenes) -> list[SceneEntry]:
        self._writable("rebuild scenes")
        tenants = self._pipeline.tenants
        if tenants is None:
            raise ConfigError("this memory has no L2/L3 pipeline")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._pipeline.exclusive():
            await asyncio.to_thread(tenants.request_rebuild, tenant)
            await tenants.run_l2(tenant, force=True)
            state = await asyncio.to_thread(self._store.pipeline.tenant, tenant)
            if state.l2_rebuild:
                raise EngineError(
                    f"rebuilding the scenes failed: {state.l2_error} (restored; retried later)",
                    tenant=str(tenant),
                )
            await tenants.run_l3(tenant, force=True)
        upper = self._upper
        return await asyncio.to_thread(upper.scenes.index, tenant) if upper is not None else []
