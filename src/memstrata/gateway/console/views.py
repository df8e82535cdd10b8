"""View models of the tenant pages: what a page shows, read through the facade and shaped for a
template. No memory logic here: each function reads (the same ``AsyncMemory`` methods the API
calls) and arranges; the templates only lay it out."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from memstrata.errors import NotFoundError
from memstrata.gateway.access import Principal
from memstrata.gateway.console.cache import TenantCache
from memstrata.gateway.console.diffs import Diff, diff, scene_text
from memstrata.gateway.console.render import day
from memstrata.gateway.context import who
from memstrata.models import (
    Atom,
    Backup,
    Counts,
    Persona,
    Scene,
    SceneEntry,
    Status,
    Tenant,
    TenantStatus,
)
from memstrata.operations import MemoryApi


@dataclass(frozen=True, slots=True)
class TenantRow:
    """One line of the home page: a tenant, its counts, when its pipeline last ran, its health."""

    tenant: Tenant
    counts: Counts
    state: TenantStatus | None
    backlog: int  # messages captured but not yet extracted
    problems: tuple[str, ...] = ()

    @property
    def health(self) -> str:
        if self.problems:
            return "failing"
        return "working" if self.backlog or (self.state and self.state.l3_pending) else "ok"


@dataclass(frozen=True, slots=True)
class BackupRow:
    """A backup of a scene or the persona, and what changed from it to the current version."""

    backup: Backup
    change: Diff


@dataclass(frozen=True, slots=True)
class Backups:
    """A document's backups, newest first, and the one the page shows the diff of (``?backup=``);
    ``gone`` names a requested backup that no longer exists (pruned since the link was made)."""

    rows: list[BackupRow] = field(default_factory=list)
    chosen: BackupRow | None = None
    gone: str | None = None


@dataclass(frozen=True, slots=True)
class Overview:
    persona: Persona | None
    scenes: list[SceneEntry]
    counts: Counts
    timeline: list[tuple[str, int, int]]  # (day, messages, atoms), oldest first
    backups: Backups = field(default_factory=Backups)


@dataclass(frozen=True, slots=True)
class SceneView:
    scene: Scene
    entry: SceneEntry | None
    atoms: list[Atom] = field(default_factory=list)
    backups: Backups = field(default_factory=Backups)


def problems_of(state: TenantStatus | None, errors: list[str]) -> tuple[str, ...]:
    found = list(errors)
    if state is not None:
        found += [f"L2: {state.l2_error}"] if state.l2_error else []
        found += [f"L3: {state.l3_error}"] if state.l3_error else []
    return tuple(found)


async def tenant_rows(mem: MemoryApi, principal: Principal, status: Status) -> list[TenantRow]:
    """The tenants this principal may see, with counts and their pipeline state in ``status``."""
    states = {s.tenant: s for s in status.tenants}
    rows = []
    for t in await mem.tenants():
        if not principal.may_reach(t):
            continue
        sessions = [s for s in status.sessions if s.tenant == t]
        errors = [f"L1 {s.session_key}: {s.last_error}" for s in sessions if s.last_error]
        counts = await mem.counts(**who(t))
        rows.append(
            TenantRow(
                t, counts, states.get(t), sum(s.lag for s in sessions), problems_of(states.get(t), errors)
            )
        )
    return rows


async def known(mem: MemoryApi, tenant: Tenant) -> None:
    """``NotFoundError`` for a tenant this memory holds nothing of (a typo in a URL)."""
    if tenant not in await mem.tenants():
        raise NotFoundError("tenant", tenant.user_id)


def atom_day(atom: Atom, said: dict[str, str]) -> str:
    """An atom's day: when its first source message was said (an import extracts a year of talk
    in one afternoon), else when it was made."""
    for source in atom.source_message_ids:
        if source in said:
            return said[source]
    return day(atom.created_at)


def backups_of(rows: list[BackupRow], chosen: str | None) -> Backups:
    found = next((r for r in rows if r.backup.id == chosen), None)
    return Backups(rows, found, chosen if chosen and found is None else None)


async def scene_backups(mem: MemoryApi, tenant: Tenant, scene: Scene, chosen: str | None) -> Backups:
    """The scene's backups, each diffed against the scene as it is now."""
    now = scene_text(scene.summary, scene.body)
    rows = []
    for b in await mem.scene_backups(scene.name, **who(tenant)):
        try:
            old = await mem.read_scene_backup(scene.name, b.id, **who(tenant))
        except NotFoundError:  # pruned since it was listed
            continue
        rows.append(BackupRow(b, diff(scene_text(old.summary, old.body), now)))
    return backups_of(rows, chosen)


async def persona_backups(
    mem: MemoryApi, tenant: Tenant, persona: Persona | None, chosen: str | None
) -> Backups:
    """The persona's backups, each body diffed against the current body (the navigation is
    regenerated from the scenes, so it is left out)."""
    now = persona.body if persona is not None else ""
    rows = []
    for b in await mem.persona_backups(**who(tenant)):
        try:
            old = await mem.read_persona_backup(b.id, **who(tenant))
        except NotFoundError:  # pruned since it was listed
            continue
        rows.append(BackupRow(b, diff(old.body, now)))
    return backups_of(rows, chosen)


async def overview(mem: MemoryApi, tenant: Tenant, kept: TenantCache, backup: str | None = None) -> Overview:
    """The persona with its backups (``backup``: the one to diff), its scenes (hottest first),
    counts per layer, and messages and atoms per day (an atom on the day its source was said)."""
    persona = await mem.persona(**who(tenant))
    scenes = sorted(await mem.scenes(**who(tenant)), key=lambda e: (-e.heat, e.name))
    counts = await mem.counts(**who(tenant))
    said = await kept.said(mem, tenant, counts)
    messages = Counter(said.values())
    atoms = Counter(atom_day(a, said) for a in await kept.atoms(mem, tenant, counts) if not a.superseded_by)
    timeline = [(d, messages.get(d, 0), atoms.get(d, 0)) for d in sorted(set(messages) | set(atoms))]
    return Overview(persona, scenes, counts, timeline, await persona_backups(mem, tenant, persona, backup))


async def scene_view(
    mem: MemoryApi, tenant: Tenant, name: str, kept: TenantCache, backup: str | None = None
) -> SceneView:
    """A scene, its index entry, the current atoms it consolidates, and its backups (``backup``:
    the one to diff against the scene as it is now)."""
    scene = await mem.read_scene(name, **who(tenant))
    entry = next((e for e in await mem.scenes(**who(tenant)) if e.name == scene.name), None)
    backups = await scene_backups(mem, tenant, scene, backup)
    ids = set(entry.atom_ids) if entry else set()
    if not ids:
        return SceneView(scene, entry, [], backups)
    every = await kept.atoms(mem, tenant, await mem.counts(**who(tenant)))
    return SceneView(scene, entry, [a for a in every if a.id in ids and not a.superseded_by], backups)
