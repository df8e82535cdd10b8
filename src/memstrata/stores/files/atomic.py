"""File writes that either happen whole or fail with one clear ``StorageError``
(``errors.storage_errors``).

``atomic_write`` replaces a file (temporary file beside the target, fsync, rename), so a reader sees
the old or the new file, never a mix; ``fsync_dir`` persists a folder's entries after a rename.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from memstrata.errors import storage_errors
from memstrata.stores.files.modes import make_dirs


def atomic_write(path: Path, data: str | bytes) -> None:
    """Replace ``path`` with ``data`` so a reader sees the old or the new file, never a mix.
    Raises ``StorageError`` when the disk refuses (the old file is then left as it was)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with storage_errors(path):
        make_dirs(path.parent)
        # The temporary name stays short: the target's name may already be near the 255-byte limit.
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".part", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(raw)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    """Persist the entries of ``folder`` (a rename or a new file in it)."""
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
