"""``MemstrataStore``: LangGraph's ``BaseStore`` on a memstrata memory (library or HTTP client).

Each item is a pinned atom of the tenant its namespace names (``items.Placement``); ``put``
remembers the new version before it deletes the old one (its source note, so the atom goes
with it), so a failure in between leaves the old value readable rather than none. A ``ttl``
(minutes) becomes the atom's time to live instead of a pin (a pinned atom never expires), and a
read with ``refresh_ttl`` sets it again from now. A search with a ``query`` is memstrata's hybrid
search of the tenant's atoms, with the relevance floor (``min_score``), narrowed to the
namespace prefix and the ``filter``; without one it lists the prefix, newest first.

Reading a tenant's items lists its atoms (each op batch lists a tenant once and keeps what it
read for its later ops), so a get costs a listing of that tenant's atoms: fine for the
thousands of items agent memories hold, not for millions."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from langgraph.store.base import (
    BaseStore,
    GetOp,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
)

from memstrata.errors import ConflictError, InputError
from memstrata.integrations.calling import Held, awaiting, blocking, drive
from memstrata.integrations.langgraph import items as it
from memstrata.integrations.langgraph.items import Placement, Stored
from memstrata.operations import MemoryApi, Who

_PAGE = 1000  # atoms per listing call (the most one call returns)
Items = dict[tuple[tuple[str, ...], str], Stored]


class MemstrataStore(BaseStore):
    """A LangGraph store whose items are memstrata atoms; pass it to ``graph.compile(store=...)``.

    ``mem`` is what ``Memory.open`` or ``AsyncMemory.open`` returned (a path, a database URL or an
    ``http://`` gateway). ``batch`` (sync graphs) needs a blocking memory; ``abatch`` takes
    either. ``now_ms`` is the memory's clock, to leave out items past their time to live before
    the sweep deletes them (default: the wall clock)."""

    supports_ttl = True

    def __init__(
        self,
        mem: Held,
        *,
        agent_id: str = "langgraph",
        user_index: int = 1,
        default_user: str = "default",
        min_score: float | None = None,
        ttl_config: TTLConfig | None = None,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        if user_index < 0:
            raise InputError("must be 0 or more", item="user_index")
        self._mem = mem
        self._place = Placement(user_index, default_user, agent_id)
        self._min_score = min_score
        self._now = now_ms or (lambda: int(time.time() * 1000))
        self.ttl_config = ttl_config

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        return drive(_Batch(blocking(self._mem), self).run(list(ops)))

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await _Batch(awaiting(self._mem), self).run(list(ops))


class _Batch:
    """One batch of ops, run in order; it lists each tenant's items once."""

    def __init__(self, mem: MemoryApi, store: MemstrataStore) -> None:
        self._mem = mem
        self._place = store._place
        self._min_score = store._min_score
        self._now = store._now()
        self._read: dict[str, Items] = {}

    async def run(self, ops: list[Op]) -> list[Result]:
        out: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                out.append(await self._get(op))
            elif isinstance(op, PutOp):
                await self._put(op)
                out.append(None)
            elif isinstance(op, SearchOp):
                out.append(await self._search(op))
            elif isinstance(op, ListNamespacesOp):
                out.append(await self._namespaces(op))
            else:
                raise InputError(f"unknown store operation {type(op).__name__}", item="ops")
        return out

    def _who(self, user: str) -> Who:
        return {"user_id": user, "agent_id": self._place.agent_id}

    async def _items(self, user: str) -> Items:
        if user not in self._read:
            found: Items = {}
            after = 0
            while True:
                page = await self._mem.atoms(**self._who(user), limit=_PAGE, after_seq=after)
                for atom in page:
                    s = it.stored(atom)
                    live = atom.pinned or atom.expires_at is None or atom.expires_at > self._now
                    if s is not None and live:
                        found[(s.namespace, s.key)] = s
                if len(page) < _PAGE:
                    break
                after = page[-1].seq
            self._read[user] = found
        return self._read[user]

    async def _users(self, prefix: tuple[str, ...]) -> list[str]:
        one = self._place.users(prefix)
        if one is not None:
            return [one]
        tenants = await self._mem.tenants()
        return sorted({t.user_id for t in tenants if t.agent_id == self._place.agent_id})

    async def _refresh(self, s: Stored, refresh: bool) -> None:
        if refresh and s.ttl_minutes is not None:
            user = self._place.user(s.namespace)
            await self._mem.set_atom_ttl(s.atom.id, ttl_seconds=s.ttl_minutes * 60, **self._who(user))

    async def _get(self, op: GetOp) -> Item | None:
        s = (await self._items(self._place.user(op.namespace))).get((op.namespace, op.key))
        if s is None:
            return None
        await self._refresh(s, op.refresh_ttl)
        return s.item()

    async def _put(self, op: PutOp) -> None:
        user = self._place.user(op.namespace)
        items = await self._items(user)
        old = items.pop((op.namespace, op.key), None)
        if op.value is None:
            if old is not None:
                await self._drop(old, user)
            return
        created = old.created_at if old is not None else self._now
        s = await self._remember(op, user, created)
        if old is not None and s.atom.id == old.atom.id and s.value != dict(op.value):
            await self._drop(old, user)  # same text, new value: the note must be made anew
            s = await self._remember(op, user, created)
        elif old is not None and s.atom.id != old.atom.id:
            await self._drop(old, user)
        items[(op.namespace, op.key)] = s

    async def _remember(self, op: PutOp, user: str, created: int) -> Stored:
        assert op.value is not None
        index = None if op.index is None or op.index is False else list(op.index)
        text = it.note(op.namespace, op.key, op.value, index)
        meta = it.metadata(op.namespace, op.key, op.value, created, op.ttl)
        atom = await self._mem.remember(text, metadata=meta, **self._who(user))
        if op.ttl is not None:
            atom = await self._mem.set_atom_ttl(atom.id, ttl_seconds=op.ttl * 60, **self._who(user))
        else:
            atom = await self._mem.pin_atom(atom.id, **self._who(user))
        s = it.stored(atom)
        if s is None or (s.namespace, s.key) != (op.namespace, op.key):
            raise ConflictError(f"atom {atom.id} already holds another item", current=atom.id)
        return s

    async def _drop(self, s: Stored, user: str) -> None:
        await self._mem.delete_messages(list(s.atom.source_message_ids), **self._who(user))

    async def _search(self, op: SearchOp) -> list[SearchItem]:
        found: list[tuple[float, Stored]] = []
        for user in await self._users(op.namespace_prefix):
            items = await self._items(user)
            if op.query:
                by_id = {s.atom.id: s for s in items.values()}
                res = await self._mem.search(
                    op.query,
                    **self._who(user),
                    limit=_PAGE,
                    layers=["L1"],
                    min_score=self._min_score,
                )
                pairs = [(h.score, by_id[h.id]) for h in res if h.id in by_id]
            else:
                pairs = [(float(s.atom.updated_at), s) for s in items.values()]
            found += [
                (score, s)
                for score, s in pairs
                if it.in_prefix(s.namespace, op.namespace_prefix) and it.matches(s.value, op.filter)
            ]
        found.sort(key=lambda p: p[0], reverse=True)
        page = found[op.offset : op.offset + op.limit]
        for _, s in page:
            await self._refresh(s, op.refresh_ttl)
        return [s.hit(score if op.query else None) for score, s in page]

    async def _namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        names: set[tuple[str, ...]] = set()
        for user in await self._users(()):
            for s in (await self._items(user)).values():
                if it.namespace_matches(s.namespace, op.match_conditions):
                    names.add(s.namespace if op.max_depth is None else s.namespace[: op.max_depth])
        return sorted(names)[op.offset : op.offset + op.limit]
