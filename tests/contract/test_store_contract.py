"""The store contract (L0, L1, search primitives, pipeline state), on every backend of conftest.py."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from memstrata.models import Atom, AtomFilter, AtomType, Layer, Message, MessageFilter, Role, Tenant
from memstrata.ports import Store
from memstrata.retrieval.keyword import keyword_top
from memstrata.retrieval.terms import query_terms
from memstrata.stores.sqlite import db as sqlite_db
from memstrata.stores.sqlite.store import SqliteStore

A, B = Tenant("alice"), Tenant("bob")


def msg(
    mid: str, content: str, tenant: Tenant = A, session: str = "s", ts: int = 1_000
) -> tuple[Message, str]:
    m = Message(mid, tenant, session, session, Role.USER, content, ts, ts, "Ann")
    return m, content


def atom(aid: str, content: str, tenant: Tenant = A) -> tuple[Atom, str]:
    a = Atom(aid, tenant, AtomType.PERSONA, content, 60, "misc", ("m1",), {"message_time": 5}, "s", 10, 10)
    return a, content


def test_seq_strictly_increases_and_duplicates_are_skipped(empty_store: Store) -> None:
    first = empty_store.messages.append([msg("m1", "one"), msg("m2", "two")])
    again = empty_store.messages.append([msg("m2", "two"), msg("m3", "three")])
    assert [m.id for m in again] == ["m3"]
    seqs = [m.seq for m in [*first, *again]]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3
    assert empty_store.messages.count(A) == 3


def test_the_same_id_in_two_tenants_is_two_messages(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "hello", A), msg("m1", "hello", B)])
    assert empty_store.messages.count(A) == 1
    assert empty_store.messages.count(B) == 1


def test_first_messages_are_the_tenants_by_time_then_seq(empty_store: Store) -> None:
    empty_store.messages.append(
        [msg("late", "c", A, ts=3_000), msg("b", "x", B, ts=500), msg("early", "a", A, ts=1_000)]
    )
    empty_store.messages.append([msg("tie", "b", A, ts=1_000)])
    assert [m.id for m in empty_store.messages.first(A, 10)] == ["early", "tie", "late"]
    assert [m.id for m in empty_store.messages.first(A, 2)] == ["early", "tie"]
    assert [m.id for m in empty_store.messages.first(B, 10)] == ["b"]


def test_first_messages_are_read_through_the_time_index_not_a_sort_of_the_tenant(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A first-person question reads them at every search: the cost must not grow with the tenant.
    seen: list[tuple[sqlite3.Connection, str, Sequence[object]]] = []
    real = sqlite_db._rows

    def rows(conn: sqlite3.Connection, sql: str, params: Sequence[object]) -> list[sqlite3.Row]:
        seen.append((conn, sql, params))
        return real(conn, sql, params)

    store = SqliteStore(tmp_path / "data")
    try:
        monkeypatch.setattr(sqlite_db, "_rows", rows)
        store.messages.first(A, 64)
        conn, sql, params = seen[-1]
        plan = " ".join(str(r[-1]) for r in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        assert "messages_time" in plan and "TEMP B-TREE" not in plan, plan
    finally:
        store.close()


def test_keyword_search_never_crosses_tenants_even_with_identical_text(empty_store: Store) -> None:
    empty_store.messages.append(
        [msg("a1", "secret pancake recipe", A), msg("b1", "secret pancake recipe", B)]
    )
    hits = keyword_top(empty_store.index, B, MessageFilter(), ["pancake"], 10)
    assert [m.id for m in empty_store.messages.by_seq(B, [h.seq for h in hits])] == ["b1"]
    assert empty_store.messages.by_seq(A, [h.seq for h in hits]) == []  # B's seqs are not A's rows


def test_beside_a_vector_list_a_word_every_record_holds_is_no_keyword_evidence(empty_store: Store) -> None:
    # Every backend counts the word in every record, so the shared pruning drops it alike.
    empty_store.messages.append([msg("m1", "Maya moved to Lisbon"), msg("m2", "Maya's sister visits")])
    index = empty_store.index
    assert index.document_counts(Layer.L0, ["maya"]) == {"maya": index.size(Layer.L0)}
    assert keyword_top(index, A, MessageFilter(), ["maya"], 10, informative=True) == []
    assert len(keyword_top(index, A, MessageFilter(), ["maya"], 10)) == 2  # alone, it still finds
    found = keyword_top(index, A, MessageFilter(), ["maya", "lisbon"], 10, informative=True)
    assert [m.id for m in empty_store.messages.by_seq(A, [h.seq for h in found])] == ["m1"]


def test_a_word_every_record_of_the_tenant_holds_is_no_evidence_whatever_other_tenants_hold(
    empty_store: Store,
) -> None:
    # A store of many users: Maya's records all name her, Bob's mostly do not. Counted over the
    # whole index "maya" is in 3 of 6 records; in Maya's own, in all: her list is the one tenant's.
    empty_store.messages.append(
        [
            msg("m1", "Maya moved to Lisbon"),
            msg("m2", "Maya's sister visits next week"),
            msg("b1", "Bob bought a kayak", B),
            msg("b2", "Bob met Maya at the lake", B),
            msg("b3", "Bob fixed the kayak", B),
        ]
    )
    empty_store.atoms.commit(A, [atom("x", "Maya lives in Lisbon")], {}, None)
    index = empty_store.index
    assert index.tenant_size(A, Layer.L0) == 2 and index.tenant_size(B, Layer.L0) == 3
    assert index.tenant_size(B, Layer.L1) == 0
    assert index.tenant_document_counts(A, Layer.L0, ["maya", "kayak", "lisbon"]) == {
        "maya": 2,
        "kayak": 0,
        "lisbon": 1,
    }
    assert index.tenant_document_counts(B, Layer.L0, ["maya", "kayak"]) == {"maya": 1, "kayak": 2}
    assert keyword_top(index, A, MessageFilter(), ["maya"], 10, informative=True) == []
    found = keyword_top(index, A, MessageFilter(), ["maya", "lisbon"], 10, informative=True)
    assert [m.id for m in empty_store.messages.by_seq(A, [h.seq for h in found])] == ["m1"]
    # Bob's messages do not all name her: there she still ranks
    found = keyword_top(index, B, MessageFilter(), ["maya", "kayak"], 10, informative=True)
    assert {m.id for m in empty_store.messages.by_seq(B, [h.seq for h in found])} == {"b1", "b2", "b3"}


def test_ids_and_sources_by_seq_are_the_tenants_own(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("a1", "x", A), msg("b1", "x", B), msg("a2", "y", A)])
    seqs = [m.seq for m in stored]
    assert empty_store.messages.ids_of(A, [*seqs, 10_000]) == {seqs[0]: "a1", seqs[2]: "a2"}
    assert empty_store.messages.ids_of(B, seqs) == {seqs[1]: "b1"}
    assert empty_store.messages.ids_of(A, []) == {}
    (mine,) = empty_store.atoms.commit(A, [atom("x", "Ann likes tea")], {}, None)
    (theirs,) = empty_store.atoms.commit(B, [atom("y", "Bob likes tea", B)], {}, None)
    assert empty_store.atoms.sources_of(A, [mine.seq, theirs.seq]) == {mine.seq: ("m1",)}
    assert empty_store.atoms.sources_of(A, []) == {}


def test_vector_search_never_crosses_tenants(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("a1", "x", A), msg("b1", "x", B)])
    v = np.array([[1.0, 0.0]], dtype=np.float32)
    empty_store.index.put_vectors(A, Layer.L0, [stored[0].seq], v)
    empty_store.index.put_vectors(B, Layer.L0, [stored[1].seq], v)
    hits = empty_store.index.vector(A, MessageFilter(), v[0], 10)
    assert [h.seq for h in hits] == [stored[0].seq]


@pytest.mark.parametrize(
    "query",
    [
        'say "hello',
        "-pancake",
        "pan*",
        "pancake NEAR recipe",
        "a AND OR NOT b",
        "'; DROP TABLE messages; --",
        "column:value",
        "x" * 100_000,
        "bad \udcff surrogate",
        "((((",
        "^start",
        "",
    ],
)
def test_hostile_keyword_input_is_a_query_never_a_crash(empty_store: Store, query: str) -> None:
    empty_store.messages.append([msg("m1", "secret pancake recipe")])
    terms = query_terms(query)
    hits = keyword_top(empty_store.index, A, MessageFilter(), terms, 10)
    assert isinstance(hits, list)
    assert empty_store.messages.count(A) == 1


def test_chinese_and_mixed_language_text_is_searchable(empty_store: Store) -> None:
    from memstrata.retrieval.terms import segment

    texts = {"c1": "我喜欢在北京吃烤鸭", "c2": "明天我们去上海开会", "c3": "I love Peking duck 北京烤鸭"}
    empty_store.messages.append([(msg(k, v)[0], segment(v)) for k, v in texts.items()])

    def ids(q: str) -> set[str]:
        hits = keyword_top(empty_store.index, A, MessageFilter(), query_terms(q), 10)
        return {m.id for m in empty_store.messages.by_seq(A, [h.seq for h in hits])}

    assert ids("北京烤鸭") == {"c1", "c3"}
    assert ids("上海") == {"c2"}
    assert ids("duck") == {"c3"}


def test_stemming_and_diacritics_fold(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "We were running to the café")])
    for q in ("run", "cafe", "CAFÉ"):
        assert keyword_top(empty_store.index, A, MessageFilter(), query_terms(q), 5), q


def test_message_filters_apply_inside_the_query(empty_store: Store) -> None:
    empty_store.messages.append(
        [msg("m1", "hiking plans", session="s1", ts=100), msg("m2", "hiking photos", session="s2", ts=200)]
    )
    by_session = keyword_top(empty_store.index, A, MessageFilter(session_key="s2"), ["hiking"], 5)
    by_time = keyword_top(empty_store.index, A, MessageFilter(until=150), ["hiking"], 5)
    assert [m.id for m in empty_store.messages.by_seq(A, [h.seq for h in by_session])] == ["m2"]
    assert [m.id for m in empty_store.messages.by_seq(A, [h.seq for h in by_time])] == ["m1"]


def test_atom_commit_is_idempotent_and_moves_the_cursor_with_the_atoms(empty_store: Store) -> None:
    empty_store.messages.append([msg("m1", "hello"), msg("m2", "again")])
    first = empty_store.atoms.commit(A, [atom("x", "Ann likes tea")], {}, ("s", 2))
    again = empty_store.atoms.commit(A, [atom("x", "Ann likes tea")], {}, ("s", 2))
    assert [a.id for a in first] == ["x"]
    assert again == []
    assert empty_store.pipeline.session(A, "s").cursor == 2
    assert empty_store.pipeline.backlog() == []


def test_superseded_atoms_stay_readable_but_leave_current_search(empty_store: Store) -> None:
    empty_store.atoms.commit(A, [atom("old", "Ann likes green tea")], {}, None)
    empty_store.atoms.commit(A, [atom("new", "Ann likes black tea")], {"old": "new"}, None)
    current = keyword_top(empty_store.index, A, AtomFilter(), ["tea"], 5)
    history = keyword_top(empty_store.index, A, AtomFilter(include_superseded=True), ["tea"], 5)
    assert {a.id for a in empty_store.atoms.by_seq(A, [h.seq for h in current])} == {"new"}
    assert {a.id for a in empty_store.atoms.by_seq(A, [h.seq for h in history])} == {"old", "new"}
    assert empty_store.atoms.get(A, ["old"])[0].superseded_by == "new"


def test_cursor_never_moves_backwards(empty_store: Store) -> None:
    empty_store.atoms.commit(A, [], {}, ("s", 5))
    empty_store.atoms.commit(A, [], {}, ("s", 3))
    assert empty_store.pipeline.session(A, "s").cursor == 5


def test_missing_vectors_and_model_reset(empty_store: Store) -> None:
    stored = empty_store.messages.append([msg("m1", "one"), msg("m2", "two")])
    empty_store.index.put_vectors(A, Layer.L0, [stored[0].seq], np.ones((1, 2), dtype=np.float32))
    assert empty_store.index.missing_vectors(Layer.L0, 0, 10) == [(A, stored[1].seq)]
    empty_store.index.reset_vectors("model-b")
    assert empty_store.index.embedding_model() == "model-b"
    assert len(empty_store.index.missing_vectors(Layer.L0, 0, 10)) == 2


def test_the_first_model_chosen_is_kept(empty_store: Store) -> None:
    assert empty_store.index.choose_model("model-a") == "model-a"
    assert empty_store.index.choose_model("model-b") == "model-a"  # a second process's late choice
    assert empty_store.index.embedding_model() == "model-a"
    empty_store.index.reset_vectors("model-c")  # reindex still switches
    assert empty_store.index.choose_model("model-d") == "model-c"


def test_jsonl_mirror_is_topped_up_on_open(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d")
    store.messages.append([msg("m1", "one")])
    for f in (tmp_path / "d" / "conversations").glob("*.jsonl"):
        f.unlink()  # as if the process died between commit and mirror
    store.close()
    reopened = SqliteStore(tmp_path / "d")
    lines = [
        ln for f in (tmp_path / "d" / "conversations").glob("*.jsonl") for ln in f.read_text().splitlines()
    ]
    assert len(lines) == 1 and '"id": "m1"' in lines[0]
    reopened.close()
    again = SqliteStore(tmp_path / "d")  # no duplicate lines on a second open
    lines = [
        ln for f in (tmp_path / "d" / "conversations").glob("*.jsonl") for ln in f.read_text().splitlines()
    ]
    assert len(lines) == 1
    again.close()


def test_a_partial_mirror_line_left_by_a_crash_is_rewritten_whole(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "d")
    store.messages.append([msg("m1", "one"), msg("m2", "two")])
    store.close()
    (mirror,) = (tmp_path / "d" / "conversations").glob("*.jsonl")
    text = mirror.read_text()
    mirror.write_text(text[: text.index('"id": "m2"') + 5])  # cut in the middle of m2's line
    SqliteStore(tmp_path / "d").close()
    lines = [json.loads(x) for x in mirror.read_text().splitlines()]
    assert [ln["id"] for ln in lines] == ["m1", "m2"]


def test_big_index_query_with_words_sharing_a_stem(
    empty_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memstrata.retrieval.keyword as ranking

    monkeypatch.setattr(ranking, "PRUNE_MIN_RECORDS", 2)
    empty_store.messages.append(
        [msg("m1", "painting a painted wall"), msg("m2", "walls everywhere"), msg("m3", "x")]
    )
    hits = keyword_top(empty_store.index, A, MessageFilter(), ["painting", "painted", "wall"], 10)
    assert next(m.id for m in empty_store.messages.by_seq(A, [h.seq for h in hits])) == "m1"


def test_big_index_ranks_records_with_two_terms_first(
    empty_store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    import memstrata.retrieval.keyword as ranking

    monkeypatch.setattr(ranking, "PRUNE_MIN_RECORDS", 2)
    monkeypatch.setattr(ranking, "PRUNE_SHARE", 1.0)
    empty_store.messages.append(
        [msg("one", "kayak kayak kayak"), msg("both", "kayak trip to Oslo"), msg("other", "Oslo rain")]
    )
    hits = keyword_top(empty_store.index, A, MessageFilter(), ["kayak", "oslo"], 10)
    ids = [m.id for m in empty_store.messages.by_seq(A, [h.seq for h in hits])]
    assert ids[0] == "both" and set(ids) == {"one", "both", "other"}
    assert [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)


def test_keyword_search_keeps_working_while_the_index_grows(empty_store: Store) -> None:
    empty_store.messages.append([msg("m0", "a quiet day")])
    assert keyword_top(empty_store.index, A, MessageFilter(), ["kayak"], 5) == []
    empty_store.messages.append([msg(f"m{i}", f"kayak trip number {i}") for i in range(1, 30)])
    hits = keyword_top(empty_store.index, A, MessageFilter(), ["kayak", "trip"], 50)
    assert len(hits) == 29
