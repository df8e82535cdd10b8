"""Importing history: sessions (seed files, LoCoMo, the gateway's seed route) and
TencentDB-Agent-Memory data directories."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Sequence
from pathlib import Path

from memstrata import arguments as args
from memstrata.facade.capture import CaptureMethods
from memstrata.facade.core import Progress
from memstrata.facade.pipeline import PipelineMethods
from memstrata.importers.seed import parse_seed
from memstrata.importers.tdai import TdaiData, TdaiImportReport, read_tdai
from memstrata.importers.tdai_writer import TdaiImport
from memstrata.importers.types import ImportReport, ImportSession
from memstrata.layers.l0.recorder import stable_id
from memstrata.models import (
    DEFAULT,
    NewMessage,
    Tenant,
)
from memstrata.pipeline.l1.scheduler import L1Tally

CAPTURE_BATCH = 500
# Tenants whose sessions are extracted at once during an import. Two kept both cores busy on the
# LoCoMo dev set (docs/benchmarks.md); more only interleave the same work.
IMPORT_LANES = 2


class ImportMethods(CaptureMethods, PipelineMethods):
    async def import_sessions(
        self, sessions: Sequence[ImportSession], *, process: bool = True, on_progress: Progress | None = None
    ) -> ImportReport:
        """Capture whole sessions of history (seed files, LoCoMo, the gateway's seed route), then,
        with ``process``, end each session and run the pipeline to L3. Messages without an id get
        one derived from their tenant, session, position, role and text, so importing the same
        history again stores nothing. ``on_progress(stage, done, total)`` follows each stage."""
        self._writable("import")
        total = sum(len(s.messages) for s in sessions)
        report = ImportReport(sessions=len(sessions))
        done = 0
        for s in sessions:
            messages = [_with_id(s, i, m) for i, m in enumerate(s.messages)]
            for i in range(0, len(messages), CAPTURE_BATCH):
                r = await self.capture(
                    messages[i : i + CAPTURE_BATCH],
                    session_key=s.session_key,
                    session_id=s.session_id,
                    user_id=s.tenant.user_id,
                    agent_id=s.tenant.agent_id,
                )
                report.add(r)
                done += len(messages[i : i + CAPTURE_BATCH])
                if on_progress:
                    on_progress("L0 capture", done, total)
        if process:
            tally = await self._extract_in_lanes(sessions, on_progress)
            upper = await self.run_all()  # then L2 scenes and L3 personas of every tenant with new atoms
            report.extracted = tally.runs - tally.failed + upper.l1 - upper.l1_failed
            report.failed = tally.failed + upper.l1_failed + upper.upper_failed
            report.atoms = tally.atoms + upper.atoms
        return report

    async def _extract_in_lanes(
        self, sessions: Sequence[ImportSession], on_progress: Progress | None
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

    async def import_tdai(self, path: str | Path) -> TdaiImportReport:
        """Import a TencentDB-Agent-Memory data directory: messages, atoms (ids, types, priorities,
        scene names and source message ids kept), scene files and personas of every tenant.

        Idempotent: what the memory already has (message and atom ids, scene file names, a persona)
        is kept as it is. Imported messages are not extracted again, and atoms the imported scenes
        consolidate are not consolidated again. The pipeline is held off while it writes.
        Unreadable lines are skipped and reported. Raises ``InputError`` when ``path`` is not such
        a directory.
        """
        self._writable("import")
        data = await asyncio.to_thread(read_tdai, Path(path))
        return await self._write_import(data)

    async def _write_import(self, data: TdaiData) -> TdaiImportReport:
        """Write what an import read (TDAI directory or memstrata export), the pipeline held off."""
        writer = TdaiImport(
            self._store, self._upper, self._recorder.record, self._vectors, self._pipeline.on_atoms
        )
        async with self._pipeline.exclusive():
            report = await asyncio.to_thread(writer.run, data)
        self._pipeline.wake()
        return report

    async def import_seed(
        self, data: object, *, process: bool = False, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> ImportReport:
        """Import seed history (``{"sessions": [...]}`` or ``[...]``, see ``importers.seed``) with
        ``import_sessions``; sessions that name no tenant go to this one."""
        tenant = args.tenant(user_id, agent_id)
        sessions = await asyncio.to_thread(parse_seed, data)
        mine = [s if s.tenant != Tenant() else dataclasses.replace(s, tenant=tenant) for s in sessions]
        return await self.import_sessions(mine, process=process)


def _with_id(s: ImportSession, position: int, m: NewMessage) -> NewMessage:
    if m.id:
        return m
    return NewMessage(
        m.role,
        m.content,
        stable_id(s.tenant, s.session_key, position, str(m.role), m.content),
        m.name,
        m.timestamp,
    )
