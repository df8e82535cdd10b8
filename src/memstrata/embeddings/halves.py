"""The local model's helper threads: a short input's layer in two halves on two cores, and the
groups of a batch spread over the cores, the calling thread always doing its share.

A query is a few dozen tokens: each linear layer is then a thin ``(tokens, 384) @ (384, 1536)``
product that one core does in about 0.3 ms and that BLAS does not thread well. ``MiniLM`` can run
each layer as two independent halves (half of the attention heads with their share of the output
projection, then half of the feed-forward units) whose partial sums are added; here the calling
thread computes one half while a helper thread computes the other, both inside numpy with the GIL
released. Measured on the project's 2-core machine: a query from 7.5 to about 4.5 ms
(``bench/embedder_speed.py``, docs/benchmarks.md).

Never slower than one core by more than a hand-off: when no helper has started its share by the
time the caller finished its own (the machine is busy, or other embeds hold the helpers), the
caller cancels it and does that share too. Idle helpers block on a queue, so unlike OpenBLAS' own
threads they never spin on a loaded machine. There is one helper fewer than the cores the process
may use (at most 3): the caller is the other one, so a batch on two cores takes one thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]
T = TypeVar("T")

CORES = max(1, min(4, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1))
_lock = threading.Lock()
_helpers: ThreadPoolExecutor | None = None


def on_two_cores(work: Callable[[int], F32]) -> tuple[F32, F32]:
    """``(work(0), work(1))``, ``work(1)`` on a helper thread when one is free in time."""
    second = _pool().submit(work, 1)
    first = work(0)
    if second.cancel():
        return first, work(1)
    return first, second.result()


def spread(work: Callable[[int], T], count: int) -> list[T]:
    """``[work(0), ..., work(count - 1)]``: the calling thread and up to ``CORES - 1`` helpers each
    take the next index until none is left (a helper that starts late finds nothing to do). The
    first error is raised once every share in flight has ended; nothing new starts after it."""
    results: list[T | None] = [None] * count
    failed: list[BaseException] = []
    taken = iter(range(count))
    lock = threading.Lock()

    def drain() -> None:
        while not failed:
            with lock:
                i = next(taken, None)
            if i is None:
                return
            try:
                results[i] = work(i)
            except BaseException as exc:  # noqa: BLE001 - raised in the caller below
                failed.append(exc)

    shares = [_pool().submit(drain) for _ in range(min(CORES - 1, count - 1))]
    drain()
    for share in shares:
        if not share.cancel():
            share.result()
    if failed:
        raise failed[0]
    return results  # type: ignore[return-value]  # every index was filled: nothing failed


def _pool() -> ThreadPoolExecutor:
    global _helpers
    if _helpers is None:
        with _lock:
            if _helpers is None:
                size = max(1, CORES - 1)
                _helpers = ThreadPoolExecutor(max_workers=size, thread_name_prefix="memstrata-embed")
    return _helpers
