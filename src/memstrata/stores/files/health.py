"""Unreadable scene and persona files: the record of what reads found, setting bad bytes aside, and
finding the newest readable copy among the backups."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

from memstrata.errors import cause_of, storage_errors
from memstrata.models import FileProblem, Tenant
from memstrata.stores.files import snapshots
from memstrata.stores.files.modes import make_dirs

UNREADABLE = "unreadable"
_KEPT_NAME_CHARS = 100  # of the original name, in the set-aside copy's name (stays under 255 bytes)


class ProblemLog:
    """The latest finding for each file (tenant, path inside the profile); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._found: dict[tuple[Tenant, str], FileProblem] = {}

    def found(self, problem: FileProblem) -> bool:
        """Record ``problem``; True when it is news (not the finding already recorded)."""
        with self._lock:
            known = self._found.get((problem.tenant, problem.path))
            self._found[(problem.tenant, problem.path)] = problem
            return known != problem

    def fine(self, tenant: Tenant, path: str) -> None:
        with self._lock:
            self._found.pop((tenant, path), None)

    def only(self, tenant: Tenant, prefix: str, present: Iterable[str]) -> None:
        """Forget findings under ``prefix`` for paths that are not ``present`` any more."""
        keep = set(present)
        with self._lock:
            for key in [k for k in self._found if k[0] == tenant and k[1].startswith(prefix)]:
                if key[1] not in keep:
                    del self._found[key]

    def drop(self, tenant: Tenant) -> None:
        """Forget every finding of the tenant (its files were erased)."""
        with self._lock:
            for key in [k for k in self._found if k[0] == tenant]:
                del self._found[key]

    def of(self, tenant: Tenant) -> list[FileProblem]:
        with self._lock:
            return sorted((p for (t, _), p in self._found.items() if t == tenant), key=lambda p: p.path)


def set_aside(path: Path, backups: Path) -> str:
    """Move an unreadable file to ``backups/unreadable-<time>-<name>`` (a rename: no space needed);
    returns the new name. Raises ``StorageError``."""
    with storage_errors(path):
        make_dirs(backups)
        target = snapshots.stamp(backups, UNREADABLE, f"-{path.name[:_KEPT_NAME_CHARS]}")
        os.rename(path, target)
    return target.name


def newest_readable(candidates: Iterable[Path], problem: Callable[[bytes], str | None]) -> Path | None:
    """The first of ``candidates`` (pass them newest first) that is a regular file ``problem``
    finds nothing wrong with."""
    for path in candidates:
        if path.is_symlink() or not path.is_file():
            continue
        try:
            raw = path.read_bytes()
        except OSError:
            continue
        if problem(raw) is None:
            return path
    return None


def read_checked(path: Path, problem: Callable[[bytes], str | None]) -> tuple[bytes | None, str | None]:
    """``(bytes, what is wrong with them or None)``; ``(None, cause)`` when the file cannot be read."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        return None, f"cannot be read: {cause_of(exc)}"
    return raw, problem(raw)
