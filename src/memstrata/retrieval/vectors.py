"""Which embedder writes vectors, and whether the stored ones can be searched: one object, made by
the composition root and shared by capture, L1, search, reindex and the embedding backlog.

The store records the name of the model its vectors came from. A memory opened with another
embedder keeps searching by keyword (and says so in every result) and writes no new vectors until
``reindex`` has re-embedded everything with the new one.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from memstrata.errors import EmbeddingError
from memstrata.models import Atom, Layer, Message, Tenant
from memstrata.ports import Embedder, SearchIndex
from memstrata.retrieval.documents import atom_vector_text, message_vector_text
from memstrata.retrieval.query_vectors import QueryVectors

log = logging.getLogger(__name__)


class VectorState:
    """``embedder``: the configured embedder (None: keyword search only). ``note``: why stored
    vectors cannot be used now, or None. ``queries``: search queries' vectors from ``embedder``,
    micro-batched and cached (None without an embedder)."""

    def __init__(self, index: SearchIndex, embedder: Embedder | None, *, writable: bool = True) -> None:
        self._index = index
        self.embedder = embedder
        self.note: str | None = None
        self.queries = QueryVectors(embedder) if embedder is not None else None
        if embedder is None:
            return
        stored = index.embedding_model()
        if stored is None and writable:
            index.reset_vectors(embedder.name)
        elif stored is not None and stored != embedder.name:
            self.note = (
                f"stored vectors were made by {stored} but the embedder is {embedder.name}: "
                "keyword search only until `memstrata reindex`"
            )
            log.warning(self.note)

    @property
    def writer(self) -> Embedder | None:
        """The embedder, when new vectors may be written (not while stale ones await reindex)."""
        return None if self.note else self.embedder

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
        self._index.put_vectors(tenant, layer, seqs, vectors)
        return []
