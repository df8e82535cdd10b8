"""Persona and scene-index reads answered from memory while the file is unchanged, and read anew
after any change: a store's own write, another process's atomic replace, an edit in place of the
same size, a file made unreadable, an erase."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memstrata.errors import StoreError
from memstrata.models import SceneEntry, Tenant
from memstrata.stores.files import FilePersonaStore, FileSceneStore, health
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.read_cache import ReadCache, signature

T = Tenant("ann", "bot")
NOW = 1_785_405_720_000


@pytest.fixture
def file_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files the stores read from disk, in order (reads answered from memory are not here)."""
    seen: list[Path] = []
    real = health.read_checked

    def counted(path: Path, problem):  # type: ignore[no-untyped-def]
        seen.append(path)
        return real(path, problem)

    monkeypatch.setattr(health, "read_checked", counted)
    return seen


def text(store: FilePersonaStore) -> str | None:
    found = store.read(T)
    return found[0] if found is not None else None


def _bump(path: Path) -> None:
    """Move the file's times on, as a later write would (file systems with coarse clocks)."""
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))


def test_a_persona_read_again_comes_from_memory_until_the_file_changes(
    tmp_path: Path, file_reads: list[Path]
) -> None:
    store = FilePersonaStore(tmp_path)
    store.write(T, "Ann likes tea.")
    first = store.read(T)
    assert store.read(T) == first and first is not None and first[0] == "Ann likes tea."
    assert len(file_reads) == 1
    store.write(T, "Ann likes coffee.")  # the store's own write
    assert text(store) == "Ann likes coffee."
    path = store.layout.persona(T)
    atomic_write(path, "Ann likes cocoa.")  # another process: a new inode
    assert text(store) == "Ann likes cocoa."
    with open(path, "r+b") as f:  # in place, same size
        f.write(b"Bob")
    _bump(path)
    assert text(store) == "Bob likes cocoa."
    assert len(file_reads) == 4
    assert text(store) == "Bob likes cocoa." and len(file_reads) == 4


def test_an_unreadable_persona_is_read_and_recorded_every_time(
    tmp_path: Path, file_reads: list[Path]
) -> None:
    store = FilePersonaStore(tmp_path)
    store.write(T, "Ann likes tea.")
    assert store.read(T) is not None
    path = store.layout.persona(T)
    path.write_bytes(b"\xff\xfe not text")
    _bump(path)
    assert store.read(T) is None and store.read(T) is None
    assert file_reads.count(path) == 3
    assert [p.path for p in store.problems(T)] == ["persona.md"]


def test_an_erased_persona_is_gone_from_memory_too(tmp_path: Path) -> None:
    store = FilePersonaStore(tmp_path)
    store.write(T, "Ann likes tea.")
    assert store.read(T) is not None
    store.erase(T)
    assert store.read(T) is None
    assert T not in store._reads  # forget leaves no copy of the persona in memory either


def test_the_scene_index_read_again_comes_from_memory_until_it_changes(
    tmp_path: Path, file_reads: list[Path]
) -> None:
    store = FileSceneStore(tmp_path)
    work = SceneEntry("work.md", "Ann's job", 1, NOW, NOW, ("a1",))
    store.save_index(T, [work])
    got = store.index(T)
    got.append(SceneEntry("mine.md", "a caller's own list", 0, NOW, NOW, ()))
    assert store.index(T) == [work]  # the caller's list is its own
    assert len(file_reads) == 1
    home = SceneEntry("home.md", "Ann's flat", 2, NOW, NOW, ("a2",))
    store.save_index(T, [home, work])
    assert store.index(T) == [home, work]
    store.layout.index(T).write_text("not json")
    _bump(store.layout.index(T))
    with pytest.raises(StoreError):
        store.index(T)
    with pytest.raises(StoreError):  # read (and recorded) again, never answered from memory
        store.index(T)
    store.erase(T)
    assert store.index(T) == []


def test_the_cache_forgets_the_least_recently_read_beyond_its_capacity(tmp_path: Path) -> None:
    files = [tmp_path / f"{i}.md" for i in range(3)]
    for f in files:
        f.write_text("x")
    cache: ReadCache[str] = ReadCache(capacity=2)
    for i, f in enumerate(files[:2]):
        cache.put(i, signature(f), f"read {i}")
    assert cache.get(0, signature(files[0])) == "read 0"  # 0 read last: 1 goes first
    cache.put(2, signature(files[2]), "read 2")
    assert cache.get(1, signature(files[1])) is None
    assert cache.get(0, signature(files[0])) == "read 0" and cache.get(2, signature(files[2])) == "read 2"
    assert signature(tmp_path / "missing.md") is None
    cache.put(3, None, "never kept")
    assert cache.get(3, None) is None
