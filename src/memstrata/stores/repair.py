"""``memstrata repair`` for an embedded data directory: JSONL mirrors rewritten from the database
where they disagree with it, and unreadable scene and persona files set aside and restored from
their newest readable backup, for every tenant."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from memstrata.errors import StoreError
from memstrata.ports import FileProblem
from memstrata.stores.files import FilePersonaStore, FileSceneStore
from memstrata.stores.sqlite.store import SqliteStore


@dataclass(frozen=True, slots=True)
class RepairReport:
    """What ``repair_data_dir`` did: mirrors rewritten (one line each) and files repaired."""

    mirrors: tuple[str, ...]
    files: tuple[FileProblem, ...]

    def lines(self) -> list[str]:
        return [*self.mirrors, *(str(p) for p in self.files)]


def repair_data_dir(home: Path) -> RepairReport:
    """Repair the data directory ``home`` (a writer's operation: no other process may write it
    meanwhile). Raises ``StoreError`` when there is no memstrata database there, ``StorageError``
    when the disk refuses a write (what was repaired before stays repaired)."""
    if not (home / "memstrata.db").is_file():
        raise StoreError(f"no memstrata data directory at {home} (no memstrata.db)")
    store = SqliteStore(home)
    try:
        mirrors = store.repair_mirrors()
    finally:
        store.close()
    root = home / "profiles"
    scenes, persona = FileSceneStore(root), FilePersonaStore(root)
    files: list[FileProblem] = []
    for tenant in scenes.tenants():
        files += scenes.repair(tenant) + persona.repair(tenant)
    return RepairReport(tuple(mirrors), tuple(files))
