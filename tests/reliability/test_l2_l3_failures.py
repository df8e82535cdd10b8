"""L2 and L3 never leave a layer half-written: a failure restores the backup, a crash (the state a
kill leaves) is restored on the next open, and the work is retried."""

from __future__ import annotations

from pathlib import Path

import pytest

from memstrata import FakeClock
from memstrata.memory import AsyncMemory
from memstrata.models import Atom, Tenant
from tests.support.engines import RecordingExtractor
from tests.support.upper import RecordingPersonaWriter, RecordingSceneWriter, upper_memory

S = "chat"
T = Tenant()


def files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def by_number(a: Atom) -> str:
    """Scene per atom number modulo 3: a run touches and creates several files."""
    number = next(int(w) for w in a.content.split() if w.isdigit())
    return f"topic-{number % 3}"


async def l1(mem: AsyncMemory, *ids: int) -> None:
    turns = [{"role": "user", "content": f"note {i} about hiking", "id": f"m{i}", "name": "Ann"} for i in ids]
    await mem.capture(turns, session_key=S)
    await mem.end_session(S)


def profile(home: Path) -> Path:
    return home / "profiles" / T.folder


async def test_a_failure_in_the_middle_of_l2_leaves_the_scenes_byte_identical(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    scenes, persona = RecordingSceneWriter(by_number), RecordingPersonaWriter()
    mem = upper_memory(home, clock, extractor, scenes, persona)
    mem.settings.pipeline.l2_batch_size = 2
    await l1(mem, 1)
    clock.advance(10)
    await mem.run_pending()
    before = files(profile(home) / "scene_blocks") | files(profile(home) / ".metadata")
    assert list(before) == ["topic-1.md", "scene_index.json"]

    await l1(mem, 2, 3, 4, 5, 6)
    scenes.fail_on_call(2)  # the second of three batches writes, then fails
    clock.advance(900)
    await mem.run_pending()
    assert len(scenes.requests) == 3
    after = files(profile(home) / "scene_blocks") | files(profile(home) / ".metadata")
    assert after == before
    st = (await mem.status()).tenants[0]
    assert st.l2_attempts == 1 and st.l2_cursor == 1

    clock.advance(30)  # the retry consolidates everything, each atom once
    await mem.run_pending()
    index = await mem.scenes()
    assert {e.name: len(e.atom_ids) for e in index} == {"topic-0.md": 2, "topic-1.md": 2, "topic-2.md": 2}
    ids = [i for e in index for i in e.atom_ids]
    assert sorted(ids) == sorted(a.id for a in await mem.atoms())
    await mem.close()


async def test_a_crash_during_l2_is_rolled_back_on_the_next_open(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    scenes, persona = RecordingSceneWriter(by_number), RecordingPersonaWriter()
    first = upper_memory(home, clock, extractor, scenes, persona)
    await l1(first, 1)
    clock.advance(10)
    await first.run_pending()
    folder = profile(home) / "scene_blocks"
    before = files(folder)
    # What a kill -9 in the middle of an L2 run leaves: a snapshot recorded, files half-changed.
    store = first._store
    upper = first._upper
    assert upper is not None
    snapshot = upper.scenes.backup(T)
    state = store.pipeline.tenant(T)
    state.l2_snapshot = snapshot
    store.pipeline.save_tenant(state)
    (folder / "topic-1.md").write_text("half a scene")
    (folder / "topic-2.md").write_text("a scene nobody finished")
    await first.close(flush=False)

    second = upper_memory(home, clock, extractor, scenes, persona)
    assert files(folder) == before
    st = (await second.status()).tenants[0]
    assert st.l2_fire_at == clock.now_ms()  # due at once, to redo the interrupted run
    await second.close()


async def test_a_failed_l3_leaves_the_persona_as_it_was_and_is_retried(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    scenes, persona = RecordingSceneWriter(), RecordingPersonaWriter()
    mem = upper_memory(home, clock, extractor, scenes, persona)
    await l1(mem, 1)
    clock.advance(10)
    await mem.run_pending()
    path = profile(home) / "persona.md"
    before = path.read_bytes()
    persona.fail_next()  # writes "half-written persona" into persona.md, then raises
    await mem.request_persona("test")
    await mem.run_pending()
    assert path.read_bytes() == before
    st = (await mem.status()).tenants[0]
    assert st.l3_pending and st.l3_error
    clock.advance(30)
    await mem.run_pending()
    found = await mem.persona()
    assert found is not None and found.body.startswith("# Persona #3")
    assert not (await mem.status()).tenants[0].l3_pending
    await mem.close()


async def test_a_crash_during_l3_is_rolled_back_on_the_next_open(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    scenes, persona = RecordingSceneWriter(), RecordingPersonaWriter()
    first = upper_memory(home, clock, extractor, scenes, persona)
    await l1(first, 1)
    clock.advance(10)
    await first.run_pending()
    path = profile(home) / "persona.md"
    before = path.read_bytes()
    upper = first._upper
    assert upper is not None
    state = first._store.pipeline.tenant(T)
    state.l3_running, state.l3_snapshot = True, upper.persona.backup(T)
    first._store.pipeline.save_tenant(state)
    path.write_text("half-written")
    await first.close(flush=False)

    second = upper_memory(home, clock, extractor, scenes, persona)
    assert path.read_bytes() == before
    assert not (await second.status()).tenants[0].l3_pending  # nothing was requested: not re-run
    await second.close()


async def test_a_deleted_index_loses_no_atom_to_scene_link(
    home: Path, clock: FakeClock, extractor: RecordingExtractor
) -> None:
    scenes, persona = RecordingSceneWriter(by_number), RecordingPersonaWriter()
    mem = upper_memory(home, clock, extractor, scenes, persona)
    await l1(mem, 1, 2, 3)
    clock.advance(10)
    await mem.run_pending()
    before = {e.name: e.atom_ids for e in await mem.scenes()}
    await mem.close()
    (profile(home) / ".metadata" / "scene_index.json").unlink()

    mem = upper_memory(home, clock, extractor, scenes, persona)  # open rebuilds it from the store
    assert {e.name: e.atom_ids for e in await mem.scenes()} == before
    await l1(mem, 4)
    clock.advance(900)
    await mem.run_pending()
    listed = sorted(i for e in await mem.scenes() for i in e.atom_ids)
    assert listed == sorted(a.id for a in await mem.atoms())
    await mem.close()


async def test_without_stored_membership_an_unreadable_index_is_rebuilt_from_the_scene_files(
    home: Path, clock: FakeClock, extractor: RecordingExtractor, caplog: pytest.LogCaptureFixture
) -> None:
    scenes, persona = RecordingSceneWriter(by_number), RecordingPersonaWriter()
    mem = upper_memory(home, clock, extractor, scenes, persona)
    await l1(mem, 1, 2, 3)
    clock.advance(10)
    await mem.run_pending()
    mem._store.members.replace(T, {})  # a data directory from before membership was stored
    index = profile(home) / ".metadata" / "scene_index.json"
    index.write_text("{not json")
    await l1(mem, 4)
    clock.advance(900)
    await mem.run_pending()
    assert "re-attributing consolidated atoms" in caplog.text
    listed = sorted(i for e in await mem.scenes() for i in e.atom_ids)
    assert listed == sorted(a.id for a in await mem.atoms())
    await mem.close()
