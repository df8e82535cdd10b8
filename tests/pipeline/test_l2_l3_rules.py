"""Each L2 timer rule and each L3 trigger and coalescing rule of DESIGN section 4, one test per
rule, on a fake clock, with recording engines at every layer and real SQLite and files."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstrata import FakeClock
from memstrata.memory import AsyncMemory
from memstrata.models import Tenant, TenantStatus
from tests.support.engines import RecordingExtractor
from tests.support.upper import RecordingPersonaWriter, RecordingSceneWriter, upper_memory

S = "chat"
HOUR = 3600


@pytest.fixture
def scenes() -> RecordingSceneWriter:
    return RecordingSceneWriter()


@pytest.fixture
def persona() -> RecordingPersonaWriter:
    return RecordingPersonaWriter()


@pytest.fixture
async def mem(
    home: Path,
    clock: FakeClock,
    extractor: RecordingExtractor,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> AsyncIterator[AsyncMemory]:
    m = upper_memory(home, clock, extractor, scenes, persona)
    yield m
    await m.close()


async def l1(mem: AsyncMemory, *ids: int) -> None:
    """Capture turns and run L1 on them now (one atom per turn)."""
    turns = [{"role": "user", "content": f"note {i} about hiking", "id": f"m{i}", "name": "Ann"} for i in ids]
    await mem.capture(turns, session_key=S)
    await mem.end_session(S)


async def tenant(mem: AsyncMemory) -> TenantStatus:
    return next(t for t in (await mem.status()).tenants if t.tenant == Tenant())


async def at(mem: AsyncMemory, clock: FakeClock, seconds: float) -> None:
    """Advance the clock and run whatever is due."""
    clock.advance(seconds)
    await mem.run_pending()


async def test_l2_fires_the_delay_after_an_l1_run_that_wrote_atoms(
    mem: AsyncMemory, clock: FakeClock, scenes: RecordingSceneWriter
) -> None:
    await l1(mem, 1, 2)
    await at(mem, clock, 9.9)
    assert scenes.requests == []
    await at(mem, clock, 0.1)
    assert [a.content for a in scenes.requests[0].atoms] == [
        "Ann said: note 1 about hiking",
        "Ann said: note 2 about hiking",
    ]


async def test_l2_waits_for_the_min_interval_after_the_last_l2(
    mem: AsyncMemory, clock: FakeClock, scenes: RecordingSceneWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)  # first L2
    clock.advance(100)
    await l1(mem, 2)  # now + 10 is earlier than last_l2 + 900: the min interval wins
    await at(mem, clock, 900 - 100 - 1)
    assert len(scenes.requests) == 1
    await at(mem, clock, 1)
    assert len(scenes.requests) == 2


async def test_the_l2_timer_moves_earlier_never_later(mem: AsyncMemory, clock: FakeClock) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    t1 = clock.now_ms()
    assert (await tenant(mem)).l2_fire_at == t1 + HOUR * 1000  # re-armed at max interval
    clock.advance(1000)
    await l1(mem, 2)
    assert (await tenant(mem)).l2_fire_at == t1 + 1010 * 1000  # moved earlier
    clock.advance(5)
    await l1(mem, 3)  # would be t1 + 1015: later, so ignored
    assert (await tenant(mem)).l2_fire_at == t1 + 1010 * 1000


async def test_after_each_l2_run_the_timer_rearms_at_the_max_interval(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    first = (await tenant(mem)).last_l2
    await at(mem, clock, HOUR - 1)
    assert (await tenant(mem)).last_l2 == first
    await at(mem, clock, 1)
    st = await tenant(mem)
    assert st.last_l2 == clock.now_ms() and st.l2_fire_at == clock.now_ms() + HOUR * 1000


async def test_a_tenant_inactive_for_the_active_window_stops_polling_until_the_next_l1(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    for _ in range(25):  # hourly runs while active; none re-arms after 24 h without L1 atoms
        await at(mem, clock, HOUR)
    st = await tenant(mem)
    assert st.l2_fire_at is None
    quiet = st.last_l2
    await at(mem, clock, 10 * HOUR)
    assert (await tenant(mem)).last_l2 == quiet
    await l1(mem, 2)
    assert (await tenant(mem)).l2_fire_at == clock.now_ms() + 10 * 1000


async def test_a_failed_l2_is_retried_after_the_backoff(
    mem: AsyncMemory, clock: FakeClock, scenes: RecordingSceneWriter
) -> None:
    scenes.fail_on_call(1)
    await l1(mem, 1)
    await at(mem, clock, 10)
    st = await tenant(mem)
    assert (
        st.l2_attempts == 1 and "scripted scene writer failure" in (st.l2_error or "") and st.l2_cursor == 0
    )
    await at(mem, clock, 29)
    assert len(scenes.requests) == 1
    await at(mem, clock, 1)
    st = await tenant(mem)
    assert len(scenes.requests) == 2 and st.l2_attempts == 0 and st.l2_cursor > 0


async def test_l3_writes_the_first_persona_after_the_first_l2(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    assert len(persona.requests) == 1
    first = persona.requests[0]
    assert first.first and first.changed == ("talk.md",) and "no persona yet" in first.reasons
    found = await mem.persona()
    assert (
        found is not None
        and found.body.startswith("# Persona #1")
        and "scene_blocks/talk.md" in found.navigation
    )


async def test_l3_runs_every_n_atoms_consolidated_since_the_last_persona(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    mem.settings.persona.trigger_every_n = 4
    await l1(mem, 1)
    await at(mem, clock, 10)  # cold start: persona #1
    await l1(mem, 2, 3, 4)
    await at(mem, clock, 900)
    assert len(persona.requests) == 1  # 3 new atoms: not yet
    await l1(mem, 5)
    await at(mem, clock, 900)
    assert len(persona.requests) == 2
    assert (
        not persona.requests[1].first and "4 new atoms since the last persona" in persona.requests[1].reasons
    )


async def test_a_scene_writer_request_triggers_l3(
    mem: AsyncMemory, clock: FakeClock, scenes: RecordingSceneWriter, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    scenes.requests_persona = ("Ann changed jobs",)
    await l1(mem, 2)
    await at(mem, clock, 900)
    assert len(persona.requests) == 2
    assert "scene writer: Ann changed jobs" in persona.requests[1].reasons


async def test_an_explicit_request_runs_l3_on_the_next_run_pending(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    await mem.request_persona("user asked")
    assert len(persona.requests) == 1
    await mem.run_pending()
    assert len(persona.requests) == 2 and persona.requests[1].reasons == ("user asked",)


async def test_triggers_during_an_l3_run_collapse_into_one_follow_up(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)

    async def trigger_three_times() -> None:
        if len(persona.requests) == 2:  # only during the first run under test
            for i in range(3):
                await mem.request_persona(f"during {i}")

    persona.during = trigger_three_times
    await mem.request_persona("before")
    await mem.run_pending()
    assert len(persona.requests) == 3  # the run, then exactly one follow-up
    assert persona.requests[2].reasons[-3:] == ("during 0", "during 1", "during 2")
    assert not (await tenant(mem)).l3_pending


async def test_only_one_l3_runs_at_a_time_per_tenant(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)

    async def slow() -> None:
        await asyncio.sleep(0.01)

    persona.during = slow
    tenants = mem._pipeline.tenants
    assert tenants is not None
    await asyncio.gather(*(tenants.run_l3(Tenant(), force=True) for _ in range(3)))
    assert persona.max_running == 1


async def test_a_failed_l3_is_not_done_and_is_retried_after_the_backoff(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)
    persona.fail_next()
    await mem.request_persona("again")
    await mem.run_pending()
    st = await tenant(mem)
    assert st.l3_pending and st.l3_attempts == 1 and "scripted persona writer failure" in (st.l3_error or "")
    await at(mem, clock, 29)
    assert len(persona.requests) == 2
    await at(mem, clock, 1)
    assert len(persona.requests) == 3 and not (await tenant(mem)).l3_pending


async def test_a_flush_serves_the_pending_l3_request_instead_of_adding_one(
    mem: AsyncMemory, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    await l1(mem, 1)
    await at(mem, clock, 10)  # L2, then the first persona
    persona.fail_next()
    await mem.request_persona("again")
    await mem.run_pending()  # fails: the request stays pending, in backoff
    before = mem._store.pipeline.tenant(Tenant())
    await mem.run_all()  # runs it now, as the one request it is
    after = mem._store.pipeline.tenant(Tenant())
    assert len(persona.requests) == 3 and persona.requests[2].reasons == ("again",)
    assert after.l3_requested == before.l3_requested == after.l3_done
