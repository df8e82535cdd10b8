"""Taking memory elsewhere: export every layer of a tenant (or of all) as portable files, and
import such an export back (logic in ``memstrata.portability``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memstrata.errors import InputError
from memstrata.facade.imports import ImportMethods
from memstrata.importers.tdai import TdaiData, TdaiImportReport, read_tdai
from memstrata.models import ExportReport
from memstrata.portability import files
from memstrata.portability.collect import chosen, collect
from memstrata.portability.jsonl import read_jsonl, write_jsonl
from memstrata.portability.tdai import write_tdai

FORMATS = {"jsonl": write_jsonl, "tdai": write_tdai}


class ExportMethods(ImportMethods):
    async def export(
        self,
        out: str | Path,
        *,
        format: str = "jsonl",
        user_id: str | None = None,
        agent_id: str | None = None,
    ) -> ExportReport:
        """Write every layer of a tenant (``user_id`` and ``agent_id``), of every agent of a user
        (``agent_id`` None) or of every tenant (both None) into the new folder ``out``:
        ``jsonl`` (one file per layer, all fields and links) or ``tdai`` (a
        TencentDB-Agent-Memory data directory). ``import_export`` (or, for ``tdai``,
        ``import_tdai``) reads it back identically. The pipeline is held off while it reads."""
        writer = FORMATS.get(format)
        if writer is None:
            raise InputError(f"unknown export format {format!r}: use jsonl or tdai", item="format")
        if user_id is None and agent_id is not None:
            raise InputError("an agent_id needs its user_id", item="agent_id")

        def run() -> ExportReport:
            target = Path(out).expanduser()
            tenants = chosen(self._store, self._upper, user_id, agent_id)
            data = [collect(self._store, self._upper, t) for t in tenants]
            return writer(target, data, self._clock.now_ms())

        async with self._pipeline.exclusive():
            return await asyncio.to_thread(run)

    async def import_export(self, path: str | Path) -> TdaiImportReport:
        """Import a memstrata export (either layout) or a TencentDB-Agent-Memory directory, as
        ``import_tdai`` does: idempotent, ids, versions, links, scenes and personas kept."""
        self._writable("import")

        def read() -> TdaiData:
            root = Path(path).expanduser()
            return read_jsonl(root) if files.layout_of(root) == "jsonl" else read_tdai(root)

        return await self._write_import(await asyncio.to_thread(read))
