"""The skeleton every scheduler shares: one run per key at a time, a bounded number of runs across
keys, and read-modify-write of durable state under one thread lock.

Keys are sessions for L1 and tenants for L2/L3. State updates take a thread lock because captures
arrive from worker threads while runs complete on the event loop.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

from memstrata.errors import MemstrataError

K = TypeVar("K", bound=Hashable)
S = TypeVar("S")


class KeyedRuns(Generic[K]):
    """A lock per key and ``workers`` slots shared by all keys (made on first use, in the loop)."""

    def __init__(self, workers: int) -> None:
        self._workers = workers
        self._locks: dict[K, asyncio.Lock] = {}
        self._slots: asyncio.Semaphore | None = None

    @asynccontextmanager
    async def hold(self, key: K) -> AsyncIterator[None]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self._workers)
        async with self._locks.setdefault(key, asyncio.Lock()), self._slots:
            yield

    def forget(self, key: K) -> None:
        """Drop the key's lock when no run holds it (the key's data was erased)."""
        lock = self._locks.get(key)
        if lock is not None and not lock.locked():
            del self._locks[key]

    def busy(self, key: K) -> bool:
        """Whether a run of ``key`` holds its lock now."""
        lock = self._locks.get(key)
        return lock is not None and lock.locked()


class StateBook(Generic[K, S]):
    """Durable state by key: ``mutate`` loads, changes and saves it as one step."""

    def __init__(self, load: Callable[[K], S], save: Callable[[S], None]) -> None:
        self._load = load
        self._save = save
        self._lock = threading.Lock()

    def mutate(self, key: K, change: Callable[[S], object]) -> S:
        with self._lock:
            state = self._load(key)
            change(state)
            self._save(state)
            return state


def log_failure(logger: logging.Logger, what: str, attempts: int, exc: BaseException, note: str = "") -> None:
    """Expected faults (engine, model, store) get one line; anything else keeps its traceback."""
    logger.warning(
        "%s failed (attempt %d)%s: %s: %s",
        what,
        attempts,
        note,
        type(exc).__name__,
        exc,
        exc_info=None if isinstance(exc, MemstrataError) else exc,
    )
