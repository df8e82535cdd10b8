"""The store primitives of the data plane (get, delete, tally, drop vectors, remove a scene), on a
real SQLite file and real scene files: every one stays inside its tenant."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from memstrata.errors import StoreError
from memstrata.models import AtomFilter, Layer, MessageFilter, Scene, Tenant
from memstrata.ports import SceneStore, Store
from tests.contract.test_store_contract import atom, msg

A, B = Tenant("alice"), Tenant("bob")


def test_get_by_id_stays_in_the_tenant(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "one", A), msg("m2", "two", A), msg("m1", "one", B)])
    assert [m.id for m in empty_store.messages.get(A, ["m2", "m1", "nope"])] == ["m1", "m2"]
    assert [m.tenant for m in empty_store.messages.get(B, ["m1", "m2"])] == [B]


def test_deleting_messages_by_id_and_session_removes_their_index_rows(empty_store: Store) -> None:
    empty_store.messages.append(
        [msg("m1", "pancake one", A, "s1"), msg("m2", "pancake two", A, "s2"), msg("m3", "pancake", B, "s1")]
    )
    gone = empty_store.messages.delete(A, ["m1"], ["s2", "s1"])
    assert sorted(m.id for m in gone) == ["m1", "m2"]
    assert empty_store.messages.count(A) == 0
    assert empty_store.messages.count(B) == 1
    assert empty_store.index.keyword(A, MessageFilter(), ["pancake"], 10) == []
    assert len(empty_store.index.keyword(B, MessageFilter(), ["pancake"], 10)) == 1
    assert empty_store.messages.delete(B, ["m1", "m2"]) == []  # not B's: nothing happens


def test_message_tally_applies_the_filter(empty_store: Store) -> None:
    empty_store.messages.append(
        [msg("m1", "a", A, "s1", 10), msg("m2", "b", A, "s1", 20), msg("m3", "c", A, "s2", 30)]
    )
    assert empty_store.messages.tally(A, MessageFilter()) == 3
    assert empty_store.messages.tally(A, MessageFilter("s1")) == 2
    assert empty_store.messages.tally(A, MessageFilter(None, 15, 31)) == 2
    assert empty_store.messages.tally(B, MessageFilter()) == 0


def test_deleting_an_atom_deletes_its_older_versions_too(empty_store: Store) -> None:
    first, body = atom("a1", "Ann likes tea")
    empty_store.atoms.commit(A, [(first, body)], {}, None)
    second = replace(first, id="a2", content="Ann likes green tea", version=2)
    empty_store.atoms.commit(A, [(second, second.content)], {"a1": "a2"}, None)
    third = replace(first, id="a3", content="Ann likes matcha", version=3)
    empty_store.atoms.commit(A, [(third, third.content)], {"a2": "a3"}, None)
    other, other_body = atom("b1", "Bob likes tea", B)
    empty_store.atoms.commit(B, [(other, other_body)], {}, None)
    assert empty_store.atoms.delete(B, ["a3"]) == []
    gone = empty_store.atoms.delete(A, ["a3"])
    assert [a.id for a in gone] == ["a1", "a2", "a3"]
    assert empty_store.atoms.list(A, AtomFilter(include_superseded=True), limit=10) == []
    assert empty_store.index.keyword(A, AtomFilter(), ["tea"], 10) == []
    assert [a.id for a in empty_store.atoms.list(B, AtomFilter(), limit=10)] == ["b1"]


def test_atom_tally_counts_current_atoms_unless_history_is_asked(empty_store: Store) -> None:
    first, body = atom("a1", "Ann likes tea")
    empty_store.atoms.commit(A, [(first, body)], {}, None)
    empty_store.atoms.commit(A, [(replace(first, id="a2"), body)], {"a1": "a2"}, None)
    assert empty_store.atoms.tally(A, AtomFilter()) == 1
    assert empty_store.atoms.tally(A, AtomFilter(include_superseded=True)) == 2


def test_dropped_vectors_leave_vector_search(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("m1", "one", A), msg("m2", "two", A)])
    vectors = np.eye(2, 4, dtype=np.float32)
    empty_store.index.put_vectors(A, Layer.L0, [m.seq for m in stored], vectors)
    assert len(empty_store.index.vector(A, MessageFilter(), vectors[0], 5)) == 2
    empty_store.index.drop_vectors(B, Layer.L0, [stored[0].seq])  # not B's: kept
    assert len(empty_store.index.vector(A, MessageFilter(), vectors[0], 5)) == 2
    empty_store.index.drop_vectors(A, Layer.L0, [stored[0].seq])
    assert [s.seq for s in empty_store.index.vector(A, MessageFilter(), vectors[0], 5)] == [stored[1].seq]


def test_removing_a_scene_file(empty_scene_store: SceneStore) -> None:
    scenes = empty_scene_store
    scenes.save(A, Scene("tea.md", "tea", 1, 0, 0, "Ann likes tea."))
    assert not scenes.remove(B, "tea.md")
    assert scenes.remove(A, "tea.md")
    assert not scenes.remove(A, "tea.md")
    with pytest.raises(StoreError):
        scenes.remove(A, "../persona.md")
