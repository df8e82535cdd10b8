"""Every layer of a tenant, read through the ports (so any backend can be exported)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TypeVar

from memstrata.layers.l2 import index as scene_index
from memstrata.models import Atom, AtomFilter, Message, MessageFilter, Scene, SceneEntry, Tenant
from memstrata.ports import Store, UpperLayers

PAGE = 2000
R = TypeVar("R", Message, Atom)


@dataclass(frozen=True, slots=True)
class TenantData:
    """One tenant's layers: messages and atoms (every version) by seq, which scene holds which
    atom, the scene files, their index, and ``persona.md`` as stored (navigation included)."""

    tenant: Tenant
    messages: tuple[Message, ...]
    atoms: tuple[Atom, ...]
    membership: dict[str, str]
    scenes: tuple[Scene, ...]
    entries: tuple[SceneEntry, ...]
    persona: str | None


def chosen(
    store: Store, upper: UpperLayers | None, user_id: str | None, agent_id: str | None
) -> list[Tenant]:
    """The tenants an export covers: all (``user_id`` None), every agent of a user, or one."""
    found = list(store.tenants()) + (upper.scenes.tenants() if upper is not None else [])
    if user_id is not None and agent_id is not None:
        return [Tenant(user_id, agent_id)]
    picked = [t for t in dict.fromkeys(found) if user_id is None or t.user_id == user_id]
    return sorted(picked, key=lambda t: (t.user_id, t.agent_id))


def collect(store: Store, upper: UpperLayers | None, tenant: Tenant) -> TenantData:
    """Read every layer of ``tenant``."""
    every, history = MessageFilter(), AtomFilter(include_superseded=True)
    messages = list(_pages(lambda after: store.messages.list(tenant, every, limit=PAGE, after_seq=after)))
    atoms = list(_pages(lambda after: store.atoms.list(tenant, history, limit=PAGE, after_seq=after)))
    membership = store.members.get(tenant)
    scenes: list[Scene] = upper.scenes.load(tenant) if upper is not None else []
    found = upper.persona.read(tenant) if upper is not None else None
    entries = scene_index.rebuild(scenes, membership, {a.id: a.seq for a in atoms})
    persona = found[0] if found is not None else None
    return TenantData(
        tenant, tuple(messages), tuple(atoms), membership, tuple(scenes), tuple(entries), persona
    )


def _pages(read: Callable[[int], list[R]]) -> Iterator[R]:
    after = 0
    while page := read(after):
        yield from page
        after = page[-1].seq
