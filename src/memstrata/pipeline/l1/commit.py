"""Commit atoms the way L1 does: one transaction (atoms with their index text, superseded links,
the session cursor). Their vectors follow separately (``VectorState.embed_atoms``; the embedding
backlog catches any a crash or a failure left out).

Shared by the L1 runner's write step and by imports, so an imported atom is indexed exactly like an
extracted one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from memstrata.models import Atom, Tenant
from memstrata.ports import Store
from memstrata.retrieval.documents import atom_body


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
