"""A scene rewritten after a removal, as readers see it: the old scene or the new one, never a blank
one, on SQLite (scene files) and PostgreSQL (scene rows); and no text of the removed atom survives
whatever the writer does."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.layers.l2.scene_file import render_scene
from memstrata.models import ConsolidationResult, Scene, SceneEntry
from memstrata.pipeline.upper.rewrite_view import RewriteView
from memstrata.ports import ConsolidationRequest
from memstrata.stores.files.folder import DirectoryFolder
from tests.pipeline.test_forgetting_rules import SETTINGS, START, atom_about, seeded

Consolidate = Callable[[ConsolidationRequest], Awaitable[ConsolidationResult]]


@pytest.fixture(params=["sqlite", "postgres"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgres":
        return str(request.getfixturevalue("postgres_url"))
    return str(tmp_path / "d")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(START)


@pytest.fixture
async def mem(location: str, clock: FakeClock) -> AsyncIterator[AsyncMemory]:
    m = await AsyncMemory.open(location, clock=clock, embedder=HashingEmbedder(64), **SETTINGS)
    assert isinstance(m, AsyncMemory)  # a path or a database, not a server's URL
    yield m
    await m.close()


async def holder_of_the_allergy(mem: AsyncMemory, clock: FakeClock) -> tuple[str, SceneEntry]:
    """Scenes written from three atoms; the allergy atom deleted: the id and its scene's entry."""
    await seeded(mem, clock)
    await mem.run_all()
    allergy = await atom_about(mem, "Vrendle")
    holder = next(e for e in await mem.scenes(user_id="maya") if allergy.id in e.atom_ids)
    assert await mem.delete_atoms([allergy.id], user_id="maya") == [allergy.id]
    return allergy.id, holder


def wrap_writer(
    mem: AsyncMemory, monkeypatch: pytest.MonkeyPatch, wrap: Callable[[Consolidate], Consolidate]
) -> None:
    writer = mem._upper.scene_writer  # type: ignore[union-attr]
    monkeypatch.setattr(writer, "consolidate", wrap(writer.consolidate))


async def test_a_reader_sees_the_old_scene_while_the_writer_rewrites_it(
    mem: AsyncMemory, location: str, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, holder = await holder_of_the_allergy(mem, clock)
    reader = await AsyncMemory.open(location, read_only=True, embedder=None)  # as the console reads
    seen: list[tuple[str, str]] = []
    shown: list[str | None] = []

    def wrap(inner: Consolidate) -> Consolidate:
        async def consolidate(request: ConsolidationRequest) -> ConsolidationResult:
            if holder.name in request.rewrite:
                for m in (mem, reader):
                    scene = await m.read_scene(holder.name, user_id="maya")
                    seen.append((scene.summary, scene.body))
                shown.append(request.folder.read(holder.name))
            return await inner(request)

        return consolidate

    wrap_writer(mem, monkeypatch, wrap)
    try:
        await mem.run_pending()
        after = await reader.read_scene(holder.name, user_id="maya")
    finally:
        await reader.close()
    assert len(seen) == 2 and all(body.strip() and summary for summary, body in seen)  # not blanked
    assert all("Vrendle" in body for _, body in seen)  # the old scene until the new one replaces it
    assert shown[0] is not None and "Vrendle" not in shown[0]  # the writer sees it blank
    assert "Quillfeather" in after.body and "Vrendle" not in after.body + after.summary


async def test_a_scene_the_writer_does_not_write_again_goes_with_the_removed_text(
    mem: AsyncMemory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    allergy, holder = await holder_of_the_allergy(mem, clock)

    def wrap(inner: Consolidate) -> Consolidate:
        async def consolidate(request: ConsolidationRequest) -> ConsolidationResult:
            if request.rewrite:
                return ConsolidationResult()  # a writer that ignores the rewrite: nothing written
            return await inner(request)

        return consolidate

    wrap_writer(mem, monkeypatch, wrap)
    await mem.run_pending()
    entries = await mem.scenes(user_id="maya")
    assert holder.name not in [e.name for e in entries]
    texts = [await mem.read_scene(e.name, user_id="maya") for e in entries]
    assert all("Vrendle" not in s.body + s.summary for s in texts)
    assert allergy not in {i for e in entries for i in e.atom_ids}
    remaining = {a.id for a in await mem.atoms(user_id="maya")}
    assert allergy not in remaining and set(holder.atom_ids) - {allergy} <= remaining  # atoms kept


async def test_a_reader_keeps_the_old_scenes_while_a_rebuild_writes_new_ones(
    mem: AsyncMemory, clock: FakeClock, monkeypatch: pytest.MonkeyPatch
) -> None:
    await seeded(mem, clock)
    await mem.run_all()
    old = {
        e.name: (await mem.read_scene(e.name, user_id="maya")).body for e in await mem.scenes(user_id="maya")
    }
    seen: list[dict[str, str]] = []
    shown: list[tuple[int, list[str]]] = []

    def wrap(inner: Consolidate) -> Consolidate:
        async def consolidate(request: ConsolidationRequest) -> ConsolidationResult:
            if not seen:  # the rebuild's first call: nothing of it written yet
                seen.append({n: (await mem.read_scene(n, user_id="maya")).body for n in old})
                shown.append((len(request.scenes), request.folder.names()))
            return await inner(request)

        return consolidate

    wrap_writer(mem, monkeypatch, wrap)
    entries = await mem.rebuild_scenes(user_id="maya")
    assert old and seen == [old]  # every old scene, as it was (it was removed before: a 404)
    assert shown == [(0, [])]  # the writer starts from no scene
    assert {i for e in entries for i in e.atom_ids} == {a.id for a in await mem.atoms(user_id="maya")}
    assert {e.name for e in await mem.scenes(user_id="maya")} == {e.name for e in entries}


def test_the_view_shows_a_scene_blank_until_written_and_names_the_unwritten(tmp_path: Path) -> None:
    folder = DirectoryFolder(tmp_path)
    old = {n: Scene(n, f"about {n}", 3, 1, 2, f"# {n}\n\n- secret of {n}") for n in ("a.md", "b.md")}
    for s in old.values():
        folder.write(s.name, render_scene(s))
    view = RewriteView(folder, old)
    assert view.names() == ["a.md", "b.md"]
    blank = view.read("a.md")
    assert blank is not None and "secret" not in blank and "heat: 3" in blank
    view.write("a.md", "new a")
    assert view.read("a.md") == "new a" and view.unwritten() == ["b.md"]
    assert "secret of b.md" in (folder.read("b.md") or "")  # the store keeps the old text meanwhile


def test_the_view_hides_the_scenes_a_rebuild_replaces_until_written(tmp_path: Path) -> None:
    folder = DirectoryFolder(tmp_path)
    old = [Scene(n, f"about {n}", 3, 1, 2, f"# {n}\n\n- secret of {n}") for n in ("a.md", "b.md")]
    for s in old:
        folder.write(s.name, render_scene(s))
    view = RewriteView(folder, {}, hidden=["a.md", "b.md"])
    assert view.names() == [] and view.read("a.md") is None and view.shown(old) == ()
    view.write("a.md", "new a")
    assert view.names() == ["a.md"] and view.read("a.md") == "new a" and view.unwritten() == ["b.md"]
    assert [s.name for s in view.shown(old)] == ["a.md"]
