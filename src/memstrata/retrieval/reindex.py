"""Re-embedding: fill every missing vector, after resetting them all when the embedder changed."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.models import Layer, Tenant
from memstrata.ports import Embedder, Store
from memstrata.retrieval.documents import atom_vector_text, message_vector_text

BATCH = 256


def vector_texts(store: Store, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> list[str]:
    """The texts the vectors of these records are made from, in ``seqs`` order."""
    if layer == Layer.L0:
        return [message_vector_text(m) for m in store.messages.by_seq(tenant, seqs)]
    return [atom_vector_text(a) for a in store.atoms.by_seq(tenant, seqs)]


def reindex(store: Store, embedder: Embedder) -> int:
    """Embed every record of L0 and L1 that has no vector (all of them when the stored vectors
    came from another embedder). Returns how many records were embedded."""
    index = store.index
    if index.embedding_model() != embedder.name:
        index.reset_vectors(embedder.name)
    done = 0
    for layer in (Layer.L0, Layer.L1):
        after = 0
        while batch := index.missing_vectors(layer, after, BATCH):
            for tenant in dict.fromkeys(t for t, _ in batch):
                seqs = [seq for t, seq in batch if t == tenant]
                index.put_vectors(
                    tenant, layer, seqs, embedder.embed(vector_texts(store, tenant, layer, seqs))
                )
            done += len(batch)
            after = batch[-1][1]
    return done
