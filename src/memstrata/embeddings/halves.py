"""Two halves of a short input's layer on two cores, without BLAS threads.

A query is a few dozen tokens: each linear layer is then a thin ``(tokens, 384) @ (384, 1536)``
product that one core does in about 0.3 ms and that BLAS does not thread well. ``MiniLM`` can run
each layer as two independent halves (half of the attention heads with their share of the output
projection, then half of the feed-forward units) whose partial sums are added; here the calling
thread computes one half while a helper thread computes the other, both inside numpy with the GIL
released. Measured on the project's 2-core machine: a query from 7.5 to about 4.5 ms
(``bench/embedder_speed.py``, docs/benchmarks.md).

Never slower than one core by more than a hand-off: when the helper has not started its half by
the time the caller finished its own (the machine is busy, or another embed holds the helper), the
caller cancels it and computes that half too. The idle helper blocks on a queue, so unlike OpenBLAS'
own threads it never spins on a loaded machine.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

_lock = threading.Lock()
_helper: ThreadPoolExecutor | None = None


def on_two_cores(work: Callable[[int], F32]) -> tuple[F32, F32]:
    """``(work(0), work(1))``, ``work(1)`` on the helper thread when it is free in time."""
    second = _pool().submit(work, 1)
    first = work(0)
    if second.cancel():
        return first, work(1)
    return first, second.result()


def _pool() -> ThreadPoolExecutor:
    global _helper
    if _helper is None:
        with _lock:
            if _helper is None:
                _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstrata-embed-half")
    return _helper
