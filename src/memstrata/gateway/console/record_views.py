"""View models of the record pages: atoms (filtered, paged, with their versions), messages (by
session, paged, with the atoms made from them), search hits with why they matched, and recall."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from memstrata.errors import NotFoundError
from memstrata.gateway.console.cache import CHUNK, TenantCache
from memstrata.gateway.console.render import when
from memstrata.gateway.context import who
from memstrata.models import Atom, Hit, Message, SessionStatus, Status, Tenant, custom_keys
from memstrata.operations import MemoryApi
from memstrata.recall import RecallResult, matched_words

_TIMES = frozenset({"timestamp", "message_time", "expires_at"})
PAGE = 50  # rows per list page
SCAN_PAGES = 20  # a filter the store cannot apply reads at most this many chunks per page


@dataclass(frozen=True, slots=True)
class AtomQuery:
    """The atoms page's filters, as the URL carries them. ``since``/``until`` are epoch ms."""

    type: str | None = None
    scene: str | None = None
    since: int | None = None
    until: int | None = None
    pinned: bool = False
    expiring: bool = False
    superseded: bool = False
    after: int = 0

    def keeps(self, atom: Atom) -> bool:
        """The filters the store does not apply itself."""
        return (not self.pinned or atom.pinned) and (not self.expiring or atom.expires_at is not None)


@dataclass(frozen=True, slots=True)
class AtomPage:
    atoms: list[Atom]
    next_after: int | None  # the ``after`` of the next page, None on the last


@dataclass(frozen=True, slots=True)
class AtomView:
    atom: Atom
    older: list[Atom]  # the versions it superseded, newest first
    newer: list[Atom]  # the versions that superseded it, oldest first
    sources: list[Message]
    scenes: list[str]  # the scene files that consolidate it (the scene index says; its
    # ``scene_name`` is the label extraction gave it, which a scene may have been merged from)


@dataclass(frozen=True, slots=True)
class MessagePage:
    sessions: list[SessionStatus]
    messages: list[Message]
    next_after: int | None


@dataclass(frozen=True, slots=True)
class MessageView:
    message: Message
    around: list[Message]  # its session around it, in order
    atoms: list[Atom]  # current and superseded atoms made from it


@dataclass(frozen=True, slots=True)
class Explained:
    """A search hit and why it ranked: the query's words it holds (the keyword side), its score in
    the fused ranking, and its fields."""

    hit: Hit
    matched: list[str]
    fields: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class RecallView:
    result: RecallResult
    elapsed_ms: float


async def atom_page(mem: MemoryApi, tenant: Tenant, q: AtomQuery) -> AtomPage:
    """One page of atoms matching ``q``: the store filters type, scene and time; pinned and
    expiring are kept here, scanning at most ``SCAN_PAGES`` chunks for a page."""
    found: list[Atom] = []
    after = q.after
    for _ in range(SCAN_PAGES):
        chunk = await mem.atoms(
            **who(tenant),
            type=q.type,
            scene=q.scene,
            since=q.since,
            until=q.until,
            include_superseded=q.superseded,
            limit=CHUNK if (q.pinned or q.expiring) else PAGE + 1,
            after_seq=after,
        )
        for atom in chunk:
            if q.keeps(atom):
                found.append(atom)
            if len(found) > PAGE:
                return AtomPage(found[:PAGE], found[PAGE - 1].seq)
            after = atom.seq
        if not chunk or len(chunk) < CHUNK:
            return AtomPage(found, None)
    return AtomPage(found, after)


async def atom_view(mem: MemoryApi, tenant: Tenant, atom_id: str, kept: TenantCache) -> AtomView:
    """An atom, its version chain both ways and its source messages."""
    atom = await mem.get_atom(atom_id, **who(tenant))
    newer: list[Atom] = []
    following = atom.superseded_by
    while following is not None and len(newer) < 50:
        newer.append(await mem.get_atom(following, **who(tenant)))
        following = newer[-1].superseded_by
    everything = await kept.atoms(mem, tenant, await mem.counts(**who(tenant))) if atom.version > 1 else []
    by_successor = {a.superseded_by: a for a in everything if a.superseded_by}
    older: list[Atom] = []
    current: Atom | None = atom
    while current is not None and (prev := by_successor.get(current.id)) is not None and len(older) < 50:
        older.append(prev)
        current = prev
    sources = [await _message(mem, tenant, mid) for mid in atom.source_message_ids[:50]]
    scenes = [e.name for e in await mem.scenes(**who(tenant)) if atom.id in e.atom_ids]
    return AtomView(atom, older, newer, [m for m in sources if m is not None], scenes)


async def _message(mem: MemoryApi, tenant: Tenant, message_id: str) -> Message | None:
    """A source message, or None when it was deleted since (the atom outlives it then)."""
    try:
        found: Message = await mem.get_message(message_id, **who(tenant))
    except NotFoundError:
        return None
    return found


async def message_page(
    mem: MemoryApi,
    tenant: Tenant,
    status: Status,
    session: str | None,
    since: int | None,
    until: int | None,
    after: int,
) -> MessagePage:
    """A page of the tenant's messages; its sessions (for the filter) from ``status``."""
    sessions = [s for s in status.sessions if s.tenant == tenant]
    page = await mem.messages(
        **who(tenant), session_key=session, since=since, until=until, limit=PAGE + 1, after_seq=after
    )
    more = len(page) > PAGE
    return MessagePage(sessions, page[:PAGE], page[PAGE - 1].seq if more else None)


async def message_view(mem: MemoryApi, tenant: Tenant, message_id: str, kept: TenantCache) -> MessageView:
    """A message in its session (ten before, ten after) and the atoms whose sources include it."""
    message = await mem.get_message(message_id, **who(tenant))
    session = await mem.messages(**who(tenant), session_key=message.session_key, limit=CHUNK)
    index = next((i for i, m in enumerate(session) if m.id == message.id), None)
    if index is None:  # past the first chunk of a long session: it and the ten after it
        session = await mem.messages(
            **who(tenant), session_key=message.session_key, limit=11, after_seq=message.seq - 1
        )
        index = 0
    around = session[max(0, index - 10) : index + 11]
    atoms = [
        a
        for a in await kept.atoms(mem, tenant, await mem.counts(**who(tenant)))
        if message.id in a.source_message_ids
    ]
    return MessageView(message, around, atoms)


async def explained_search(
    mem: MemoryApi, tenant: Tenant, query: str, layers: tuple[str, ...]
) -> tuple[list[Explained], str, tuple[str, ...]]:
    """Hybrid search over ``layers`` with each hit's matched words and fields."""
    result = await mem.search(query, **who(tenant), layers=layers, limit=20)
    hits = [Explained(h, matched_words(query, h), _fields(h)) for h in result.hits]
    return hits, result.strategy, tuple(result.degradations)


# What a person reads beside a hit: when it was said, in which session, its type and priority,
# then the caller's own metadata. Left out: the engine's working keys (the statement again, its
# form, language, asker, ...: the hit's text in other words) and an atom's scene label, which
# names the L1 topic, not the scene file L2 filed it in (the atom's page shows both).
_SHOWN = ("message_time", "timestamp", "session_key", "name", "type", "priority", "pinned", "expires_at")
_OWN = frozenset({*_SHOWN, "scene", "superseded_by"})  # a hit's own fields, not the caller's


def _fields(hit: Hit) -> dict[str, Any]:
    """The hit's fields worth showing, times as dates (the store keeps epoch ms)."""
    meta = hit.metadata
    custom = {k: v for k, v in custom_keys(meta).items() if k not in _OWN}
    shown = {
        k: v
        for k, v in ({k: meta[k] for k in _SHOWN if k in meta} | custom).items()
        if v not in (None, "", ())
    }
    return {k: when(v) if k in _TIMES and isinstance(v, int) else v for k, v in shown.items()}


async def recall_view(mem: MemoryApi, tenant: Tenant, prompt: str) -> RecallView:
    started = time.perf_counter()
    result = await mem.recall(prompt, **who(tenant))
    return RecallView(result, (time.perf_counter() - started) * 1000)
