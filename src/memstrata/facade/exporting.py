"""Taking memory elsewhere: export every layer of a tenant (or of all) as portable files, and
import such an export back (logic in ``memstrata.interchange``)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memstrata import operations as ops
from memstrata.errors import InputError
from memstrata.facade.core import FacadeCore, operation
from memstrata.interchange import files
from memstrata.interchange.collect import chosen, collect
from memstrata.interchange.jsonl import read_jsonl, write_jsonl
from memstrata.interchange.tdai.read import TdaiData, TdaiImportReport, read_tdai
from memstrata.interchange.tdai.write import write_tdai
from memstrata.models import ExportReport

FORMATS = {"jsonl": write_jsonl, "tdai": write_tdai}


class ExportMethods(FacadeCore):
    @operation(ops.Export)
    async def export(self, op: ops.Export) -> ExportReport:
        out, format, user_id, agent_id = op.out, op.format, op.user_id, op.agent_id
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

    @operation(ops.ImportExport)
    async def import_export(self, op: ops.ImportExport) -> TdaiImportReport:
        self._writable("import")

        def read() -> TdaiData:
            root = Path(op.path).expanduser()
            return read_jsonl(root) if files.layout_of(root) == "jsonl" else read_tdai(root)

        return await self._write_import(await asyncio.to_thread(read))
