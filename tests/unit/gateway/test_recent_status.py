"""Health probes share one status computation for a while; probes arriving together wait for one."""

from __future__ import annotations

import asyncio
from typing import cast

from memstrata.gateway.context import RecentStatus
from memstrata.models import Status
from memstrata.operations import MemoryApi


class CountingMemory:
    def __init__(self) -> None:
        self.calls = 0

    async def status(self) -> Status:
        self.calls += 1
        await asyncio.sleep(0.01)  # a status takes a while: concurrent probes overlap it
        return Status((), self.calls, 0, None, None, ())

    def api(self) -> MemoryApi:
        """This fake where a ``MemoryApi`` is held: ``RecentStatus`` reads ``status`` alone."""
        return cast(MemoryApi, self)


async def test_probes_within_the_window_share_one_status() -> None:
    mem, recent = CountingMemory(), RecentStatus(seconds=60)
    results = await asyncio.gather(*(recent.get(mem.api()) for _ in range(20)))
    assert mem.calls == 1 and {r.messages for r in results} == {1}
    assert (await recent.get(mem.api())).messages == 1


async def test_a_probe_after_the_window_computes_it_again() -> None:
    mem, recent = CountingMemory(), RecentStatus(seconds=0.0)
    await recent.get(mem.api())
    await asyncio.sleep(0.001)
    assert (await recent.get(mem.api())).messages == 2
