"""The embedding backlog: every message and atom without a vector for the store's current model is
work, like an L1 backlog. L1 embeds what it commits at once, and so does capture without a
background pipeline; with one, capture leaves its messages here and wakes the loop (an agent's turn
does not wait for the model). This stage also catches what a crash between a commit and its
vectors, or a failed embedding, left behind, so no record stays unsearchable by vector for good.

The first pass after open scans every record; later passes only records stored since (the cursor
per layer lives in memory: a restart rescans once). A failed batch waits ``retry_seconds``.
"""

from __future__ import annotations

import logging
import threading

from memstrata.errors import EmbeddingError, StoreError
from memstrata.models import Layer
from memstrata.ports import Clock, Embedder, Store
from memstrata.retrieval.vector_texts import vector_texts
from memstrata.retrieval.vectors import VectorState

log = logging.getLogger(__name__)
BATCH = 256
# A server's captured messages wait this long for others before they are embedded: larger
# batches run on the embedder's low-priority batch workers instead of one small forward pass per
# capture competing with requests (bench/gateway_load.py with the local model, docs/benchmarks.md).
GATHER_MS = 500
LEASE = "embedding backlog"  # one process at a time drains it (the others would embed the same records)


def fill_missing(store: Store, embedder: Embedder, layer: Layer, after: int, limit: int) -> tuple[int, int]:
    """Embed up to ``limit`` records of ``layer`` past seq ``after`` that have no vector.
    Returns (records embedded, the seq to continue after). Raises ``EmbeddingError``."""
    done = 0
    while done < limit and (batch := store.index.missing_vectors(layer, after, min(BATCH, limit - done))):
        # One forward pass for the whole batch, whatever tenants it spans: a server's captures come
        # from many agents at once, and one embed call per tenant made ~50 two-message passes a
        # second at 50 clients, each too small for the batch workers and so run at the requests'
        # priority (bench/gateway_load.py with the local model, docs/benchmarks.md).
        texts = {
            t: vector_texts(store, t, layer, [seq for u, seq in batch if u == t])
            for t in dict.fromkeys(t for t, _ in batch)
        }
        rows = embedder.embed([text for by_seq in texts.values() for text in by_seq.values()])
        start = 0
        for tenant, by_seq in texts.items():
            if by_seq:
                store.index.put_vectors(tenant, layer, list(by_seq), rows[start : start + len(by_seq)])
            start += len(by_seq)
        done += len(batch)
        after = batch[-1][1]
    return done, after


class EmbeddingBacklog:
    def __init__(self, store: Store, vectors: VectorState, clock: Clock, retry_seconds: float = 30.0) -> None:
        self._store = store
        self._vectors = vectors
        self._clock = clock
        self._retry_ms = round(retry_seconds * 1000)
        self._after = {Layer.L0: 0, Layer.L1: 0}
        self._retry_at: int | None = None
        self._gather_until: int | None = None  # captured messages wait for company until then
        self._lock = threading.Lock()
        self.last_error: str | None = None

    def gather(self, now: int) -> None:
        """A capture left its messages here (a server's): embed them within ``GATHER_MS``, with
        whatever else arrives by then, rather than one small batch per capture."""
        if self._vectors.writer is None:
            return  # nothing to embed with: no timer to arm
        with self._lock:
            if self._gather_until is None:
                self._gather_until = now + GATHER_MS

    def is_due(self, now: int, *, force: bool = False) -> bool:
        if self._vectors.writer is None or (self._retry_at is not None and now < self._retry_at):
            return False
        return force or self._gather_until is None or now >= self._gather_until

    def next_fire(self) -> int | None:
        """When gathered messages are due (None: none are gathering). A failed embedder's retry
        delays them; the loop's idle poll finds other retries, as before gathering existed."""
        until = self._gather_until
        if until is None:
            return None
        return max(until, self._retry_at) if self._retry_at is not None else until

    def drain(self, limit: int = 4 * BATCH, *, force: bool = False) -> int:
        """Embed up to ``limit`` records without vectors (blocking). Returns how many; 0 when
        nothing is left, the embedder failed (recorded in ``last_error``, retried later) or, unless
        ``force``, captured messages are still gathering."""
        embedder = self._vectors.writer
        if embedder is None:
            return 0
        with self._lock:  # checked and closed at once: a window a capture opens meanwhile stays
            if not self.is_due(self._clock.now_ms(), force=force):
                return 0
            self._gather_until = None  # what is captured from now on gathers anew
        if not self._store.leases.claim(LEASE):
            return 0  # another process drains the backlog now
        try:
            return self._drain(embedder, limit)
        finally:
            self._store.leases.release(LEASE)

    def _drain(self, embedder: Embedder, limit: int) -> int:
        done = 0
        try:
            for layer in (Layer.L0, Layer.L1):
                n, self._after[layer] = fill_missing(
                    self._store, embedder, layer, self._after[layer], limit - done
                )
                done += n
        except (EmbeddingError, StoreError) as exc:
            # A store another process has locked (or a disk that refuses) is retried like an
            # embedder's failure: it had escaped and ended the whole background loop.
            self._retry_at = self._clock.now_ms() + self._retry_ms
            self.last_error = f"{type(exc).__name__}: {exc.message}"
            log.warning("embedding backlog: %s (retry in %.0f s)", exc.message, self._retry_ms / 1000)
            return done
        self._retry_at = None
        self.last_error = None
        return done

    def rescan(self) -> None:
        """Look at every record again (after ``reindex`` reset the vectors)."""
        self._after = {Layer.L0: 0, Layer.L1: 0}

    def pending(self) -> int:
        """Records without a vector (0 when there is no usable embedder)."""
        if self._vectors.writer is None:
            return 0
        return sum(self._store.index.count_missing_vectors(layer) for layer in (Layer.L0, Layer.L1))
