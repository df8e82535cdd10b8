"""Commit atoms the way L1 does: one transaction (atoms with their index text, superseded links,
the session cursor); then, separately, vectors for the atoms actually inserted.

Shared by the L1 runner's write step and by imports, so an imported atom is indexed exactly like an
extracted one.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

from memstrata.errors import EmbeddingError
from memstrata.models import Atom, Layer, Tenant
from memstrata.ports import Embedder, Store
from memstrata.retrieval.documents import atom_body, atom_vector_text

log = logging.getLogger(__name__)


def commit_atoms(
    store: Store,
    tenant: Tenant,
    atoms: Sequence[Atom],
    superseded: Mapping[str, str],
    cursor: tuple[str, int] | None,
) -> list[Atom]:
    """Commit ``atoms`` (ids the tenant has are skipped), set ``superseded`` links and move the L1
    cursor of ``cursor[0]`` to ``cursor[1]``, in one transaction. Returns the inserted atoms."""
    return store.atoms.commit(tenant, [(a, atom_body(a)) for a in atoms], superseded, cursor)


def embed_atoms(store: Store, tenant: Tenant, atoms: Sequence[Atom], embedder: Embedder | None) -> str | None:
    """Store vectors for committed ``atoms`` (one embedding batch). Returns a degradation to report
    when embedding failed: the atoms stay committed and their vectors wait for ``memstrata reindex``."""
    if embedder is None or not atoms:
        return None
    try:
        vectors = embedder.embed([atom_vector_text(a) for a in atoms])
    except EmbeddingError as exc:
        log.warning("atom embedding failed (run `memstrata reindex`): %s", exc)
        return f"embedding failed ({exc.message}): atoms stored without vectors"
    store.index.put_vectors(tenant, Layer.L1, [a.seq for a in atoms], vectors)
    return None
