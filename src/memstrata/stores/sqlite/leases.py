"""The ``Leases`` of the embedded store.

A data directory is written by one owner (the writer lock), but a server and its workers
(``memstrata worker``) are several processes under that owner: a claim must exclude the other
claims of this process and of every other process of the directory. ``FileLeases`` does both with
POSIX record locks on one file, ``<data dir>/.memstrata.leases``: a key is one byte of it, at an
offset its hash picks. The kernel drops every lock of a process when it dies, so work a killed
worker held is free for another at once, as with PostgreSQL's advisory locks (``stores.postgres.
leases``); nothing is written to the file. ``LocalLeases`` (this process only) is what is left
where there are no record locks (Windows): one process per directory there.
"""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

from memstrata.errors import storage_error

LEASES = ".memstrata.leases"
_SPACE = 1 << 40  # lock offsets: two keys share a byte with a chance of about 2**-40 per pair


class LocalLeases:
    """Claims that exclude the other claims of this process only."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: set[str] = set()

    def claim(self, key: str) -> bool:
        with self._lock:
            if key in self._held:
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        with self._lock:
            self._held.discard(key)


class FileLeases(LocalLeases):
    """Claims that exclude every process of the data directory (see the module docstring).

    Record locks belong to the process, not to a thread or a file handle (a second lock of the
    same byte by this process succeeds), so this process's own claims are kept apart by the set
    ``LocalLeases`` holds; the one file handle stays open until ``close`` (closing any handle of the
    file would drop all of the process's locks on it)."""

    def __init__(self, home: Path) -> None:
        super().__init__()
        path = home / LEASES
        try:
            self._fd: int | None = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise storage_error(exc, path, "cannot open") from exc

    def claim(self, key: str) -> bool:
        import fcntl

        with self._lock:
            if key in self._held or self._fd is None:
                return False
            try:
                fcntl.lockf(self._fd, fcntl.LOCK_EX | fcntl.LOCK_NB, 1, _offset(key))
            except OSError:  # held by another process (EAGAIN / EACCES)
                return False
            self._held.add(key)
            return True

    def release(self, key: str) -> None:
        import fcntl

        with self._lock:
            if key not in self._held:
                return
            self._held.discard(key)
            if self._fd is not None:
                fcntl.lockf(self._fd, fcntl.LOCK_UN, 1, _offset(key))

    def close(self) -> None:
        with self._lock:
            self._held.clear()
            if self._fd is not None:
                fd, self._fd = self._fd, None
                os.close(fd)  # the kernel drops every lock of this process on the file


def _offset(key: str) -> int:
    return (
        int.from_bytes(hashlib.blake2b(key.encode("utf-8", "surrogatepass"), digest_size=8).digest()) % _SPACE
    )


def leases_for(home: Path) -> LocalLeases:
    """``FileLeases`` where the platform has record locks, else ``LocalLeases``."""
    try:
        import fcntl  # noqa: F401 - only its presence is asked
    except ImportError:
        return LocalLeases()
    return FileLeases(home)
