"""The console's cache of whole record lists: used while the counts match and for a few seconds,
emptied by a write."""

from __future__ import annotations

import asyncio
from typing import Any, cast

from memstrata.gateway.console.cache import TenantCache
from memstrata.models import Atom, AtomType, Counts, Tenant
from memstrata.operations import MemoryApi

MAYA = Tenant("maya")


class CountingAtoms:
    """Answers ``atoms`` with a fixed list and counts the calls (the facade's read, faked)."""

    def __init__(self, n: int) -> None:
        self.calls = 0
        self.stored = [Atom(f"a{i}", MAYA, AtomType.EPISODIC, f"fact {i}", seq=i + 1) for i in range(n)]

    async def atoms(self, **kw: Any) -> list[Atom]:
        self.calls += 1
        after, limit = kw["after_seq"], kw["limit"]
        return [a for a in self.stored if a.seq > after][:limit]

    def api(self) -> MemoryApi:
        """This fake where a ``MemoryApi`` is held: the cache reads ``atoms`` alone."""
        return cast(MemoryApi, self)


def test_a_list_is_read_once_while_the_counts_hold() -> None:
    mem, kept = CountingAtoms(1500), TenantCache()
    counts = Counts(10, 1500, 2, 1)
    first = asyncio.run(kept.atoms(mem.api(), MAYA, counts))
    assert len(first) == 1500 and mem.calls == 2  # two chunks of at most 1000
    assert asyncio.run(kept.atoms(mem.api(), MAYA, counts)) == first
    assert mem.calls == 2
    asyncio.run(kept.atoms(mem.api(), MAYA, Counts(10, 1499, 2, 1)))  # the tenant changed
    assert mem.calls == 4


def test_it_expires_and_a_write_empties_it() -> None:
    mem, counts = CountingAtoms(3), Counts(1, 3, 0, 0)
    stale = TenantCache(seconds=0.0)
    asyncio.run(stale.atoms(mem.api(), MAYA, counts))
    asyncio.run(stale.atoms(mem.api(), MAYA, counts))
    assert mem.calls == 2
    kept = TenantCache()
    asyncio.run(kept.atoms(mem.api(), MAYA, counts))
    kept.clear()
    asyncio.run(kept.atoms(mem.api(), MAYA, counts))
    assert mem.calls == 4
