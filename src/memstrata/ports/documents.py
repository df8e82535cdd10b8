"""L2 scenes and the L3 persona as documents: where they live, their backups, and the folder a
writer may touch; ``UpperLayers`` bundles them with their writers."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from memstrata.models import (
    Backup,
    FileProblem,
    Scene,
    SceneEntry,
    Tenant,
)
from memstrata.ports.engines import PersonaWriter, SceneWriter
from memstrata.ports.folder import Folder

# --- L2 scenes and the L3 persona -----------------------------------------------------------------


class SceneStore(Protocol):
    """L2 storage of a tenant: scene files, their index and backups of the scene folder.

    Scene files are the source of truth; the index is rebuilt from them by the pipeline.
    Every write replaces a file atomically.
    """

    def folder(self, tenant: Tenant) -> Folder:
        """The tenant's scene documents (``scene_blocks/``) as a ``Folder``: all a scene writer may
        touch. Its documents are what ``load`` parses."""
        ...

    def load(self, tenant: Tenant) -> list[Scene]:
        """Every readable scene file of the tenant, parsed, by name. Symlinks and other files are
        ignored; unreadable ones (binary, not UTF-8, control characters, a broken META block) are
        left out and recorded in ``problems``. Never writes."""
        ...

    def save(self, tenant: Tenant, scene: Scene) -> None:
        """Write ``scene`` to ``scene_blocks/<scene.name>`` in the META format (control characters
        dropped; an unreadable file of that name is set aside in ``.backup/`` first)."""
        ...

    def remove(self, tenant: Tenant, name: str) -> bool:
        """Delete ``scene_blocks/<name>`` (a normalised name); False when there was no such file.
        The index is left to the caller."""
        ...

    def tidy(self, tenant: Tenant) -> dict[str, str | None]:
        """Remove soft-deleted files (``[DELETED]``, empty, or META without body) and give the
        others normalised names. Returns ``{old name: new name, or None when removed}`` for the
        files it changed."""
        ...

    def index(self, tenant: Tenant) -> list[SceneEntry]:
        """The saved scene index (empty when none). Entries that name no valid scene file name are
        dropped and control characters removed (both recorded in ``problems``). Raises
        ``StoreError`` when the file is not an index."""
        ...

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        """Replace ``.metadata/scene_index.json``."""
        ...

    def backup(self, tenant: Tenant) -> str:
        """``repair`` the scene folder, then snapshot it and the index; prune old snapshots.
        Returns the snapshot id."""
        ...

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        """Make the scene folder and the index byte-identical to ``snapshot``.
        Raises ``StoreError`` when the snapshot is gone."""
        ...

    def backups(self, tenant: Tenant, name: str) -> list[Backup]:
        """The snapshots that hold scene ``name`` (a normalised name), newest first. Never writes."""
        ...

    def read_backup(self, tenant: Tenant, snapshot: str, name: str) -> str | None:
        """Scene ``name``'s document (META block and body) as ``snapshot`` holds it; None when
        there is no such snapshot (pruned, never made, not an id) or it does not hold that scene.
        Never writes."""
        ...

    def tenants(self) -> list[Tenant]:
        """Tenants that have a profile folder."""
        ...

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        """The tenant's unreadable files as this store's latest reads (``load``, ``index``) found
        them, by path; no I/O."""
        ...

    def check(self, tenant: Tenant) -> list[FileProblem]:
        """Read every scene file and the index now and return the unreadable ones. Never writes."""
        ...

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        """Set every unreadable scene file aside in ``.backup/`` and restore the newest readable
        copy from the scene snapshots (when there is one). Returns what it found and did.
        A writer's operation (call it under the tenant's lock)."""
        ...

    def erase(self, tenant: Tenant) -> int:
        """Delete everything stored for the tenant's scenes: files, index, snapshots, set-aside
        copies (the file store: the whole profile folder, so erase the persona first). Returns the
        files (or records) removed; 0 when there was nothing."""
        ...


class PersonaStore(Protocol):
    """L3 storage of a tenant: ``persona.md`` and its backups."""

    def folder(self, tenant: Tenant) -> Folder:
        """A ``Folder`` holding the tenant's ``persona.md`` alone: all a persona writer may touch.
        Its document is what ``read`` returns."""
        ...

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        """The persona file's text and modification time (ms), or None when there is none or it is
        unreadable (binary, not UTF-8, control characters: recorded in ``problems``). Never writes."""
        ...

    def write(self, tenant: Tenant, text: str) -> None:
        """Replace ``persona.md`` atomically (control characters dropped; an unreadable file there
        is set aside in ``.backup/`` first)."""
        ...

    def backup(self, tenant: Tenant) -> str | None:
        """``repair`` ``persona.md``, then snapshot it and prune old snapshots; None when there is no
        persona (yet, or any more after ``repair``)."""
        ...

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        """Put ``persona.md`` back as in ``snapshot`` (None: remove it, there was none)."""
        ...

    def backups(self, tenant: Tenant) -> list[Backup]:
        """The persona's snapshots, newest first. Never writes."""
        ...

    def read_backup(self, tenant: Tenant, snapshot: str) -> str | None:
        """The persona document as ``snapshot`` holds it; None when there is no such snapshot
        (pruned, never made, not an id). Never writes."""
        ...

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        """``persona.md`` when the latest ``read`` found it unreadable; no I/O."""
        ...

    def check(self, tenant: Tenant) -> list[FileProblem]:
        """Read ``persona.md`` now; ``[problem]`` when it is unreadable. Never writes."""
        ...

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        """Set an unreadable ``persona.md`` aside in ``.backup/`` and restore the newest readable
        backup (when there is none the persona is gone and the next L3 run writes a new one)."""
        ...

    def erase(self, tenant: Tenant) -> int:
        """Delete the tenant's persona and every backup of it. Returns the files removed."""
        ...


@dataclass(frozen=True, slots=True)
class UpperLayers:
    """The L2/L3 parts a memory needs: where scenes and the persona live, and who writes them."""

    scenes: SceneStore
    persona: PersonaStore
    scene_writer: SceneWriter
    persona_writer: PersonaWriter
