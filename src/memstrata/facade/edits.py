"""Record-level reads and edits of each layer (the data plane; logic in ``data_plane.py``)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence

from memstrata import arguments as args
from memstrata.data_plane import AtomChange, Counts, DataPlane, Removal
from memstrata.facade.core import FacadeCore
from memstrata.models import (
    DEFAULT,
    Atom,
    AtomFilter,
    Message,
    MessageFilter,
    Persona,
    Scene,
    Tenant,
)


class EditMethods(FacadeCore):
    @functools.cached_property
    def _data(self) -> DataPlane:
        return DataPlane(self._store, self._upper, self._vectors, self._clock.now_ms)

    def _tenant_lock(self, tenant: Tenant) -> contextlib.AbstractAsyncContextManager[object]:
        """The tenant's L2/L3 lock, so a scene or persona edit never races a run."""
        if self._upper is None:
            return contextlib.nullcontext()
        return self._pipeline.tenants_hold(tenant)

    async def get_message(
        self, message_id: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> Message:
        """One stored L0 message of the tenant. Raises ``NotFoundError``."""
        return await asyncio.to_thread(self._data.message, args.tenant(user_id, agent_id), message_id)

    async def delete_messages(
        self,
        ids: Sequence[str] = (),
        *,
        session_keys: Sequence[str] = (),
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> list[str]:
        """Delete the tenant's L0 messages with these ids and every message of these sessions.
        Atoms left with no source (every one deleted) are deleted too, and the scenes and persona
        that held them are rewritten at the next L2/L3 run. Returns the message ids deleted."""
        self._writable("delete messages")
        tenant = args.tenant(user_id, agent_id)
        async with self._tenant_lock(tenant):  # atoms and scene membership may change with them
            done = await asyncio.to_thread(self._data.delete_messages, tenant, list(ids), list(session_keys))
            await self._removed(tenant, done)
        return list(done.messages)

    async def get_atom(self, atom_id: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Atom:
        """One L1 atom of the tenant (current or superseded). Raises ``NotFoundError``."""
        return await asyncio.to_thread(self._data.atom, args.tenant(user_id, agent_id), atom_id)

    async def update_atom(
        self,
        atom_id: str,
        *,
        content: str | None = None,
        type: str | None = None,
        priority: int | None = None,
        scene_name: str | None = None,
        follow: bool = False,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Atom:
        """Correct an atom: a new version (new id, version + 1) supersedes it and is returned; the
        old one stays readable. Editing a superseded atom raises ``ConflictError`` naming the
        current version, unless ``follow=True`` (then the current version is edited)."""
        self._writable("update an atom")
        tenant = args.tenant(user_id, agent_id)
        change = AtomChange(content, args.atom_type(type), priority, scene_name)
        atom = await asyncio.to_thread(self._data.update_atom, tenant, atom_id, change, follow=follow)
        if atom.id != atom_id:
            await asyncio.to_thread(self._pipeline.on_atoms, tenant)  # the new version joins a scene at L2
        return atom

    async def delete_atoms(
        self, ids: Sequence[str], *, user_id: str = DEFAULT, agent_id: str = DEFAULT
    ) -> list[str]:
        """Delete the tenant's atoms with these ids and their older versions; returns the ids deleted.
        The scenes and the persona are rewritten without them at the next L2/L3 run."""
        self._writable("delete atoms")
        tenant = args.tenant(user_id, agent_id)
        async with self._tenant_lock(tenant):  # scene membership changes with them
            done = await asyncio.to_thread(self._data.delete_atoms, tenant, list(ids))
            await self._removed(tenant, done)
        return list(done.atoms)

    async def _removed(self, tenant: Tenant, done: Removal) -> None:
        """Have L2/L3 rewrite the scenes and persona without the removed atoms (call under the
        tenant's lock)."""
        if done.atoms:
            await asyncio.to_thread(self._pipeline.on_removed, tenant, done.scenes)
            self._pipeline.wake()

    async def write_scene(
        self,
        path: str,
        content: str,
        *,
        summary: str | None = None,
        create: bool = True,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
    ) -> Scene:
        """Create or replace a scene (``scene_blocks/<name>.md`` or ``<name>.md``, a normalised
        name). ``create=False`` raises ``NotFoundError`` when it does not exist."""
        self._writable("write a scene")
        tenant = args.tenant(user_id, agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(
                self._data.write_scene, tenant, path, content, summary, create=create
            )

    async def delete_scene(self, path: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> bool:
        """Delete a scene file and its index entry; False when there was no such scene."""
        self._writable("delete a scene")
        tenant = args.tenant(user_id, agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(self._data.delete_scene, tenant, path)

    async def write_persona(self, body: str, *, user_id: str = DEFAULT, agent_id: str = DEFAULT) -> Persona:
        """Replace the tenant's persona body; the scene navigation is regenerated."""
        self._writable("write the persona")
        tenant = args.tenant(user_id, agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(self._data.write_persona, tenant, body)

    async def counts(
        self,
        *,
        user_id: str = DEFAULT,
        agent_id: str = DEFAULT,
        session_key: str | None = None,
        type: str | None = None,
        since: int | None = None,
        until: int | None = None,
        scene_prefix: str | None = None,
    ) -> Counts:
        """How many messages (``session_key``, time range), current atoms (``type``, time range),
        scenes (name prefix) and personas (0 or 1) the tenant has."""
        tenant = args.tenant(user_id, agent_id)
        messages = MessageFilter(session_key, since, until)
        atoms = AtomFilter(args.atom_type(type), None, since, until)
        return await asyncio.to_thread(self._data.counts, tenant, messages, atoms, scene_prefix)
