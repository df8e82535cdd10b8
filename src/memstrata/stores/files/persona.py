"""``FilePersonaStore``: the ``PersonaStore`` of the embedded backend (``profiles/<tenant>/persona.md``).

Reads never write: an unreadable ``persona.md`` reads as no persona and is recorded; ``repair`` (a
writer's operation, also run before every backup) sets it aside and restores the newest readable
backup. A good read is kept while the file is unchanged (``read_cache``: recall reads it before
every prompt).
"""

from __future__ import annotations

import logging
from pathlib import Path

from memstrata.errors import StoreError, storage_errors
from memstrata.layers.l2.scene_file import strip_controls, text_problem
from memstrata.models import Backup, FileProblem, Tenant
from memstrata.stores.files import health, snapshots
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.folder import DirectoryFolder
from memstrata.stores.files.layout import PERSONA, Layout, mtime_ms, remove_tree
from memstrata.stores.files.modes import make_dirs
from memstrata.stores.files.read_cache import ReadCache, signature

log = logging.getLogger(__name__)
PREFIX = "persona-"


class FilePersonaStore:
    """``persona.md`` of every tenant under ``root``, with ``keep`` backups in ``.backup/``."""

    def __init__(self, root: Path, *, keep: int = 3) -> None:
        self.layout = Layout(root)
        self._keep = keep
        self._log = health.ProblemLog()
        self._reads: ReadCache[tuple[str, int]] = ReadCache()

    def folder(self, tenant: Tenant) -> DirectoryFolder:
        return DirectoryFolder(self._file(tenant).parent, only=PERSONA)

    def _file(self, tenant: Tenant) -> Path:
        """The tenant's ``persona.md`` (its profile folder created)."""
        self.layout.ensure(tenant)
        return self.layout.persona(tenant)

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        p = self.layout.persona(tenant)
        if p.is_symlink() or not p.is_file():
            self._log.fine(tenant, PERSONA)
            return None
        seen = signature(p)
        if (kept := self._reads.get(tenant, seen)) is not None:
            return kept
        raw, problem = health.read_checked(p, text_problem)
        if raw is None or problem is not None:
            found = FileProblem(tenant, PERSONA, problem or "cannot be read")
            if self._log.found(found):  # once, not at every read
                log.warning("%s; left out", found)
            return None
        self._log.fine(tenant, PERSONA)
        read = raw.decode("utf-8"), mtime_ms(p)
        self._reads.put(tenant, seen, read)
        return read

    def write(self, tenant: Tenant, text: str) -> None:
        p = self._file(tenant)
        if self._log.of(tenant) and p.is_file() and not p.is_symlink():
            health.set_aside(p, self.layout.backups(tenant))  # keep the bad bytes, not overwrite
        atomic_write(p, strip_controls(text))
        self._log.fine(tenant, PERSONA)

    def backup(self, tenant: Tenant) -> str | None:
        self.repair(tenant)
        p = self.layout.persona(tenant)
        if p.is_symlink() or not p.is_file():
            return None
        backups = self.layout.backups(tenant)
        with storage_errors(backups):
            make_dirs(backups)
            target = snapshots.stamp(backups, PREFIX.rstrip("-"), ".md")
            tmp = backups / f".{target.name}.tmp"
            snapshots.durable_copy(p, tmp)
            tmp.rename(target)
            snapshots.prune(backups, PREFIX, self._keep)
        return target.name

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        p = self._file(tenant)
        if snapshot is None:
            with storage_errors(p):
                p.unlink(missing_ok=True)
            return
        source = self.layout.backups(tenant) / snapshot
        if "/" in snapshot or not source.is_file():
            raise StoreError(f"persona snapshot {snapshot!r} does not exist")
        atomic_write(p, source.read_bytes())

    def backups(self, tenant: Tenant) -> list[Backup]:
        return [
            Backup(p.name, snapshots.made_at(p))
            for p in snapshots.newest_first(self.layout.backups(tenant), PREFIX)
            if p.is_file() and not p.is_symlink()
        ]

    def read_backup(self, tenant: Tenant, snapshot: str) -> str | None:
        found = snapshots.named(self.layout.backups(tenant), snapshot, PREFIX)
        if found is None or not found.is_file():
            return None
        raw, problem = health.read_checked(found, text_problem)
        return raw.decode("utf-8") if raw is not None and problem is None else None

    def erase(self, tenant: Tenant) -> int:
        """``persona.md`` and its backups (the scene store removes the folder itself)."""
        removed = remove_tree(self.layout.persona(tenant))
        for old in snapshots.newest_first(self.layout.backups(tenant), PREFIX):
            removed += remove_tree(old)
        self._log.drop(tenant)
        self._reads.drop(tenant)
        return removed

    def problems(self, tenant: Tenant) -> list[FileProblem]:
        return self._log.of(tenant)

    def check(self, tenant: Tenant) -> list[FileProblem]:
        self.read(tenant)
        return self.problems(tenant)

    def repair(self, tenant: Tenant) -> list[FileProblem]:
        p = self.layout.persona(tenant)
        if p.is_symlink() or not p.is_file():
            return []
        raw, problem = health.read_checked(p, text_problem)
        if problem is None or raw is None:  # fine, or not even readable: left in place
            return []
        backups = self.layout.backups(tenant)
        kept_as = health.set_aside(p, backups)
        good = health.newest_readable(snapshots.newest_first(backups, PREFIX), text_problem)
        if good is not None:
            atomic_write(p, good.read_bytes())
        found = FileProblem(tenant, PERSONA, problem, kept_as, good.name if good is not None else None)
        log.warning("%s", found)
        self._log.fine(tenant, PERSONA)
        return [found]
