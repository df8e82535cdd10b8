"""L2 is scheduled from what is stored, not only from a successful L1 run's report: atoms that an
L1 run committed before failing, atoms whose arming a kill lost, and atoms written while an L2 run
was in flight all get consolidated on the timer rules of DESIGN section 4. Fake clock, recording
engines, real SQLite and files."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memstrata import FakeClock
from memstrata.memory import AsyncMemory
from memstrata.models import AtomDraft, ConsolidationResult, ExtractionWindow, Tenant, TenantStatus
from memstrata.ports import ConsolidationRequest
from tests.support.engines import NoDedup, RecordingExtractor
from tests.support.parts import memory_from
from tests.support.upper import RecordingPersonaWriter, RecordingSceneWriter, upper_memory

S = "chat"
HOUR = 3600


class ScriptedExtractor(RecordingExtractor):
    """One atom per message, except where the script says otherwise for that call (in order):
    ``"fail"`` raises ``EngineError``, ``"none"`` extracts nothing. Calls past the script extract."""

    def __init__(self, *script: str) -> None:
        super().__init__()
        self.script = list(script)

    async def extract(self, window: ExtractionWindow) -> list[AtomDraft]:
        outcome = self.script.pop(0) if self.script else "atoms"
        if outcome == "fail":
            self.fail_next()
        drafts = await super().extract(window)
        return [] if outcome == "none" else drafts


@pytest.fixture
def scenes() -> RecordingSceneWriter:
    return RecordingSceneWriter()


@pytest.fixture
def persona() -> RecordingPersonaWriter:
    return RecordingPersonaWriter()


@pytest.fixture
async def opened() -> AsyncIterator[list[AsyncMemory]]:
    """Memories the test opens (closed at the end if the test did not)."""
    found: list[AsyncMemory] = []
    yield found
    for mem in found:
        await mem.close()


def turns(*ids: int) -> list[dict[str, object]]:
    return [{"role": "user", "content": f"note {i} about hiking", "id": f"m{i}", "name": "Ann"} for i in ids]


def with_upper(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    extractor: RecordingExtractor,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> AsyncMemory:
    mem = upper_memory(home, clock, extractor, scenes, persona)
    opened.append(mem)
    return mem


async def l1_only(home: Path, clock: FakeClock, *ids: int) -> None:
    """Commit atoms for ``ids`` in a process whose L2 arming never happens: the durable state a kill
    between the L1 commit and the arming leaves (atoms and L1 cursor stored, no L2 timer touched)."""
    mem = memory_from(home, clock, RecordingExtractor(), NoDedup())
    await mem.capture(turns(*ids), session_key=S)
    await mem.end_session(S)
    await mem.close()


async def tenant(mem: AsyncMemory) -> TenantStatus:
    found = [t for t in (await mem.status()).tenants if t.tenant == Tenant()]
    assert found, "no L2/L3 state for the tenant"
    return found[0]


async def at(mem: AsyncMemory, clock: FakeClock, seconds: float) -> None:
    clock.advance(seconds)
    await mem.run_pending()


async def consolidated(mem: AsyncMemory) -> list[str]:
    """Atom contents held by scenes, in atom order."""
    held = {i for e in await mem.scenes() for i in e.atom_ids}
    return [a.content for a in await mem.atoms(limit=1000) if a.id in held]


# --- an L1 run that fails part-way ------------------------------------------------------------------


async def test_atoms_committed_before_an_l1_failure_arm_l2(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    extractor = ScriptedExtractor("atoms", "fail", "none")  # window 2 fails; its retry finds nothing
    mem = with_upper(opened, home, clock, extractor, scenes, persona)
    mem.settings.pipeline.window_size = 2
    await mem.capture(turns(1, 2, 3, 4), session_key=S)
    await mem.run_pending()

    [session] = (await mem.status()).sessions
    assert session.attempts == 1 and session.cursor == 2
    st = await tenant(mem)
    assert st.l2_fire_at == clock.now_ms() + 10_000 and st.l2_cursor == 0

    await at(mem, clock, 30)  # the L1 retry succeeds with no atoms; L2 was due since 10 s
    assert (await mem.status()).sessions[0].attempts == 0
    assert await consolidated(mem) == ["Ann said: note 1 about hiking", "Ann said: note 2 about hiking"]
    assert (await tenant(mem)).l2_cursor == max(a.seq for a in await mem.atoms())


async def test_a_failed_l1_run_that_committed_atoms_moves_a_later_l2_timer_earlier(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    extractor = ScriptedExtractor("atoms", "atoms", "fail")
    mem = with_upper(opened, home, clock, extractor, scenes, persona)
    mem.settings.pipeline.window_size = 2
    await mem.capture(turns(1), session_key=S)
    await mem.end_session(S)
    await at(mem, clock, 10)  # first L2; re-armed an hour later
    assert (await tenant(mem)).l2_fire_at == clock.now_ms() + HOUR * 1000

    clock.advance(1000)
    await mem.capture(turns(2, 3, 4, 5), session_key=S)
    await mem.end_session(S)  # window m2-m3 commits, window m4-m5 fails
    st = await tenant(mem)
    assert (await mem.status()).sessions[0].attempts == 1
    assert st.l2_fire_at == clock.now_ms() + 10_000  # moved earlier, as after any L1 atoms


async def test_a_failed_l1_run_that_committed_nothing_arms_nothing(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    mem = with_upper(opened, home, clock, ScriptedExtractor("fail"), scenes, persona)
    await mem.capture(turns(1), session_key=S)
    await mem.run_pending()
    st = await mem.status()
    assert st.sessions[0].attempts == 1 and st.atoms == 0
    assert [t.l2_fire_at for t in st.tenants] in ([], [None])


# --- a restart with atoms past the L2 cursor ---------------------------------------------------------


async def test_atoms_whose_l2_arming_was_lost_are_armed_on_open(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    await l1_only(home, clock, 1, 2)

    mem = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    st = await tenant(mem)
    assert st.l2_fire_at == clock.now_ms() + 10_000 and st.l2_cursor == 0
    await at(mem, clock, 9)
    assert scenes.requests == []
    await at(mem, clock, 1)
    assert await consolidated(mem) == ["Ann said: note 1 about hiking", "Ann said: note 2 about hiking"]


async def test_a_cold_tenant_with_unarmed_atoms_is_armed_on_open_within_the_min_interval(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    first = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    await first.capture(turns(1), session_key=S)
    await first.end_session(S)
    await at(first, clock, 10)
    await at(first, clock, 25 * HOUR)  # the hourly L2 finds the tenant cold: it stops polling
    quiet = await tenant(first)
    assert quiet.l2_fire_at is None and quiet.last_l2 == clock.now_ms()
    await first.close()
    opened.remove(first)

    clock.advance(100)
    await l1_only(home, clock, 2)
    mem = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    assert (await tenant(mem)).l2_fire_at == quiet.last_l2 + 900_000  # min interval after the last L2
    await at(mem, clock, 900 - 100)
    assert await consolidated(mem) == ["Ann said: note 1 about hiking", "Ann said: note 2 about hiking"]


async def test_an_armed_timer_is_left_alone_on_open(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
) -> None:
    first = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    await first.capture(turns(1), session_key=S)
    await first.end_session(S)
    armed = (await tenant(first)).l2_fire_at
    await first.close()
    opened.remove(first)

    clock.advance(5)
    mem = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    assert (await tenant(mem)).l2_fire_at == armed


async def test_a_tenant_whose_l2_gave_up_still_waits_for_new_atoms_after_a_restart(
    opened: list[AsyncMemory],
    home: Path,
    clock: FakeClock,
    scenes: RecordingSceneWriter,
    persona: RecordingPersonaWriter,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMSTRATA_PIPELINE__MAX_ATTEMPTS", "1")
    first = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    scenes.fail_on_call(1)
    await first.capture(turns(1), session_key=S)
    await first.end_session(S)
    await at(first, clock, 10)
    gave_up = await tenant(first)
    assert gave_up.l2_fire_at is None and gave_up.l2_attempts == 1 and gave_up.l2_error
    await first.close()
    opened.remove(first)

    mem = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    assert await tenant(mem) == gave_up  # opening (e.g. `memstrata status`) changes nothing
    await mem.capture(turns(2), session_key=S)
    await mem.end_session(S)  # new atoms start a fresh series
    st = await tenant(mem)
    assert st.l2_fire_at == clock.now_ms() + 10_000 and st.l2_attempts == 0


# --- atoms written while an L2 run is in flight --------------------------------------------------------


class L1DuringFirstBatch(RecordingSceneWriter):
    """Runs an L1 that writes one atom while the first consolidation call is in flight, after the
    L2 run read its last batch: that atom is past the cursor the run reaches."""

    mem: AsyncMemory | None = None

    async def consolidate(self, request: ConsolidationRequest) -> ConsolidationResult:
        if self.mem is not None and not self.requests:
            await self.mem.capture(turns(99), session_key=S)
            await self.mem.end_session(S)
        return await super().consolidate(request)


async def test_atoms_written_during_an_l2_run_wait_the_min_interval_not_the_max(
    opened: list[AsyncMemory], home: Path, clock: FakeClock, persona: RecordingPersonaWriter
) -> None:
    scenes = L1DuringFirstBatch()
    mem = with_upper(opened, home, clock, RecordingExtractor(), scenes, persona)
    scenes.mem = mem
    await mem.capture(turns(1), session_key=S)
    await mem.end_session(S)
    await at(mem, clock, 10)

    st = await tenant(mem)
    assert len(scenes.requests) == 1 and st.last_l2 == clock.now_ms()
    assert st.l2_fire_at == clock.now_ms() + 900_000  # not the hourly re-arm: an atom is waiting
    await at(mem, clock, 900)
    assert len(await consolidated(mem)) == 2
    assert (await tenant(mem)).l2_fire_at == clock.now_ms() + HOUR * 1000
