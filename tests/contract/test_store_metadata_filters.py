"""Metadata filters in the store contract: listings, keyword and vector top-K on every backend.

The search tests put the one matching record below many better-scoring records that do not
match: a store that took its top K first and filtered after would return nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from memstrata.models import (
    Atom,
    AtomFilter,
    AtomType,
    Layer,
    Message,
    MessageFilter,
    MetadataFilter,
    Role,
    Tenant,
    metadata_filter,
)
from memstrata.ports import Store
from memstrata.retrieval.keyword import keyword_top

A, B = Tenant("alice"), Tenant("bob")
CRM = metadata_filter({"app": "crm"})
MANY = 600  # past the SQLite vector search's first window (256) and a PostgreSQL ef_search (200)


def msg(mid: str, content: str, meta: dict[str, Any], tenant: Tenant = A) -> tuple[Message, str]:
    return Message(mid, tenant, "s", "s", Role.USER, content, 1_000, 1_000, metadata=meta), content


def atom(aid: str, content: str, meta: dict[str, Any]) -> tuple[Atom, str]:
    a = Atom(aid, A, AtomType.PERSONA, content, 60, "misc", ("m1",), {"message_time": 5, **meta}, "s", 10, 10)
    return a, content


def ids(store: Store, seqs: list[int], layer: Layer = Layer.L0) -> list[str]:
    found = store.messages.by_seq(A, seqs) if layer == Layer.L0 else store.atoms.by_seq(A, seqs)
    return [r.id for r in found]


@pytest.fixture
def typed_messages(empty_store: Store) -> Store:
    """Messages whose ``v`` is a string, a number, a boolean, an object, or missing."""
    empty_store.messages.append(
        [
            msg("str", "one", {"v": "1", "app": "crm"}),
            msg("int", "two", {"v": 1, "app": "crm"}),
            msg("float", "three", {"v": 1.0, "app": "erp"}),
            msg("true", "four", {"v": True, "app": "crm"}),
            msg("obj", "five", {"v": {"1": 1}, "app": "crm"}),
            msg("none", "six", {}),
            msg("other-tenant", "seven", {"v": "1", "app": "crm"}, B),
        ]
    )
    return empty_store


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"app": "crm"}, ["str", "int", "true", "obj"]),
        ({"v": "1"}, ["str"]),
        ({"v": 1}, ["int", "float"]),  # JSON numbers compare by value
        ({"v": True}, ["true"]),
        ({"v": False}, []),
        ({"v": {"in": ["1", True]}}, ["str", "true"]),
        ({"v": {"in": [1]}, "app": "erp"}, ["float"]),  # every key must match
        ({"missing": "x"}, []),
    ],
)
def test_message_listing_filters_by_json_type_and_value(
    typed_messages: Store, filters: dict[str, Any], expected: list[str]
) -> None:
    flt = MessageFilter(metadata=metadata_filter(filters))
    found = typed_messages.messages.list(A, flt, limit=100)
    assert [m.id for m in found] == expected
    assert all(flt.metadata.matches(m.metadata) for m in found)  # the store agrees with the model
    assert typed_messages.messages.tally(A, flt) == len(expected)


def test_messages_keep_their_metadata_through_every_read(empty_store: Store) -> None:
    meta = {"app": "crm", "tags": ["a", "b"], "nested": {"depth": 2}, "text": "naïve 字"}
    stored = empty_store.messages.append([msg("m1", "hello", meta), msg("m2", "plain", {})])
    assert stored[0].metadata == meta
    assert empty_store.messages.get(A, ["m1"])[0].metadata == meta
    assert empty_store.messages.by_seq(A, [stored[0].seq])[0].metadata == meta
    assert empty_store.messages.list(A, MessageFilter(), limit=10)[1].metadata == {}
    assert empty_store.messages.last(A, "s").metadata == {}  # type: ignore[union-attr]


def test_atom_listing_filters_on_atom_metadata(empty_store: Store) -> None:
    empty_store.atoms.commit(
        A,
        [atom("x", "Ann likes tea", {"app": "crm"}), atom("y", "Ann likes coffee", {"app": "erp"})],
        {},
        None,
    )
    crm = empty_store.atoms.list(A, AtomFilter(metadata=CRM), limit=10)
    either = empty_store.atoms.list(
        A, AtomFilter(metadata=metadata_filter({"app": {"in": ["crm", "erp"]}})), limit=10
    )
    assert [a.id for a in crm] == ["x"]
    assert [a.id for a in either] == ["x", "y"]
    assert empty_store.atoms.list(A, AtomFilter(metadata=MetadataFilter()), limit=10) == either


def test_filtered_keyword_search_finds_a_match_ranked_below_many_others(empty_store: Store) -> None:
    noise = [msg(f"n{i}", "pancake pancake pancake breakfast", {"app": "erp"}) for i in range(MANY)]
    empty_store.messages.append(
        [
            *noise,
            msg("m1", "a long note that mentions a pancake once, among many other words", {"app": "crm"}),
        ]
    )
    unfiltered = keyword_top(empty_store.index, A, MessageFilter(), ["pancake"], 5)
    assert "m1" not in ids(empty_store, [s.seq for s in unfiltered])
    found = keyword_top(empty_store.index, A, MessageFilter(metadata=CRM), ["pancake"], 5)
    assert ids(empty_store, [s.seq for s in found]) == ["m1"]


def test_filtered_atom_keyword_search_finds_a_match_ranked_below_many_others(empty_store: Store) -> None:
    noise = [atom(f"n{i}", "Ann bakes pancake pancake pancake", {"app": "erp"}) for i in range(MANY)]
    empty_store.atoms.commit(
        A,
        [*noise, atom("x", "Ann once had a pancake at a diner downtown with friends", {"app": "crm"})],
        {},
        None,
    )
    found = keyword_top(empty_store.index, A, AtomFilter(metadata=CRM), ["pancake"], 3)
    assert ids(empty_store, [s.seq for s in found], Layer.L1) == ["x"]


@pytest.mark.parametrize("layer", [Layer.L0, Layer.L1])
def test_filtered_vector_search_finds_a_match_ranked_below_many_others(
    empty_store: Store, layer: Layer
) -> None:
    flt: MessageFilter | AtomFilter
    if layer == Layer.L0:
        noise = [msg(f"n{i}", f"noise {i}", {"app": "erp"}) for i in range(MANY)]
        records: list[Message] | list[Atom] = empty_store.messages.append(
            [*noise, msg("m1", "match", {"app": "crm"})]
        )
        flt = MessageFilter(metadata=CRM)
    else:
        made = [atom(f"n{i}", f"noise {i}", {"app": "erp"}) for i in range(MANY)]
        records = empty_store.atoms.commit(A, [*made, atom("m1", "match", {"app": "crm"})], {}, None)
        flt = AtomFilter(metadata=CRM)
    seqs = [r.seq for r in records]
    rng = np.random.default_rng(7)
    near = np.array([1.0, 0.0, 0.0, 0.0]) + rng.normal(0, 0.05, (MANY, 4))  # all close to the query
    vectors = np.vstack([near, [0.0, 0.0, 1.0, 0.0]]).astype(np.float32)  # the match: far from it
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    empty_store.index.put_vectors(A, layer, seqs, vectors)
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    found = empty_store.index.vector(A, flt, query, 3)
    assert [s.seq for s in found] == [seqs[-1]]
    assert found[0].score == pytest.approx(0.0, abs=1e-5)


def test_keys_with_hyphens_and_underscores_and_odd_text_values(empty_store: Store) -> None:
    empty_store.messages.append(
        [
            msg("m1", "one", {"my-app": "crm", "_kind": "a'b\"c"}),
            msg("m2", "two", {"my-app": "crm", "_kind": "plain"}),
            msg("m3", "three", {"my_app": "crm"}),  # another key
        ]
    )
    flt = MessageFilter(metadata=metadata_filter({"my-app": "crm", "_kind": {"in": ["a'b\"c", "x"]}}))
    assert [m.id for m in empty_store.messages.list(A, flt, limit=10)] == ["m1"]
    hyphen = MessageFilter(metadata=metadata_filter({"my-app": "crm"}))
    assert [m.id for m in empty_store.messages.list(A, hyphen, limit=10)] == ["m1", "m2"]
