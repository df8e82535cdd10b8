"""The proxy's injection cache holds a bounded amount per turn, whatever the prompt's length."""

from __future__ import annotations

import tracemalloc
from typing import Any, cast

from memstrata.gateway.proxy.dialect import Turn
from memstrata.gateway.proxy.injection import Injector
from memstrata.gateway.proxy.stats import ProxyStats
from memstrata.layers.host_turns import TurnMessage
from memstrata.models import Tenant
from memstrata.operations import MemoryApi
from memstrata.recall import RecallResult
from memstrata.settings import Settings


class _Recalling:
    """A memory whose ``before_prompt`` answers at once with one short memory."""

    def __init__(self) -> None:
        self.prompts = 0

    async def before_prompt(self, prompt: str, **_: Any) -> RecallResult:
        self.prompts += 1
        return RecallResult(system_context="", prepend_context="- a memory")


def _turn(prompt: str) -> Turn:
    return Turn(messages=(TurnMessage(role="user", content=prompt),), system="", prompt_index=0)


async def test_held_turns_do_not_keep_their_prompts_alive() -> None:
    memory = _Recalling()
    injector = Injector(Settings(), ProxyStats())
    tenant = Tenant("alice", "default")
    tracemalloc.start()
    try:
        for n in range(40):
            prompt = f"{n:04d}" + "A" * 200_000  # a new 200 KB prompt each turn
            await injector.injection(cast(MemoryApi, memory), tenant, "s", _turn(prompt))
            del prompt
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert memory.prompts == 40
    # 40 held prompts would be 8 MB; digests and injections are a few KB.
    assert held < 1_000_000, f"{held:,} bytes still held after 40 turns"


async def test_the_same_turn_is_answered_from_the_cache() -> None:
    memory = _Recalling()
    injector = Injector(Settings(), ProxyStats())
    tenant = Tenant("alice", "default")
    first = await injector.injection(cast(MemoryApi, memory), tenant, "s", _turn("hello there"))
    again = await injector.injection(cast(MemoryApi, memory), tenant, "s", _turn("hello there"))
    assert again == first and memory.prompts == 1
