"""The BLAS under numpy: one thread where latency counts, and whether its kernels run thin
products unpacked (the local model's thin passes depend on that).

BLAS runs single-threaded during an embed and during a search's cosine product: on a busy 2-core
machine OpenBLAS' own threads wait on each other. A query embedding's p95 went from about 25 ms to
over 140 ms (docs/design.md, "Embeddings"); searches in a loop beside a busy core ran 75-94 a
second with the product on two threads and 175-344 on one (docs/benchmarks.md).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_blas_lock = threading.Lock()
_blas_users = 0
_blas_saved: list[tuple[Any, int]] = []  # (setter, original count) while any embed runs
_blas_setters: list[tuple[Any, Any]] | None = None  # (getter, setter) per BLAS library, found once


@contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Limit BLAS to one thread while any caller is inside; the first in sets it, the last out restores.

    Counted rather than nested, because concurrent embeds from the store's worker threads would
    otherwise restore each other's setting out of order. Without threadpoolctl it does nothing.
    """
    global _blas_users
    with _blas_lock:
        _blas_users += 1
        if _blas_users == 1:
            for get, set_ in _blas_functions():
                _blas_saved.append((set_, get()))
                set_(1)
    try:
        yield
    finally:
        with _blas_lock:
            _blas_users -= 1
            if _blas_users == 0:
                for set_, original in _blas_saved:
                    set_(original)
                _blas_saved.clear()


def _blas_functions() -> list[tuple[Any, Any]]:
    """Thread-count getter and setter of every BLAS library loaded (called under ``_blas_lock``).

    threadpoolctl finds the libraries (scanning them costs ~0.5 ms, so once). For OpenBLAS its own
    setter is bypassed: it lets only the first Python thread that ever set a limit change it and
    silently ignores the others, and embeds run on whichever thread calls them.
    """
    global _blas_setters
    if _blas_setters is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - a core dependency; without it only speed suffers
            _blas_setters = []
            return _blas_setters
        found: list[tuple[Any, Any]] = []
        for lib in ThreadpoolController().select(user_api="blas").lib_controllers:
            setter = _openblas_setter(lib) if lib.internal_api == "openblas" else lib.set_num_threads
            if setter is not None:
                found.append((lib.get_num_threads, setter))
        _blas_setters = found
    return _blas_setters


# OpenBLAS kernels that multiply a product of at most ~10^6 multiply-adds on its operands, without
# packing the weight first; a thin pass by blocks depends on that (``minilm._UNPACKED``). With the
# AVX2 ("Haswell") kernels the blocks cost more: one core, 8 rows, 10.5 ms against 8.8 whole.
_UNPACKED_KERNELS = frozenset({"skylakex", "cooperlake", "sapphirerapids"})
_thin: bool | None = None


def blas_runs_thin_products() -> bool:
    """Whether the loaded BLAS is OpenBLAS with kernels that run thin products unpacked (found
    once; False without threadpoolctl or with any other BLAS)."""
    global _thin
    if _thin is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:  # pragma: no cover - a core dependency
            _thin = False
        else:
            libs = ThreadpoolController().select(user_api="blas").lib_controllers
            _thin = bool(libs) and all(
                lib.internal_api == "openblas" and str(lib.architecture).lower() in _UNPACKED_KERNELS
                for lib in libs
            )
    return _thin


def _openblas_setter(lib: Any) -> Any:
    for prefix in ("", "scipy_"):
        for suffix in ("", "64_", "_64"):
            setter = getattr(lib.dynlib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if setter is not None:
                return setter
    return None
