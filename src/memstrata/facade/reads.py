"""Reading each layer: messages (L0), atoms (L1), scenes (L2), the persona (L3), tenants."""

from __future__ import annotations

import asyncio

from memstrata import arguments as args
from memstrata.errors import NotFoundError
from memstrata.facade.core import FacadeCore
from memstrata.layers.l2 import names as scene_names
from memstrata.layers.l3 import persona_doc
from memstrata.models import (
    DEFAULT,
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
    async def messages(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        session_key: str | None = None,
        since: int | None = None,
        until: int | None = None,
        limit: int = 100,
        after_seq: int = 0,
    ) -> list[Message]:
        """Stored L0 messages by ascending seq; ``user_id=None`` lists every tenant (admin use)."""
        tenant = None if user_id is None else args.tenant(user_id, agent_id)
        flt = MessageFilter(session_key, since, until)
        return await asyncio.to_thread(
            self._store.messages.list, tenant, flt, limit=limit, after_seq=after_seq
        )

    # --- L1 -------------------------------------------------------------------------------------

    async def atoms(
        self,
        *,
        user_id: str | None = DEFAULT,
        agent_id: str = DEFAULT,
        type: str | None = None,
        scene: str | None = None,
        since: int | None = None,
        until: int | None = None,
        include_superseded: bool = False,
        limit: int = 100,
        after_seq: int = 0,
    ) -> list[Atom]:
        """Stored L1 atoms by ascending seq; ``user_id=None`` lists every tenant (admin use)."""
        tenant = None if user_id is None else args.tenant(user_id, agent_id)
        flt = AtomFilter(args.atom_type(type), scene, since, until, include_superseded)
        return await asyncio.to_thread(self._store.atoms.list, tenant, flt, limit=limit, after_seq=after_seq)

    # --- L2 / L3 --------------------------------------------------------------------------------

    async def persona(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Persona | None:
        """The tenant's persona (body and scene navigation apart), or None before the first one."""
        tenant = args.tenant(user_id, agent_id)
        if self._upper is None:
            return None
        found = await asyncio.to_thread(self._upper.persona.read, tenant)
        if found is None:
            return None
        body, navigation = persona_doc.split(found[0])
        return Persona(tenant, body, navigation, found[1])

    async def scenes(self, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> list[SceneEntry]:
        """The tenant's scene index: one entry per scene file, with the atom ids it consolidates."""
        tenant = args.tenant(user_id, agent_id)
        return await asyncio.to_thread(self._upper.scenes.index, tenant) if self._upper else []

    async def read_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Scene:
        """One scene file, parsed: ``path`` is ``scene_blocks/<name>.md`` (as in the navigation) or
        ``<name>.md``. Raises ``PathError`` for any other path, ``NotFoundError`` for a scene that
        does not exist."""
        name = scene_names.from_path(path)
        tenant = args.tenant(user_id, agent_id)
        found = await asyncio.to_thread(self._upper.scenes.load, tenant) if self._upper else []
        for scene in found:
            if scene.name == name:
                return scene
        raise NotFoundError("scene", path, tenant=str(tenant))

    async def tenants(self) -> list[Tenant]:
        """Every tenant with messages or scenes in this memory."""

        def read() -> list[Tenant]:
            found = self._pipeline.known_tenants()
            found += self._upper.scenes.tenants() if self._upper is not None else []
            return sorted(set(found), key=lambda t: (t.user_id, t.agent_id))

        return await asyncio.to_thread(read)
