"""The bad-key throttle on its own: free failures, then waits that double, a known key checked at
once in a wait, one unknown key in flight per slowed client, clients apart, the window forgetting.
Time is a clock the tests step (``Clock``), so no wait depends on how fast the machine is."""

from __future__ import annotations

import asyncio

import pytest

from memstrata.errors import TooManyFailuresError
from memstrata.gateway.access import ADMIN, Principal
from memstrata.gateway.throttle import Throttled, client_address

GOOD = "the-right-key"


class Ring:
    """A key ring knowing one key; counts the checks it was asked for."""

    required = True

    def __init__(self, delay: float = 0.0) -> None:
        self.checks = 0
        self.delay = delay

    async def principal_for(self, token: str) -> Principal | None:
        self.checks += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        return ADMIN if token == GOOD else None


class Clock:
    """Seconds that pass only when a test says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


async def _refused(ring: Throttled, token: str) -> bool:
    try:
        await ring.principal_for(token)
    except TooManyFailuresError:
        return True
    return False


async def test_free_failures_then_waits_that_double() -> None:
    inner, clock = Ring(), Clock()
    ring = Throttled(inner, free=3, base_s=0.2, most_s=2.0, clock=clock)
    client_address.set("10.0.0.1")
    for i in range(3):
        assert await ring.principal_for(f"bad-{i}") is None
    assert await ring.principal_for("bad-3") is None  # the 4th is checked, and starts a wait
    checked = inner.checks
    with pytest.raises(TooManyFailuresError) as refused:
        await ring.principal_for("bad-4")
    assert refused.value.retry_after >= 1 and inner.checks == checked  # not even checked
    clock.advance(0.19)
    assert await _refused(ring, "bad-5")  # still in the 0.2 s wait
    clock.advance(0.02)
    assert await ring.principal_for("bad-6") is None  # checked after the wait: now 0.4 s
    clock.advance(0.39)
    assert await _refused(ring, "bad-7")
    clock.advance(0.02)
    assert not await _refused(ring, "bad-8")
    clock.advance(100)  # past every wait and the window: free failures again
    assert all([not await _refused(ring, f"later-{i}") for i in range(3)])


async def test_a_key_that_worked_before_is_checked_at_once_in_a_wait() -> None:
    ring = Throttled(Ring(), free=1, base_s=5.0)
    client_address.set("10.0.0.2")
    assert await ring.principal_for(GOOD) == ADMIN
    for i in range(3):
        await _refused(ring, f"bad-{i}")
    assert await _refused(ring, "another-unknown-key")
    assert await ring.principal_for(GOOD) == ADMIN


async def test_clients_are_apart_and_the_window_forgets() -> None:
    clock = Clock()
    ring = Throttled(Ring(), free=1, base_s=5.0, window_s=0.1, clock=clock)
    client_address.set("10.0.0.3")
    await ring.principal_for("bad-1")
    await ring.principal_for("bad-2")
    assert await _refused(ring, "bad-3")
    client_address.set("10.0.0.4")
    assert not await _refused(ring, "bad-1")  # another client: untouched
    quiet = Throttled(Ring(), free=2, base_s=0.01, window_s=0.1, clock=clock)
    client_address.set("10.0.0.5")
    for i in range(2):
        await quiet.principal_for(f"bad-{i}")
    clock.advance(0.15)  # a quiet window: the count starts again
    for i in range(2):
        assert not await _refused(quiet, f"later-{i}")


async def test_a_slowed_client_has_one_unknown_key_checked_at_a_time() -> None:
    clock = Clock()
    ring = Throttled(Ring(delay=0.05), free=1, base_s=0.001, clock=clock)
    client_address.set("10.0.0.6")
    await ring.principal_for("bad-0")
    await ring.principal_for("bad-1")
    clock.advance(0.01)  # past the wait; the burst below overlaps the one key being checked
    outcomes = await asyncio.gather(*(_refused(ring, f"burst-{i}") for i in range(20)))
    assert outcomes.count(False) == 1  # one checked; the other 19 refused unchecked


async def test_its_state_is_bounded_and_forgets_the_least_recently_seen_client_first() -> None:
    ring = Throttled(Ring(), free=1, base_s=5.0, clients=2)
    for client in ("10.0.0.1", "10.0.0.2"):
        client_address.set(client)
        await ring.principal_for("bad-a")
        await ring.principal_for("bad-b")  # past the free one: this client now waits
    client_address.set("10.0.0.1")
    assert await _refused(ring, "bad-c")  # seen again: now the most recently seen
    client_address.set("10.0.0.3")
    await ring.principal_for("bad-a")  # a third client: 10.0.0.2 is forgotten, wait and all
    client_address.set("10.0.0.1")
    assert await _refused(ring, "bad-d")  # still waiting
    client_address.set("10.0.0.2")
    assert not await _refused(ring, "bad-c")  # a stranger again: its key is checked
