"""Operations that bring history in and take memory out: sessions, seed JSON, TencentDB-Agent-Memory
directories and exports. Those that read or write a folder run where the folder is: over HTTP
they say what to run on the server's host."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Annotated, ClassVar

from pydantic import Field

from memstrata.interchange.sessions import ImportReport, ImportSession
from memstrata.interchange.tdai.read import TdaiImportReport
from memstrata.models import DEFAULT, ExportReport
from memstrata.operations.base import Operation, Route

Progress = Callable[[str, int, int], None]  # (stage, done, total)


@dataclass(frozen=True, slots=True)
class ImportSessions(Operation[ImportReport]):
    """Capture whole sessions of history (seed files, LoCoMo, the gateway's seed route), then,
    with ``process``, end each session and run the pipeline to L3. Messages without an id get
    one derived from their tenant, session, position, role and text, so importing the same
    history again stores nothing. ``on_progress(stage, done, total)`` follows each stage (not
    over HTTP, where the sessions go as seed JSON, their tenants included)."""

    ROUTE: ClassVar[Route] = Route("POST", "/v1/import")
    sessions: Sequence[ImportSession]
    _: KW_ONLY
    process: bool = True
    on_progress: Progress | None = None


@dataclass(frozen=True, slots=True)
class ImportSeed(Operation[ImportReport]):
    """Import seed history (``{"sessions": [...]}`` or ``[...]``, see ``importers.seed``) with
    ``import_sessions``; sessions that name no tenant go to this one."""

    # Idempotent: messages without ids get stable ones, so a retry stores nothing twice.
    ROUTE: ClassVar[Route] = Route("POST", "/v1/import")
    data: Annotated[
        object, Field(description='Seed history: {"sessions": [...]} or [...] (see docs/http-api.md).')
    ]
    _: KW_ONLY
    process: Annotated[bool, Field(description="Run L1 on each imported session before answering.")] = False
    user_id: str = DEFAULT
    agent_id: str = DEFAULT


@dataclass(frozen=True, slots=True)
class ImportTdai(Operation[TdaiImportReport]):
    """Import a TencentDB-Agent-Memory data directory: messages, atoms (ids, types, priorities,
    scene names and source message ids kept), scene files and personas of every tenant.

    Idempotent: what the memory already has (message and atom ids, scene file names, a persona)
    is kept as it is. Imported messages are not extracted again, and atoms the imported scenes
    consolidate are not consolidated again. The pipeline is held off while it writes.
    Unreadable lines are skipped and reported. Raises ``InputError`` when ``path`` is not such
    a directory.
    """

    ROUTE: ClassVar[Route] = Route(
        "POST",
        "",
        local="import_tdai reads a directory on the machine it runs on: run `memstrata import "
        "--from-tdai` on the server's host (or import seed JSON with import_seed)",
    )
    path: str | Path


@dataclass(frozen=True, slots=True)
class Export(Operation[ExportReport]):
    """Write every layer of a tenant (``user_id`` and ``agent_id``), of every agent of a user
    (``agent_id`` None) or of every tenant (both None) into the new folder ``out``:
    ``jsonl`` (one file per layer, all fields and links) or ``tdai`` (a
    TencentDB-Agent-Memory data directory). ``import_export`` (or, for ``tdai``,
    ``import_tdai``) reads it back identically. The pipeline is held off while it reads."""

    ROUTE: ClassVar[Route] = Route(
        "POST",
        "",
        local="export writes a folder on the machine it runs on: run `memstrata export` on the server's host",
    )
    out: str | Path
    _: KW_ONLY
    format: str = "jsonl"
    user_id: str | None = None
    agent_id: str | None = None


@dataclass(frozen=True, slots=True)
class ImportExport(Operation[TdaiImportReport]):
    """Import a memstrata export (either layout) or a TencentDB-Agent-Memory directory, as
    ``import_tdai`` does: idempotent, ids, versions, links, scenes and personas kept."""

    ROUTE: ClassVar[Route] = Route(
        "POST",
        "",
        local="import_export reads a folder on the machine it runs on: run `memstrata import "
        "--from-export` on the server's host",
    )
    path: str | Path
