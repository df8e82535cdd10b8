"""Reading each layer: messages (L0), atoms (L1), scenes (L2), the persona (L3), tenants."""

from __future__ import annotations

import asyncio

from memstrata import operations as ops
from memstrata.errors import NotFoundError
from memstrata.facade.core import FacadeCore, operation
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l2.scene_file import parse_scene
from memstrata.layers.l3 import persona_doc
from memstrata.models import (
    Atom,
    AtomFilter,
    Backup,
    Message,
    MessageFilter,
    Persona,
    Scene,
    SceneEntry,
    Tenant,
)
from memstrata.operations import arguments as args


class ReadMethods(FacadeCore):
    @operation(ops.Messages)
    async def messages(self, op: ops.Messages) -> list[Message]:
        tenant = None if op.user_id is None else args.tenant(op.user_id, op.agent_id)
        flt = MessageFilter(op.session_key, op.since, op.until, args.filters(op.filters))
        return await asyncio.to_thread(
            self._store.messages.list, tenant, flt, limit=op.limit, after_seq=op.after_seq
        )

    # --- L1 -------------------------------------------------------------------------------------

    @operation(ops.Atoms)
    async def atoms(self, op: ops.Atoms) -> list[Atom]:
        tenant = None if op.user_id is None else args.tenant(op.user_id, op.agent_id)
        flt = AtomFilter(
            args.atom_type(op.type),
            op.scene,
            op.since,
            op.until,
            op.include_superseded,
            metadata=args.filters(op.filters),
        )
        return await asyncio.to_thread(
            self._store.atoms.list, tenant, flt, limit=op.limit, after_seq=op.after_seq
        )

    # --- L2 / L3 --------------------------------------------------------------------------------

    @operation(ops.Persona)
    async def persona(self, op: ops.Persona) -> Persona | None:
        tenant = args.tenant(op.user_id, op.agent_id)
        if self._upper is None:
            return None
        found = await asyncio.to_thread(self._upper.persona.read, tenant)
        if found is None:
            return None
        body, navigation = persona_doc.split(found[0])
        return Persona(tenant, body, navigation, found[1])

    @operation(ops.Scenes)
    async def scenes(self, op: ops.Scenes) -> list[SceneEntry]:
        tenant = args.tenant(op.user_id, op.agent_id)
        return await asyncio.to_thread(self._upper.scenes.index, tenant) if self._upper else []

    @operation(ops.ReadScene)
    async def read_scene(self, op: ops.ReadScene) -> Scene:
        name = scene_names.from_path(op.path)
        tenant = args.tenant(op.user_id, op.agent_id)
        found = await asyncio.to_thread(self._upper.scenes.load, tenant) if self._upper else []
        for scene in found:
            if scene.name == name:
                return scene
        raise NotFoundError("scene", op.path, tenant=str(tenant))

    @operation(ops.SceneBackups)
    async def scene_backups(self, op: ops.SceneBackups) -> list[Backup]:
        name = scene_names.from_path(op.path)
        tenant = args.tenant(op.user_id, op.agent_id)
        return await asyncio.to_thread(self._upper.scenes.backups, tenant, name) if self._upper else []

    @operation(ops.ReadSceneBackup)
    async def read_scene_backup(self, op: ops.ReadSceneBackup) -> Scene:
        name = scene_names.from_path(op.path)
        tenant = args.tenant(op.user_id, op.agent_id)

        def read() -> Scene | None:
            if self._upper is None:
                return None
            made = next((b for b in self._upper.scenes.backups(tenant, name) if b.id == op.backup_id), None)
            text = self._upper.scenes.read_backup(tenant, op.backup_id, name) if made else None
            return parse_scene(name, text, made.made_at) if made and text is not None else None

        found = await asyncio.to_thread(read)
        if found is None:
            raise NotFoundError("scene backup", f"{op.backup_id}/{name}", tenant=str(tenant))
        return found

    @operation(ops.PersonaBackups)
    async def persona_backups(self, op: ops.PersonaBackups) -> list[Backup]:
        tenant = args.tenant(op.user_id, op.agent_id)
        return await asyncio.to_thread(self._upper.persona.backups, tenant) if self._upper else []

    @operation(ops.ReadPersonaBackup)
    async def read_persona_backup(self, op: ops.ReadPersonaBackup) -> Persona:
        tenant = args.tenant(op.user_id, op.agent_id)

        def read() -> Persona | None:
            if self._upper is None:
                return None
            made = next((b for b in self._upper.persona.backups(tenant) if b.id == op.backup_id), None)
            text = self._upper.persona.read_backup(tenant, op.backup_id) if made else None
            if made is None or text is None:
                return None
            body, navigation = persona_doc.split(text)
            return Persona(tenant, body, navigation, made.made_at)

        found = await asyncio.to_thread(read)
        if found is None:
            raise NotFoundError("persona backup", op.backup_id, tenant=str(tenant))
        return found

    @operation(ops.Tenants)
    async def tenants(self, op: ops.Tenants) -> list[Tenant]:
        def read() -> list[Tenant]:
            found = self._pipeline.known_tenants()
            found += self._upper.scenes.tenants() if self._upper is not None else []
            return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

        return await asyncio.to_thread(read)
