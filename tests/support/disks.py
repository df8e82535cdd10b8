"""Real storage faults for tests: a small tmpfs (disk full) and read-only mounts (EROFS).

Mounting needs root (CI runs as root). File modes are no use as root, which bypasses them; a
read-only bind mount (``mount --bind`` then ``remount,bind,ro``) or a tmpfs remounted read-only
gives the real ``EROFS`` whoever runs. Fixtures skip, saying why, when ``mount`` is not permitted.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest


def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True, check=False)


def _umount(path: Path) -> None:
    subprocess.run(["umount", "-l", str(path)], capture_output=True, check=False)


def _require_mount() -> None:
    if shutil.which("mount") is None:
        pytest.skip("no `mount` command: cannot make a small or read-only disk")
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs or a read-only bind mount needs root")


class SmallDisk:
    """A tmpfs of ``size`` at ``path``; ``resize`` grows or shrinks it, ``read_only`` remounts it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def resize(self, size: str) -> None:
        r = _mount("-o", f"remount,size={size}", str(self.path))
        assert r.returncode == 0, r.stderr

    def read_only(self, on: bool = True) -> None:
        r = _mount("-o", "remount,ro" if on else "remount,rw", str(self.path))
        assert r.returncode == 0, r.stderr

    def free_bytes(self) -> int:
        st = os.statvfs(self.path)
        return st.f_bavail * st.f_frsize


@contextmanager
def small_disk(path: Path, size: str) -> Iterator[SmallDisk]:
    """A tmpfs of ``size`` mounted at ``path`` for the block (skips when mounting is refused)."""
    _require_mount()
    path.mkdir(parents=True, exist_ok=True)
    r = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(path))
    if r.returncode != 0:
        pytest.skip(f"mount -t tmpfs refused: {r.stderr.strip()}")
    try:
        yield SmallDisk(path)
    finally:
        _umount(path)


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """``path`` (a folder) read-only for the block: a read-only bind mount over itself."""
    _require_mount()
    r = _mount("--bind", str(path), str(path))
    if r.returncode != 0:
        pytest.skip(f"mount --bind refused: {r.stderr.strip()}")
    try:
        r = _mount("-o", "remount,bind,ro", str(path))
        if r.returncode != 0:
            pytest.skip(f"read-only remount refused: {r.stderr.strip()}")
        yield
    finally:
        _umount(path)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the disk of ``folder`` with a ballast file, leaving about ``leave`` bytes free."""
    ballast = folder / "ballast.bin"
    st = os.statvfs(folder)
    size = max(0, st.f_bavail * st.f_frsize - leave)
    with open(ballast, "wb", buffering=0) as fh, contextlib.suppress(OSError):  # full: what we wanted
        while size > 0:
            size -= fh.write(b"\0" * min(size, 1 << 20))
    return ballast
