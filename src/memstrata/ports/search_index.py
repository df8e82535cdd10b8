"""The search index port: keyword and vector primitives per layer, and what the index was built from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Protocol

from memstrata.models import AtomFilter, Layer, MessageFilter, Scored, Tenant, Vectors


class SearchIndex(Protocol):
    """Search primitives per layer. Fusion happens in the core, never here. An ``AtomFilter``
    with ``at`` leaves expired atoms out inside the query (see ``AtomStore``)."""

    def keyword(
        self,
        tenant: Tenant,
        flt: MessageFilter | AtomFilter,
        terms: Sequence[str],
        k: int,
        *,
        min_match: int = 1,
    ) -> list[Scored]:
        """BM25 top-``k`` of the tenant's records holding at least ``min_match`` (1 or 2) of ``terms``,
        each term matched as a literal phrase (any user text is a valid term). The filter's type
        names the layer: ``MessageFilter`` searches L0, ``AtomFilter`` L1."""
        ...

    def size(self, layer: Layer) -> int:
        """About how many records the layer's keyword index holds (all tenants); cheap."""
        ...

    def document_counts(self, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """How many records of the layer (all tenants) hold each term, by term as given."""
        ...

    def tenant_size(self, tenant: Tenant, layer: Layer) -> int:
        """How many records of the layer's keyword index are the tenant's (exact)."""
        ...

    def tenant_document_counts(self, tenant: Tenant, layer: Layer, terms: Sequence[str]) -> dict[str, int]:
        """How many of the tenant's records of the layer hold each term (matched as ``keyword``
        matches it), by term as given; exact. About as costly as a keyword query of the term."""
        ...

    def vector(self, tenant: Tenant, flt: MessageFilter | AtomFilter, query: Vectors, k: int) -> list[Scored]:
        """Cosine top-``k`` among the tenant's records of the filter's layer that have vectors."""
        ...

    def put_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int], vectors: Vectors) -> None:
        """Store (replace) the vectors of these records of ``tenant``."""
        ...

    def drop_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> None:
        """Forget the vectors of these records of ``tenant`` (the records were deleted)."""
        ...

    def get_vectors(self, tenant: Tenant, layer: Layer, seqs: Sequence[int]) -> dict[int, Vectors]:
        """The stored vectors (1-D, unit length) of these records of ``tenant``, by seq; records
        without a vector are left out."""
        ...

    def missing_vectors(self, layer: Layer, after_seq: int, limit: int) -> list[tuple[Tenant, int]]:
        """Records of ``layer`` (any tenant) without a vector: ``(tenant, seq)``, ascending seq."""
        ...

    def count_missing_vectors(self, layer: Layer) -> int:
        """How many records of ``layer`` (all tenants) have no vector."""
        ...

    def embedding_model(self) -> str | None:
        """The embedder name the stored vectors were made with, or None."""
        ...

    def reset_vectors(self, model: str) -> None:
        """Drop every vector and record ``model`` as the embedder of the vectors to come."""
        ...

    def rewrite_texts(self, layer: Layer, texts: Mapping[int, str]) -> None:
        """Replace the keyword texts of these stored records (by seq): ``reindex`` after the texts'
        definition changed (``retrieval/documents.py``)."""
        ...

    def index_version(self) -> int:
        """The version of the texts the index was built from (``retrieval/reindex.py``): a store
        filled before versions were recorded reads 1, a new one the version it was created at."""
        ...

    def set_index_version(self, version: int) -> None:
        """Record that every record's texts and vectors are now of ``version``."""
        ...

    def choose_model(self, model: str) -> str:
        """Record ``model`` as the embedder of the vectors to come unless one is recorded already;
        returns the recorded one (``model``, or the one another process chose first). Atomic."""
        ...
