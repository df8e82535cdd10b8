"""Profile folders within name limits, and unreadable scene, index and persona files: left out by
reads, recorded, set aside and restored from the newest readable backup by ``repair``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from memstrata.errors import StoreError
from memstrata.layers.l2.scene_file import render_scene, scene_problem
from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.stores.files import FilePersonaStore, FileSceneStore

T = Tenant("ann", "bot")
NOW = 1_785_405_720_000
LONG = [Tenant("L" * 10000), Tenant("用户" * 30), Tenant("alice", "a" * 300), Tenant("L" * 10000, "x")]
GOOD = render_scene(Scene("work.md", "Ann's job", 3, NOW, NOW, "# Work\nAnn is a nurse."))
BAD = {
    "binary": os.urandom(64) + b"\x00\xff\xfe",
    "truncated META": GOOD.encode()[:40],
    "cut inside a character": "-----META-START-----\nsummary: café\n-----META-END-----\n\nCafé".encode()[:-1],
    "garbled META": b"-----META-START-----\n\x13\x07 summary\n#@!\n-----META-END-----\n\nbody",
    "escape in summary": GOOD.replace("Ann's job", "\x1b[31mAnn\x1b[0m").encode(),
    "mangled META start": b"-----META-STAR\xc3\xa9T\nsummary: x\n",
}


def names_under(root: Path) -> list[str]:
    return [part for p in root.rglob("*") for part in p.relative_to(root).parts]


# --- profile folders --------------------------------------------------------------------------


def test_short_ids_keep_their_readable_folder_names() -> None:
    assert Tenant("alice").folder == "u=alice,a=default"
    assert Tenant("ann/1", "bot").folder == "u=ann%2F1,a=bot"
    just_fits = Tenant("a" * (255 - len("u=,a=default")))
    assert len(just_fits.folder) == 255 and "#" not in just_fits.folder


@pytest.mark.parametrize("tenant", LONG, ids=["L*10000", "用户*30", "long agent", "long user, agent x"])
def test_a_long_tenant_folder_is_a_readable_prefix_and_a_hash(tenant: Tenant) -> None:
    name = tenant.folder
    assert len(name.encode()) <= 255
    assert name.startswith("u=") and "#" in name
    assert len({t.folder for t in LONG}) == len(LONG)


def test_long_ids_sharing_a_prefix_get_different_folders() -> None:
    assert Tenant("L" * 10000).folder != Tenant("L" * 10001).folder


def test_long_tenants_get_files_and_are_listed_back_exactly(tmp_path: Path) -> None:
    scenes, persona = FileSceneStore(tmp_path), FilePersonaStore(tmp_path)
    for tenant in [T, *LONG]:
        scenes.save(tenant, Scene("work.md", "job", 1, NOW, NOW, "body"))
        scenes.save_index(tenant, [SceneEntry("work.md", "job", 1, NOW, NOW, ("a1",))])
        scenes.backup(tenant)
        persona.write(tenant, "# Persona")
        persona.backup(tenant)
        scenes.tidy(tenant)
    assert sorted(scenes.tenants(), key=str) == sorted([T, *LONG], key=str)
    assert max(len(n.encode()) for n in names_under(tmp_path)) <= 255
    assert not (tmp_path / T.folder / ".metadata" / "tenant.json").exists()  # short names need none


def test_a_hashed_folder_whose_metadata_names_another_tenant_is_skipped(tmp_path: Path) -> None:
    scenes = FileSceneStore(tmp_path)
    scenes.save(LONG[0], Scene("a.md", "", 0, NOW, NOW, "x"))
    ids = tmp_path / LONG[0].folder / ".metadata" / "tenant.json"
    ids.write_text(json.dumps({"user_id": "mallory", "agent_id": "default"}))
    assert scenes.tenants() == []


def test_tidy_renames_a_file_whose_name_is_near_the_limit(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    folder = store.folder(T).root
    long_name = "Ä" * 120 + ".MD"  # 243 bytes: the hidden temporary name must stay shorter
    (folder / long_name).write_text(GOOD)
    changes = store.tidy(T)
    assert changes[long_name] is not None and len(changes[long_name] or "") <= 70
    assert [s.name for s in store.load(T)] == [changes[long_name]]


# --- unreadable files ---------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(BAD))
def test_an_unreadable_scene_is_left_out_and_recorded_and_reads_write_nothing(
    tmp_path: Path, kind: str
) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("ok.md", "fine", 1, NOW, NOW, "fine body"))
    bad = store.folder(T).root / "bad.md"
    bad.write_bytes(BAD[kind])
    assert scene_problem(BAD[kind]) is not None
    assert [s.name for s in store.load(T)] == ["ok.md"]
    (problem,) = store.problems(T)
    assert problem.path == "scene_blocks/bad.md" and problem.reason
    assert "bad.md is unreadable" in str(problem)
    assert bad.read_bytes() == BAD[kind]
    assert store.check(T) == [problem]
    bad.unlink()
    store.load(T)
    assert store.problems(T) == []


def test_repair_restores_the_newest_readable_backup_and_keeps_the_bad_bytes(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("work.md", "v1", 1, NOW, NOW, "first"))
    store.backup(T)
    store.save(T, Scene("work.md", "v2", 1, NOW, NOW, "second"))
    store.backup(T)
    bad = store.folder(T).root / "work.md"
    bad.write_bytes(BAD["binary"])
    newest = sorted((tmp_path / T.folder / ".backup").glob("scenes-*"))[-1]
    (newest / "work.md").write_bytes(BAD["truncated META"])  # the newest copy is bad too
    (found,) = store.repair(T)
    assert found.restored_from is not None and found.restored_from != newest.name
    assert [(s.summary, s.body) for s in store.load(T)] == [("v1", "first")]
    kept = tmp_path / T.folder / ".backup" / str(found.kept_as)
    assert kept.read_bytes() == BAD["binary"]
    assert store.problems(T) == [] and store.repair(T) == []


def test_repair_without_a_readable_backup_moves_the_file_aside(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    (store.folder(T).root / "lost.md").write_bytes(BAD["garbled META"])
    (found,) = store.repair(T)
    assert found.restored_from is None and found.kept_as is not None
    assert "no readable backup" in str(found)
    assert store.load(T) == [] and store.problems(T) == []


def test_backup_repairs_first_so_snapshots_hold_readable_files(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("work.md", "v1", 1, NOW, NOW, "first"))
    store.backup(T)
    (store.folder(T).root / "work.md").write_bytes(BAD["escape in summary"])
    snapshot = store.backup(T)
    saved = tmp_path / T.folder / ".backup" / snapshot / "work.md"
    assert scene_problem(saved.read_bytes()) is None


def test_saving_over_an_unreadable_file_keeps_its_bytes(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    (store.folder(T).root / "work.md").write_bytes(BAD["binary"])
    store.load(T)
    store.save(T, Scene("work.md", "new", 1, NOW, NOW, "new body"))
    kept = list((tmp_path / T.folder / ".backup").glob("unreadable-*-work.md"))
    assert [p.read_bytes() for p in kept] == [BAD["binary"]]
    assert store.problems(T) == []


def test_what_the_store_writes_is_always_readable(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    store.save(T, Scene("work.md", "a\x1b[31m red\x07 summary", 1, NOW, NOW, "body \x00\x1b[0m\x9b here"))
    (scene,) = store.load(T)
    assert scene.summary == "a[31m red summary" and scene.body == "body [0m here"
    persona = FilePersonaStore(tmp_path)
    persona.write(T, "Ann \x1b]0;title\x07 likes tea")
    assert persona.read(T) is not None
    assert "\x1b" not in (persona.read(T) or ("", 0))[0]


def test_index_entries_are_made_safe_and_a_binary_index_is_an_error(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    path = tmp_path / T.folder / ".metadata" / "scene_index.json"
    path.parent.mkdir(parents=True)
    doc = {
        "scenes": [
            {"filename": "work.md", "summary": "job\x1b[2J\nnext line", "heat": 1},
            {"filename": "../../etc/passwd", "summary": "x", "heat": 1},
        ]
    }
    path.write_text(json.dumps(doc))
    (entry,) = store.index(T)
    assert (entry.name, entry.summary) == ("work.md", "job[2J next line")
    assert [p.path for p in store.problems(T)] == [".metadata/scene_index.json"]
    path.write_bytes(b"\x00\x01binary")
    with pytest.raises(StoreError, match="unreadable"):
        store.index(T)


def test_an_unreadable_persona_reads_as_none_and_repair_restores_it(tmp_path: Path) -> None:
    store = FilePersonaStore(tmp_path)
    store.write(T, "# Ann\nAnn likes tea.\n")
    store.backup(T)
    (store.folder(T).root / "persona.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    assert store.read(T) is None
    (problem,) = store.problems(T)
    assert problem.path == "persona.md" and "persona.md is unreadable" in str(problem)
    assert store.check(T) == [problem]
    (fixed,) = store.repair(T)
    assert fixed.restored_from is not None
    assert store.read(T) is not None and store.problems(T) == []
    kept = tmp_path / T.folder / ".backup" / str(fixed.kept_as)
    assert kept.read_bytes().startswith(b"\x89PNG")


def test_a_persona_backup_after_corruption_repairs_first(tmp_path: Path) -> None:
    store = FilePersonaStore(tmp_path)
    (store.folder(T).root / "persona.md").write_bytes(b"\xff\xfe garbage")
    assert store.backup(T) is None  # no readable copy anywhere: set aside, no persona to back up
    assert not (store.folder(T).root / "persona.md").exists()
    assert len(list((tmp_path / T.folder / ".backup").glob("unreadable-*-persona.md"))) == 1
