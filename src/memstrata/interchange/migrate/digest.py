"""A fingerprint per layer of a memory: how many records and a SHA-256 over them in a fixed order,
computed the same way on any store, so a copy can be compared with its source."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from memstrata.models import Atom, AtomFilter, Layer, Message, MessageFilter, Tenant
from memstrata.ports import Store, UpperLayers

PAGE = 2000


@dataclass(frozen=True, slots=True)
class Digest:
    """``count`` records of a layer and the SHA-256 of their canonical lines."""

    layer: str
    count: int
    sha256: str


class _Hasher:
    def __init__(self, layer: str) -> None:
        self.layer, self.count, self._h = layer, 0, hashlib.sha256()

    def add(self, *fields: object) -> None:
        self._h.update(json.dumps(fields, sort_keys=True, ensure_ascii=False, default=str).encode() + b"\n")
        self.count += 1

    def digest(self) -> Digest:
        return Digest(self.layer, self.count, self._h.hexdigest())


def digests(store: Store, upper: UpperLayers, tenants: list[Tenant]) -> list[Digest]:
    """Every layer's fingerprint: messages, atoms, vectors, scenes, the scene index, membership,
    personas and the scheduler's cursors (as the ids of the records they point at)."""
    return [
        _messages(store),
        _atoms(store),
        *(_vectors(store, layer) for layer in (Layer.L0, Layer.L1)),
        *_upper(store, upper, tenants),
        _cursors(store),
    ]


def pages_of_messages(store: Store) -> Iterator[list[Message]]:
    after = 0
    while page := store.messages.list(None, MessageFilter(), limit=PAGE, after_seq=after):
        yield page
        after = page[-1].seq


def pages_of_atoms(store: Store) -> Iterator[list[Atom]]:
    after = 0
    while page := store.atoms.list(None, AtomFilter(include_superseded=True), limit=PAGE, after_seq=after):
        yield page
        after = page[-1].seq


def _messages(store: Store) -> Digest:
    h = _Hasher("L0 messages")
    for page in pages_of_messages(store):
        for m in page:
            h.add(m.id, m.tenant.user_id, m.tenant.agent_id, m.session_key, m.session_id, str(m.role),
                  m.name, m.content, m.timestamp, m.recorded_at, m.metadata)  # fmt: skip
    return h.digest()


def _atoms(store: Store) -> Digest:
    h = _Hasher("L1 atoms")
    for page in pages_of_atoms(store):
        for a in page:
            h.add(a.id, a.tenant.user_id, a.tenant.agent_id, str(a.type), a.priority, a.content, a.scene_name,
                  list(a.source_message_ids), a.metadata, a.session_key, a.created_at, a.updated_at,
                  a.version, a.superseded_by, a.pinned, a.expires_at)  # fmt: skip
    return h.digest()


def _vectors(store: Store, layer: Layer) -> Digest:
    h = _Hasher(f"{layer} vectors ({store.index.embedding_model() or 'none'})")
    pages = pages_of_messages(store) if layer == Layer.L0 else pages_of_atoms(store)
    for page in pages:
        for tenant in dict.fromkeys(r.tenant for r in page):
            mine = [r for r in page if r.tenant == tenant]
            found = store.index.get_vectors(tenant, layer, [r.seq for r in mine])
            for r in mine:
                if r.seq in found:
                    h.add(r.id, np.asarray(found[r.seq], dtype=np.float32).tobytes().hex())
    return h.digest()


def _upper(store: Store, upper: UpperLayers, tenants: list[Tenant]) -> list[Digest]:
    scenes, index, members, personas = (
        _Hasher("L2 scenes"),
        _Hasher("L2 scene index"),
        _Hasher("L2 membership"),
        _Hasher("L3 personas"),
    )
    for t in tenants:
        folder = upper.scenes.folder(t)
        for name in folder.names():
            scenes.add(t.user_id, t.agent_id, name, folder.read(name))
        for e in upper.scenes.index(t):
            index.add(
                t.user_id, t.agent_id, e.name, e.summary, e.heat, e.created, e.updated, list(e.atom_ids)
            )
        for atom_id, scene in sorted(store.members.get(t).items()):
            members.add(t.user_id, t.agent_id, atom_id, scene)
        found = upper.persona.read(t)
        if found is not None:
            personas.add(t.user_id, t.agent_id, found[0])
    return [scenes.digest(), index.digest(), members.digest(), personas.digest()]


def _cursors(store: Store) -> Digest:
    """Session and tenant state with each cursor as the id of the record it points at (seqs differ
    between stores; the records they name must not)."""
    h = _Hasher("pipeline state")
    for s in sorted(
        store.pipeline.sessions(), key=lambda s: (s.tenant.user_id, s.tenant.agent_id, s.session_key)
    ):
        at = last_message(store, s.tenant, s.session_key, s.cursor)
        h.add(s.tenant.user_id, s.tenant.agent_id, s.session_key, at.id if at else None, s.pending, s.runs,
              s.attempts, s.last_error)  # fmt: skip
    for t in sorted(store.pipeline.tenants(), key=lambda t: (t.tenant.user_id, t.tenant.agent_id)):
        last = last_atom(store, t.tenant, t.l2_cursor)
        h.add(t.tenant.user_id, t.tenant.agent_id, last.id if last else None, t.last_l2, t.new_atoms,
              t.l3_requested, t.l3_done, list(t.l3_reasons), t.last_l3)  # fmt: skip
    return h.digest()


def last_message(store: Store, tenant: Tenant, session_key: str, cursor: int) -> Message | None:
    """The session's last message at or before seq ``cursor`` (what a session cursor stands for)."""
    found = store.messages.before(tenant, session_key, cursor + 1, 1) if cursor else []
    return found[-1] if found else None


def last_atom(store: Store, tenant: Tenant, cursor: int) -> Atom | None:
    """The tenant's last atom at or before seq ``cursor`` (what an L2 cursor stands for)."""
    last, after = None, 0
    while cursor and (
        page := store.atoms.list(tenant, AtomFilter(include_superseded=True), limit=PAGE, after_seq=after)
    ):
        for a in page:
            if a.seq > cursor:
                return last
            last = a
        after = page[-1].seq
    return last
