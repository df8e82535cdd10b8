"""Driving the pipeline and looking after the store: run, end a session, status, repair, reindex."""

from __future__ import annotations

import asyncio

from memstrata import operations as ops
from memstrata.errors import ConfigError
from memstrata.facade.core import FacadeCore, operation
from memstrata.models import (
    Layer,
    Status,
)
from memstrata.operations import arguments as args
from memstrata.pipeline.coordinator import RunAllReport
from memstrata.pipeline.embedding import fill_missing
from memstrata.retrieval.reindex import (
    INDEX_VERSION,
    MESSAGE_VECTORS_SINCE,
    drop_message_vectors,
    rewrite_keyword_texts,
)


class PipelineMethods(FacadeCore):
    @operation(ops.RunPending)
    async def run_pending(self, op: ops.RunPending) -> int:
        self._writable("run the pipeline")
        if self._handoff is not None:  # a server's workers run it
            return await self._handoff.run_due()
        return await self._pipeline.run_due()

    @operation(ops.RunAll)
    async def run_all(self, op: ops.RunAll) -> RunAllReport:
        return await self._run_all()

    @operation(ops.RequestPersona)
    async def request_persona(self, op: ops.RequestPersona) -> None:
        self._writable("request a persona")
        tenant = args.tenant(op.user_id, op.agent_id)
        await asyncio.to_thread(self._pipeline.request_persona, tenant, op.reason)

    @operation(ops.EndSession)
    async def end_session(self, op: ops.EndSession) -> None:
        await self._end_session(args.tenant(op.user_id, op.agent_id), op.session_key)

    @operation(ops.Status)
    async def status(self, op: ops.Status) -> Status:
        return await asyncio.to_thread(self._pipeline.status, self._vectors, self.read_only)

    @operation(ops.Repair)
    async def repair(self, op: ops.Repair) -> list[str]:
        self._writable("repair")
        async with self._pipeline.exclusive():
            done = await asyncio.to_thread(self._store.repair)
            tenants = await asyncio.to_thread(self._pipeline.known_tenants)
            if self._pipeline.tenants is not None:
                done += [
                    str(p)
                    for p in await self._pipeline.tenants.recovery.repair_files(
                        tenants, self._pipeline.tenants.hold
                    )
                ]
        return done

    @operation(ops.Reindex)
    async def reindex(self, op: ops.Reindex) -> int:
        self._writable("reindex")
        if self._vectors.undecided:
            return 0  # auto chooses the model by the first messages, and there are none yet
        embedder = self._vectors.embedder
        if embedder is None:
            raise ConfigError(
                "reindex needs an embedder: set embedding.provider (e.g. MEMSTRATA_EMBEDDING__PROVIDER)"
            )

        def run() -> int:
            index = self._store.index
            # Message vectors made from texts of an older definition are made again.
            stale = index.index_version() < MESSAGE_VECTORS_SINCE
            rewrite_keyword_texts(self._store, with_previous=self.settings.search.context_previous)
            if index.embedding_model() != embedder.name:
                index.reset_vectors(embedder.name)
            elif stale:  # the messages' vector texts changed; atoms' did not
                drop_message_vectors(self._store)
            done = sum(
                fill_missing(self._store, embedder, layer, 0, 1 << 62)[0] for layer in (Layer.L0, Layer.L1)
            )
            index.set_index_version(INDEX_VERSION)
            self._vectors.reindexed()
            self._pipeline.embedding.rescan()
            return done

        async with self._pipeline.exclusive():
            return await asyncio.to_thread(run)
