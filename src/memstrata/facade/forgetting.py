"""Forgetting on purpose: erase a tenant for good, pin atoms and give them a time to live, run
the retention sweep, rebuild a tenant's scenes (logic in ``memstrata.forgetting``)."""

from __future__ import annotations

import asyncio
import math

from memstrata import arguments as args
from memstrata.errors import ConfigError, EngineError, InputError
from memstrata.facade.edits import EditMethods
from memstrata.facade.pipeline import PipelineMethods
from memstrata.forgetting import erase
from memstrata.layers.l0.times import epoch_ms
from memstrata.models import DEFAULT, Atom, ForgetReport, SceneEntry, SweepReport, Tenant


class ForgetMethods(EditMethods, PipelineMethods):
    async def forget(self, *, user_id: str, agent_id: str | None = None) -> ForgetReport:
        """Erase a tenant for good (every agent of ``user_id`` when ``agent_id`` is None): its
        messages, atoms and their versions, keyword rows and vectors, scene membership, pipeline
        state, JSONL mirror lines, scene and persona files with their backups (the whole profile
        folder); then the database is rewritten and its WAL truncated so the text is gone from
        disk. The pipeline is held off meanwhile. Returns what was removed. Run again after a
        crash, it finishes the job."""
        self._writable("forget a tenant")
        user = args.name(user_id, "user_id")
        agent = None if agent_id is None else args.name(agent_id, "agent_id")
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

    async def pin_atom(
        self, atom_id: str, pinned: bool = True, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Atom:
        """Pin (``pinned=False``: unpin) the current atom, in place: a pinned atom never expires
        and is never swept, merged away or superseded by the pipeline (only ``update_atom``
        replaces it, and the new version stays pinned). A superseded atom is a ``ConflictError``
        naming the current version."""
        self._writable("pin an atom")
        tenant = args.tenant(user_id, agent_id)
        return await asyncio.to_thread(self._data.pin_atom, tenant, atom_id, bool(pinned))

    async def set_atom_ttl(
        self,
        atom_id: str,
        *,
        expires_at: int | str | None = None,
        ttl_seconds: float | None = None,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Atom:
        """Give the current atom a time to live, in place: ``expires_at`` (epoch ms or ISO 8601)
        or ``ttl_seconds`` from now; neither clears it. From that time the atom leaves search and
        recall (unless pinned), and the next sweep deletes it."""
        self._writable("set an atom's time to live")
        if expires_at is not None and ttl_seconds is not None:
            raise InputError("give expires_at or ttl_seconds, not both", item="ttl_seconds")
        when = epoch_ms(expires_at, "expires_at")
        if ttl_seconds is not None:
            if isinstance(ttl_seconds, bool) or not math.isfinite(ttl_seconds) or ttl_seconds <= 0:
                raise InputError(
                    f"must be a number of seconds above 0, got {ttl_seconds!r}", item="ttl_seconds"
                )
            when = self._clock.now_ms() + round(ttl_seconds * 1000)
        tenant = args.tenant(user_id, agent_id)
        return await asyncio.to_thread(self._data.set_ttl, tenant, atom_id, when)

    async def sweep(self) -> SweepReport:
        """Run the retention sweep now, whatever its schedule (it also runs daily at
        ``retention.sweep_at`` in the pipeline): messages past ``capture.retention_days``,
        expired atoms, atoms past ``retention.atoms_days``. Returns what it removed."""
        self._writable("sweep")
        assert self._pipeline.sweeper is not None
        async with self._pipeline.exclusive():
            report = await self._pipeline.sweeper.run()
        self._pipeline.wake()
        return report

    async def rebuild_scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> list[SceneEntry]:
        """Re-consolidate the tenant's scenes from its current atoms now (every scene file is
        written again; heat starts over), then write its persona afresh. Returns the new scene
        index. Raises ``EngineError`` when the L2 run fails (the scenes are restored, and the
        rebuild stays due: the pipeline retries it)."""
        self._writable("rebuild scenes")
        tenants = self._pipeline.tenants
        if tenants is None:
            raise ConfigError("this memory has no L2/L3 pipeline")
        tenant = args.tenant(user_id, agent_id)
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
