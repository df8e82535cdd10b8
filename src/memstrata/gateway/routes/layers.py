"""L2 scenes and the L3 persona: list, read, write, delete, and their backups, each route built
from its declaration (``routes.declared``)."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway.requests import PersonaIn, SceneIn
from memstrata.gateway.responses import BackupOut, DoneOut, PersonaOut, SceneEntryOut, SceneOut
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["L2 scenes and L3 persona"])


query_route(
    router,
    ops.Scenes,
    SceneEntryOut,
    "The tenant's scene index: one entry per scene, with the atom ids it consolidates.",
)
# Before ``/scenes/{path:path}``, which would take ``<name>.md/backups`` for a scene path.
query_route(
    router, ops.SceneBackups, BackupOut, "The backups holding a scene, newest first (empty when none does)."
)
query_route(
    router,
    ops.ReadSceneBackup,
    SceneOut,
    "A scene as one of its backups holds it (404 when that backup is gone or lacks it).",
)
query_route(router, ops.ReadScene, SceneOut, "One scene: ``<name>.md`` or ``scene_blocks/<name>.md``.")
body_route(
    router,
    ops.WriteScene,
    SceneIn,
    SceneOut,
    "Create or replace a scene (a normalised name: lowercase letters, digits, ``-``, ``_``, ending in "
    "``.md``); ``create: false`` answers 404 when it does not exist.",
)


query_route(
    router,
    ops.DeleteScene,
    DoneOut,
    "Delete a scene file and its index entry (404 when there is none).",
    missing="scene",
)


query_route(
    router,
    ops.Persona,
    PersonaOut,
    "The persona (body and scene navigation apart); ``null`` before the first one.",
)
query_route(router, ops.PersonaBackups, BackupOut, "The persona's backups, newest first.")
query_route(
    router,
    ops.ReadPersonaBackup,
    PersonaOut,
    "The persona as one of its backups holds it (404 when that backup is gone).",
)
body_route(
    router,
    ops.WritePersona,
    PersonaIn,
    PersonaOut,
    "Replace the persona body; the scene navigation is regenerated.",
)
