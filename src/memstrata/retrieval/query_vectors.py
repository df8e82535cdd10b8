"""Search queries' vectors: concurrent queries share one forward pass, repeated ones come from a cache.

Many agents on one server search at once (recall, search, the MCP tools, the proxy). A query's
embedding is one pass over every weight of the model for a dozen tokens, so N queries one after the
other stream the weights N times, while one pass for all N streams them once. So queries here
queue behind a running pass instead of starting their own: the first query that finds no pass
running starts one at once (a lone query waits for nothing), and when that pass ends the oldest
queued query runs every query queued by then (at most ``max_batch``) in the next pass. A query
therefore waits at most for the one pass ahead of it. Each thread only ever runs a pass holding its
own query: leadership is handed to the oldest waiter, never kept to drain the queue.

The cache holds the last ``cache_size`` vectors keyed by the embedder's name and the exact text (the
same turn's recall then search, an agent repeating its prompt): ~1.5 KB each at 384 dimensions. It
is an ``Lru`` with its own lock, apart from the queue's: a query that misses it and queues while the
pass that makes its vector ends only runs one pass more, never answers wrong.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from memstrata.lru import Lru
from memstrata.models import QueryEmbeddingStatus, QueryPassReport, Vectors
from memstrata.ports import Embedder, QueryFirstEmbedder

MAX_BATCH = 32
CACHE_SIZE = 1024


@dataclass(slots=True)
class _Ticket:
    text: str
    queued: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    lead: bool = False  # set when this ticket's thread is to run the next pass
    vector: Vectors | None = None
    error: BaseException | None = None


@dataclass(slots=True)
class _Counts:
    queries: int = 0
    cached: int = 0
    passes: int = 0
    batched: int = 0
    largest: int = 0
    wait_ms_total: float = 0.0
    wait_ms_max: float = 0.0


class QueryVectors:
    """Query vectors from ``embedder``; ``vector`` is thread-safe and blocking."""

    def __init__(
        self, embedder: Embedder, *, max_batch: int = MAX_BATCH, cache_size: int = CACHE_SIZE
    ) -> None:
        if max_batch < 1 or cache_size < 0:
            raise ValueError(f"max_batch must be >= 1 and cache_size >= 0, not {max_batch}, {cache_size}")
        self._embedder = embedder
        # Chosen once: a runtime-checkable protocol's isinstance costs ~20 us, and ran every pass.
        self._embed: Callable[[Sequence[str]], Vectors] = (
            embedder.embed_queries if isinstance(embedder, QueryFirstEmbedder) else embedder.embed
        )
        self._max_batch = max_batch
        self._lock = threading.Lock()  # the queue, the leader and the counts
        self._queue: list[_Ticket] = []
        self._running = False
        self._cache: Lru[Vectors] | None = Lru(cache_size) if cache_size else None
        self._counts = _Counts()

    def vector(self, text: str) -> Vectors:
        """The unit vector of ``text`` (1-D float32). Raises what the embedder raises
        (``EmbeddingError``) to every query of the failed pass."""
        return self.vectors([text])[0]

    def vectors(self, texts: Sequence[str]) -> list[Vectors]:
        """The unit vectors of ``texts``, queued together so that one pass makes them all (a
        first-person search's question and its reading) unless ``max_batch`` cuts the queue.
        Raises as ``vector`` does, once every text of this call has left the queue."""
        name = self._embedder.name
        cached = [self._cache.get((name, t)) if self._cache is not None else None for t in texts]
        tickets = {i: _Ticket(t) for i, t in enumerate(texts) if cached[i] is None}
        with self._lock:
            self._counts.queries += len(texts)
            self._counts.cached += len(texts) - len(tickets)
            if tickets:
                self._queue.extend(tickets.values())
                first = next(iter(tickets.values()))
                first.lead = not self._running
                self._running = True
        error: BaseException | None = None
        for ticket in tickets.values():
            if not ticket.lead:
                ticket.done.wait()
            if ticket.vector is None and ticket.error is None:  # woken to lead the next pass
                self._run_pass()
            # A ticket left queued after an error would be handed the lead with nobody to run it.
            error = error or ticket.error
        if error is not None:
            raise error
        out = []
        for i, hit in enumerate(cached):
            vector = hit if hit is not None else tickets[i].vector
            assert vector is not None
            out.append(vector.copy())
        return out

    def status(self) -> QueryEmbeddingStatus:
        report = (
            self._embedder.query_report()
            if isinstance(self._embedder, QueryFirstEmbedder)
            else QueryPassReport()
        )
        with self._lock:
            c = self._counts
            return QueryEmbeddingStatus(
                queries=c.queries,
                cached=c.cached,
                passes=c.passes,
                batched=c.batched,
                largest=c.largest,
                wait_ms_total=round(c.wait_ms_total, 3),
                wait_ms_max=round(c.wait_ms_max, 3),
                cache_entries=len(self._cache) if self._cache is not None else 0,
                process=report.process,
                process_passes=report.process_passes,
                process_failures=report.process_failures,
            )

    def _run_pass(self) -> None:
        """Embed the queued tickets (this thread's first among them), then hand over or stop."""
        with self._lock:
            batch, self._queue = self._queue[: self._max_batch], self._queue[self._max_batch :]
            self._count_pass(batch)
        try:
            texts = list(dict.fromkeys(t.text for t in batch))  # the same text twice: one row
            vectors = self._embed(texts)
            rows = {text: np.array(vectors[i], dtype=np.float32) for i, text in enumerate(texts)}
            for t in batch:
                t.vector = rows[t.text]
        except BaseException as exc:  # noqa: BLE001 - re-raised in every waiting thread of the pass
            for t in batch:
                t.error = exc
        finally:
            self._remember(batch)
            with self._lock:
                successor = self._queue[0] if self._queue else None
                self._running = successor is not None
                if successor is not None:
                    successor.lead = True
            for t in batch:
                t.done.set()
            if successor is not None:
                successor.done.set()

    def _count_pass(self, batch: Sequence[_Ticket]) -> None:
        now = time.perf_counter()
        c = self._counts
        c.passes += 1
        c.largest = max(c.largest, len(batch))
        c.batched += len(batch) if len(batch) > 1 else 0
        for t in batch:
            waited = (now - t.queued) * 1000
            c.wait_ms_total += waited
            c.wait_ms_max = max(c.wait_ms_max, waited)

    def _remember(self, batch: Sequence[_Ticket]) -> None:
        """Cache the pass's vectors (the least recently used go first)."""
        if self._cache is None:
            return
        name = self._embedder.name
        for t in batch:
            if t.vector is not None:
                self._cache.put((name, t.text), t.vector)
