"""The text each record's vector is made from, read back from the stored rows."""

from __future__ import annotations

from collections.abc import Sequence

from memstrata.models import Layer, Tenant
from memstrata.ports import Store
from memstrata.retrieval.documents import atom_vector_text, message_vector_text


def vector_texts(store: Store, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> dict[int, str]:
    """The texts the vectors of these records are made from, by seq, in ``seqs`` order; a record
    deleted meanwhile (forgotten, expired) is left out, so it gets no vector."""
    if layer == Layer.L0:
        return {m.seq: message_vector_text(m) for m in store.messages.by_seq(tenant, seqs)}
    return {a.seq: atom_vector_text(a) for a in store.atoms.by_seq(tenant, seqs)}


def first_messages(store: Store, limit: int) -> list[str]:
    """The contents of the store's first ``limit`` messages without a vector (in a store that
    has not chosen its model yet: its first messages), for choosing that model by their text."""
    found = store.index.missing_vectors(Layer.L0, 0, limit)
    texts: list[str] = []
    for tenant in dict.fromkeys(t for t, _ in found):
        texts += [m.content for m in store.messages.by_seq(tenant, [seq for t, seq in found if t == tenant])]
    return texts
