"""Matrix products of short inputs split across two cores, without BLAS threads.

A query is a few dozen tokens: each linear layer is then a thin ``(tokens, 384) @ (384, 1536)``
product that one core does in about 0.3 ms and BLAS does not thread well. Here the calling thread
computes the left half of the weight's columns while a helper thread computes the right half; both
release the GIL inside numpy. Measured on the project's 2-core machine: a query's forward pass from
7.0 to about 5 ms (docs/benchmarks.md, ``bench/embedder_speed.py``).

Never slower than one core by more than a hand-off: when the helper has not started its half by
the time the caller finished the left one (the machine is busy, or another embed holds the
helper), the caller cancels it and computes the right half itself. The helper blocks on a queue
when idle, so unlike OpenBLAS' own threads it never spins on a loaded machine.
"""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

_lock = threading.Lock()
_helper: ThreadPoolExecutor | None = None


def split_matmul(x: F32, w: F32, out: F32 | None = None) -> F32:
    """``x @ w`` into ``out`` (allocated when None), the right half of ``w``'s columns on the helper."""
    if out is None:
        out = np.empty((x.shape[0], w.shape[1]), dtype=np.float32)
    half = w.shape[1] // 2
    right = _pool().submit(np.matmul, x, w[:, half:], out[:, half:])
    np.matmul(x, w[:, :half], out=out[:, :half])
    if right.cancel():
        np.matmul(x, w[:, half:], out=out[:, half:])
    else:
        right.result()
    return out


def _pool() -> ThreadPoolExecutor:
    global _helper
    if _helper is None:
        with _lock:
            if _helper is None:
                _helper = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memstrata-embed-half")
    return _helper
