"""The ``tdai`` export layout: a TencentDB-Agent-Memory data directory that ``read_tdai`` (and
``memstrata import --from-tdai``) reads back identically::

    <out>/memstrata-export.json              manifest (TDAM ignores it)
    <out>/conversations/YYYY-MM-DD.jsonl     L0 in TDAM's camelCase, by the day each was stored
    <out>/records/YYYY-MM-DD.jsonl           L1, every version, by the day each was created
    <out>/profiles/<tenant folder>/scene_blocks/<scene>.md, persona.md, .metadata/scene_index.json

Times are epoch ms (``timestamp``) or ISO 8601 to the millisecond; memstrata's own fields
(``pinned``, ``expiresAt``, the index's atom ids) ride along where TDAM has none.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from memstrata.interchange import files
from memstrata.interchange.collect import TenantData
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2.scene_file import render_scene
from memstrata.models import Atom, ExportReport, Message

LAYOUT = "tdai"


def message_line(m: Message) -> dict[str, Any]:
    line: dict[str, Any] = {
        "id": m.id,
        "sessionKey": m.session_key,
        "sessionId": m.session_id,
        "role": str(m.role),
        "content": m.content,
        "timestamp": m.timestamp,
        "recordedAt": files.iso(m.recorded_at),
        "userId": m.tenant.user_id,
        "agentId": m.tenant.agent_id,
    }
    if m.name is not None:
        line["name"] = m.name
    if m.metadata:  # memstrata's own field: TDAI readers ignore it, ``import_tdai`` keeps it
        line["metadata"] = m.metadata
    return line


def record_line(a: Atom) -> dict[str, Any]:
    line: dict[str, Any] = {
        "id": a.id,
        "content": a.content,
        "type": str(a.type),
        "priority": a.priority,
        "scene_name": a.scene_name,
        "source_message_ids": list(a.source_message_ids),
        "metadata": a.metadata,
        "createdAt": files.iso(a.created_at),
        "updatedAt": files.iso(a.updated_at),
        "sessionKey": a.session_key,
        "userId": a.tenant.user_id,
        "agentId": a.tenant.agent_id,
        "version": a.version,
    }
    if a.superseded_by is not None:
        line["superseded_by"] = a.superseded_by
    if a.pinned:
        line["pinned"] = True
    if a.expires_at is not None:
        line["expiresAt"] = files.iso(a.expires_at)
    return line


def write_tdai(out: Path, data: Sequence[TenantData], now: int) -> ExportReport:
    """Write ``data`` to the fresh folder ``out``."""
    files.fresh_folder(out)
    written = _by_day(
        out / "conversations", ((m.recorded_at, message_line(m)) for d in data for m in d.messages)
    )
    written += _by_day(out / "records", ((a.created_at, record_line(a)) for d in data for a in d.atoms))
    personas = 0
    for d in data:
        written += _profile(out / "profiles" / d.tenant.folder, d)
        personas += d.persona is not None
    counts = {
        "messages": sum(len(d.messages) for d in data),
        "atoms": sum(len(d.atoms) for d in data),
        "scenes": sum(len(d.scenes) for d in data),
        "personas": personas,
    }
    return files.finish_export(out, LAYOUT, [d.tenant for d in data], counts, now, written)


def _by_day(folder: Path, items: Iterable[tuple[int, dict[str, Any]]]) -> int:
    """One file per UTC day; lines keep their order (tenant, then seq). Returns files written."""
    days: dict[str, list[dict[str, Any]]] = {}
    for ms, line in items:
        days.setdefault(files.day(ms), []).append(line)
    for name, found in days.items():
        files.write_lines(folder / f"{name}.jsonl", found)
    return len(days)


def _profile(folder: Path, d: TenantData) -> int:
    """Scene files, the scene index (atom ids included) and ``persona.md``; returns files written."""
    if not (d.scenes or d.persona is not None or d.membership):
        return 0
    for scene in d.scenes:
        files.write_text(folder / "scene_blocks" / scene.name, render_scene(scene))
    files.write_text(folder / ".metadata" / "scene_index.json", scene_index.to_json(d.entries))
    written = len(d.scenes) + 1
    if "#" in folder.name:  # a folder named by a hash: the full ids, as memstrata keeps them
        ids = {"user_id": d.tenant.user_id, "agent_id": d.tenant.agent_id}
        files.write_text(folder / ".metadata" / "tenant.json", json.dumps(ids) + "\n")
        written += 1
    if d.persona is not None:
        files.write_text(folder / "persona.md", d.persona)
        written += 1
    return written
