"""One writer per data directory: an exclusive lock held from open to close.

The lock is an OS file lock on ``<data dir>/.memstrata.lock`` (released by the kernel when the
process dies, so a crash never leaves the directory locked). Beside it, ``.memstrata.owner.json``
says who holds it: pid, command, since when, and the URL when the holder is a server the CLI can
go through. A second writer gets ``DirectoryLockedError`` naming the holder, or waits when asked to.
Readers take no lock: they open the database read-only and never write.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from memstrata.errors import DirectoryLockedError, storage_error
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.modes import FILE_MODE, make_dirs, tighten

LOCK = ".memstrata.lock"
OWNER = ".memstrata.owner.json"


def holder(home: Path) -> dict[str, Any]:
    """What the owner file says (empty when there is none or it cannot be read)."""
    try:
        found = json.loads((home / OWNER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def describe(owner: Mapping[str, Any]) -> str:
    """``pid 123 (memstrata serve), since 2026-11-30 10:02 UTC, serving http://...``"""
    if not owner:
        return "another process"
    since = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(owner.get("since", 0) / 1000))
    text = f"pid {owner.get('pid', '?')} ({owner.get('command', '?')}), since {since}"
    return text + (f", serving {owner['url']}" if owner.get("url") else "")


class WriterLock:
    """The data directory's writer lock. ``acquire`` raises ``DirectoryLockedError`` (after
    ``wait`` seconds, 0: at once) when another process holds it."""

    def __init__(self, home: Path, *, url: str | None = None) -> None:
        self.home = home
        self._url = url
        # Not thread-local: a memory opens in one worker thread and closes in another.
        self._lock = FileLock(home / LOCK, mode=FILE_MODE, thread_local=False, is_singleton=False)

    def acquire(self, wait: float = 0.0) -> None:
        try:
            make_dirs(self.home)
            self._lock.acquire(timeout=max(wait, 0.0))
        except Timeout:
            owner = holder(self.home)
            hint = f"; go through it with --url {owner['url']}" if owner.get("url") else ""
            raise DirectoryLockedError(
                f"{self.home} is in use by {describe(owner)}: one process writes a data directory at "
                f"a time (wait for it with --wait SECONDS, or open it read-only){hint}",
                holder=owner,
            ) from None
        except OSError as exc:
            raise storage_error(exc, self.home, "cannot lock") from exc
        self._write_owner()
        tighten(self.home)  # a directory an older version left readable: the owner's alone now

    def _write_owner(self) -> None:
        record = {
            "pid": os.getpid(),
            "command": " ".join(os.path.basename(a) if i == 0 else a for i, a in enumerate(sys.argv))[:200]
            or "python",
            "since": int(time.time() * 1000),
            "url": self._url,
        }
        # Who holds the lock is a courtesy for error messages; the lock itself holds without it.
        with contextlib.suppress(OSError):
            atomic_write(self.home / OWNER, json.dumps(record) + "\n")

    def release(self) -> None:
        if self._lock.is_locked:
            # A stale owner file is harmless: it is read only when the lock is held.
            with contextlib.suppress(OSError):
                (self.home / OWNER).unlink(missing_ok=True)
            self._lock.release()


def owner_alive(home: Path, pid: int) -> bool:
    """Whether process ``pid`` still owns the data directory: the owner file names it, it lives,
    and the lock is held (by it: a dead holder's lock is dropped by the kernel)."""
    if holder(home).get("pid") != pid:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # alive, another user's
    probe = FileLock(home / LOCK, mode=FILE_MODE, thread_local=False, is_singleton=False)
    try:
        probe.acquire(timeout=0)
    except Timeout:
        return True  # held
    except OSError:
        return False
    probe.release()
    return False


def wait_for_owner(home: Path, pid: int, wait: float) -> None:
    """Return once process ``pid`` owns the data directory (a worker that ``serve`` started waits
    for its server to open it), or raise ``DirectoryLockedError`` after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while not owner_alive(home, pid):
        if time.monotonic() >= deadline:
            raise DirectoryLockedError(
                f"{home} is not owned by process {pid} ({describe(holder(home))} holds it, or nobody): "
                "a worker joins the directory of the server that owns it",
                holder=holder(home),
            )
        time.sleep(0.1)
