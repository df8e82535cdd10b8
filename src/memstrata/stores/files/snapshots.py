"""Backups under ``.backup/``: scene-folder snapshots (a directory each) and persona copies.

A snapshot is written completely in a hidden temporary directory, fsynced, then renamed into place,
so a snapshot that exists is whole. Names sort by creation time; pruning keeps the newest.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

from memstrata.errors import StoreError
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.modes import make_dirs, open_private

log = logging.getLogger(__name__)
INDEX_FILE = "scene_index.json"
_STAMP = "%Y%m%dT%H%M%S%fZ"
_STAMPED = re.compile(r"-(\d{8}T\d{12}Z)(?:-\d+)?(?:\.md)?$")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def stamp(folder: Path, prefix: str, suffix: str = "") -> Path:
    """A new, unused ``<prefix>-<UTC time to the microsecond>[-n]<suffix>`` path in ``folder``."""
    base = f"{prefix}-{datetime.now(UTC).strftime(_STAMP)}"
    candidate, n = folder / f"{base}{suffix}", 2
    while candidate.exists():
        candidate, n = folder / f"{base}-{n}{suffix}", n + 1
    return candidate


def scene_files(folder: Path) -> list[Path]:
    """Regular ``.md`` files of a scene folder (any case), by name. Symlinks and hidden files are
    never scenes: they are skipped and logged."""
    if not folder.is_dir():
        return []
    out = []
    for p in sorted(folder.iterdir()):
        if p.name.startswith(".") or p.suffix.lower() != ".md":
            continue
        if p.is_symlink() or not p.is_file():
            log.warning("ignoring %s in the scene folder: not a regular file", p)
            continue
        out.append(p)
    return out


def durable_copy(src: Path, dst: Path) -> None:
    with open_private(dst, "wb") as fh:
        fh.write(src.read_bytes())
        fh.flush()
        os.fsync(fh.fileno())


def snapshot_scenes(folder: Path, index: Path, backups: Path, keep: int) -> str:
    """Copy the scene files and the index into a new snapshot directory; prune to ``keep``."""
    make_dirs(backups)
    final = stamp(backups, "scenes")
    tmp = backups / f".{final.name}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    make_dirs(tmp)
    try:
        for p in scene_files(folder):
            durable_copy(p, tmp / p.name)
        if index.is_file():
            durable_copy(index, tmp / INDEX_FILE)
        os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    prune(backups, "scenes-", keep)
    return final.name


def restore_scenes(folder: Path, index: Path, backups: Path, snapshot: str) -> None:
    """Make the scene folder's ``.md`` files and the index equal to the snapshot's."""
    source = backups / snapshot
    if not source.is_dir() or "/" in snapshot or snapshot.startswith("."):
        raise StoreError(f"scene snapshot {snapshot!r} does not exist in {backups}")
    saved = {p.name: p for p in source.iterdir() if p.name != INDEX_FILE}
    make_dirs(folder)
    for p in scene_files(folder):
        if p.name not in saved:
            p.unlink()
    for name, p in saved.items():
        data = p.read_bytes()
        target = folder / name
        if not target.is_file() or target.is_symlink() or target.read_bytes() != data:
            atomic_write(target, data)
    saved_index = source / INDEX_FILE
    if saved_index.is_file():
        atomic_write(index, saved_index.read_bytes())
    else:
        index.unlink(missing_ok=True)


def newest_first(backups: Path, prefix: str) -> list[Path]:
    """Backups whose names start with ``prefix``, newest first (names sort by creation time)."""
    if not backups.is_dir():
        return []
    return sorted((p for p in backups.iterdir() if p.name.startswith(prefix)), reverse=True)


def made_at(backup: Path) -> int:
    """When a backup was made (ms): the time stamp ``stamp`` put in its name, else (a name
    without one) its modification time."""
    found = _STAMPED.search(backup.name)
    if found is None:
        return backup.stat().st_mtime_ns // 1_000_000
    made = datetime.strptime(found.group(1), _STAMP).replace(tzinfo=UTC)
    return (made - _EPOCH) // timedelta(milliseconds=1)


def named(backups: Path, snapshot: str, prefix: str) -> Path | None:
    """The backup ``snapshot`` names in ``backups`` (one of ``prefix``), or None: an id that is
    not such a name (a path, a hidden or another kind's file) never reaches outside."""
    if not snapshot.startswith(prefix) or any(c in snapshot for c in "/\\\0"):
        return None
    path = backups / snapshot
    return None if path.is_symlink() or not path.exists() else path


def prune(backups: Path, prefix: str, keep: int) -> None:
    """Remove all but the newest ``keep`` backups whose names start with ``prefix``."""
    found = sorted(p for p in backups.iterdir() if p.name.startswith(prefix))
    for old in found[: max(0, len(found) - keep)]:
        if old.is_dir() and not old.is_symlink():
            shutil.rmtree(old)
        else:
            old.unlink()
