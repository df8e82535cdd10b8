"""Forgetting on purpose, on a fake clock with the real offline engines and SQLite: the daily
retention sweep (at a local time, missed ones run on the next open), its guards, time to live,
pinning, and removals rewriting scenes and the persona."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import NotFoundError
from memstrata.models import Atom, Layer, Tenant

DAY = 86_400
# 2026-03-10 12:00 UTC; Paris is UTC+1 until 29 March, so 03:30 in Paris is 02:30 UTC.
START = int(datetime(2026, 3, 10, 12, 0, tzinfo=UTC).timestamp() * 1000)
SETTINGS: dict[str, Any] = {
    "capture": {"retention_days": 30, "retention_keep_last": 2},
    "retention": {"sweep_at": "03:30", "timezone": "Europe/Paris"},
}


def ms(year: int, month: int, day: int, hour: int, minute: int = 0) -> int:
    return int(datetime(year, month, day, hour, minute, tzinfo=UTC).timestamp() * 1000)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
def opener(tmp_path: Path, clock: FakeClock) -> Callable[..., Any]:
    async def open_memory(**overrides: Any) -> AsyncMemory:
        return await AsyncMemory.open(
            tmp_path / "d", clock=clock, embedder=HashingEmbedder(64), **{**SETTINGS, **overrides}
        )

    return open_memory


@pytest.fixture
async def mem(opener: Callable[..., Any]) -> AsyncIterator[AsyncMemory]:
    m = await opener()
    yield m
    await m.close()


TURNS = [
    ("user", "I adopted a cat named Zorblax last spring.", 60),
    ("assistant", "What a lovely name!", 60),
    ("user", "I work as a nurse at the Quillfeather hospital.", 40),
    ("assistant", "That sounds demanding.", 40),
    ("user", "I am allergic to Vrendle berries.", 0),
    ("assistant", "I will remember that.", 0),
]


async def seeded(mem: AsyncMemory, clock: FakeClock) -> None:
    """Six turns said 60, 40 and 0 days ago, extracted into three atoms by L1."""
    now = clock.now_ms()
    turns = [
        {
            "role": r,
            "content": c,
            "id": f"t{i}",
            "name": "Maya" if r == "user" else None,
            "timestamp": now - d * DAY * 1000 + i,
        }
        for i, (r, c, d) in enumerate(TURNS)
    ]
    await mem.capture(turns, session_key="s", user_id="maya")
    await mem.end_session("s", user_id="maya")


async def atom_about(mem: AsyncMemory, word: str) -> Atom:
    return next(a for a in await mem.atoms(user_id="maya") if word in a.content)


async def l1_hits(mem: AsyncMemory, query: str, mode: str = "hybrid") -> list[str]:
    found = await mem.search(query, mode=mode, user_id="maya")
    return [h.id for h in found if h.layer == Layer.L1]


async def test_messages_past_retention_are_swept_at_the_local_time_and_their_atoms_keep_their_text(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await mem.run_pending()  # the first sweep runs at once: nothing extracted yet, nothing swept
    assert (await mem.status()).last_sweep == START
    await seeded(mem, clock)
    cat = await atom_about(mem, "Zorblax")
    clock.advance((ms(2026, 3, 11, 2, 29) - START) / 1000)  # 03:29 in Paris: not yet
    await mem.run_pending()
    assert len(await mem.messages(user_id="maya")) == 6
    clock.advance(60)  # 03:30 in Paris
    await mem.run_pending()
    assert (await mem.status()).last_sweep == ms(2026, 3, 11, 2, 30)
    # t0-t3 are past 30 days; t4, t5 are recent (and the newest two anyway)
    assert [m.id for m in await mem.messages(user_id="maya")] == ["t4", "t5"]
    with pytest.raises(NotFoundError):
        await mem.get_message("t0", user_id="maya")
    kept = await mem.get_atom(cat.id, user_id="maya")
    assert kept.content == cat.content and kept.metadata["sources_swept"] == ["t0"]
    hit = next(h for h in await mem.search("Zorblax cat", user_id="maya") if h.id == cat.id)
    assert hit.metadata["sources_swept"] == ["t0"] and hit.source_message_ids == ("t0",)
    allergy = await atom_about(mem, "Vrendle")
    assert "sources_swept" not in allergy.metadata


async def test_a_sweep_missed_while_closed_runs_at_the_next_run_pending(
    opener: Callable[..., Any], clock: FakeClock
) -> None:
    mem = await opener()
    await seeded(mem, clock)
    await mem.run_pending()  # swept at START: everything past retention goes
    assert [m.id for m in await mem.messages(user_id="maya")] == ["t4", "t5"]
    await mem.capture(
        [{"role": "user", "content": "I moved to Lyon.", "id": "t6", "name": "Maya"}],
        session_key="s",
        user_id="maya",
    )
    await mem.end_session("s", user_id="maya")
    await mem.close()
    clock.advance(3 * DAY)  # three sweeps missed while closed; t4 and t5 pass 30 days later on
    clock.advance(28 * DAY)
    mem = await opener()
    try:
        assert (await mem.status()).last_sweep == START
        await mem.run_pending()
        assert (await mem.status()).last_sweep == clock.now_ms()
        # t4 is past retention now, t5 too, but the session's newest two (t5, t6) are kept
        assert [m.id for m in await mem.messages(user_id="maya")] == ["t5", "t6"]
    finally:
        await mem.close()


async def test_messages_not_yet_extracted_and_the_newest_of_a_session_are_never_swept(
    opener: Callable[..., Any], clock: FakeClock
) -> None:
    mem = await opener(capture={"retention_days": 1, "retention_keep_last": 3})
    try:
        old = clock.now_ms() - 10 * DAY * 1000
        turns = [
            {"role": "user", "content": f"I collect stamp number {i}.", "id": f"o{i}", "timestamp": old + i}
            for i in range(6)
        ]
        await mem.capture(turns, session_key="s", user_id="maya")
        assert (await mem.sweep()).messages == 0  # L1 has not read them: kept
        await mem.end_session("s", user_id="maya")
        report = await mem.sweep()
        assert report.messages == 3
        assert [m.id for m in await mem.messages(user_id="maya")] == ["o3", "o4", "o5"]
    finally:
        await mem.close()


async def test_an_expired_atom_leaves_search_and_recall_at_once_and_the_sweep_deletes_it(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await seeded(mem, clock)
    await mem.run_all()  # scenes and a persona that mention the allergy
    allergy = await atom_about(mem, "Vrendle")
    timed = await mem.set_atom_ttl(allergy.id, ttl_seconds=60, user_id="maya")
    assert timed.expires_at == clock.now_ms() + 60_000 and timed.version == allergy.version
    assert timed.id == allergy.id and timed.seq == allergy.seq
    for mode in ("hybrid", "keyword", "vector"):
        assert allergy.id in await l1_hits(mem, "allergic to Vrendle berries", mode), mode
    clock.advance(61)
    for mode in ("hybrid", "keyword", "vector"):
        assert allergy.id not in await l1_hits(mem, "allergic to Vrendle berries", mode), mode
    recalled = await mem.recall("what is Maya allergic to?", user_id="maya")
    assert allergy.id not in [h.id for h in recalled.hits]
    listed = await mem.atoms(user_id="maya")
    assert allergy.id in [a.id for a in listed]  # listings show it until the sweep
    report = await mem.sweep()
    assert (report.expired, report.tenants) == (1, (Tenant("maya"),))
    with pytest.raises(NotFoundError):
        await mem.get_atom(allergy.id, user_id="maya")
    await mem.run_pending()  # L2 rewrites the scene that held it, L3 the persona from scratch
    scenes = [await mem.read_scene(e.name, user_id="maya") for e in await mem.scenes(user_id="maya")]
    assert all("Vrendle" not in s.body + s.summary for s in scenes)
    assert all(allergy.id not in e.atom_ids for e in await mem.scenes(user_id="maya"))
    persona = await mem.persona(user_id="maya")
    assert persona is not None and "Vrendle" not in persona.body and "Quillfeather" in persona.body


async def test_a_pinned_atom_never_expires_and_outlives_atom_retention(
    opener: Callable[..., Any], clock: FakeClock
) -> None:
    mem = await opener(retention={"atoms_days": 10, "timezone": "UTC"})
    try:
        await seeded(mem, clock)
        nurse, allergy = await atom_about(mem, "nurse"), await atom_about(mem, "Vrendle")
        pinned = await mem.pin_atom(nurse.id, user_id="maya")
        assert pinned.pinned and pinned.version == nurse.version
        await mem.set_atom_ttl(nurse.id, expires_at=clock.now_ms() - 1, user_id="maya")
        assert nurse.id in await l1_hits(mem, "nurse Quillfeather hospital")  # pinned: no expiry
        clock.advance(11 * DAY)
        report = await mem.sweep()
        assert report.aged == 2 and report.expired == 0  # the cat and the allergy, unpinned
        assert [a.id for a in await mem.atoms(user_id="maya")] == [nurse.id]
        with pytest.raises(NotFoundError):
            await mem.get_atom(allergy.id, user_id="maya")
        await mem.pin_atom(nurse.id, False, user_id="maya")  # unpinned: its time to live is over
        assert nurse.id not in await l1_hits(mem, "nurse Quillfeather hospital")
        assert (await mem.sweep()).expired == 1
        assert await mem.atoms(user_id="maya") == []
    finally:
        await mem.close()


async def test_an_update_keeps_the_pin_and_a_superseded_atom_cannot_be_pinned(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    from memstrata.errors import ConflictError

    await seeded(mem, clock)
    nurse = await mem.pin_atom((await atom_about(mem, "nurse")).id, user_id="maya")
    newer = await mem.update_atom(nurse.id, content="Maya works as a surgeon.", user_id="maya")
    assert newer.pinned and newer.version == nurse.version + 1
    with pytest.raises(ConflictError):
        await mem.pin_atom(nurse.id, user_id="maya")


async def test_deleting_an_atom_rewrites_its_scene_and_the_persona_without_it(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await seeded(mem, clock)
    await mem.run_all()
    allergy = await atom_about(mem, "Vrendle")
    holder = next(e for e in await mem.scenes(user_id="maya") if allergy.id in e.atom_ids)
    assert "Vrendle" in (await mem.read_scene(holder.name, user_id="maya")).body and len(holder.atom_ids) > 1
    assert await mem.delete_atoms([allergy.id], user_id="maya") == [allergy.id]
    state = next(t for t in (await mem.status()).tenants if t.tenant == Tenant("maya"))
    assert state.l3_pending and state.l2_fire_at == clock.now_ms()
    await mem.run_pending()
    texts = [(await mem.read_scene(e.name, user_id="maya")).body for e in await mem.scenes(user_id="maya")]
    assert all("Vrendle" not in t for t in texts)
    # the scene is rewritten from the atoms it still holds (not dropped with them)
    after = next(e for e in await mem.scenes(user_id="maya") if e.name == holder.name)
    assert after.atom_ids == tuple(i for i in holder.atom_ids if i != allergy.id)
    rewritten = await mem.read_scene(holder.name, user_id="maya")
    assert "Quillfeather" in rewritten.body and rewritten.heat == holder.heat
    persona = await mem.persona(user_id="maya")
    assert persona is not None and "Vrendle" not in persona.body + persona.navigation


async def test_an_atom_loses_its_last_source_to_a_delete_but_not_to_retention(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await seeded(mem, clock)
    await mem.sweep()  # t0-t3 swept: the cat's only source (t0) is gone, the atom stays
    cat, allergy = await atom_about(mem, "Zorblax"), await atom_about(mem, "Vrendle")
    assert cat.metadata["sources_swept"] == ["t0"]
    assert await mem.delete_messages(["t4"], user_id="maya") == ["t4"]  # the allergy's only source
    with pytest.raises(NotFoundError):
        await mem.get_atom(allergy.id, user_id="maya")
    assert (await mem.get_atom(cat.id, user_id="maya")).content == cat.content


async def test_rebuild_scenes_consolidates_the_current_atoms_again(
    mem: AsyncMemory, clock: FakeClock
) -> None:
    await seeded(mem, clock)
    await mem.run_all()
    atoms = {a.id for a in await mem.atoms(user_id="maya")}
    entries = await mem.rebuild_scenes(user_id="maya")
    assert {i for e in entries for i in e.atom_ids} == atoms
    assert all(e.heat == len(e.atom_ids) for e in entries)  # heat starts over
    state = next(t for t in (await mem.status()).tenants if t.tenant == Tenant("maya"))
    assert not state.l3_pending and state.l2_error is None


async def test_a_failing_sweep_is_reported_and_retried(mem: AsyncMemory, clock: FakeClock) -> None:
    await seeded(mem, clock)
    store: Any = mem._store
    original = store.messages.sessions
    store.messages.sessions = lambda tenant: (_ for _ in ()).throw(OSError("disk on fire"))
    await mem.run_pending()
    status = await mem.status()
    assert status.last_sweep is None and any("disk on fire" in p for p in status.problems)
    store.messages.sessions = original
    await mem.run_pending()
    assert (await mem.status()).last_sweep is None  # waits for its retry time
    clock.advance(31)
    await mem.run_pending()
    status = await mem.status()
    assert status.last_sweep == clock.now_ms() and not any("sweep" in p for p in status.problems)
    assert [m.id for m in await mem.messages(user_id="maya")] == ["t4", "t5"]
