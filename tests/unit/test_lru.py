"""The one bounded cache (``memstrata.lru``): least recently used first out, counts never lost
between threads, and what the callers use it for (prompt marks, search calls per turn, MCP sessions'
tenants)."""

from __future__ import annotations

import threading

import pytest

from memstrata.errors import AccessError, TurnLimitError
from memstrata.lru import Lru
from memstrata.mcp.server import MAX_BOUND, Bindings
from memstrata.models import Tenant
from memstrata.tools import TurnLimiter


def test_the_least_recently_used_key_goes_first() -> None:
    kept: Lru[int] = Lru(2)
    kept.put("a", 1)
    kept.put("b", 2)
    assert kept.get("a") == 1  # now "b" is the least recently used
    kept.put("c", 3)
    assert "b" not in kept and kept.get("a") == 1 and kept.get("c") == 3 and len(kept) == 2


def test_update_pop_and_discard() -> None:
    kept: Lru[int] = Lru(10)
    assert kept.update("x", lambda n: (n or 0) + 1) == 1
    assert kept.update("x", lambda n: (n or 0) + 1) == 2
    kept.put(("maya", "s1"), 5)
    kept.put(("li", "s1"), 6)
    kept.discard(lambda key: isinstance(key, tuple) and key[0] == "maya")
    assert ("maya", "s1") not in kept and kept.pop(("li", "s1")) == 6 and kept.pop(("li", "s1")) is None


def test_counts_from_many_threads_are_never_lost() -> None:
    kept: Lru[int] = Lru(4)

    def count() -> None:
        for _ in range(2_000):
            kept.update("turn", lambda n: (n or 0) + 1)

    threads = [threading.Thread(target=count) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert kept.get("turn") == 16_000


def test_a_cache_of_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one key"):
        Lru[int](0)


def test_the_turn_limiter_counts_through_it() -> None:
    limiter = TurnLimiter(limit=2)
    limiter.count("t1")
    limiter.count("t1")
    limiter.count(None)  # not counted
    with pytest.raises(TurnLimitError):
        limiter.count("t1")
    with pytest.raises(TurnLimitError):  # still over, however often it is asked
        limiter.count("t1")
    limiter.count("t2")


def test_clear_forgets_every_key() -> None:
    kept = Lru[int](4)
    kept.put("a", 1)
    kept.put("b", 2)
    kept.clear()
    assert len(kept) == 0 and kept.get("a") is None


def test_an_mcp_session_keeps_its_first_tenant_and_an_active_one_outlives_the_bound() -> None:
    bindings = Bindings()
    maya, other = Tenant("maya"), Tenant("other")
    assert bindings.bind("s0", maya) == maya
    with pytest.raises(AccessError):
        bindings.bind("s0", other)
    for i in range(1, MAX_BOUND + 1):  # as many sessions again; s0 is used now and then
        bindings.bind(f"s{i}", other)
        if i % 1000 == 500:
            bindings.bind("s0", maya)
    with pytest.raises(AccessError):  # still bound: used recently, so not the one forgotten
        bindings.bind("s0", other)
    assert bindings.bind("s1", maya) == maya  # the least recently used was forgotten
