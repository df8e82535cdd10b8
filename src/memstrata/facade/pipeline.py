"""Driving the pipeline and looking after the store: run, end a session, status, repair, reindex."""

from __future__ import annotations

import asyncio

from memstrata import arguments as args
from memstrata.errors import ConfigError
from memstrata.facade.core import FacadeCore
from memstrata.models import (
    DEFAULT,
    Layer,
    Status,
)
from memstrata.pipeline.coordinator import RunAllReport
from memstrata.pipeline.embedding import fill_missing


class PipelineMethods(FacadeCore):
    async def run_pending(self) -> int:
        """Run every pipeline stage that is due now (vectors, L1, then L2 and L3), until nothing
        is. Returns runs attempted."""
        self._writable("run the pipeline")
        return await self._pipeline.run_due()

    async def run_all(self) -> RunAllReport:
        """Process everything now, due or not: vectors, L1 on every session backlog, then L2 and L3
        on every tenant with new atoms (import, CLI). Failures are recorded in ``status`` and
        retried later."""
        self._writable("run the pipeline")
        return await self._pipeline.run_all()

    async def request_persona(
        self, reason: str = "explicit request", *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """Ask for the tenant's persona to be rewritten (runs with the next ``run_pending``)."""
        self._writable("request a persona")
        tenant = args.tenant(user_id, agent_id)
        await asyncio.to_thread(self._pipeline.request_persona, tenant, reason)

    async def end_session(
        self, session_key: str = DEFAULT, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> None:
        """The session is over: extract what is pending for it now."""
        self._writable("end a session")
        await self._scheduler.flush([(args.tenant(user_id, agent_id), args.name(session_key, "session_key"))])

    async def status(self) -> Status:
        """The pipeline per session and tenant, counts, the embedder and what is degraded."""
        return await asyncio.to_thread(self._pipeline.status, self._vectors, self.read_only)

    async def repair(self) -> list[str]:
        """Make the store and the profile files whole again: mirrors rewritten from the database
        where they disagree with it, unreadable scene and persona files set aside and restored from
        their newest readable backup. Returns one line per repair (empty: nothing to repair)."""
        self._writable("repair")
        async with self._pipeline.exclusive():
            done = await asyncio.to_thread(self._store.repair)
            tenants = await asyncio.to_thread(self._pipeline.known_tenants)
            if self._pipeline.tenants is not None:
                done += [str(p) for p in await self._pipeline.tenants.repair_files(tenants)]
        return done

    async def reindex(self) -> int:
        """Re-embed every record without a vector (all of them after an embedder change)."""
        self._writable("reindex")
        embedder = self._vectors.embedder
        if embedder is None:
            raise ConfigError(
                "reindex needs an embedder: set embedding.provider (e.g. MEMSTRATA_EMBEDDING__PROVIDER)"
            )

        def run() -> int:
            if self._store.index.embedding_model() != embedder.name:
                self._store.index.reset_vectors(embedder.name)
            done = sum(
                fill_missing(self._store, embedder, layer, 0, 1 << 62)[0] for layer in (Layer.L0, Layer.L1)
            )
            self._vectors.reindexed()
            self._pipeline.embedding.rescan()
            return done

        async with self._pipeline.exclusive():
            return await asyncio.to_thread(run)
