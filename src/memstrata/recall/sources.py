"""Where a tenant's recall reads from: its persona without navigation (its sections: the file's
title and lead are for a person opening the file, ``persona_doc.profile``), its scene index, one search,
and a scene body on demand (for the excerpt). The facade hands in the search; the rest comes from
the L2/L3 stores (nothing when the memory has none)."""

from __future__ import annotations

from collections.abc import Callable

from memstrata.layers.l3 import persona_doc
from memstrata.models import SceneEntry, SearchResult, Tenant
from memstrata.ports import UpperLayers
from memstrata.recall.gather import Sources


def recall_sources(upper: UpperLayers | None, tenant: Tenant, search: Callable[[], SearchResult]) -> Sources:
    def persona() -> str | None:
        found = upper.persona.read(tenant) if upper is not None else None
        return persona_doc.profile(persona_doc.strip_navigation(found[0])) if found else None

    def scenes() -> list[SceneEntry]:
        return upper.scenes.index(tenant) if upper is not None else []

    def scene_body(name: str) -> str | None:
        found = upper.scenes.load(tenant) if upper is not None else []
        return next((s.body for s in found if s.name == name), None)

    return Sources(persona=persona, scenes=scenes, memories=search, scene_body=scene_body)
