"""The L2/L3 store contract: scene documents, their index, backups; the persona and its backups;
scene membership. Every backend of conftest.py runs it."""

from __future__ import annotations

import pytest

from memstrata.errors import StoreError
from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.ports import PersonaStore, SceneStore, Store

A, B = Tenant("alice"), Tenant("bob", "helper")
NOW = 1_785_405_720_000


def scene(name: str, body: str = "# Body", heat: int = 1) -> Scene:
    return Scene(name, f"summary of {name}", heat, NOW, NOW + 60_000, body)


def test_a_saved_scene_loads_back_equal_and_only_for_its_tenant(empty_scene_store: SceneStore) -> None:
    empty_scene_store.save(A, scene("work.md", "# Work\n- Alice teaches piano."))
    assert empty_scene_store.load(A) == [scene("work.md", "# Work\n- Alice teaches piano.")]
    assert empty_scene_store.load(B) == []
    assert empty_scene_store.tenants() == [A]


def test_scenes_load_by_name(empty_scene_store: SceneStore) -> None:
    for name in ("pets.md", "family.md", "work.md"):
        empty_scene_store.save(A, scene(name))
    assert [s.name for s in empty_scene_store.load(A)] == ["family.md", "pets.md", "work.md"]


def test_a_scene_name_must_be_normalised(empty_scene_store: SceneStore) -> None:
    for bad in ("Not Normal.md", "../escape.md", "a/b.md", "x.txt"):
        with pytest.raises(StoreError):
            empty_scene_store.save(A, scene(bad))


def test_the_index_round_trips_per_tenant(empty_scene_store: SceneStore) -> None:
    entries = [SceneEntry("work.md", "s", 2, NOW, NOW, ("a1", "a2")), SceneEntry("pets.md", "p", 1, NOW, NOW)]
    empty_scene_store.save_index(A, entries)
    assert empty_scene_store.index(A) == entries
    assert empty_scene_store.index(B) == []


def test_restore_makes_scenes_and_index_what_they_were_at_the_backup(empty_scene_store: SceneStore) -> None:
    empty_scene_store.save(A, scene("work.md", "# Before"))
    empty_scene_store.save_index(A, [SceneEntry("work.md", "s", 1, NOW, NOW, ("a1",))])
    snapshot = empty_scene_store.backup(A)
    empty_scene_store.save(A, scene("work.md", "# After"))
    empty_scene_store.save(A, scene("new.md"))
    empty_scene_store.save_index(A, [])
    empty_scene_store.restore(A, snapshot)
    assert empty_scene_store.load(A) == [scene("work.md", "# Before")]
    assert empty_scene_store.index(A) == [SceneEntry("work.md", "s", 1, NOW, NOW, ("a1",))]


def test_restoring_a_pruned_backup_is_an_error(empty_scene_store: SceneStore) -> None:
    first = empty_scene_store.backup(A)
    for _ in range(5):  # the fixture keeps 3
        empty_scene_store.backup(A)
    with pytest.raises(StoreError):
        empty_scene_store.restore(A, first)


def test_the_persona_round_trips_per_tenant(empty_persona_store: PersonaStore) -> None:
    assert empty_persona_store.read(A) is None
    empty_persona_store.write(A, "# Persona\nAlice teaches piano.")
    text, updated = empty_persona_store.read(A) or ("", 0)
    assert text == "# Persona\nAlice teaches piano." and updated > 0
    assert empty_persona_store.read(B) is None


def test_persona_restore_brings_back_the_backup_or_no_persona(empty_persona_store: PersonaStore) -> None:
    assert empty_persona_store.backup(A) is None  # nothing to back up yet
    empty_persona_store.write(A, "v1")
    snapshot = empty_persona_store.backup(A)
    empty_persona_store.write(A, "v2")
    empty_persona_store.restore(A, snapshot)
    assert (empty_persona_store.read(A) or ("", 0))[0] == "v1"
    empty_persona_store.restore(A, None)
    assert empty_persona_store.read(A) is None


def test_scene_membership_is_replaced_whole_per_tenant(empty_store: Store) -> None:
    assert empty_store.members.get(A) == {}
    empty_store.members.replace(A, {"a1": "work.md", "a2": "pets.md"})
    empty_store.members.replace(B, {"a1": "other.md"})
    empty_store.members.replace(A, {"a2": "work.md"})
    assert empty_store.members.get(A) == {"a2": "work.md"}
    assert empty_store.members.get(B) == {"a1": "other.md"}


def test_a_scenes_backups_list_the_snapshots_holding_it_newest_first(empty_scene_store: SceneStore) -> None:
    empty_scene_store.save(A, scene("work.md", "# Work v1"))
    first = empty_scene_store.backup(A)
    empty_scene_store.save(A, scene("work.md", "# Work v2"))
    empty_scene_store.save(A, scene("pets.md", "# Pets"))
    second = empty_scene_store.backup(A)
    work = empty_scene_store.backups(A, "work.md")
    assert [b.id for b in work] == [second, first]
    assert work[0].made_at >= work[1].made_at > NOW
    assert [b.id for b in empty_scene_store.backups(A, "pets.md")] == [second]  # not in the first one
    assert empty_scene_store.backups(B, "work.md") == []
    assert empty_scene_store.backups(A, "none.md") == []


def test_a_backup_reads_back_the_scene_as_it_was(empty_scene_store: SceneStore) -> None:
    empty_scene_store.save(A, scene("work.md", "# Work v1"))
    snapshot = empty_scene_store.backup(A)
    empty_scene_store.save(A, scene("work.md", "# Work v2"))
    text = empty_scene_store.read_backup(A, snapshot, "work.md") or ""
    assert "# Work v1" in text and "v2" not in text and "summary of work.md" in text
    assert empty_scene_store.read_backup(A, snapshot, "pets.md") is None  # the snapshot lacks it
    assert empty_scene_store.read_backup(B, snapshot, "work.md") is None  # another tenant's
    for bad in ("scenes-999999", "persona-1", "../../x", "scenes-1/../../x", ""):
        assert empty_scene_store.read_backup(A, bad, "work.md") is None
    with pytest.raises(StoreError):
        empty_scene_store.backups(A, "../work.md")


def test_a_pruned_scene_backup_is_neither_listed_nor_read(empty_scene_store: SceneStore) -> None:
    empty_scene_store.save(A, scene("work.md"))
    first = empty_scene_store.backup(A)
    for _ in range(3):  # the fixture keeps 3
        empty_scene_store.backup(A)
    assert first not in [b.id for b in empty_scene_store.backups(A, "work.md")]
    assert len(empty_scene_store.backups(A, "work.md")) == 3
    assert empty_scene_store.read_backup(A, first, "work.md") is None


def test_the_personas_backups_list_newest_first_and_read_back(empty_persona_store: PersonaStore) -> None:
    assert empty_persona_store.backups(A) == []
    empty_persona_store.write(A, "v1")
    first = empty_persona_store.backup(A)
    empty_persona_store.write(A, "v2")
    second = empty_persona_store.backup(A)
    empty_persona_store.write(A, "v3")
    assert [b.id for b in empty_persona_store.backups(A)] == [second, first]
    assert first is not None and second is not None
    assert empty_persona_store.read_backup(A, first) == "v1"
    assert empty_persona_store.read_backup(A, second) == "v2"
    assert empty_persona_store.read_backup(B, first) is None
    for bad in ("persona-999999", "scenes-1", "../persona.md", ""):
        assert empty_persona_store.read_backup(A, bad) is None
    empty_persona_store.backup(A)  # the fixture keeps 2: the first goes
    assert first not in [b.id for b in empty_persona_store.backups(A)]
    assert empty_persona_store.read_backup(A, first) is None
