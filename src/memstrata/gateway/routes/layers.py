"""L2 scenes and the L3 persona: list, read, write, delete, and their backups."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Request, Response

from memstrata.errors import NotFoundError
from memstrata.gateway.context import Mem, reply, reply_list, tenant, tenant_of, who
from memstrata.gateway.records import BackupOut, DoneOut, PersonaOut, SceneEntryOut, SceneOut
from memstrata.gateway.requests import OperationBody, PersonaIn, SceneIn, parsed
from memstrata.gateway.routes.messages import IdQuery

router = APIRouter(prefix="/v1", tags=["L2 scenes and L3 persona"])


@router.get("/scenes", response_model=list[SceneEntryOut])
async def list_scenes(
    mem: Mem, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """The tenant's scene index: one entry per scene, with the atom ids it consolidates."""
    found = await mem.scenes(**who(tenant(request, user_id, agent_id)))
    return reply_list(SceneEntryOut, found)


# Before ``/scenes/{path:path}``, which would take ``<name>.md/backups`` for a scene path.
@router.get("/scenes/{path:path}/backups", response_model=list[BackupOut])
async def scene_backups(
    mem: Mem, path: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """The backups holding a scene, newest first (empty when none does)."""
    found = await mem.scene_backups(path, **who(tenant(request, user_id, agent_id)))
    return reply_list(BackupOut, found)


@router.get("/scenes/{path:path}/backups/{backup_id}", response_model=SceneOut)
async def read_scene_backup(
    mem: Mem, path: str, backup_id: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """A scene as one of its backups holds it (404 when that backup is gone or lacks it)."""
    found = await mem.read_scene_backup(path, backup_id, **who(tenant(request, user_id, agent_id)))
    return reply(SceneOut, found)


@router.get("/scenes/{path:path}", response_model=SceneOut)
async def read_scene(
    mem: Mem, path: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """One scene: ``<name>.md`` or ``scene_blocks/<name>.md``."""
    return reply(SceneOut, await mem.read_scene(path, **who(tenant(request, user_id, agent_id))))


@router.put("/scenes/{path:path}", response_model=SceneOut)
async def write_scene(
    mem: Mem, path: str, body: Annotated[OperationBody, Depends(parsed(SceneIn))], request: Request
) -> Response:
    """Create or replace a scene (a normalised name: lowercase letters, digits, ``-``, ``_``,
    ending in ``.md``); ``create: false`` answers 404 when it does not exist."""
    found = await mem.write_scene(path, **body.arguments(), **who(tenant_of(request, body)))
    return reply(SceneOut, found)


@router.delete("/scenes/{path:path}", response_model=DoneOut)
async def delete_scene(
    mem: Mem, path: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """Delete a scene file and its index entry (404 when there is none)."""
    if not await mem.delete_scene(path, **who(tenant(request, user_id, agent_id))):
        raise NotFoundError("scene", path)
    return reply(DoneOut, DoneOut())


@router.get("/persona", response_model=PersonaOut | None)
async def read_persona(
    mem: Mem, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """The persona (body and scene navigation apart); ``null`` before the first one."""
    found = await mem.persona(**who(tenant(request, user_id, agent_id)))
    return reply(PersonaOut, found)  # null before the first persona


@router.get("/persona/backups", response_model=list[BackupOut])
async def persona_backups(
    mem: Mem, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """The persona's backups, newest first."""
    return reply_list(BackupOut, await mem.persona_backups(**who(tenant(request, user_id, agent_id))))


@router.get("/persona/backups/{backup_id}", response_model=PersonaOut)
async def read_persona_backup(
    mem: Mem, backup_id: str, request: Request, user_id: IdQuery = None, agent_id: IdQuery = None
) -> Response:
    """The persona as one of its backups holds it (404 when that backup is gone)."""
    found = await mem.read_persona_backup(backup_id, **who(tenant(request, user_id, agent_id)))
    return reply(PersonaOut, found)


@router.put("/persona", response_model=PersonaOut)
async def write_persona(
    mem: Mem, body: Annotated[OperationBody, Depends(parsed(PersonaIn))], request: Request
) -> Response:
    """Replace the persona body; the scene navigation is regenerated."""
    return reply(PersonaOut, await mem.write_persona(**body.arguments(), **who(tenant_of(request, body))))
