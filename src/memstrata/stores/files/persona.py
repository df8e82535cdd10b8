"""``FilePersonaStore``: the ``PersonaStore`` of the embedded backend (``profiles/<tenant>/persona.md``)."""

from __future__ import annotations

from pathlib import Path

from memstrata.atomic import atomic_write
from memstrata.errors import StoreError
from memstrata.models import Tenant
from memstrata.stores.files import snapshots
from memstrata.stores.files.layout import Layout, mtime_ms

PREFIX = "persona-"


class FilePersonaStore:
    """``persona.md`` of every tenant under ``root``, with ``keep`` backups in ``.backup/``."""

    def __init__(self, root: Path, *, keep: int = 3) -> None:
        self.layout = Layout(root)
        self._keep = keep

    def path(self, tenant: Tenant) -> Path:
        p = self.layout.persona(tenant)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def read(self, tenant: Tenant) -> tuple[str, int] | None:
        p = self.layout.persona(tenant)
        if p.is_symlink() or not p.is_file():
            return None
        return p.read_text(encoding="utf-8", errors="replace"), mtime_ms(p)

    def write(self, tenant: Tenant, text: str) -> None:
        atomic_write(self.path(tenant), text)

    def backup(self, tenant: Tenant) -> str | None:
        p = self.layout.persona(tenant)
        if p.is_symlink() or not p.is_file():
            return None
        backups = self.layout.backups(tenant)
        backups.mkdir(parents=True, exist_ok=True)
        target = snapshots.stamp(backups, PREFIX.rstrip("-"), ".md")
        tmp = backups / f".{target.name}.tmp"
        snapshots.durable_copy(p, tmp)
        tmp.rename(target)
        snapshots.prune(backups, PREFIX, self._keep)
        return target.name

    def restore(self, tenant: Tenant, snapshot: str | None) -> None:
        p = self.path(tenant)
        if snapshot is None:
            p.unlink(missing_ok=True)
            return
        source = self.layout.backups(tenant) / snapshot
        if "/" in snapshot or not source.is_file():
            raise StoreError(f"persona snapshot {snapshot!r} does not exist")
        atomic_write(p, source.read_bytes())
