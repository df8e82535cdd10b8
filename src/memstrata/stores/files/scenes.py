"""``FileSceneStore``: the ``SceneStore`` of the embedded backend (see ``layout`` for the folders)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from memstrata.atomic import atomic_write
from memstrata.errors import StoreError
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names
from memstrata.layers.l2.scene_file import is_soft_deleted, parse_scene, render_scene
from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.stores.files import snapshots
from memstrata.stores.files.layout import Layout, mtime_ms

log = logging.getLogger(__name__)


class FileSceneStore:
    """Scene files, index and scene backups (``keep`` snapshots) of every tenant under ``root``."""

    def __init__(self, root: Path, *, keep: int = 10) -> None:
        self.layout = Layout(root)
        self._keep = keep

    def folder(self, tenant: Tenant) -> Path:
        path = self.layout.scenes(tenant)
        path.mkdir(parents=True, exist_ok=True)
        return path

    def load(self, tenant: Tenant) -> list[Scene]:
        return [
            parse_scene(p.name, p.read_text(encoding="utf-8", errors="replace"), mtime_ms(p))
            for p in snapshots.scene_files(self.layout.scenes(tenant))
        ]

    def save(self, tenant: Tenant, scene: Scene) -> None:
        if names.normalise(scene.name) != scene.name:
            raise StoreError(f"not a normalised scene file name: {scene.name!r}")
        atomic_write(self.folder(tenant) / scene.name, render_scene(scene))

    def remove(self, tenant: Tenant, name: str) -> bool:
        if names.normalise(name) != name:
            raise StoreError(f"not a normalised scene file name: {name!r}")
        path = self.layout.scenes(tenant) / name
        if path.is_symlink() or not path.is_file():
            return False
        path.unlink()
        return True

    def tidy(self, tenant: Tenant) -> dict[str, str | None]:
        folder = self.folder(tenant)
        changes: dict[str, str | None] = {}
        kept: list[Path] = []
        for p in snapshots.scene_files(folder):
            if is_soft_deleted(p.read_text(encoding="utf-8", errors="replace")):
                p.unlink()
                changes[p.name] = None
            else:
                kept.append(p)
        moving = {old: new for old, new in names.assign([p.name for p in kept]).items() if old != new}
        # Through hidden names first, so a chain of renames (a -> b while b -> c) never overwrites.
        for old in moving:
            (folder / old).rename(folder / f".{old}.renaming")
        for old, new in moving.items():
            (folder / f".{old}.renaming").rename(folder / new)
            changes[old] = new
        if changes:
            log.info("scene cleanup for %s: %s", tenant, changes)
        return changes

    def index(self, tenant: Tenant) -> list[SceneEntry]:
        path = self.layout.index(tenant)
        if not path.is_file():
            return []
        return scene_index.from_json(path.read_text(encoding="utf-8"))

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        atomic_write(self.layout.index(tenant), scene_index.to_json(entries))

    def backup(self, tenant: Tenant) -> str:
        return snapshots.snapshot_scenes(
            self.folder(tenant), self.layout.index(tenant), self.layout.backups(tenant), self._keep
        )

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        snapshots.restore_scenes(
            self.folder(tenant), self.layout.index(tenant), self.layout.backups(tenant), snapshot
        )

    def tenants(self) -> list[Tenant]:
        return self.layout.tenants()
