"""Data files are the owner's alone: every file 0600, every folder 0700, whatever the umask.

A data directory holds people's conversations, so nothing in it is for other users of the
machine. New folders are made 0700 and new files 0600 here (modes set explicitly after creating
them: a umask only removes bits, and a permissive one had left ``memstrata.db`` and the JSONL
mirrors 0644); SQLite makes the ``-wal`` and ``-shm`` files with the database file's mode.
``tighten`` brings a directory an older version left readable to the same modes when a writer
opens it.
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO, Any

FILE_MODE = 0o600
DIR_MODE = 0o700


def make_dirs(path: Path) -> None:
    """``path`` and its missing parents, each made 0700 (existing folders are left as they are:
    a parent outside the data directory is not ours to change)."""
    missing: list[Path] = []
    here = path
    while not here.exists() and here != here.parent:
        missing.append(here)
        here = here.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # another thread made it meanwhile
            os.mkdir(folder, DIR_MODE)
            os.chmod(folder, DIR_MODE)
    if not path.is_dir():
        raise NotADirectoryError(f"not a directory: {path}")


def open_private(path: Path, mode: str, **options: Any) -> IO[Any]:
    """``open(path, mode)`` creating the file, if it must, as 0600 (``a``, ``w``, ``x``, ``+``)."""
    flags = os.O_CREAT | (os.O_RDWR if "+" in mode or "r" in mode else os.O_WRONLY)
    flags |= os.O_APPEND if "a" in mode else 0
    flags |= os.O_TRUNC if "w" in mode else 0
    flags |= os.O_EXCL if "x" in mode else 0
    fd = os.open(path, flags, FILE_MODE)
    try:
        os.fchmod(fd, FILE_MODE)
        return os.fdopen(fd, mode, **options)
    except BaseException:
        os.close(fd)
        raise


def create_private(path: Path) -> None:
    """An empty ``path`` made 0600 when it does not exist yet (SQLite then opens it as it is)."""
    with contextlib.suppress(FileExistsError):
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, FILE_MODE)
        try:
            os.fchmod(fd, FILE_MODE)
        finally:
            os.close(fd)


TIGHTENED = ".memstrata.private"  # written once ``tighten`` has walked a directory


def tighten(home: Path) -> None:
    """Every folder under ``home`` (``home`` included) 0700, every file 0600; symbolic links are
    neither followed nor changed. Files of other owners, or that vanish meanwhile, are skipped.
    Done once per directory (``TIGHTENED`` marks it): what is made afterwards is made private,
    and a walk of 20,000 files took 1.6 s, too long for every open."""
    _chmod(home, DIR_MODE)
    if (home / TIGHTENED).exists():
        return
    for root, dirs, files in os.walk(home):
        _chmod(Path(root), DIR_MODE)
        for name in files:
            _chmod(Path(root) / name, FILE_MODE)
        dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(root, d))]
    with contextlib.suppress(OSError):
        create_private(home / TIGHTENED)


def _chmod(path: Path, mode: int) -> None:
    with contextlib.suppress(OSError):
        found = os.lstat(path)
        if stat.S_ISLNK(found.st_mode) or stat.S_IMODE(found.st_mode) == mode:
            return
        os.chmod(path, mode)
