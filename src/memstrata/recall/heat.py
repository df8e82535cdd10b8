"""Scene heat: a recall that shows a scene's atoms warms that scene.

Recalls are many and heat is a soft signal, so a recall only notes its atoms in a ``HeatLedger``;
the writer folds the notes into the scene files in batches (``warm_scenes``: one write per scene
and one index write per batch, under the tenant's lock). Notes not yet folded in when the process
dies are lost: a few points of heat, never a layer.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from memstrata.models import Hit, Layer, Tenant
from memstrata.ports import SceneStore

HEAT_HITS = 5  # the best atoms shown warm their scenes (what the agent most likely reads)


def heated(hits: Sequence[Hit]) -> list[str]:
    """The ids of the atoms among the first ``HEAT_HITS`` atom hits shown: those warm scenes."""
    return [h.id for h in hits if h.layer == Layer.L1][:HEAT_HITS]


def warm_scenes(store: SceneStore, tenant: Tenant, recalls: Sequence[Sequence[str]]) -> dict[str, int]:
    """For each recall (the atom ids it showed), raise by one the heat of each scene that
    consolidates one of them; returns the heat added per scene. Writes only what changes."""
    entries = store.index(tenant)
    added: Counter[str] = Counter()
    for atom_ids in recalls:
        ids = set(atom_ids)
        added.update({e.name for e in entries if ids.intersection(e.atom_ids)})
    if not added:
        return {}
    for scene in store.load(tenant):
        if scene.name in added:
            store.save(tenant, replace(scene, heat=scene.heat + added[scene.name]))
    store.save_index(
        tenant, [replace(e, heat=e.heat + added[e.name]) if e.name in added else e for e in entries]
    )
    return dict(added)


class HeatLedger:
    """Recalls' atoms per tenant, waiting to warm their scenes (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._notes: dict[Tenant, list[tuple[str, ...]]] = {}
        self._since: dict[Tenant, int] = {}

    def note(self, tenant: Tenant, atom_ids: Sequence[str], now: int) -> None:
        if not atom_ids:
            return
        with self._lock:
            self._notes.setdefault(tenant, []).append(tuple(atom_ids))
            self._since.setdefault(tenant, now)

    def due(self, now: int, after_ms: int) -> list[Tenant]:
        """Tenants whose oldest note is ``after_ms`` old (every tenant with notes for 0)."""
        with self._lock:
            return [t for t, since in self._since.items() if now - since >= after_ms]

    def take(self, tenant: Tenant) -> list[tuple[str, ...]]:
        with self._lock:
            self._since.pop(tenant, None)
            return self._notes.pop(tenant, [])
