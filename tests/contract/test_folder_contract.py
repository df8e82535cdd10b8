"""The ``Folder`` contract: the scene and persona documents a writer may touch, on every backend of
conftest.py. The same names are refused everywhere; what is written reads back as the store's
own documents."""

from __future__ import annotations

import pytest

from memstrata.errors import InputError, PathError
from memstrata.layers.folder import MAX_DOCUMENT_BYTES
from memstrata.layers.l2.scene_file import parse_scene, render_scene
from memstrata.models import Scene, Tenant
from memstrata.ports import PersonaStore, SceneStore

A, B = Tenant("alice"), Tenant("bob")
NOW = 1_785_405_720_000

REFUSED = [
    "../persona.md",
    "/etc/passwd.md",
    "C:evil.md",
    "~root.md",
    "a/b.md",
    "a\\b.md",
    ".hidden.md",
    "notes.txt",
    "x\0.md",
    "",
    "..",
    "y" * 201 + ".md",
    "bad\udcff.md",
]


def test_scene_documents_round_trip_and_are_what_the_store_loads(empty_scene_store: SceneStore) -> None:
    folder = empty_scene_store.folder(A)
    assert folder.names() == []
    assert folder.read("work.md") is None
    scene = Scene("work.md", "Alice's job", 3, NOW, NOW, "# Work\n\n- Alice teaches piano.")
    folder.write("work.md", render_scene(scene))
    folder.write("pets.md", "# Pets\n")
    assert folder.names() == ["pets.md", "work.md"]
    assert parse_scene("work.md", folder.read("work.md") or "", 0) == scene
    assert [s.name for s in empty_scene_store.load(A)] == ["pets.md", "work.md"]
    assert empty_scene_store.folder(B).names() == []


def test_a_written_document_replaces_the_old_one_without_control_characters(
    empty_scene_store: SceneStore,
) -> None:
    folder = empty_scene_store.folder(A)
    folder.write("work.md", "old")
    folder.write("work.md", "new\x1b[31m text\x07\n\tindented\r\n")
    assert folder.read("work.md") == "new[31m text\n\tindented\r\n"


@pytest.mark.parametrize("name", REFUSED)
def test_names_outside_the_rules_are_refused(empty_scene_store: SceneStore, name: str) -> None:
    folder = empty_scene_store.folder(A)
    with pytest.raises(PathError):
        folder.write(name, "pwned")
    with pytest.raises(PathError):
        folder.read(name)
    assert folder.names() == []


def test_a_document_over_the_size_cap_is_refused_and_nothing_changes(empty_scene_store: SceneStore) -> None:
    folder = empty_scene_store.folder(A)
    folder.write("work.md", "kept")
    with pytest.raises(InputError, match="limit"):
        folder.write("work.md", "x" * (MAX_DOCUMENT_BYTES + 1))
    assert folder.read("work.md") == "kept"


def test_the_persona_folder_holds_persona_md_alone(empty_persona_store: PersonaStore) -> None:
    folder = empty_persona_store.folder(A)
    assert folder.names() == []
    folder.write("persona.md", "# Alice\n")
    assert folder.names() == ["persona.md"]
    assert (empty_persona_store.read(A) or ("", 0))[0] == "# Alice\n"
    for other in ("other.md", "scene_blocks/work.md", "../persona.md"):
        with pytest.raises(PathError):
            folder.write(other, "x")
    empty_persona_store.write(A, "# Alice v2\n")
    assert folder.read("persona.md") == "# Alice v2\n"
    assert empty_persona_store.folder(B).read("persona.md") is None
