"""Counts of the ways a run got by with less than it asked for, for ``status``.

An engine that degrades (a server without structured outputs, a prompt shrunk to fit the
model's context, a truncated reply retried, items of a reply dropped as garbage) keeps going, as
the design says it may, but never silently: each degradation adds one to a named counter here,
and ``status`` shows the counters.
"""

from __future__ import annotations

import threading
from collections import Counter


class Degradations:
    """Named counters, safe to add to from worker threads. One per memory, shared by its parts."""

    def __init__(self) -> None:
        self._counts: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, name: str, count: int = 1) -> None:
        """Count ``count`` more of ``name`` (nothing for zero)."""
        if count:
            with self._lock:
                self._counts[name] += count

    def get(self, name: str) -> int:
        with self._lock:
            return self._counts[name]

    def snapshot(self) -> dict[str, int]:
        """Every counter above zero, sorted by name."""
        with self._lock:
            return {k: v for k, v in sorted(self._counts.items()) if v}
