"""``FileSceneStore``: the ``SceneStore`` of the embedded backend (see ``layout`` for the folders).

Reads never write: an unreadable scene file is left out and recorded; ``repair`` (a writer's
operation, also run before every backup) sets it aside and restores the newest readable copy. A
good read of the index is kept while the file is unchanged (``read_cache``: recall reads it
before every prompt).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Sequence
from pathlib import Path

from memstrata.errors import StoreError, storage_errors
from memstrata.layers.l2 import index as scene_index
from memstrata.layers.l2 import names
from memstrata.layers.l2.scene_file import (
    is_soft_deleted,
    one_line,
    parse_scene,
    render_scene,
    scene_problem,
    strip_controls,
    text_problem,
)
from memstrata.models import Backup, FileProblem, Scene, SceneEntry, Tenant
from memstrata.stores.files import health, snapshots
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.folder import DirectoryFolder
from memstrata.stores.files.layout import INDEX, SCENES, Layout, mtime_ms, remove_tree
from memstrata.stores.files.modes import make_dirs
from memstrata.stores.files.read_cache import ReadCache, signature

log = logging.getLogger(__name__)
INDEX_PATH = f".metadata/{INDEX}"
SNAPSHOT = "scenes-"  # the names of scene-folder snapshots in .backup/


def _normal(name: str) -> None:
    if names.normalise(name) != name:
        raise StoreError(f"not a normalised scene file name: {name!r}")


def _regular(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


class FileSceneStore:
    """Scene files, index and scene backups (``keep`` snapshots) of every tenant under ``root``."""

    def __init__(self, root: Path, *, keep: int = 10) -> None:
        self.layout = Layout(root)
        self._keep = keep
        self._log = health.ProblemLog()
        self._indexes: ReadCache[tuple[SceneEntry, ...]] = ReadCache()

    def folder(self, tenant: Tenant) -> DirectoryFolder:
        return DirectoryFolder(self._scene_dir(tenant))

    def _scene_dir(self, tenant: Tenant) -> Path:
        """The tenant's ``scene_blocks/``, created when missing."""
        self.layout.ensure(tenant)
        path = self.layout.scenes(tenant)
        with storage_errors(path):
            make_dirs(path)
        return path

    def load(self, tenant: Tenant) -> list[Scene]:
        scenes = []
        files = snapshots.scene_files(self.layout.scenes(tenant))
        for p in files:
            raw, problem = health.read_checked(p, scene_problem)
            self._note(tenant, p.name, problem)
            if raw is not None and problem is None:
                scenes.append(parse_scene(p.name, raw.decode("utf-8"), mtime_ms(p)))
        self._log.only(tenant, f"{SCENES}/", [f"{SCENES}/{p.name}" for p in files])
        return scenes

    def _note(self, tenant: Tenant, name: str, problem: str | None) -> None:
        path = f"{SCENES}/{name}"
        if problem is None:
            self._log.fine(tenant, path)
        elif self._log.found(FileProblem(tenant, path, problem)):  # once, not at every read
            log.warning("%s: %s is unreadable (%s); left out", tenant, path, problem)

    def save(self, tenant: Tenant, scene: Scene) -> None:
        if names.normalise(scene.name) != scene.name:
            raise StoreError(f"not a normalised scene file name: {scene.name!r}")
        target = self._scene_dir(tenant) / scene.name
        if any(p.path == f"{SCENES}/{scene.name}" for p in self._log.of(tenant)) and target.is_file():
            health.set_aside(target, self.layout.backups(tenant))  # keep the bad bytes, not overwrite
        atomic_write(target, render_scene(scene))
        self._log.fine(tenant, f"{SCENES}/{scene.name}")

    def remove(self, tenant: Tenant, name: str) -> bool:
        if names.normalise(name) != name:
            raise StoreError(f"not a normalised scene file name: {name!r}")
        path = self.layout.scenes(tenant) / name
        if path.is_symlink() or not path.is_file():
            return False
        path.unlink()
        return True

    def tidy(self, tenant: Tenant) -> dict[str, str | None]:
        folder = self._scene_dir(tenant)
        changes: dict[str, str | None] = {}
        kept: list[Path] = []
        with storage_errors(folder):
            for p in snapshots.scene_files(folder):
                raw = p.read_bytes()
                if text_problem(raw) is None and is_soft_deleted(raw.decode("utf-8")):
                    p.unlink()
                    changes[p.name] = None
                else:
                    kept.append(p)
            moving = {old: new for old, new in names.assign([p.name for p in kept]).items() if old != new}
            # Through short hidden names first, so a chain of renames (a -> b while b -> c) never
            # overwrites, and a long name never grows past the file-name limit.
            for i, old in enumerate(moving):
                (folder / old).rename(folder / f".renaming-{i}")
            for i, (old, new) in enumerate(moving.items()):
                (folder / f".renaming-{i}").rename(folder / new)
                changes[old] = new
        if changes:
            log.info("scene cleanup for %s: %s", tenant, changes)
        return changes

    def index(self, tenant: Tenant) -> list[SceneEntry]:
        path = self.layout.index(tenant)
        if not path.is_file():
            self._log.fine(tenant, INDEX_PATH)
            return []
        seen = signature(path)
        if (kept := self._indexes.get(tenant, seen)) is not None:
            return list(kept)
        raw, problem = health.read_checked(path, text_problem)
        if raw is None or problem is not None:
            problem = problem or "cannot be read"
            self._log.found(FileProblem(tenant, INDEX_PATH, problem))
            raise StoreError(f"scene index {path} is unreadable: {problem}", tenant=str(tenant))
        try:
            entries = scene_index.from_json(raw.decode("utf-8"))
        except StoreError as exc:
            self._log.found(FileProblem(tenant, INDEX_PATH, exc.message))
            raise
        valid = self._valid_entries(tenant, entries)
        self._indexes.put(tenant, seen, tuple(valid))
        return valid

    def _valid_entries(self, tenant: Tenant, entries: list[SceneEntry]) -> list[SceneEntry]:
        """Entries naming a normal scene file, with summaries made safe for the navigation."""
        kept = [e for e in entries if names.normalise(e.name) == e.name]
        dropped = [e.name for e in entries if names.normalise(e.name) != e.name]
        if dropped:
            problem = f"{len(dropped)} entries name no valid scene file (e.g. {dropped[0][:60]!r}): left out"
            self._log.found(FileProblem(tenant, INDEX_PATH, problem))
        else:
            self._log.fine(tenant, INDEX_PATH)
        out = []
        for e in kept:
            clean = one_line(strip_controls(e.summary))
            out.append(
                e
                if clean == e.summary
                else SceneEntry(e.name, clean, e.heat, e.created, e.updated, e.atom_ids)
            )
        return out

    def save_index(self, tenant: Tenant, entries: Sequence[SceneEntry]) -> None:
        self.layout.ensure(tenant)
        atomic_write(self.layout.index(tenant), scene_index.to_json(entries))
        self._log.fine(tenant, INDEX_PATH)

    def backup(self, tenant: Tenant) -> str:
        self.repair(tenant)
        with storage_errors(self.layout.backups(tenant)):
            return snapshots.snapshot_scenes(
                self._scene_dir(tenant), self.layout.index(tenant), self.layout.backups(tenant), self._keep
            )

    def restore(self, tenant: Tenant, snapshot: str) -> None:
        with storage_errors(self.layout.scenes(tenant)):
            snapshots.restore_scenes(
                self._scene_dir(tenant), self.layout.index(tenant), self.layout.backups(tenant), snapshot
            )

    def backups(self, tenant: Tenant, name: str) -> list[Backup]:
        _normal(name)
        return [
            Backup(s.name, snapshots.made_at(s))
            for s in snapshots.newest_first(self.layout.backups(tenant), SNAPSHOT)
            if s.is_dir() and not s.is_symlink() and _regular(s / name)
        ]

    def read_backup(self, tenant: Tenant, snapshot: str, name: str) -> str | None:
        _normal(name)
        folder = snapshots.named(self.layout.backups(tenant), snapshot, SNAPSHOT)
        if folder is None or not folder.is_dir() or not _regular(folder / name):
            return None
        raw, problem = health.read_checked(folder / name, text_problem)
        return raw.decode("utf-8") if raw is not None and problem is None else None

    def tenants(self) -> list[Tenant]:
        return self.layout.tenants()

    def erase(self, tenant: Tenant) -> int:
        """The whole profile folder goes: scenes, index, snapshots, set-aside files, the tenant's
        ids, and whatever the persona store left in it (erase the persona first)."""
        removed = remove_tree(self.layout.profile(tenant))
        self._log.drop(tenant)
        self._indexes.drop(tenant)
        return removed

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        return self._log.of(tenant)

    def check(self, tenant: Tenant) -> list[FileProblem]:
        self.load(tenant)
        with contextlib.suppress(StoreError):  # recorded by index()
            self.index(tenant)
        return self.problems(tenant)

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        done = []
        backups = self.layout.backups(tenant)
        for p in snapshots.scene_files(self.layout.scenes(tenant)):
            raw, problem = health.read_checked(p, scene_problem)
            if problem is None or raw is None:  # fine, or not even readable: left in place
                continue
            kept_as = health.set_aside(p, backups)
            good = health.newest_readable(
                (s / p.name for s in snapshots.newest_first(backups, SNAPSHOT)), scene_problem
            )
            if good is not None:
                atomic_write(p, good.read_bytes())
            source = good.parent.name if good is not None else None
            found = FileProblem(tenant, f"{SCENES}/{p.name}", problem, kept_as, source)
            log.warning("%s", found)
            self._log.fine(tenant, found.path)
            done.append(found)
        return done
