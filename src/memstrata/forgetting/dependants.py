"""What a removal takes with it, the same for a user's delete and for the sweep.

An atom removed goes with its older versions, its vectors and its place in a scene; the scenes
that held it are named so L2 rewrites them (and L3 the persona) without it. An atom whose every
source message a user deleted is removed too; a source swept by retention still vouches for its
atom (retention forgets raw turns, not what was learnt from them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from memstrata.models import Atom, Layer, Tenant
from memstrata.ports import Store

SWEPT = "sources_swept"  # atom metadata: ids of its source messages deleted by retention


@dataclass(frozen=True, slots=True)
class Dropped:
    """Atoms removed (every version) and the scenes that held any of them."""

    atoms: tuple[Atom, ...] = ()
    scenes: tuple[str, ...] = ()


def drop_atoms(store: Store, tenant: Tenant, ids: Sequence[str]) -> Dropped:
    """Delete the atoms (with their older versions), their vectors and their scene membership."""
    removed = store.atoms.delete(tenant, ids)
    if not removed:
        return Dropped()
    store.index.drop_vectors(tenant, Layer.L1, [a.seq for a in removed])
    gone = {a.id for a in removed}
    membership = store.members.get(tenant)
    scenes = tuple(sorted({membership[i] for i in gone if i in membership}))
    if scenes:
        store.members.replace(tenant, {i: n for i, n in membership.items() if i not in gone})
    return Dropped(tuple(removed), scenes)


def orphaned(store: Store, tenant: Tenant, deleted: Sequence[str]) -> list[str]:
    """Ids of the tenant's atoms (any version) citing the ``deleted`` messages that have no source
    left: none still stored and none swept by retention. Call after the messages are deleted."""
    gone = set(deleted)
    found = []
    for a in store.atoms.citing(tenant, deleted):
        sources = set(a.source_message_ids)
        if sources & (set(a.metadata.get(SWEPT) or ()) - gone):
            continue
        if store.messages.get(tenant, sorted(sources - gone)):
            continue
        found.append(a.id)
    return found


def mark_swept(store: Store, tenant: Tenant, swept: Sequence[str]) -> set[str]:
    """Flag the atoms citing messages retention swept: ``metadata.sources_swept`` lists the ids
    (the atoms keep their text). Returns the ids of the atoms that changed."""
    ids = set(swept)
    changed = []
    for a in store.atoms.citing(tenant, swept):
        had = set(a.metadata.get(SWEPT) or ())
        now = had | (set(a.source_message_ids) & ids)
        if now != had:
            changed.append(replace(a, metadata={**a.metadata, SWEPT: sorted(now)}))
    if changed:
        store.atoms.amend(tenant, changed)
    return {a.id for a in changed}
