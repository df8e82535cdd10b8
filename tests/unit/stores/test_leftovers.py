"""Atomic writes leave no temporary file behind, even when their process was killed: the next
writer to open the data directory sweeps what a kill before the rename left."""

from __future__ import annotations

from pathlib import Path

from memstrata import Memory
from memstrata.stores.files.atomic import atomic_write
from memstrata.stores.files.leftovers import remove_stale_temporaries


def killed_writes(home: Path) -> list[Path]:
    """The litter of writes killed before their rename: a scene file's, a snapshot folder's."""
    scenes = home / "profiles" / "u=ann,a=default" / "scene_blocks"
    scenes.mkdir(parents=True)
    (scenes / "family.md").write_text("kept")
    (scenes / ".family.md.x1y2.tmp").write_text("half a scene")
    snapshot = home / "profiles" / "u=ann,a=default" / ".backup" / ".scenes-20260101T000000Z.tmp"
    snapshot.mkdir(parents=True)
    (snapshot / "family.md").write_text("copy")
    return [scenes / ".family.md.x1y2.tmp", snapshot]


def test_atomic_write_replaces_and_leaves_nothing_beside(tmp_path: Path) -> None:
    atomic_write(tmp_path / "a.txt", "one")
    atomic_write(tmp_path / "a.txt", b"two")
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "two"


def test_the_writer_sweeps_temporary_files_a_kill_left_and_a_reader_does_not(tmp_path: Path) -> None:
    home = tmp_path / "data"
    Memory.open(home, embedder=None).close()
    litter = killed_writes(home)
    Memory.open(home, embedder=None, read_only=True).close()
    assert all(p.exists() for p in litter)
    Memory.open(home, embedder=None).close()
    assert not any(p.exists() for p in litter)
    assert (home / "profiles" / "u=ann,a=default" / "scene_blocks" / "family.md").read_text() == "kept"


def test_only_hidden_tmp_names_are_swept(tmp_path: Path) -> None:
    for name in ("notes.tmp", ".hidden.md", "scene.md"):
        (tmp_path / name).write_text("x")
    (tmp_path / ".a.md.1.tmp").write_text("x")
    (tmp_path / ".tmp-x1y2.part").write_text("x")
    assert remove_stale_temporaries(tmp_path) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == [".hidden.md", "notes.tmp", "scene.md"]
