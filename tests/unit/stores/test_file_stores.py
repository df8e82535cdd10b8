"""The file-based SceneStore and PersonaStore: layout, cleanup, backups, restore, pruning."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from memstrata.errors import StoreError
from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.stores.files import FilePersonaStore, FileSceneStore

T = Tenant("ann/1", "bot")
NOW = 1_785_405_720_000


def tree(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def test_scenes_live_in_the_tenants_readable_profile_folder(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("work.md", "Ann's job", 3, NOW, NOW, "# Work"))
    assert (tmp_path / "u=ann%2F1,a=bot" / "scene_blocks" / "work.md").is_file()
    assert store.load(T) == [Scene("work.md", "Ann's job", 3, NOW, NOW, "# Work")]
    assert store.tenants() == [T]
    with pytest.raises(StoreError):
        store.save(T, Scene("Not Normal.md", "", 0, NOW, NOW, "x"))


def test_tidy_removes_soft_deleted_files_and_normalises_names(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    folder = store.folder(T).root
    (folder / "gone.md").write_text("[DELETED]")
    (folder / "empty.md").write_text("")
    (folder / "Hiking Trips.MD").write_text("# Hikes")
    (folder / "hiking-trips.md").write_text("# Other hikes")
    (folder / "notes.txt").write_text("not a scene")
    changes = store.tidy(T)
    assert changes == {"gone.md": None, "empty.md": None, "Hiking Trips.MD": "hiking-trips-2.md"}
    assert sorted(p.name for p in folder.iterdir()) == ["hiking-trips-2.md", "hiking-trips.md", "notes.txt"]
    assert (folder / "hiking-trips-2.md").read_text() == "# Hikes"


def test_a_symlink_in_the_scene_folder_is_never_read_as_a_scene(tmp_path: Path) -> None:
    secret = tmp_path / "secret.md"
    secret.write_text("outside")
    store = FileSceneStore(tmp_path / "profiles")
    os.symlink(secret, store.folder(T).root / "link.md")
    assert store.load(T) == []
    store.tidy(T)
    assert secret.read_text() == "outside"


def test_restore_makes_the_folder_and_index_byte_identical_to_the_backup(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("a.md", "A", 1, NOW, NOW, "alpha"))
    store.save_index(T, [SceneEntry("a.md", "A", 1, NOW, NOW, ("x1",))])
    folder = store.folder(T).root
    before, index_before = tree(folder), store.layout.index(T).read_bytes()
    snapshot = store.backup(T)
    store.save(T, Scene("a.md", "A!", 9, NOW, NOW, "changed"))
    store.save(T, Scene("b.md", "B", 1, NOW, NOW, "new"))
    store.save_index(T, [])
    store.restore(T, snapshot)
    assert tree(folder) == before
    assert store.layout.index(T).read_bytes() == index_before
    with pytest.raises(StoreError):
        store.restore(T, "scenes-missing")


def test_scene_backups_are_pruned_to_the_newest_n(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path, keep=3)
    made = []
    for i in range(5):
        store.save(T, Scene("a.md", str(i), i, NOW, NOW, f"v{i}"))
        made.append(store.backup(T))
    kept = sorted(p.name for p in store.layout.backups(T).iterdir())
    assert kept == sorted(made[-3:])
    store.restore(T, made[-1])
    assert store.load(T)[0].body == "v4"


def test_persona_backup_restore_and_pruning(tmp_path: Path) -> None:
    store = FilePersonaStore(tmp_path, keep=2)
    assert store.read(T) is None and store.backup(T) is None
    snapshots = []
    for i in range(4):
        store.write(T, f"persona {i}\n")
        snapshots.append(store.backup(T))
    assert len([p for p in store.layout.backups(T).iterdir() if p.name.startswith("persona-")]) == 2
    store.write(T, "broken")
    store.restore(T, snapshots[-1])
    found = store.read(T)
    assert found is not None and found[0] == "persona 3\n"
    store.restore(T, None)  # the state before the first persona: none
    assert store.read(T) is None
