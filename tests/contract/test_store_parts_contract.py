"""More of the store contract, part by part: reading the message log and the atoms, filters,
vectors (filtered top-K, model reset, backlog) and pipeline state, on every backend of conftest.py."""

from __future__ import annotations

import numpy as np

from memstrata.models import (
    Atom,
    AtomFilter,
    AtomType,
    Layer,
    Message,
    MessageFilter,
    Role,
    SessionState,
    Tenant,
    TenantState,
    Vectors,
)
from memstrata.ports import Store

A, B = Tenant("alice"), Tenant("bob", "helper")


def msg(
    mid: str, session: str = "s", ts: int = 1_000, tenant: Tenant = A, role: Role = Role.USER
) -> tuple[Message, str]:
    m = Message(mid, tenant, session, f"{session}-1", role, f"text of {mid}", ts, ts + 1, "Ann")
    return m, m.content


def atom(aid: str, kind: AtomType = AtomType.PERSONA, scene: str = "misc", at: int = 5) -> tuple[Atom, str]:
    meta = {"message_time": at, "speaker": "Ann", "nested": {"x": [1, 2]}}
    a = Atom(aid, A, kind, f"Ann fact {aid}", 60, scene, ("m1", "m2"), meta, "s", 10, 11)
    return a, a.content


def unit(*values: float) -> Vectors:
    v = np.asarray(values, dtype=np.float32)
    return (v / np.linalg.norm(v)).astype(np.float32)


def test_messages_read_back_whole_by_session_and_by_seq(empty_store: Store) -> None:
    log = empty_store.messages
    stored = log.append([msg("m1", "s1"), msg("m2", "s2"), msg("m3", "s1"), msg("m4", "s1", tenant=B)])
    m1, m2, m3, _ = stored
    assert log.last(A, "s1") == m3 and log.last(A, "nope") is None
    assert log.after(A, "s1", m1.seq, 10) == [m3]
    assert log.before(A, "s1", m3.seq, 10) == [m1]
    assert log.by_seq(A, [m3.seq, m1.seq, 999_999]) == [m3, m1]
    assert log.list(A, MessageFilter(), limit=10) == [m1, m2, m3]
    assert log.list(A, MessageFilter(), limit=10, after_seq=m1.seq) == [m2, m3]
    assert [m.id for m in log.list(None, MessageFilter(), limit=10)] == ["m1", "m2", "m3", "m4"]
    assert log.count(None) == 4 and log.count(B) == 1
    assert m1 == Message("m1", A, "s1", "s1-1", Role.USER, "text of m1", 1_000, 1_001, "Ann", m1.seq)


def test_message_list_filters_by_session_and_time(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "s1", 100), msg("m2", "s2", 200), msg("m3", "s1", 300)])
    ids = [m.id for m in empty_store.messages.list(A, MessageFilter("s1", since=100, until=300), limit=10)]
    assert ids == ["m1"]


def test_atoms_read_back_whole_and_filter_by_type_scene_and_time(empty_store: Store) -> None:
    atoms = empty_store.atoms
    stored = atoms.commit(
        A,
        [atom("x", AtomType.PERSONA, "Work-Life", 100), atom("y", AtomType.EPISODIC, "trips", 200)],
        {},
        None,
    )
    x, y = stored
    assert atoms.get(A, ["y", "x", "none"]) == [x, y]
    assert atoms.by_seq(A, [y.seq, x.seq]) == [y, x]
    assert atoms.get(B, ["x"]) == []
    assert x.metadata == {"message_time": 100, "speaker": "Ann", "nested": {"x": [1, 2]}}
    assert x.source_message_ids == ("m1", "m2")
    assert atoms.list(A, AtomFilter(type=AtomType.EPISODIC), limit=10) == [y]
    assert atoms.list(A, AtomFilter(scene="work"), limit=10) == [x]
    assert atoms.list(A, AtomFilter(since=150), limit=10) == [y]
    assert atoms.list(A, AtomFilter(until=150), limit=10) == [x]
    assert atoms.count(A) == 2 and atoms.count(B) == 0


def test_a_superseded_atom_leaves_the_count_and_the_default_list(empty_store: Store) -> None:
    empty_store.atoms.commit(A, [atom("old")], {}, None)
    empty_store.atoms.commit(A, [atom("new")], {"old": "new"}, None)
    assert empty_store.atoms.count(A) == 1
    assert [a.id for a in empty_store.atoms.list(A, AtomFilter(), limit=10)] == ["new"]
    every = empty_store.atoms.list(A, AtomFilter(include_superseded=True), limit=10)
    assert [(a.id, a.superseded_by) for a in every] == [("old", "new"), ("new", None)]


def test_vector_search_ranks_by_cosine_and_applies_the_layer_filter(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("m1", "s1"), msg("m2", "s2"), msg("m3", "s1")])
    index = empty_store.index
    index.put_vectors(A, Layer.L0, [m.seq for m in stored], np.vstack([unit(1, 0), unit(1, 1), unit(0, 1)]))
    query = unit(1, 0.1)
    hits = index.vector(A, MessageFilter(), query, 10)
    assert [h.seq for h in hits] == [stored[0].seq, stored[1].seq, stored[2].seq]
    assert hits[0].score > hits[1].score > hits[2].score and abs(hits[0].score - float(query[0])) < 1e-4
    assert [h.seq for h in index.vector(A, MessageFilter(session_key="s1"), query, 10)] == [
        stored[0].seq,
        stored[2].seq,
    ]
    assert len(index.vector(A, MessageFilter(), query, 2)) == 2
    assert index.vector(B, MessageFilter(), query, 10) == []


def test_a_filtered_vector_query_still_returns_k_rows(empty_store: Store) -> None:
    """Most records are another tenant's and most of the tenant's are superseded: the filtered
    query must still find the k current ones (not a filtered global top-k)."""
    rng = np.random.default_rng(7)
    others = empty_store.messages.append([msg(f"b{i}", tenant=B) for i in range(300)])
    empty_store.index.put_vectors(B, Layer.L0, [m.seq for m in others], _random_units(rng, 300))
    mine = empty_store.messages.append(
        [msg(f"a{i}", session="rare" if i % 10 == 0 else "s") for i in range(100)]
    )
    empty_store.index.put_vectors(A, Layer.L0, [m.seq for m in mine], _random_units(rng, 100))
    query = _random_units(rng, 1)[0]
    hits = empty_store.index.vector(A, MessageFilter(session_key="rare"), query, 10)
    wanted = {m.seq for m in mine if m.session_key == "rare"}
    assert {h.seq for h in hits} == wanted


def _random_units(rng: np.random.Generator, n: int) -> Vectors:
    m = rng.normal(size=(n, 16))
    out: Vectors = (m / np.linalg.norm(m, axis=1, keepdims=True)).astype(np.float32)
    return out


def test_stored_vectors_read_back_and_the_backlog_counts_what_lacks_one(empty_store: Store) -> None:
    stored = empty_store.atoms.commit(A, [atom("x"), atom("y")], {}, None)
    index = empty_store.index
    assert index.count_missing_vectors(Layer.L1) == 2
    v = unit(3, 4, 0)
    index.put_vectors(A, Layer.L1, [stored[0].seq], v.reshape(1, -1))
    got = index.get_vectors(A, Layer.L1, [stored[0].seq, stored[1].seq])
    assert list(got) == [stored[0].seq] and np.allclose(got[stored[0].seq], v)
    assert index.get_vectors(B, Layer.L1, [stored[0].seq]) == {}
    assert index.missing_vectors(Layer.L1, 0, 10) == [(A, stored[1].seq)]
    assert index.missing_vectors(Layer.L1, stored[1].seq, 10) == []
    assert index.count_missing_vectors(Layer.L1) == 1
    index.put_vectors(A, Layer.L1, [stored[0].seq], unit(0, 1, 0).reshape(1, -1))  # replaced
    assert np.allclose(index.get_vectors(A, Layer.L1, [stored[0].seq])[stored[0].seq], unit(0, 1, 0))


def test_a_model_reset_takes_vectors_of_another_size(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("m1")])
    empty_store.index.reset_vectors("small")
    empty_store.index.put_vectors(A, Layer.L0, [stored[0].seq], unit(1, 0).reshape(1, -1))
    empty_store.index.reset_vectors("big")
    assert empty_store.index.embedding_model() == "big"
    assert empty_store.index.vector(A, MessageFilter(), unit(1, 0, 0, 0), 5) == []
    empty_store.index.put_vectors(A, Layer.L0, [stored[0].seq], unit(1, 0, 0, 0).reshape(1, -1))
    assert [h.seq for h in empty_store.index.vector(A, MessageFilter(), unit(1, 0, 0, 0), 5)] == [
        stored[0].seq
    ]


def test_session_state_round_trips_and_keeps_its_cursor(empty_store: Store) -> None:
    state = empty_store.pipeline
    assert state.session(A, "s") == SessionState(A, "s")
    empty_store.atoms.commit(A, [], {}, ("s", 7))
    saved = SessionState(
        A, "s", cursor=0, pending=3, runs=2, fire_at=123, attempts=1, last_error="boom", last_activity=9
    )
    state.save_session(saved)
    state.save_session(SessionState(B, "t", pending=1))
    assert state.session(A, "s") == SessionState(A, "s", 7, 3, 2, 123, 1, "boom", 9)
    assert [(s.tenant, s.session_key) for s in state.sessions()] == [(A, "s"), (B, "t")]


def test_armed_sessions_are_those_whose_timer_is_set_the_earliest_first(empty_store: Store) -> None:
    state = empty_store.pipeline
    state.save_session(SessionState(A, "quiet", pending=2))
    state.save_session(SessionState(A, "later", pending=1, fire_at=50))
    state.save_session(SessionState(B, "sooner", fire_at=10))
    state.save_session(SessionState(B, "also", fire_at=50))
    assert [(s.session_key, s.fire_at) for s in state.armed()] == [
        ("sooner", 10),
        ("later", 50),
        ("also", 50),
    ]
    assert [s.session_key for s in state.armed(due_by=49)] == ["sooner"]
    assert [s.session_key for s in state.armed(due_by=50, limit=2)] == ["sooner", "later"]
    assert state.armed(due_by=9) == [] and [s.session_key for s in state.armed(limit=1)] == ["sooner"]
    state.save_session(SessionState(B, "sooner", fire_at=None))  # fired: disarmed
    assert [s.session_key for s in state.armed()] == ["later", "also"]
    assert len(state.sessions()) == 4


def test_the_backlog_lists_sessions_with_messages_after_their_cursor(empty_store: Store) -> None:
    stored = empty_store.messages.append(
        [msg("m1", "s1"), msg("m2", "s1"), msg("m3", "s2"), msg("m4", "s3", tenant=B)]
    )
    empty_store.atoms.commit(A, [], {}, ("s1", stored[0].seq))
    empty_store.atoms.commit(A, [], {}, ("s2", stored[2].seq))
    assert empty_store.pipeline.backlog() == [(A, "s1", 1), (B, "s3", 1)]


def test_the_backlog_puts_the_session_waiting_longest_first(empty_store: Store) -> None:
    # s1 began first, but its unprocessed message came after s2's: s2 has waited longer.
    stored = empty_store.messages.append([msg("m1", "s1"), msg("m2", "s2"), msg("m3", "s1")])
    empty_store.atoms.commit(A, [], {}, ("s1", stored[0].seq))
    assert empty_store.pipeline.backlog() == [(A, "s2", 1), (A, "s1", 1)]


def test_waiting_tenants_are_those_with_an_l2_timer_or_an_l3_request_not_yet_run(empty_store: Store) -> None:
    state = empty_store.pipeline
    c, d = Tenant("c", "main"), Tenant("d", "main")
    state.save_tenant(TenantState(A, l2_cursor=9, new_atoms=3))  # consolidated, nothing asked
    state.save_tenant(TenantState(B, l2_fire_at=500))
    state.save_tenant(TenantState(c, l3_requested=2, l3_done=1))
    state.save_tenant(TenantState(d, l3_requested=1, l3_done=1, l3_fire_at=10))  # its request ran
    assert [s.tenant for s in state.tenants(waiting=True)] == [B, c]
    assert [s.tenant for s in state.tenants()] == [A, B, c, d]


def test_tenant_state_round_trips_every_field(empty_store: Store) -> None:
    state = empty_store.pipeline
    assert state.tenant(A) == TenantState(A)
    full = TenantState(
        A,
        5,
        100,
        90,
        80,
        2,
        "l2 failed",
        "scenes-3",
        7,
        4,
        3,
        ("asked", "new job"),
        200,
        1,
        "l3 failed",
        70,
        True,
        "persona-2",
    )
    state.save_tenant(full)
    state.save_tenant(TenantState(B))
    assert state.tenant(A) == full
    assert [t.tenant for t in state.tenants()] == [A, B]
    state.save_tenant(TenantState(A, l2_cursor=6))
    assert state.tenant(A) == TenantState(A, l2_cursor=6)


def test_a_lease_has_one_holder_until_released(empty_store: Store) -> None:
    leases = empty_store.leases
    assert leases.claim("l1 alice s") is True
    assert leases.claim("l1 alice s") is False  # held, even by this process
    assert leases.claim("l1 alice t") is True
    leases.release("l1 alice s")
    assert leases.claim("l1 alice s") is True
    leases.release("never claimed")  # ignored


def test_state_updates_are_atomic_under_concurrency(empty_store: Store) -> None:
    from concurrent.futures import ThreadPoolExecutor

    def bump(_: int) -> None:
        empty_store.pipeline.update_session(A, "s", lambda st: setattr(st, "pending", st.pending + 1))
        empty_store.pipeline.update_tenant(A, lambda st: setattr(st, "new_atoms", st.new_atoms + 1))

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(bump, range(40)))
    assert empty_store.pipeline.session(A, "s").pending == 40
    assert empty_store.pipeline.tenant(A).new_atoms == 40
    saved = empty_store.pipeline.update_session(A, "s", lambda st: setattr(st, "fire_at", 5))
    assert saved == empty_store.pipeline.session(A, "s") and saved.fire_at == 5
