"""L2 scenes and the L3 persona as records."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.models.records import Tenant


@dataclass(frozen=True, slots=True)
class Scene:
    """An L2 scene document: the file ``scene_blocks/<name>``, a META header and a Markdown body.

    Times are ms since the epoch (the file keeps minutes). ``heat`` grows with consolidation and
    recall hits.
    """

    name: str  # file name inside scene_blocks/, e.g. ``family.md``
    summary: str
    heat: int
    created: int
    updated: int
    body: str


@dataclass(frozen=True, slots=True)
class SceneEntry:
    """One line of ``.metadata/scene_index.json``: a scene's META and the atom ids it consolidates."""

    name: str
    summary: str
    heat: int
    created: int
    updated: int
    atom_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Persona:
    """The L3 persona of a tenant: ``persona.md`` split into the body and the scene navigation."""

    tenant: Tenant
    body: str
    navigation: str
    updated: int  # ms


@dataclass(frozen=True, slots=True)
class Backup:
    """A copy of a scene or the persona that a store took before a write replaced it: ``id`` reads
    it back (``scenes-...``, ``persona-...``: opaque, sorting by age), ``made_at`` when (ms)."""

    id: str
    made_at: int


@dataclass(frozen=True, slots=True)
class FileProblem:
    """A scene, index or persona file that could not be used: never parsed, never injected.

    Reads skip such a file and record it (``problems``); ``repair`` sets its bytes aside in
    ``.backup/`` (``kept_as``) and restores the newest readable backup of it (``restored_from``).
    """

    tenant: Tenant
    path: str  # inside the tenant's profile folder, e.g. ``scene_blocks/work.md``, ``persona.md``
    reason: str  # e.g. ``not UTF-8 text (invalid byte at offset 12)``
    kept_as: str | None = None  # after repair: where the unreadable bytes were moved
    restored_from: str | None = None  # after repair: the backup the file was restored from

    def __str__(self) -> str:
        """One line, e.g. ``alice/default: persona.md is unreadable (...); restored from persona-...``."""
        text = f"{self.tenant}: {self.path} is unreadable ({self.reason})"
        if self.restored_from is not None:
            return f"{text}; restored from backup {self.restored_from}, the bad copy kept as {self.kept_as}"
        if self.kept_as is not None:
            return f"{text}; no readable backup: moved to {self.kept_as}"
        return text
