"""Scene heat: a recall that shows a scene's atoms warms that scene."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memstrata.models import Hit, Layer, Tenant
from memstrata.ports import SceneStore

HEAT_HITS = 5  # the best atoms shown warm their scenes (what the agent most likely reads)


def heated(hits: Sequence[Hit]) -> list[str]:
    """The ids of the atoms among the first ``HEAT_HITS`` atom hits shown: those warm scenes."""
    return [h.id for h in hits if h.layer == Layer.L1][:HEAT_HITS]


def warm_scenes(store: SceneStore, tenant: Tenant, atom_ids: Sequence[str]) -> list[str]:
    """Raise by one the heat of each scene that consolidates one of ``atom_ids`` (a recall hit on
    the scene's content); returns the scene names warmed. Writes only what changes."""
    ids = set(atom_ids)
    entries = store.index(tenant)
    warm = {e.name for e in entries if ids.intersection(e.atom_ids)}
    if not warm:
        return []
    for scene in store.load(tenant):
        if scene.name in warm:
            store.save(tenant, replace(scene, heat=scene.heat + 1))
    store.save_index(tenant, [replace(e, heat=e.heat + 1) if e.name in warm else e for e in entries])
    return sorted(warm)
