"""The ``jsonl`` export layout, and reading it back for import::

    <out>/memstrata-export.json    manifest: format, version, layout, tenants, counts
    <out>/messages.jsonl           L0, every field (``lines.message_line``), by tenant then seq
    <out>/atoms.jsonl              L1, every version with its links (``lines.atom_line``)
    <out>/scenes.jsonl             L2: one scene a line, META fields and body
    <out>/scene_members.jsonl      which scene holds which atom
    <out>/personas.jsonl           L3: ``persona.md`` as stored (``text``) and its body

``read_jsonl`` turns it into the ``TdaiData`` the TDAI import writes, so both layouts go through
one writer.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from memstrata.errors import InputError, MemstrataError
from memstrata.interchange import files
from memstrata.interchange.collect import TenantData
from memstrata.interchange.sessions import ImportSession
from memstrata.interchange.tdai.read import SkippedLine, TdaiData, TdaiProfile, persona_body
from memstrata.layers.l2 import names as scene_names
from memstrata.models import ExportReport, Message, NewMessage, Scene, Tenant, json_input, lines

LAYOUT = "jsonl"
T = TypeVar("T")


def write_jsonl(out: Path, data: Sequence[TenantData], now: int) -> ExportReport:
    """Write ``data`` to the fresh folder ``out``."""
    files.fresh_folder(out)
    counts = {
        "messages": files.write_lines(
            out / "messages.jsonl", (lines.message_line(m) for d in data for m in d.messages)
        ),
        "atoms": files.write_lines(out / "atoms.jsonl", (lines.atom_line(a) for d in data for a in d.atoms)),
        "scenes": files.write_lines(
            out / "scenes.jsonl", (lines.scene_line(d.tenant, s) for d in data for s in d.scenes)
        ),
        "scene_members": files.write_lines(
            out / "scene_members.jsonl",
            (
                {"user_id": d.tenant.user_id, "agent_id": d.tenant.agent_id, "atom_id": i, "scene": n}
                for d in data
                for i, n in sorted(d.membership.items())
            ),
        ),
        "personas": files.write_lines(
            out / "personas.jsonl",
            (
                {"user_id": d.tenant.user_id, "agent_id": d.tenant.agent_id, "text": d.persona}
                for d in data
                if d.persona is not None
            ),
        ),
    }
    return files.finish_export(
        out, LAYOUT, [d.tenant for d in data], counts, now, len(counts)
    )  # one file per count


def read_jsonl(root: Path) -> TdaiData:
    """The export at ``root`` as import data. A line that cannot be read is skipped and reported."""
    reader = _Reader(root)
    messages: list[Message] = list(reader.records("messages.jsonl", lines.message_of))
    atoms = tuple(reader.records("atoms.jsonl", lines.atom_of))
    scenes: dict[Tenant, list[Scene]] = {}
    for tenant, scene in reader.records("scenes.jsonl", _scene):
        scenes.setdefault(tenant, []).append(scene)
    members: dict[Tenant, dict[str, str]] = {}
    for tenant, atom_id, scene_name in reader.records("scene_members.jsonl", lines.member_of):
        members.setdefault(tenant, {})[atom_id] = scene_name
    personas = dict(reader.records("personas.jsonl", _persona))
    profiles = tuple(
        TdaiProfile(
            t,
            ".",
            tuple(sorted(scenes.get(t, []), key=lambda s: s.name)),
            personas.get(t),
            {},
            members.get(t, {}),
        )
        for t in dict.fromkeys([*scenes, *members, *personas])
    )
    recorded = {(m.tenant, m.id): m.recorded_at for m in messages}
    return TdaiData(tuple(_sessions(messages)), atoms, profiles, tuple(reader.skipped), 0, recorded)


class _Reader:
    def __init__(self, root: Path) -> None:
        if files.layout_of(root) != LAYOUT:
            raise InputError(
                f"{root} is not a memstrata export in the {LAYOUT} layout (no manifest saying so)"
            )
        self.root = root
        self.skipped: list[SkippedLine] = []

    def records(self, name: str, parse: Callable[[Mapping[str, Any]], T]) -> Iterator[T]:
        path = self.root / name
        if not path.is_file():
            return
        for n, raw in enumerate(path.read_bytes().splitlines(), start=1):
            if not raw.strip():
                continue
            try:
                obj = json_input.loads(raw)
                if not isinstance(obj, dict):
                    raise InputError("expected a JSON object")
                yield parse(obj)
            except MemstrataError as exc:
                self.skipped.append(SkippedLine(name, n, exc.message))


def _scene(line: Mapping[str, Any]) -> tuple[Tenant, Scene]:
    scene = lines.scene_of(line)
    if scene_names.normalise(scene.name) != scene.name:
        raise InputError(f"not a scene file name: {scene.name!r}", item="name")
    return lines.tenant_of(line), scene


def _persona(line: Mapping[str, Any]) -> tuple[Tenant, str | None]:
    text = line.get("text")
    if not isinstance(text, str):
        raise InputError("expected the persona's text", item="text")
    return lines.tenant_of(line), persona_body(text)


def _sessions(messages: Sequence[Message]) -> Iterator[ImportSession]:
    """Each session key's messages in export (seq) order, cut where the session id changes."""
    by_key: dict[tuple[Tenant, str], list[Message]] = {}
    for m in messages:
        by_key.setdefault((m.tenant, m.session_key), []).append(m)
    for (tenant, key), found in by_key.items():
        start = 0
        for i in range(1, len(found) + 1):
            if i == len(found) or found[i].session_id != found[start].session_id:
                run = tuple(
                    NewMessage(m.role, m.content, m.id, m.name, m.timestamp, m.metadata)
                    for m in found[start:i]
                )
                yield ImportSession(tenant, key, found[start].session_id, run)
                start = i
