"""Rewritten keyword texts and the index version (``retrieval/reindex.py``), alike on every
backend of conftest.py."""

from __future__ import annotations

from memstrata.models import Layer, Message, MessageFilter, Role, Tenant
from memstrata.ports import Store
from memstrata.retrieval.reindex import INDEX_VERSION, stale_index

A, B = Tenant("alice"), Tenant("bob")


def msg(mid: str, text: str = "", session: str = "s", tenant: Tenant = A) -> tuple[Message, str]:
    m = Message(mid, tenant, session, "s-1", Role.USER, text or f"text of {mid}", 1_000, 1_001)
    return m, m.content


def test_keyword_texts_are_rewritten(empty_store: Store) -> None:
    m1, m2 = empty_store.messages.append([msg("m1", "alpha words"), msg("m2", "other words")])
    index = empty_store.index
    index.rewrite_texts(Layer.L0, {m1.seq: "beta words"})
    assert [s.seq for s in index.keyword(A, MessageFilter(), ["beta"], 10)] == [m1.seq]
    assert index.keyword(A, MessageFilter(), ["alpha"], 10) == []
    assert [s.seq for s in index.keyword(A, MessageFilter(), ["other"], 10)] == [m2.seq]
    assert empty_store.messages.by_seq(A, [m1.seq])[0].content == "alpha words"  # the record is as stored


def test_a_new_store_is_of_the_current_index_version(empty_store: Store) -> None:
    assert empty_store.index.index_version() == INDEX_VERSION == 4
    assert stale_index(empty_store.index) is None
    empty_store.index.set_index_version(2)
    assert empty_store.index.index_version() == 2
    assert "memstrata reindex" in (stale_index(empty_store.index) or "")
