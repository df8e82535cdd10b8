"""L2 scenes and the L3 persona as records."""

from __future__ import annotations

from dataclasses import dataclass

from memstrata.models.records import Tenant


@dataclass(frozen=True, slots=True)
class Scene:
    """An L2 scene document: the file ``scene_blocks/<name>``, a META header and a Markdown body.

    Times are ms since the epoch (the file keeps minutes). ``heat`` grows with consolidation and
    recall hits.
    """

    name: str  # file name inside scene_blocks/, e.g. ``family.md``
    summary: str
    heat: int
    created: int
    updated: int
    body: str


@dataclass(frozen=True, slots=True)
class SceneEntry:
    """One line of ``.metadata/scene_index.json``: a scene's META and the atom ids it consolidates."""

    name: str
    summary: str
    heat: int
    created: int
    updated: int
    atom_ids: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Persona:
    """The L3 persona of a tenant: ``persona.md`` split into the body and the scene navigation."""

    tenant: Tenant
    body: str
    navigation: str
    updated: int  # ms
