"""Which embedder writes vectors, and whether the stored ones can be searched: one object, made by
the composition root and shared by capture, L1, search, reindex and the embedding backlog.

The store records the name of the model its vectors came from. A memory opened with another
embedder keeps searching by keyword (and says so in every result) and writes no new vectors until
``reindex`` has re-embedded everything with the new one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence

from memstrata.errors import EmbeddingError
from memstrata.models import Atom, Layer, Message, Tenant
from memstrata.ports import Embedder, EmbedderChoice, QueryFirstEmbedder, SearchIndex
from memstrata.retrieval.documents import atom_vector_text, message_vector_text
from memstrata.retrieval.query_vectors import QueryVectors

log = logging.getLogger(__name__)
# Vectors written per store transaction. An L1 run embeds a whole session's atoms in one batch
# (a backlog of thousands), and on SQLite a server's capture waits at most 1 s for a worker's
# write lock (docs/reliability.md, "Worker transactions"); the embedding backlog writes this many.
WRITE_BATCH = 256


class VectorState:
    """``embedder``: the configured embedder (None: keyword search only). ``note``: why stored
    vectors cannot be used now, or None. ``queries``: search queries' vectors from ``embedder``,
    micro-batched and cached (None without an embedder).

    Given an ``EmbedderChoice`` (``auto`` with more than one local model), a store that holds
    vectors keeps their model; a new one stays ``undecided`` (no embedder yet: there is nothing to
    search) until it holds messages, then ``sample`` (the texts of its first messages) picks the
    model, which is recorded at once. A read-only memory adopts whatever a writer recorded.
    """

    def __init__(
        self,
        index: SearchIndex,
        embedder: Embedder | EmbedderChoice | None,
        *,
        writable: bool = True,
        sample: Callable[[], Sequence[str]] | None = None,
    ) -> None:
        self._index = index
        self._writable = writable
        self._sample = sample
        self._choice: EmbedderChoice | None = None
        self._lock = threading.Lock()
        self._embedder: Embedder | None = None
        self._queries: QueryVectors | None = None
        self.note: str | None = None
        if isinstance(embedder, EmbedderChoice):
            stored = index.embedding_model()
            if stored is None:
                self._choice = embedder
                return
            embedder = embedder.for_model(stored)
        self._use(embedder, index.embedding_model())

    def _use(self, embedder: Embedder | None, stored: str | None) -> None:
        self._embedder = embedder
        self._queries = QueryVectors(embedder) if embedder is not None else None
        if embedder is None:
            return
        if stored is None and self._writable:
            self._index.reset_vectors(embedder.name)
        elif stored is not None and stored != embedder.name:
            self.note = (
                f"stored vectors were made by {stored} but the embedder is {embedder.name}: "
                "keyword search only until `memstrata reindex`"
            )
            log.warning(self.note)

    @property
    def undecided(self) -> bool:
        """An embedder choice waits for the store's first messages."""
        return self._choice is not None and self._decide() is None

    @property
    def embedder(self) -> Embedder | None:
        return self._decide() if self._choice is not None else self._embedder

    @property
    def queries(self) -> QueryVectors | None:
        if self._choice is not None:
            self._decide()
        return self._queries

    @property
    def writer(self) -> Embedder | None:
        """The embedder, when new vectors may be written (not while stale ones await reindex)."""
        embedder = self.embedder
        return None if self.note else embedder

    def _decide(self) -> Embedder | None:
        with self._lock:
            choice = self._choice
            if choice is None:
                return self._embedder
            stored = self._index.embedding_model()  # another process may have chosen since open
            if stored is not None:
                embedder = choice.for_model(stored)
            elif not self._writable or self._sample is None or not (texts := self._sample()):
                return None
            else:
                # Recorded only if no other process (a replica) recorded its choice first.
                stored = self._index.choose_model(choice.for_texts(texts).name)
                embedder = choice.for_model(stored)
                log.info("embeddings: %s chosen for this store by its first messages", stored)
            self._use(embedder, stored)
            self._choice = None
            return embedder

    def warm_up(self, within: float) -> None:
        """Ready the query embedder before the first query needs it (a server, before it takes
        requests): its child processes answering or its weights loaded here, waiting up to
        ``within`` seconds for the children. A store whose model is not chosen yet (no messages) has none to ready.
        A model that fails to load is logged here; queries then report it as before."""
        embedder = self.embedder
        if not isinstance(embedder, QueryFirstEmbedder):
            return  # hashing, an endpoint: nothing to load
        started = time.perf_counter()
        try:
            embedder.warm_up(within)
        except EmbeddingError as exc:
            log.warning("embeddings: %s did not load: %s", embedder.name, exc.message)
            return
        log.info("embeddings: %s ready in %.1f s", embedder.name, time.perf_counter() - started)

    def reindexed(self) -> None:
        self.note = None

    def embed_messages(self, tenant: Tenant, stored: Sequence[Message]) -> list[str]:
        """Vectors for freshly stored messages. Returns degradations (the messages stay stored;
        the embedding backlog retries them)."""
        return self._embed(
            tenant, Layer.L0, [m.seq for m in stored], [message_vector_text(m) for m in stored]
        )

    def embed_atoms(self, tenant: Tenant, stored: Sequence[Atom]) -> list[str]:
        """Vectors for freshly committed atoms (one batch); degradations as for messages."""
        return self._embed(tenant, Layer.L1, [a.seq for a in stored], [atom_vector_text(a) for a in stored])

    def _embed(self, tenant: Tenant, layer: Layer, seqs: list[int], texts: list[str]) -> list[str]:
        embedder = self.writer
        if embedder is None or not seqs:
            return []
        try:
            vectors = embedder.embed(texts)
        except EmbeddingError as exc:
            log.warning("%s embedding failed; stored without vectors, the backlog retries: %s", layer, exc)
            return [f"embedding failed ({exc.message}): stored without vectors, retried in the background"]
        for start in range(0, len(seqs), WRITE_BATCH):  # each batch whole: the backlog redoes the rest
            end = start + WRITE_BATCH
            self._index.put_vectors(tenant, layer, seqs[start:end], vectors[start:end])
        return []
