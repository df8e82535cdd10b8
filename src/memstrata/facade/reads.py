"""Reading each layer: messages (L0), atoms (L1), scenes (L2), the persona (L3), tenants."""

from __future__ import annotations

import asyncio

from memstrata import arguments as args
from memstrata import operations as ops
from memstrata.errors import NotFoundError
from memstrata.facade.core import FacadeCore, operation
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l3 import persona_doc
from memstrata.models import (
    Atom,
    AtomFilter,
    Message,
    MessageFilter,
    Persona,
    Scene,
    SceneEntry,
    Tenant,
)


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

    @operation(ops.Tenants)
    async def tenants(self, op: ops.Tenants) -> list[Tenant]:
        def read() -> list[Tenant]:
            found = self._pipeline.known_tenants()
            found += self._upper.scenes.tenants() if self._upper is not None else []
            return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

        return await asyncio.to_thread(read)
