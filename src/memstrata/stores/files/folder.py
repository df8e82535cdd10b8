"""``DirectoryFolder``: a ``Folder`` over a real directory (the embedded backend's scene folder, or a
profile folder seen as ``persona.md`` alone).

Reads never follow symlinks (``O_NOFOLLOW``); a name held by a symlink or anything but a regular
file is refused, so nothing outside the directory is ever read or written. Writes are atomic
(``atomic_write``: temporary file, fsync, rename).
"""

from __future__ import annotations

import os
from pathlib import Path

from memstrata.errors import PathError, storage_errors
from memstrata.layers.folder import check_name, clean_text
from memstrata.stores.files.atomic import atomic_write


class DirectoryFolder:
    """The ``.md`` files directly in ``root`` (``only``: that one file alone)."""

    def __init__(self, root: Path, *, only: str | None = None) -> None:
        self.root = root
        self.only = only

    def names(self) -> list[str]:
        if self.only is not None:
            candidates = [self.root / self.only]
        elif self.root.is_dir():
            candidates = sorted(self.root.iterdir())
        else:
            return []
        return [p.name for p in candidates if _accepted(p.name) and not p.is_symlink() and p.is_file()]

    def read(self, name: str) -> str | None:
        target = self._target(name)
        if not target.exists():
            return None
        with storage_errors(target, "cannot read"):
            fd = os.open(target, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as fh:
                return fh.read().decode("utf-8", errors="replace")

    def write(self, name: str, text: str) -> None:
        target = self._target(name)
        atomic_write(target, clean_text(text))

    def _target(self, name: str) -> Path:
        """The path of document ``name``. Raises ``PathError`` for a refused name and for a name held
        by a symlink or something else than a regular file."""
        target = self.root / check_name(name, self.only)
        if target.is_symlink():
            raise PathError("symlinks are not allowed", path=name)
        if target.exists() and not target.is_file():
            raise PathError("not a document", path=name)
        if target.resolve().parent != self.root.resolve():
            raise PathError("path leaves the sandbox", path=name)
        return target


def _accepted(name: str) -> bool:
    try:
        check_name(name)
    except PathError:
        return False
    return True
