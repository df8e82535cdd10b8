"""The skeleton every scheduler shares: one run per key at a time, a bounded number of runs across
keys, atomic read-modify-write of durable state, and claims on work that other processes sharing
the store may want too.

Keys are sessions for L1 and tenants for L2/L3. In one process a lock per key keeps runs of a key
apart; across processes (several replicas on one PostgreSQL database) the store's ``Leases`` do:
a run whose key another process holds is skipped, since that process is doing it. State updates
are atomic in the store (``PipelineState.update_*``): captures arrive from worker threads and
other processes while runs complete.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from asyncio import to_thread
from collections.abc import AsyncIterator, Callable, Hashable
from contextlib import asynccontextmanager
from typing import Generic, TypeVar

from memstrata.errors import ConflictError, MemstrataError
from memstrata.models import Tenant
from memstrata.ports import Leases

K = TypeVar("K", bound=Hashable)
_CLAIM_POLL_SECONDS = 0.1  # ``waited``: how often a claim another process holds is tried again
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

    @asynccontextmanager
    async def lock(self, key: K) -> AsyncIterator[None]:
        """The key's lock alone, without a slot: what a caller's write takes (it must not queue
        behind the runs of other keys)."""
        async with self._locks.setdefault(key, asyncio.Lock()):
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
    """Durable state by key: ``mutate`` loads, changes and saves it as one atomic step of the store
    (``update``)."""

    def __init__(self, update: Callable[[K, Callable[[S], object]], S]) -> None:
        self._update = update

    def mutate(self, key: K, change: Callable[[S], object]) -> S:
        return self._update(key, change)


def lease_key(stage: str, tenant: Tenant, session_key: str | None = None) -> str:
    """The lease of one piece of work: ``stage`` (``l1``, ``upper``, ``embedding``) of a tenant
    or a session."""
    return json.dumps([stage, tenant.user_id, tenant.agent_id, session_key], ensure_ascii=False)


@asynccontextmanager
async def claimed(leases: Leases, key: str) -> AsyncIterator[bool]:
    """Claim ``key`` for the block (True) unless another holder has it (False); released after."""
    mine = await to_thread(leases.claim, key)
    try:
        yield mine
    finally:
        if mine:  # not paced: a release ends a step (and may run while the loop is cancelled)
            await asyncio.to_thread(leases.release, key)


@asynccontextmanager
async def waited(leases: Leases, key: str, seconds: float, what: str, tenant: Tenant) -> AsyncIterator[None]:
    """Claim ``key`` for the block, waiting up to ``seconds`` while another process holds it (a
    caller's edit behind a worker's run); ``ConflictError`` after that."""
    deadline = time.monotonic() + seconds
    while True:
        async with claimed(leases, key) as mine:
            if mine:
                yield
                return
        if time.monotonic() >= deadline:
            raise ConflictError(f"{what} is being processed elsewhere: try again", tenant=str(tenant))
        await asyncio.sleep(_CLAIM_POLL_SECONDS)


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
