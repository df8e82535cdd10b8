"""Record-level reads and edits of each layer: the facade's methods (logic in ``records``)."""

from __future__ import annotations

import asyncio

from memstrata import operations as ops
from memstrata.facade.core import FacadeCore, operation
from memstrata.facade.edits.records import AtomChange, Removal
from memstrata.models import (
    Atom,
    AtomFilter,
    Counts,
    Message,
    MessageFilter,
    Persona,
    Scene,
    Tenant,
)
from memstrata.operations import arguments as args


class EditMethods(FacadeCore):
    @operation(ops.GetMessage)
    async def get_message(self, op: ops.GetMessage) -> Message:
        return await asyncio.to_thread(
            self._data.message, args.tenant(op.user_id, op.agent_id), op.message_id
        )

    @operation(ops.DeleteMessages)
    async def delete_messages(self, op: ops.DeleteMessages) -> list[str]:
        self._writable("delete messages")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._tenant_lock(tenant):  # atoms and scene membership may change with them
            done = await asyncio.to_thread(
                self._data.delete_messages, tenant, list(op.ids), list(op.session_keys)
            )
            await self._removed(tenant, done)
        return list(done.messages)

    @operation(ops.GetAtom)
    async def get_atom(self, op: ops.GetAtom) -> Atom:
        return await asyncio.to_thread(self._data.atom, args.tenant(op.user_id, op.agent_id), op.atom_id)

    @operation(ops.UpdateAtom)
    async def update_atom(self, op: ops.UpdateAtom) -> Atom:
        self._writable("update an atom")
        tenant = args.tenant(op.user_id, op.agent_id)
        change = AtomChange(op.content, args.atom_type(op.type), op.priority, op.scene_name)
        atom = await asyncio.to_thread(self._data.update_atom, tenant, op.atom_id, change, follow=op.follow)
        if atom.id != op.atom_id:
            await asyncio.to_thread(self._pipeline.on_atoms, tenant)  # the new version joins a scene at L2
        return atom

    @operation(ops.DeleteAtoms)
    async def delete_atoms(self, op: ops.DeleteAtoms) -> list[str]:
        self._writable("delete atoms")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._tenant_lock(tenant):  # scene membership changes with them
            done = await asyncio.to_thread(self._data.delete_atoms, tenant, list(op.ids))
            await self._removed(tenant, done)
        return list(done.atoms)

    async def _removed(self, tenant: Tenant, done: Removal) -> None:
        """Have L2/L3 rewrite the scenes and persona without the removed atoms (call under the
        tenant's lock)."""
        if done.atoms:
            await asyncio.to_thread(self._pipeline.on_removed, tenant, done.scenes)
            self._pipeline.wake()

    @operation(ops.WriteScene)
    async def write_scene(self, op: ops.WriteScene) -> Scene:
        self._writable("write a scene")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(
                self._data.write_scene, tenant, op.path, op.content, op.summary, create=op.create
            )

    @operation(ops.DeleteScene)
    async def delete_scene(self, op: ops.DeleteScene) -> bool:
        self._writable("delete a scene")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(self._data.delete_scene, tenant, op.path)

    @operation(ops.WritePersona)
    async def write_persona(self, op: ops.WritePersona) -> Persona:
        self._writable("write the persona")
        tenant = args.tenant(op.user_id, op.agent_id)
        async with self._tenant_lock(tenant):
            return await asyncio.to_thread(self._data.write_persona, tenant, op.body)

    @operation(ops.Counts)
    async def counts(self, op: ops.Counts) -> Counts:
        tenant = args.tenant(op.user_id, op.agent_id)
        messages = MessageFilter(op.session_key, op.since, op.until)
        atoms = AtomFilter(args.atom_type(op.type), None, op.since, op.until)
        return await asyncio.to_thread(self._data.counts, tenant, messages, atoms, op.scene_prefix)
