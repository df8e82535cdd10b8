"""Background work steps aside while the memory serves its callers.

A caller's recall or capture and the pipeline's own work (L1 extraction, scene writes, the
embedding backlog, the loop's bookkeeping reads) share one interpreter lock. Each step of the
pipeline that enters a worker thread while a request is in flight makes that request wait for
the lock behind it: at 50 gateway clients with the hashing embedder, pacing the background loop
took recall p95 from 28.6-45.5 ms to 20.6-28.4 ms and capture p99 from 46.8-58.5 ms to
21.6-38.5 ms in five pairs of runs (docs/benchmarks.md, "Background work paced by the requests").

``Foreground`` counts the memory's operations in flight (every public method of
``AsyncMemory``) and when the last one ended. The pipeline's background loop runs under
``paced(foreground)``; there ``to_thread``, the way every pipeline step enters a worker thread,
first waits until no operation has run for ``QUIET_SECONDS``, and at most ``MOST_SECONDS`` a step,
so that load without pause slows the pipeline but never stops it (its backlog is durable and it
catches up in the next lull). Anywhere else (``run_all``, ``end_session``, an import, shutdown: a
caller waits on the pipeline there) ``to_thread`` is ``asyncio.to_thread`` and waits for nothing.

Everything here runs on the memory's event loop thread: no lock is needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import ParamSpec, TypeVar

from memstrata.models import PaceStatus

QUIET_SECONDS = 0.002  # a request's follow-up (the capture after a recall) comes sooner than this
MOST_SECONDS = 0.25  # the longest one pipeline step waits for a lull
P = ParamSpec("P")
T = TypeVar("T")
_SERVING: ContextVar[_Operation | None] = ContextVar("memstrata_serving", default=None)  # ``serving``
_PACED: ContextVar[Foreground | None] = ContextVar("memstrata_paced", default=None)  # ``paced``


class _Operation:
    """One ``serving`` block: whether it ended, and whether it waits for the pipeline now."""

    __slots__ = ("ended", "foreground", "waiting")

    def __init__(self, foreground: Foreground) -> None:
        self.foreground = foreground
        self.ended = False
        self.waiting = False


class Foreground:
    """The operations a memory is serving now, and how the background loop waited for them."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._active = 0
        self._ended = float("-inf")
        self._idle: asyncio.Event | None = None  # made on the loop, at the first wait
        self._steps = 0
        self._deferred = 0
        self._waited = 0.0
        self._capped = 0

    @contextmanager
    def serving(self) -> Iterator[None]:
        """One operation in flight for the block."""
        self._active += 1
        mine = _Operation(self)
        token = _SERVING.set(mine)
        try:
            yield
        finally:
            _SERVING.reset(token)
            mine.ended = True
            self._left()

    @contextmanager
    def waiting(self) -> Iterator[None]:
        """The operation of this context (if any) waits for the pipeline for the block (a lock
        one of its runs holds): it does not count as in flight meanwhile, or the run it waits
        for would wait for it, to the cap at every step. A task an operation started, still
        running after it ended, and a wait inside another wait change nothing."""
        mine = _SERVING.get()
        if mine is None or mine.foreground is not self or mine.ended or mine.waiting:
            yield
            return
        mine.waiting = True
        self._left()
        try:
            yield
        finally:
            mine.waiting = False
            self._active += 1

    def _left(self) -> None:
        self._active -= 1
        self._ended = self._clock()
        if not self._active and self._idle is not None:
            self._idle.set()

    async def quiet(self) -> None:
        """Return once no operation has been in flight for ``QUIET_SECONDS``, or after
        ``MOST_SECONDS``."""
        start = self._clock()
        deadline = start + MOST_SECONDS
        self._steps += 1
        paused = False
        while True:
            now = self._clock()
            lull = now - self._ended
            if not self._active and lull >= QUIET_SECONDS:
                break
            if now >= deadline:
                self._capped += 1
                break
            paused = True
            if self._active:
                if self._idle is None:
                    self._idle = asyncio.Event()
                self._idle.clear()
                # asyncio.timeout, not wait_for: on 3.11 wait_for can swallow a cancel (the loop's
                # close) that arrives as the event is set (see ``Pipeline.serve``).
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(deadline - now):
                        await self._idle.wait()
            else:
                await asyncio.sleep(min(QUIET_SECONDS - lull, deadline - now))
        if paused:
            self._deferred += 1
            self._waited += self._clock() - start

    def status(self) -> PaceStatus:
        return PaceStatus(self._steps, self._deferred, round(self._waited * 1000, 3), self._capped)


@contextmanager
def paced(foreground: Foreground) -> Iterator[None]:
    """Pipeline steps inside the block (and the tasks it starts) wait for ``foreground``'s lulls."""
    token = _PACED.set(foreground)
    try:
        yield
    finally:
        _PACED.reset(token)


async def to_thread(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``asyncio.to_thread``, after a lull in the requests when called inside ``paced``."""
    foreground = _PACED.get()
    if foreground is not None:
        await foreground.quiet()
    return await asyncio.to_thread(func, *args, **kwargs)
