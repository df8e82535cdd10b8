"""Queries first: background batches pause between layers while a query's forward pass runs.

A server embeds captured messages (the embedding backlog) and L1's atoms in batches while agents
search. Both compete for the same cores, and a batch group's pass is far longer than a query's, so
a query that arrives mid-batch used to wait for whole passes of it (the recall tail under load,
bench/gateway_load.py). Here each background pass checks the gate before every layer and waits
while a query is running, at most ``max_pause_s`` per layer so a steady stream of queries slows the
backlog but never stops it. The gate is per process: every memory opened in it shares the cores.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager


class QueryGate:
    """Counts queries in flight; ``pause`` holds a background pass while any runs."""

    def __init__(self, max_pause_s: float = 0.1) -> None:
        self.max_pause_s = max_pause_s
        self._cond = threading.Condition()
        self._running = 0
        self.pauses = 0  # background layer boundaries that waited for a query
        self.paused_ms = 0.0

    @contextmanager
    def query(self) -> Iterator[None]:
        """Mark a query's pass as running for the duration of the block."""
        with self._cond:
            self._running += 1
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                if self._running == 0:
                    self._cond.notify_all()

    def pause(self) -> None:
        """Called by a background pass between layers: wait while a query runs (bounded)."""
        if not self._running:  # read without the lock: a stale value costs one layer's wait at most
            return
        started = time.perf_counter()
        with self._cond:
            if not self._running:
                return
            self._cond.wait_for(lambda: self._running == 0, timeout=self.max_pause_s)
            self.pauses += 1
            self.paused_ms += (time.perf_counter() - started) * 1000


GATE = QueryGate()
