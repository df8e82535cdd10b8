"""Atomic file replacement: write a temporary file beside the target, fsync, rename; and the
sweep of the temporary files a killed process left."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file, never a mix."""
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(raw)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    # Persist the rename itself.
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def remove_stale_temps(root: Path) -> int:
    """Delete the hidden ``.*.tmp`` files and folders below ``root``: what ``atomic_write`` (or a
    folder written whole, then renamed) leaves when its process is killed before the rename.
    Call it only as the data directory's one writer, before anything writes. Returns how many."""
    removed = 0
    for folder, dirs, files in os.walk(root):
        for name in list(dirs):
            if _is_temp(name):
                shutil.rmtree(Path(folder) / name, ignore_errors=True)
                dirs.remove(name)
                removed += 1
        for name in files:
            if _is_temp(name):
                (Path(folder) / name).unlink(missing_ok=True)
                removed += 1
    return removed


def _is_temp(name: str) -> bool:
    return name.startswith(".") and name.endswith(".tmp")
