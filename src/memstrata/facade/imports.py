"""Importing history: sessions (seed files, LoCoMo, the gateway's seed route) and
TencentDB-Agent-Memory data directories."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.interchange.seed import parse_seed
from memstrata.interchange.sessions import ImportReport, ImportSession
from memstrata.interchange.tdai.read import TdaiImportReport, read_tdai
from memstrata.layers.l0.recorder import stable_id
from memstrata.models import (
    NewMessage,
    Tenant,
)
from memstrata.operations import arguments as args
from memstrata.pipeline.l1.scheduler import L1Tally

CAPTURE_BATCH = 500
# Tenants whose sessions are extracted at once during an import. Two kept both cores busy on the
# LoCoMo dev set (docs/benchmarks.md); more only interleave the same work.
IMPORT_LANES = 2


class ImportMethods(FacadeCore):
    @operation(ops.ImportSessions)
    async def import_sessions(self, op: ops.ImportSessions) -> ImportReport:
        self._writable("import")
        sessions, process, on_progress = op.sessions, op.process, op.on_progress
        total = sum(len(s.messages) for s in sessions)
        report = ImportReport(sessions=len(sessions))
        handoff = self._handoff if process else None
        # A server's workers extract the import (they start as its sessions are captured).
        before = await asyncio.to_thread(handoff.atom_counts, [s.tenant for s in sessions]) if handoff else {}
        done = 0
        for s in sessions:
            messages = [_with_id(s, i, m) for i, m in enumerate(s.messages)]
            for i in range(0, len(messages), CAPTURE_BATCH):
                batch = messages[i : i + CAPTURE_BATCH]
                r = await self._capture(
                    batch, s.session_key, s.session_id, s.tenant.user_id, s.tenant.agent_id
                )
                report.add(r)
                done += len(messages[i : i + CAPTURE_BATCH])
                if on_progress:
                    on_progress("L0 capture", done, total)
        if handoff is not None:
            tally, deadline = L1Tally(), handoff.deadline()
            keys = [(s.tenant, s.session_key) for s in sessions]

            def progressed(done: int, failed: int) -> None:
                if on_progress:
                    on_progress("L1 extraction", done, len(sessions))
                    if failed:
                        on_progress("L1 extraction failed", failed, len(sessions))

            await handoff.sessions(keys, tally, deadline, progressed)
            upper = await handoff.run_all(deadline)
            # Every imported session is extracted now, by this call or before it (a retry's).
            extracted = len(dict.fromkeys(keys)) - tally.failed
            report.extracted = extracted + upper.l1 - upper.l1_failed
            report.failed = tally.failed + upper.l1_failed + upper.upper_failed
            report.atoms = await asyncio.to_thread(handoff.atoms_since, before)
        elif process:
            tally = await self._extract_in_lanes(sessions, on_progress)
            upper = await self._run_all()  # then L2 scenes and L3 personas of every tenant with new atoms
            report.extracted = tally.runs - tally.failed + upper.l1 - upper.l1_failed
            report.failed = tally.failed + upper.l1_failed + upper.upper_failed
            report.atoms = tally.atoms + upper.atoms
        return report

    async def _extract_in_lanes(
        self, sessions: Sequence[ImportSession], on_progress: ops.Progress | None
    ) -> L1Tally:
        """End every session, in order within a tenant (a later session's facts supersede an
        earlier one's), tenants side by side: one tenant's extraction (Python, one core) then
        overlaps another's embedding (numpy, off the GIL)."""
        by_tenant: dict[Tenant, list[ImportSession]] = {}
        for s in sessions:
            by_tenant.setdefault(s.tenant, []).append(s)
        lanes = asyncio.Semaphore(IMPORT_LANES)
        # Progress says what happened: sessions extracted, and failed ones on a bar of their own
        # (a failed session is recorded in status and retried; it is not "done").
        tally = L1Tally()

        async def lane(group: list[ImportSession]) -> None:
            async with lanes:
                for s in group:
                    failed = tally.failed
                    await self._scheduler.flush([(s.tenant, s.session_key)], tally)
                    if on_progress:
                        on_progress("L1 extraction", tally.runs - tally.failed, len(sessions))
                        if tally.failed > failed:
                            on_progress("L1 extraction failed", tally.failed, len(sessions))

        async with asyncio.TaskGroup() as tasks:
            for group in by_tenant.values():
                tasks.create_task(lane(group))
        return tally

    @operation(ops.ImportTdai)
    async def import_tdai(self, op: ops.ImportTdai) -> TdaiImportReport:
        self._writable("import")
        data = await asyncio.to_thread(read_tdai, Path(op.path))
        return await self._write_import(data)

    @operation(ops.ImportSeed)
    async def import_seed(self, op: ops.ImportSeed) -> ImportReport:
        tenant = args.tenant(op.user_id, op.agent_id)
        sessions = await asyncio.to_thread(parse_seed, op.data)
        mine = [s if s.tenant != Tenant() else dataclasses.replace(s, tenant=tenant) for s in sessions]
        return await self.import_sessions(mine, process=op.process)


def _with_id(s: ImportSession, position: int, m: NewMessage) -> NewMessage:
    if m.id:
        return m
    return NewMessage(
        m.role,
        m.content,
        stable_id(s.tenant, s.session_key, position, str(m.role), m.content),
        m.name,
        m.timestamp,
        m.metadata,
    )
