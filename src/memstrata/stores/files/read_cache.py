"""Reads of a file that has not changed since: answered from memory.

Recall reads the tenant's ``persona.md`` and scene index before every prompt, and they change only
when the pipeline, the console or a person writes them. So a read's result is kept with the file's
signature (device, inode, size, modification and change times in ns) taken before the bytes were
read, and given back while ``os.stat`` finds the same signature. A write changes it: the stores
replace files (``atomic_write``: a new inode), and an editor that writes in place moves the times.
A result read while the file was being replaced carries the signature from before, so the next
read misses and reads again. Only good reads are kept: a file with a problem is read (and its
problem recorded) every time.
"""

from __future__ import annotations

import os
from collections.abc import Hashable
from pathlib import Path
from typing import Generic, TypeVar

from memstrata.lru import Lru

T = TypeVar("T")
Signature = tuple[int, int, int, int, int]
CAPACITY = 1024  # tenants kept per store (the least recently read forgotten first)


def signature(path: Path) -> Signature | None:
    """The file's signature, or None when it cannot be stat'ed (then nothing is cached)."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class ReadCache(Generic[T]):
    """Results by key (a tenant), each with the signature of the file it was read from."""

    def __init__(self, capacity: int = CAPACITY) -> None:
        self._items: Lru[tuple[Signature, T]] = Lru(capacity)

    def get(self, key: Hashable, seen: Signature | None) -> T | None:
        """The result kept for ``key`` when it was read from a file of signature ``seen``."""
        kept = self._items.get(key) if seen is not None else None
        return kept[1] if kept is not None and kept[0] == seen else None

    def put(self, key: Hashable, seen: Signature | None, value: T) -> None:
        """Keep ``value``, read after the file was found with signature ``seen``."""
        if seen is not None:
            self._items.put(key, (seen, value))

    def drop(self, key: Hashable) -> None:
        self._items.pop(key)

    def __contains__(self, key: Hashable) -> bool:
        return key in self._items
