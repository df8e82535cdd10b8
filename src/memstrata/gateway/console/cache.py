"""A tenant's whole record lists, kept a few seconds for the pages that need them all: every atom
(superseded versions too) for the overview's timeline, a scene's atoms, an atom's older versions
and the atoms made from a message; the day of every message for the timeline. Reading them is
the costly part of those pages (~900 atoms for a LoCoMo tenant: 70 ms on a busy machine, against
4 ms for the counts), and people click through several such pages in a row.

An entry is used only while the tenant's counts are what they were when it was read, and for at
most ``SECONDS``; every console write empties it, so the console's own edits show
at once. An edit through the API that keeps the counts (a new version superseding an old one)
shows within ``SECONDS``.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from memstrata.gateway.console.render import day
from memstrata.gateway.context import who
from memstrata.lru import Lru
from memstrata.models import Atom, Counts, Tenant
from memstrata.operations import MemoryApi

SECONDS = 10.0
CHUNK = 1000  # the facade's largest page
MAX_ENTRIES = 128  # at most this many lists are kept at once


class TenantCache:
    def __init__(self, seconds: float = SECONDS) -> None:
        self._seconds = seconds
        self._kept: Lru[tuple[float, Counts, Any]] = Lru(MAX_ENTRIES)

    async def _get(
        self, kind: str, tenant: Tenant, counts: Counts, read: Callable[[], Awaitable[Any]]
    ) -> Any:
        found = self._kept.get((kind, tenant))
        if found is not None and found[1] == counts and time.monotonic() - found[0] < self._seconds:
            return found[2]
        value = await read()
        self._kept.put((kind, tenant), (time.monotonic(), counts, value))
        return value

    async def atoms(self, mem: MemoryApi, tenant: Tenant, counts: Counts) -> list[Atom]:
        """Every atom of ``tenant`` by seq, superseded ones included."""
        found: list[Atom] = await self._get("atoms", tenant, counts, lambda: read_atoms(mem, tenant))
        return found

    async def said(self, mem: MemoryApi, tenant: Tenant, counts: Counts) -> dict[str, str]:
        """The day each message of ``tenant`` was said, by message id."""
        found: dict[str, str] = await self._get("said", tenant, counts, lambda: read_days(mem, tenant))
        return found

    def clear(self) -> None:
        """After a console write: what was kept may be out of date."""
        self._kept.clear()


async def read_atoms(mem: MemoryApi, tenant: Tenant) -> list[Atom]:
    found: list[Atom] = []
    while True:
        page = await mem.atoms(
            **who(tenant), include_superseded=True, limit=CHUNK, after_seq=found[-1].seq if found else 0
        )
        found += page
        if len(page) < CHUNK:
            return found


async def read_days(mem: MemoryApi, tenant: Tenant) -> dict[str, str]:
    days: dict[str, str] = {}
    after = 0
    while True:
        page = await mem.messages(**who(tenant), limit=CHUNK, after_seq=after)
        days.update((m.id, day(m.timestamp)) for m in page)
        if len(page) < CHUNK:
            return days
        after = page[-1].seq
