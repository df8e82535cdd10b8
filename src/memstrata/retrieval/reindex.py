"""Re-embedding: fill every missing vector, after resetting them all when the embedder changed."""

from __future__ import annotations

from memstrata.models import Layer
from memstrata.ports import Embedder, SearchIndex

BATCH = 256


def reindex(index: SearchIndex, embedder: Embedder) -> int:
    """Embed every record of L0 and L1 that has no vector (all of them when the stored vectors
    came from another embedder). Returns how many records were embedded."""
    if index.embedding_model() != embedder.name:
        index.reset_vectors(embedder.name)
    done = 0
    for layer in (Layer.L0, Layer.L1):
        after = 0
        while batch := index.missing_vectors(layer, after, BATCH):
            vectors = embedder.embed([text for _, _, text in batch])
            for tenant in {t for t, _, _ in batch}:
                rows = [i for i, (t, _, _) in enumerate(batch) if t == tenant]
                index.put_vectors(tenant, layer, [batch[i][1] for i in rows], vectors[rows])
            done += len(batch)
            after = batch[-1][1]
    return done
