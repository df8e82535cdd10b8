"""File writes that either happen whole or fail with one clear ``StorageError``.

``atomic_write`` replaces a file (temporary file beside the target, fsync, rename), so a reader sees
the old or the new file, never a mix. ``storage_errors`` turns the ``OSError`` of any file operation
(disk full, read-only file system, no permission) into a ``StorageError`` naming the path.
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from memstrata.errors import StorageError
from memstrata.filemodes import make_dirs

# What the usual refusals mean, in the words of a status line.
_CAUSES = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
    errno.EIO: "input/output error",
    errno.ENAMETOOLONG: "the file name is too long",
}


def cause_of(exc: OSError) -> str:
    """A short reason for an ``OSError``, e.g. ``the disk is full (ENOSPC)``."""
    name = errno.errorcode.get(exc.errno or 0, "")
    text = _CAUSES.get(exc.errno or 0) or (exc.strerror or str(exc)).strip()
    return f"{text} ({name})" if name else text


def storage_error(exc: OSError, path: Path | str, action: str = "cannot write") -> StorageError:
    """The ``StorageError`` for ``exc``, naming the file it was about (``exc.filename`` when set)."""
    where = exc.filename if isinstance(exc.filename, str) else str(path)
    return StorageError(where, cause_of(exc), action=action)


@contextmanager
def storage_errors(path: Path | str, action: str = "cannot write") -> Iterator[None]:
    """Run a block of file operations; an ``OSError`` leaves it as a ``StorageError``."""
    try:
        yield
    except OSError as exc:
        raise storage_error(exc, path, action) from exc


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
