"""Read a TencentDB-Agent-Memory data directory into memstrata's records (no store access)::

    <dir>/conversations/YYYY-MM-DD.jsonl   L0: one message a line
    <dir>/records/YYYY-MM-DD.jsonl         L1: one memory a line (a later line with the same id wins)
    <dir>/scene_blocks/*.md, persona.md    L2/L3 of the default tenant
    <dir>/profiles/<p>/scene_blocks/*.md, profiles/<p>/persona.md   L2/L3 per tenant

A profile's ``.metadata/scene_index.json`` (memstrata's own, as its exports write it) gives which
scene holds which atom; ``recordedAt`` of a message line is kept as its store time; ``pinned`` and
``expiresAt`` of a records line are read (memstrata's own fields; TDAM has none).

Field names may be camelCase or snake_case; optional fields may be missing. A line that cannot be
read is skipped and reported (``TdaiData.skipped``: file and line), never dropped silently. A line's
tenant comes from its ``userId``/``agentId`` (``default`` when absent); a profile folder's from its
name: ``u=<user>,a=<agent>`` (percent-encoded, memstrata's own layout) or just ``<user>``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memstrata.errors import InputError, MemstrataError
from memstrata.interchange.seed import parse_timestamp
from memstrata.interchange.sessions import ImportSession
from memstrata.interchange.tdai.fields import (
    SUPERSEDED,
    day_ms,
    parse_atom,
    parse_message,
    profile_tenant,
    recorded_at,
    with_message_time,
)
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l2.scene_file import is_soft_deleted, parse_scene, parse_time, split_meta
from memstrata.layers.l3 import persona_doc
from memstrata.models import Atom, NewMessage, Scene, Tenant, json_input
from memstrata.models.validation import type_name

__all__ = [
    "SUPERSEDED",
    "SkippedLine",
    "TdaiData",
    "TdaiImportReport",
    "TdaiProfile",
    "persona_body",
    "profile_tenant",
    "read_tdai",
]
log = logging.getLogger(__name__)

# TDAI's navigation starts at "---" + "## 🗺️ Scene Navigation (Scene Index)"; tolerate variants.
_TDAI_NAV = re.compile(r"^(?:-{3,}[ \t]*\n)?#{1,6}[^\n]*(?:scene navigation|场景导航)[^\n]*$", re.I | re.M)


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line that could not be read (``line`` 0: the whole file). ``path`` is relative to the
    data directory."""

    path: str
    line: int
    error: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.error}" if self.line else f"{self.path}: {self.error}"


@dataclass(frozen=True, slots=True)
class TdaiProfile:
    """One tenant's L2/L3: scenes under normalised file names, and the persona body (navigation
    stripped, not escaped; None when there is none). ``renamed`` maps original file names to the
    normalised ones where they differ."""

    tenant: Tenant
    folder: str  # relative to the data directory; "." for the top level
    scenes: tuple[Scene, ...] = ()
    persona: str | None = None
    renamed: Mapping[str, str] = field(default_factory=dict)
    membership: Mapping[str, str] = field(default_factory=dict)  # atom id -> scene (from the index)


@dataclass(frozen=True, slots=True)
class TdaiData:
    """Everything read. ``sessions`` are runs of one ``session_id`` within a ``session_key``, in
    time order (a session key's runs are consecutive); ``duplicates`` counts lines repeating an id
    already read (for messages the first is kept, for records the last)."""

    sessions: tuple[ImportSession, ...]
    atoms: tuple[Atom, ...]
    profiles: tuple[TdaiProfile, ...]
    skipped: tuple[SkippedLine, ...] = ()
    duplicates: int = 0
    recorded: Mapping[tuple[Tenant, str], int] = field(default_factory=dict)  # message store times


@dataclass(frozen=True, slots=True)
class TdaiImportReport:
    """What an import wrote, and what it left: counts per layer, unreadable lines, degradations
    (e.g. vectors not written, or no scene store to hold scenes)."""

    sessions: int = 0
    messages_stored: int = 0
    messages_present: int = 0
    messages_dropped: int = 0  # sanitised away as noise by capture
    atoms_stored: int = 0
    atoms_present: int = 0
    scenes_written: int = 0
    scenes_present: int = 0  # a scene file of that name exists: kept as it is
    scenes_renamed: int = 0  # file names normalised (e.g. ``Home Baking.md`` -> ``home-baking.md``)
    personas_written: int = 0
    personas_present: int = 0  # the tenant has a persona: kept as it is
    skipped: tuple[SkippedLine, ...] = ()
    duplicates: int = 0
    degradations: tuple[str, ...] = ()


@dataclass(slots=True)
class _Line:
    where: str  # "path:line"
    order: int
    obj: Mapping[str, Any]


def read_tdai(root: Path) -> TdaiData:
    """Read the data directory ``root``. Raises ``InputError`` when it is not a directory or
    holds none of ``conversations/``, ``records/``, ``scene_blocks/``, ``persona.md``, ``profiles/``."""
    if not root.is_dir():
        raise InputError(f"{root} is not a directory")
    parts = ("conversations", "records", "scene_blocks", "persona.md", "profiles")
    if not any((root / p).exists() for p in parts):
        raise InputError(f"{root} is not a TencentDB-Agent-Memory data directory: none of {', '.join(parts)}")
    reader = _Reader(root)
    sessions, times, message_dups = reader.messages()
    atoms, atom_dups = reader.atoms(times)
    profiles = reader.profiles()
    dups = message_dups + atom_dups
    return TdaiData(sessions, atoms, profiles, tuple(reader.skipped), dups, reader.recorded)


class _Reader:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.skipped: list[SkippedLine] = []
        self.recorded: dict[tuple[Tenant, str], int] = {}

    def skip(self, path: str, line: int, error: str) -> None:
        log.warning("skipped %s:%d: %s", path, line, error)
        self.skipped.append(SkippedLine(path, line, error))

    def lines(self, folder: str) -> Iterator[_Line]:
        """Every JSON object line of ``folder/*.jsonl``, by file name then line."""
        base = self.root / folder
        order = 0
        for path in sorted(base.glob("*.jsonl")) if base.is_dir() else []:
            rel = path.relative_to(self.root).as_posix()
            try:
                raw_lines = path.read_bytes().splitlines()
            except OSError as exc:
                self.skip(rel, 0, f"unreadable: {exc}")
                continue
            for n, raw in enumerate(raw_lines, start=1):
                if not raw.strip():
                    continue
                try:
                    obj = json_input.loads(raw)
                except InputError as exc:
                    self.skip(rel, n, f"not a JSON line: {exc}")
                    continue
                if not isinstance(obj, dict):
                    self.skip(rel, n, f"expected a JSON object, got {type_name(obj)}")
                    continue
                order += 1
                yield _Line(f"{rel}:{n}", order, obj)

    def messages(self) -> tuple[tuple[ImportSession, ...], dict[tuple[Tenant, str], int], int]:
        """Sessions, ``(tenant, message id) -> timestamp`` and the count of repeated ids."""
        found: dict[tuple[Tenant, str], list[tuple[int, int, str, NewMessage]]] = {}
        seen: set[tuple[Tenant, str]] = set()
        times: dict[tuple[Tenant, str], int] = {}
        dups = 0
        last_ts = 0
        for line in self.lines("conversations"):
            try:
                tenant, key, session_id, msg = parse_message(line.obj)
            except MemstrataError as exc:
                self._skip_at(line, exc)
                continue
            assert msg.id is not None  # parse_message always sets one
            if (tenant, msg.id) in seen:
                dups += 1
                continue
            seen.add((tenant, msg.id))
            if (stored := recorded_at(line.obj)) is not None:
                self.recorded[(tenant, msg.id)] = stored
            # A message without a time sorts with the one read before it.
            last_ts = msg.timestamp if msg.timestamp is not None else last_ts
            if msg.timestamp is not None:
                times[(tenant, msg.id)] = msg.timestamp
            found.setdefault((tenant, key), []).append((last_ts, line.order, session_id, msg))
        sessions = [s for (tenant, key), rows in found.items() for s in _runs(tenant, key, rows)]
        return tuple(sessions), times, dups

    def atoms(self, times: Mapping[tuple[Tenant, str], int]) -> tuple[tuple[Atom, ...], int]:
        """Atoms in file order of their last line; a repeated id replaces the earlier line."""
        by_id: dict[tuple[Tenant, str], Atom] = {}
        dups = 0
        for line in self.lines("records"):
            try:
                atom = with_message_time(parse_atom(line.obj, day_ms(line.where)), times)
            except MemstrataError as exc:
                self._skip_at(line, exc)
                continue
            key = (atom.tenant, atom.id)
            if key in by_id:
                dups += 1
                del by_id[key]  # re-insert: the atom takes the place of its last version
            by_id[key] = atom
        return tuple(by_id.values()), dups

    def _skip_at(self, line: _Line, exc: MemstrataError) -> None:
        path, _, n = line.where.rpartition(":")
        self.skip(path, int(n), exc.message)

    def profiles(self) -> tuple[TdaiProfile, ...]:
        found: list[TdaiProfile] = []
        if (self.root / "scene_blocks").is_dir() or (self.root / "persona.md").is_file():
            found.append(self.profile(self.root, Tenant()))
        base = self.root / "profiles"
        for folder in sorted(base.iterdir()) if base.is_dir() else []:
            if folder.is_dir() and not folder.is_symlink() and not folder.name.startswith("."):
                found.append(self.profile(folder, _folder_tenant(folder)))
        return tuple(found)

    def profile(self, folder: Path, tenant: Tenant) -> TdaiProfile:
        texts: dict[str, tuple[str, int]] = {}
        blocks = folder / "scene_blocks"
        for path in sorted(blocks.glob("*.md")) if blocks.is_dir() else []:
            text = None if path.is_symlink() else self.text(path)
            if text is None:
                continue
            if is_soft_deleted(text):
                log.info("left out %s: an empty or deleted scene", path)
                continue
            texts[path.name] = (text, path.stat().st_mtime_ns // 1_000_000)
        normal = scene_names.assign(texts)
        scenes = tuple(sorted((_scene(normal[n], *texts[n]) for n in texts), key=lambda s: s.name))
        persona = self.text(folder / "persona.md") if (folder / "persona.md").is_file() else None
        rel = folder.relative_to(self.root).as_posix()
        renamed = {old: new for old, new in normal.items() if old != new}
        membership = self.membership(folder, normal)
        body = persona_body(persona) if persona else None
        return TdaiProfile(tenant, rel, scenes, body, renamed, membership)

    def membership(self, folder: Path, normal: Mapping[str, str]) -> dict[str, str]:
        """``atom id -> scene`` from memstrata's ``.metadata/scene_index.json`` (scene names as
        normalised on import); empty when there is none. An unreadable index is reported."""
        path = folder / ".metadata" / "scene_index.json"
        if not path.is_file():
            return {}
        text = self.text(path)
        try:
            entries = scene_index.from_json(text) if text is not None else []
        except MemstrataError as exc:
            self.skip(path.relative_to(self.root).as_posix(), 0, exc.message)
            return {}
        return {i: normal[e.name] for e in entries if e.name in normal for i in e.atom_ids}

    def text(self, path: Path) -> str | None:
        try:
            return path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            self.skip(path.relative_to(self.root).as_posix(), 0, f"unreadable: {exc}")
            return None


def _folder_tenant(folder: Path) -> Tenant:
    """A profile folder's tenant: from its name, or (memstrata's folders named by a hash, for ids
    too long for a name) from ``.metadata/tenant.json``."""
    ids = folder / ".metadata" / "tenant.json"
    if "#" in folder.name and ids.is_file():
        try:
            doc = json_input.loads(ids.read_bytes(), str(ids))
            if isinstance(doc, dict):
                return Tenant(str(doc["user_id"]), str(doc["agent_id"]))
        except (OSError, KeyError, InputError) as exc:
            log.warning("%s: cannot read the tenant (%s); named from the folder", ids, exc)
    return profile_tenant(folder.name)


def _runs(tenant: Tenant, key: str, rows: list[tuple[int, int, str, NewMessage]]) -> Iterator[ImportSession]:
    """A session key's messages by time (then line order), cut where the session id changes."""
    rows = sorted(rows, key=lambda r: (r[0], r[1]))
    start = 0
    for i in range(1, len(rows) + 1):
        if i == len(rows) or rows[i][2] != rows[start][2]:
            yield ImportSession(tenant, key, rows[start][2], tuple(r[3] for r in rows[start:i]))
            start = i


# --- L2 / L3 --------------------------------------------------------------------------------------


def _scene(name: str, text: str, mtime: int) -> Scene:
    """A scene file parsed by memstrata's META reader; TDAI's ISO 8601 META times are read too."""
    scene = parse_scene(name, text, mtime)
    fields, _ = split_meta(text)
    if not fields:
        return scene
    created = _meta_time(fields.get("created", "")) or scene.created
    updated = _meta_time(fields.get("updated", "")) or created
    return replace(scene, created=created, updated=updated)


def _meta_time(text: str) -> int | None:
    if not text.strip():
        return None
    found = parse_time(text)
    if found is not None:
        return found
    try:
        return parse_timestamp(text.strip(), "meta")
    except InputError:
        return None


def persona_body(text: str) -> str | None:
    """The persona body of a ``persona.md``: TDAI's or memstrata's scene navigation cut off;
    None when nothing is left."""
    body = persona_doc.strip_navigation(text)
    match = _TDAI_NAV.search(body)
    if match is not None:
        body = body[: match.start()]
    return body.strip() or None
