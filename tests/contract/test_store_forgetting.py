"""The store primitives of forgetting, on every backend of conftest.py: atoms changed in place
(pin, time to live, metadata), expired atoms left out inside every query, what the sweep selects,
the sweep's durable state, and a tenant erased without touching another."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from memstrata.models import (
    AtomFilter,
    Erased,
    Layer,
    MessageFilter,
    Scene,
    SceneEntry,
    SweepState,
    Tenant,
    TenantState,
)
from memstrata.ports import PersonaStore, SceneStore, Store
from tests.contract.test_store_contract import atom, msg

A, B = Tenant("alice"), Tenant("bob")
NOW = 1_000_000


def _atoms(store: Store, tenant: Tenant, *specs: tuple[str, str]) -> list[int]:
    """Commit atoms (id, content) for ``tenant``; returns their seqs."""
    stored = store.atoms.commit(tenant, [atom(i, text, tenant) for i, text in specs], {}, None)
    return [a.seq for a in stored]


def test_amend_changes_pin_expiry_and_metadata_in_place(empty_store: Store) -> None:
    (seq,) = _atoms(empty_store, A, ("a1", "Ann likes tea"))
    _atoms(empty_store, B, ("a1", "Bob likes tea"))
    before = empty_store.atoms.get(A, ["a1"])[0]
    changed = replace(before, pinned=True, expires_at=NOW, metadata={"sources_swept": ["m1"]}, content="no")
    (after,) = empty_store.atoms.amend(A, [changed])
    assert (after.pinned, after.expires_at, after.metadata) == (True, NOW, {"sources_swept": ["m1"]})
    assert (after.seq, after.version, after.content, after.id) == (seq, 1, "Ann likes tea", "a1")
    assert empty_store.atoms.get(B, ["a1"])[0] == replace(
        empty_store.atoms.get(B, ["a1"])[0], pinned=False, expires_at=None
    )
    assert empty_store.atoms.amend(A, [replace(before, id="nope")]) == []


def test_expired_atoms_leave_listings_counts_and_both_searches_inside_the_query(empty_store: Store) -> None:
    seqs = _atoms(
        empty_store, A, ("old", "pancake recipe"), ("pin", "pancake pinned"), ("live", "pancake live")
    )
    old, pinned, live = empty_store.atoms.get(A, ["old", "pin", "live"])
    empty_store.atoms.amend(A, [replace(old, expires_at=NOW), replace(pinned, expires_at=NOW, pinned=True)])
    empty_store.atoms.amend(A, [replace(live, expires_at=NOW + 1)])
    v = np.eye(3, dtype=np.float32)
    empty_store.index.put_vectors(A, Layer.L1, seqs, v)
    at = AtomFilter(at=NOW)
    assert [a.id for a in empty_store.atoms.list(A, at, limit=10)] == ["pin", "live"]
    assert empty_store.atoms.tally(A, at) == 2
    assert [a.id for a in empty_store.atoms.list(A, AtomFilter(), limit=10)] == ["old", "pin", "live"]
    keyword = {s.seq for s in empty_store.index.keyword(A, at, ["pancake"], 10)}
    assert keyword == {seqs[1], seqs[2]}
    assert [s.seq for s in empty_store.index.vector(A, at, v[0], 10)] == [seqs[1], seqs[2]]
    assert next(s.seq for s in empty_store.index.vector(A, AtomFilter(at=NOW - 1), v[0], 10)) == seqs[0]


def test_citing_finds_the_tenants_atoms_naming_a_source(empty_store: Store) -> None:
    first, _ = atom("a1", "one")
    second, _ = atom("a2", "two")
    empty_store.atoms.commit(A, [(replace(first, source_message_ids=("m1", "m2")), "one")], {}, None)
    empty_store.atoms.commit(A, [(replace(second, source_message_ids=("m3",)), "two")], {}, None)
    other, _ = atom("b1", "three", B)
    empty_store.atoms.commit(B, [(replace(other, source_message_ids=("m2",)), "three")], {}, None)
    assert [a.id for a in empty_store.atoms.citing(A, ["m2", "m3", "zz"])] == ["a1", "a2"]
    assert [a.id for a in empty_store.atoms.citing(A, ["m9"])] == []
    assert [a.id for a in empty_store.atoms.citing(B, ["m2"])] == ["b1"]


def test_sweepable_selects_expired_and_old_atoms_never_pinned_ones(empty_store: Store) -> None:
    _atoms(empty_store, A, ("exp", "x"), ("pin", "y"), ("old", "z"))
    fresh, _ = atom("new", "w")
    empty_store.atoms.commit(A, [(replace(fresh, updated_at=50), "w")], {}, None)
    _atoms(empty_store, B, ("bexp", "x"))
    exp, pin = empty_store.atoms.get(A, ["exp", "pin"])
    empty_store.atoms.amend(A, [replace(exp, expires_at=NOW), replace(pin, expires_at=NOW, pinned=True)])
    (bexp,) = empty_store.atoms.get(B, ["bexp"])
    empty_store.atoms.amend(B, [replace(bexp, expires_at=NOW + 5)])
    # atom() makes updated_at 10; "new" was updated at 50
    assert [a.id for a in empty_store.atoms.sweepable(NOW, None, 10)] == ["exp"]
    assert [a.id for a in empty_store.atoms.sweepable(NOW + 5, None, 10)] == ["exp", "bexp"]
    assert [a.id for a in empty_store.atoms.sweepable(NOW, 11, 10)] == ["exp", "old", "bexp"]
    assert [a.id for a in empty_store.atoms.sweepable(NOW, 51, 10)] == ["exp", "old", "new", "bexp"]
    assert [a.id for a in empty_store.atoms.sweepable(NOW, 11, 1, after_seq=exp.seq)] == ["old"]
    assert [a.id for a in empty_store.atoms.sweepable(NOW, 10, 10)] == ["exp"]


def test_sessions_lists_every_session_holding_messages(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "a", A, "s2"), msg("m2", "b", B, "s1"), msg("m3", "c", A, "s1")])
    assert empty_store.messages.sessions(None) == [(A, "s2"), (B, "s1"), (A, "s1")]
    assert empty_store.messages.sessions(A) == [(A, "s2"), (A, "s1")]
    empty_store.messages.delete(A, session_keys=["s2"])
    assert empty_store.messages.sessions(A) == [(A, "s1")]


def test_the_sweep_state_and_the_forgetting_marks_persist(empty_store: Store) -> None:
    assert empty_store.pipeline.sweep() == SweepState()
    state = SweepState(last_run=5, attempts=2, last_error="boom", retry_at=9, last_report="3 messages")
    empty_store.pipeline.save_sweep(state)
    assert empty_store.pipeline.sweep() == state
    marks = TenantState(A, l2_rewrite=("a.md", "b.md"), l2_rebuild=True, l3_fresh=True)
    empty_store.pipeline.save_tenant(marks)
    assert empty_store.pipeline.tenant(A) == marks
    assert empty_store.pipeline.tenant(B) == TenantState(B)


def _fill(store: Store, tenant: Tenant, word: str) -> None:
    stored = store.messages.append(
        [msg(f"{word}-m{i}", f"{word} said {i}", tenant, f"{word}-s") for i in range(3)]
    )
    store.index.put_vectors(tenant, Layer.L0, [m.seq for m in stored], np.eye(3, dtype=np.float32))
    seqs = _atoms(store, tenant, (f"{word}-a1", f"{word} fact one"), (f"{word}-a2", f"{word} fact two"))
    store.index.put_vectors(tenant, Layer.L1, seqs, np.eye(2, 3, dtype=np.float32))
    store.members.replace(tenant, {f"{word}-a1": "x.md"})
    store.pipeline.save_tenant(TenantState(tenant, l2_cursor=seqs[-1]))
    state = store.pipeline.session(tenant, f"{word}-s")
    state.pending = 2
    store.pipeline.save_session(state)


def _everything(store: Store, tenant: Tenant) -> tuple[object, ...]:
    messages = store.messages.list(tenant, MessageFilter(), limit=100)
    atoms = store.atoms.list(tenant, AtomFilter(include_superseded=True), limit=100)
    vectors = [
        {k: v.tolist() for k, v in store.index.get_vectors(tenant, layer, [r.seq for r in rows]).items()}
        for layer, rows in ((Layer.L0, messages), (Layer.L1, atoms))
    ]
    keyword = store.index.keyword(tenant, MessageFilter(), ["said"], 10)
    sessions = [s for s in store.pipeline.sessions() if s.tenant == tenant]
    return (
        messages,
        atoms,
        vectors,
        keyword,
        store.members.get(tenant),
        store.pipeline.tenant(tenant),
        sessions,
    )


def test_erase_removes_every_row_of_the_tenant_and_nothing_of_another(empty_store: Store) -> None:
    _fill(empty_store, A, "ann")
    _fill(empty_store, B, "bob")
    assert empty_store.tenants() == [A, B]
    bob = _everything(empty_store, B)
    erased = empty_store.erase(A)
    assert (erased.messages, erased.atoms, erased.vectors) == (3, 2, 5)
    assert (erased.scene_members, erased.sessions, erased.tenant_states) == (1, 1, 1)
    assert empty_store.tenants() == [B]
    assert empty_store.messages.count(A) == 0 and empty_store.atoms.list(A, AtomFilter(), limit=9) == []
    assert empty_store.index.keyword(A, MessageFilter(), ["ann"], 10) == []
    assert empty_store.index.vector(A, MessageFilter(), np.eye(3, dtype=np.float32)[0], 10) == []
    assert empty_store.members.get(A) == {} and empty_store.pipeline.tenant(A) == TenantState(A)
    assert empty_store.index.document_counts(Layer.L0, ["ann"]) == {"ann": 0}
    assert _everything(empty_store, B) == bob
    again = empty_store.erase(A)
    assert replace(again, mirror_lines=0) == Erased()
    assert empty_store.compact() == []
    assert _everything(empty_store, B) == bob


def test_erasing_the_profile_removes_scenes_index_backups_and_the_persona(
    empty_scene_store: SceneStore, empty_persona_store: PersonaStore
) -> None:
    for t in (A, B):
        empty_scene_store.save(t, Scene("work.md", "s", 1, 0, 0, f"{t.user_id} works"))
        empty_scene_store.save_index(t, [SceneEntry("work.md", "s", 1, 0, 0, ("a1",))])
        empty_scene_store.backup(t)
        empty_persona_store.write(t, f"{t.user_id} persona")
        empty_persona_store.backup(t)
    assert empty_persona_store.erase(A) >= 2
    assert empty_persona_store.read(A) is None and empty_persona_store.read(B) is not None
    assert empty_scene_store.erase(A) >= 3
    assert empty_scene_store.load(A) == [] and empty_scene_store.index(A) == []
    assert A not in empty_scene_store.tenants() and B in empty_scene_store.tenants()
    assert [s.body for s in empty_scene_store.load(B)] == ["bob works"]
    assert empty_scene_store.erase(A) == 0 and empty_persona_store.erase(A) == 0
