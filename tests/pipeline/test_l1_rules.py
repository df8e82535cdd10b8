"""Each L1 scheduling rule of DESIGN section 4, one test per rule, on a fake clock."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from memstrata import FakeClock
from memstrata.memory import AsyncMemory
from memstrata.models import AtomDraft, ExtractionWindow
from tests.support.engines import NoDedup, RecordingExtractor
from tests.support.parts import memory_from

S = "chat"


def turn(i: int) -> dict[str, object]:
    return {"role": "user", "content": f"message number {i} about hiking trips", "id": f"m{i}", "name": "Ann"}


async def cursor(mem: AsyncMemory) -> int:
    st = await mem.status()
    return next(s.cursor for s in st.sessions if s.session_key == S)


async def test_warm_up_fires_at_1_then_2_then_4_then_every_n(
    recording_memory: AsyncMemory, extractor: RecordingExtractor
) -> None:
    fired_at = []
    for i in range(1, 13):
        await recording_memory.capture([turn(i)], session_key=S)
        before = len(extractor.windows)
        await recording_memory.run_pending()
        if len(extractor.windows) > before:
            fired_at.append(i)
    # runs: after turn 1 (threshold 1), +2 -> 3, +4 -> 7, +5 -> 12 (capped at every_n_conversations=5)
    assert fired_at == [1, 3, 7, 12]


async def test_below_threshold_waits_for_the_idle_timer(
    recording_memory: AsyncMemory, extractor: RecordingExtractor, clock: FakeClock
) -> None:
    await recording_memory.capture([turn(1)], session_key=S)
    await recording_memory.run_pending()  # warm-up run
    await recording_memory.capture([turn(2)], session_key=S)  # 1 of 2
    clock.advance(599)
    await recording_memory.run_pending()
    assert len(extractor.windows) == 1
    clock.advance(2)
    await recording_memory.run_pending()
    assert len(extractor.windows) == 2
    assert [m.id for m in extractor.windows[1].new] == ["m2"]


async def test_each_turn_resets_the_idle_timer(
    recording_memory: AsyncMemory, extractor: RecordingExtractor, clock: FakeClock
) -> None:
    recording_memory.settings.pipeline.every_n_conversations = 50
    recording_memory.settings.pipeline.warm_up = False
    await recording_memory.capture([turn(1)], session_key=S)
    clock.advance(500)
    await recording_memory.capture([turn(2)], session_key=S)
    clock.advance(500)  # 1000 s after the first turn, 500 after the second
    await recording_memory.run_pending()
    assert extractor.windows == []
    clock.advance(101)
    await recording_memory.run_pending()
    assert len(extractor.windows) == 1


async def test_end_session_runs_l1_on_what_is_pending(
    recording_memory: AsyncMemory, extractor: RecordingExtractor
) -> None:
    recording_memory.settings.pipeline.warm_up = False
    await recording_memory.capture([turn(1), turn(2)], session_key=S)
    await recording_memory.run_pending()
    assert extractor.windows == []
    await recording_memory.end_session(S)
    assert len(extractor.windows) == 1
    assert len(await recording_memory.atoms()) == 2
    assert await cursor(recording_memory) == 2


async def test_engine_error_keeps_the_cursor_and_the_retry_stores_each_atom_once(
    recording_memory: AsyncMemory, extractor: RecordingExtractor, clock: FakeClock
) -> None:
    recording_memory.settings.pipeline.window_size = 2
    extractor.fail_next(1)
    await recording_memory.capture([turn(i) for i in range(1, 6)], session_key=S)
    await recording_memory.run_pending()
    st = (await recording_memory.status()).sessions[0]
    assert st.cursor == 0 and st.attempts == 1 and "scripted engine failure" in (st.last_error or "")
    assert await recording_memory.atoms() == []
    clock.advance(29)
    await recording_memory.run_pending()
    assert len(extractor.windows) == 1  # not retried before the 30 s backoff
    clock.advance(2)
    await recording_memory.run_pending()
    atoms = await recording_memory.atoms()
    assert sorted(a.source_message_ids[0] for a in atoms) == [f"m{i}" for i in range(1, 6)]
    assert await cursor(recording_memory) == 5


async def test_failure_mid_backlog_keeps_the_committed_windows(
    recording_memory: AsyncMemory, extractor: RecordingExtractor, clock: FakeClock
) -> None:
    recording_memory.settings.pipeline.window_size = 2
    await recording_memory.capture([turn(i) for i in range(1, 6)], session_key=S)
    original = extractor.extract
    calls = 0

    async def fail_second(window: ExtractionWindow) -> list[AtomDraft]:
        nonlocal calls
        calls += 1
        if calls == 2:
            extractor.fail_next(1)
        return await original(window)

    extractor.extract = fail_second  # type: ignore[method-assign]
    await recording_memory.run_pending()
    assert await cursor(recording_memory) == 2  # first window committed, second failed
    clock.advance(31)
    await recording_memory.run_pending()
    atoms = await recording_memory.atoms()
    assert len(atoms) == 5 and len({a.id for a in atoms}) == 5
    assert await cursor(recording_memory) == 5


async def test_retries_stop_after_max_attempts_and_new_activity_resets_them(
    recording_memory: AsyncMemory, extractor: RecordingExtractor, clock: FakeClock
) -> None:
    extractor.fail_next(99)
    await recording_memory.capture([turn(1)], session_key=S)
    for _ in range(8):
        await recording_memory.run_pending()
        clock.advance(31)
    assert len(extractor.windows) == 5
    st = (await recording_memory.status()).sessions[0]
    assert st.attempts == 5 and st.fire_at is None and st.last_error
    extractor.fail_next(0)
    await recording_memory.capture([turn(2)], session_key=S)  # new activity
    clock.advance(601)
    await recording_memory.run_pending()
    assert len(await recording_memory.atoms()) == 2


async def test_backlog_drains_window_by_window_with_background(
    recording_memory: AsyncMemory, extractor: RecordingExtractor
) -> None:
    await recording_memory.capture([turn(i) for i in range(1, 26)], session_key=S)
    await recording_memory.end_session(S)
    assert [len(w.new) for w in extractor.windows] == [10, 10, 5]
    assert [len(w.background) for w in extractor.windows] == [0, 5, 5]
    assert [m.id for m in extractor.windows[1].background] == ["m6", "m7", "m8", "m9", "m10"]
    assert await cursor(recording_memory) == 25


async def test_restart_re_arms_sessions_with_unprocessed_messages(
    home: Path,
    clock: FakeClock,
    extractor: RecordingExtractor,
) -> None:
    first = memory_from(home, clock, extractor, NoDedup())
    first.settings.pipeline.warm_up = False
    await first.capture([turn(1), turn(2)], session_key=S)
    first._scheduler.touched.clear()  # simulate a crash: no flush on the way out
    await first.close()

    second = memory_from(home, clock, extractor, NoDedup())
    await second.run_pending()
    assert len(await second.atoms()) == 2
    assert await cursor(second) == 2
    await second.close()


async def test_sessions_are_independent(recording_memory: AsyncMemory, extractor: RecordingExtractor) -> None:
    await recording_memory.capture([turn(1)], session_key="a")
    await recording_memory.capture([turn(2)], session_key="b")
    await recording_memory.end_session("a")
    assert [[m.id for m in w.new] for w in extractor.windows] == [["m1"]]
    st = {s.session_key: s for s in (await recording_memory.status()).sessions}
    assert st["a"].cursor == 1 and st["b"].cursor == 0 and st["b"].lag == 1


async def test_a_capture_whose_state_update_a_kill_lost_gets_its_activity_time_back(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    first = memory_from(home, clock, extractor, NoDedup())
    await first.capture([turn(1), turn(2)], session_key=S)
    first._scheduler.touched.clear()
    await first.close()
    with sqlite3.connect(home / "memstrata.db") as db:  # what a kill right after the commit leaves
        db.execute("DELETE FROM pipeline_sessions")
    said = clock.now_ms()
    clock.advance(60)

    second = memory_from(home, clock, extractor, NoDedup())
    [state] = second._store.pipeline.sessions()
    assert state.last_activity == said and state.fire_at == clock.now_ms()
    await second.close()
