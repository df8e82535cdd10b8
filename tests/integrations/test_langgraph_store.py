"""A BaseStore conformance suite, written from ``langgraph.store.base.BaseStore``'s docstrings
(langgraph ships no store tests in its package). Every test runs against LangGraph's own
``InMemoryStore`` too, so the suite is checked against the reference as much as the store is;
``test_random_ops_agree_with_in_memory_store`` runs one seeded sequence on both and compares
every answer."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("langgraph.store.base")

from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from memstrata import FakeClock, Memory
from memstrata.integrations.langgraph import MemstrataStore
from tests.integrations.conftest import open_backend

VALUE: dict[str, Any] = {
    "text": "Alice's café — naïve 😀",
    "n": 3,
    "f": 0.1,
    "big": 2**53 + 1,
    "ok": True,
    "none": None,
    "list": [1, "two", {"three": [3.0]}],
    "nested": {"a": {"b": []}},
}


@pytest.fixture(params=["in-memory", "sqlite", "postgres"])
def store(request: pytest.FixtureRequest, home: Path, clock: FakeClock) -> Iterator[BaseStore]:
    """An empty store: LangGraph's reference, or memstrata on SQLite or on PostgreSQL."""
    if request.param == "in-memory":
        yield InMemoryStore()
        return
    with open_backend(request, request.param, home, clock) as mem:
        yield MemstrataStore(mem, now_ms=clock.now_ms)


def _keys(found: list[Any]) -> list[tuple[tuple[str, ...], str]]:
    return sorted((tuple(i.namespace), i.key) for i in found)


def test_put_then_get_returns_the_value_exactly(store: BaseStore) -> None:
    store.put(("memories", "alice"), "profile", VALUE)
    item = store.get(("memories", "alice"), "profile")
    assert item is not None
    assert item.value == VALUE
    assert (tuple(item.namespace), item.key) == (("memories", "alice"), "profile")
    assert item.updated_at >= item.created_at


def test_get_of_a_missing_key_is_none(store: BaseStore) -> None:
    store.put(("memories", "alice"), "a", {"x": 1})
    assert store.get(("memories", "alice"), "b") is None
    assert store.get(("memories", "bob"), "a") is None


def test_put_replaces_the_value(store: BaseStore) -> None:
    store.put(("memories", "alice"), "k", {"v": 1})
    first = store.get(("memories", "alice"), "k")
    store.put(("memories", "alice"), "k", {"v": 2})
    second = store.get(("memories", "alice"), "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    # (whether created_at survives a replace is left open: InMemoryStore resets it, memstrata
    # and LangGraph's PostgresStore keep it)
    assert second.updated_at >= first.updated_at
    assert len(store.search(("memories", "alice"))) == 1


def test_putting_a_value_back_restores_it(store: BaseStore) -> None:
    ns = ("memories", "alice")
    for v in ({"v": "a"}, {"v": "b"}, {"v": "a"}):
        store.put(ns, "k", v)
        item = store.get(ns, "k")
        assert item is not None and item.value == v


def test_two_keys_may_hold_equal_values(store: BaseStore) -> None:
    ns = ("memories", "alice")
    store.put(ns, "one", {"text": "same"})
    store.put(ns, "two", {"text": "same"})
    store.delete(ns, "one")
    two = store.get(ns, "two")
    assert store.get(ns, "one") is None
    assert two is not None and two.value == {"text": "same"}


def test_delete_removes_and_deleting_nothing_is_a_no_op(store: BaseStore) -> None:
    ns = ("memories", "alice")
    store.put(ns, "k", {"v": 1})
    store.delete(ns, "k")
    store.delete(ns, "never")
    assert store.get(ns, "k") is None
    assert store.search(ns) == []


def test_namespaces_hold_their_own_keys(store: BaseStore) -> None:
    store.put(("memories", "alice"), "k", {"who": "alice"})
    store.put(("memories", "alice", "work"), "k", {"who": "alice at work"})
    store.put(("memories", "bob"), "k", {"who": "bob"})
    store.put(("a/b",), "k", {"who": "slash"})
    store.put(("a", "b"), "k", {"who": "two labels"})
    for ns, who in [
        (("memories", "alice"), "alice"),
        (("memories", "alice", "work"), "alice at work"),
        (("memories", "bob"), "bob"),
        (("a/b",), "slash"),
        (("a", "b"), "two labels"),
    ]:
        item = store.get(ns, "k")
        assert item is not None and item.value == {"who": who}


def test_search_without_a_query_lists_the_prefix(store: BaseStore) -> None:
    store.put(("memories", "alice"), "a", {"n": 1})
    store.put(("memories", "alice", "work"), "b", {"n": 2})
    store.put(("memories", "bob"), "c", {"n": 3})
    store.put(("other",), "d", {"n": 4})
    assert _keys(store.search(("memories", "alice"))) == [
        (("memories", "alice"), "a"),
        (("memories", "alice", "work"), "b"),
    ]
    assert len(store.search(("memories",))) == 3
    assert len(store.search(())) == 4
    assert store.search(("nothing",)) == []


def test_limit_and_offset_page_through_without_overlap(store: BaseStore) -> None:
    ns = ("memories", "alice")
    for i in range(5):
        store.put(ns, f"k{i}", {"i": i})
    pages = [store.search(ns, limit=2, offset=o) for o in (0, 2, 4)]
    assert [len(p) for p in pages] == [2, 2, 1]
    assert _keys([i for p in pages for i in p]) == [(ns, f"k{i}") for i in range(5)]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"color": "red"}, {"a", "c"}),
        ({"color": "red", "size": 1}, {"a"}),
        ({"size": {"$eq": 2}}, {"b"}),
        ({"size": {"$ne": 2}}, {"a", "c"}),
        ({"size": {"$gt": 1}}, {"b", "c"}),
        ({"size": {"$gte": 2}}, {"b", "c"}),
        ({"size": {"$lt": 3}}, {"a", "b"}),
        ({"size": {"$lte": 1}}, {"a"}),
        ({"size": {"$gt": 1, "$lt": 3}}, {"b"}),
        ({"missing": "x"}, set()),
    ],
)
def test_search_filters_on_the_values_keys(store: BaseStore, flt: dict[str, Any], expected: set[str]) -> None:
    ns = ("memories", "alice")
    store.put(ns, "a", {"color": "red", "size": 1})
    store.put(ns, "b", {"color": "blue", "size": 2})
    store.put(ns, "c", {"color": "red", "size": 3})
    assert {i.key for i in store.search(ns, filter=flt)} == expected


def test_list_namespaces_by_prefix_suffix_and_depth(store: BaseStore) -> None:
    for ns in [("memories", "alice"), ("memories", "alice", "work"), ("memories", "bob"), ("docs", "v1")]:
        store.put(ns, "k", {"v": 1})
    assert set(store.list_namespaces()) == {
        ("memories", "alice"),
        ("memories", "alice", "work"),
        ("memories", "bob"),
        ("docs", "v1"),
    }
    assert set(store.list_namespaces(prefix=("memories",))) == {
        ("memories", "alice"),
        ("memories", "alice", "work"),
        ("memories", "bob"),
    }
    assert set(store.list_namespaces(suffix=("v1",))) == {("docs", "v1")}
    assert set(store.list_namespaces(prefix=("memories", "*"))) == {
        ("memories", "alice"),
        ("memories", "alice", "work"),
        ("memories", "bob"),
    }
    assert set(store.list_namespaces(max_depth=1)) == {("memories",), ("docs",)}
    assert set(store.list_namespaces(prefix=("memories",), max_depth=2)) == {
        ("memories", "alice"),
        ("memories", "bob"),
    }
    assert len(store.list_namespaces(limit=2)) == 2
    assert len(store.list_namespaces(limit=10, offset=3)) == 1


def test_batch_answers_each_op_in_order(store: BaseStore) -> None:
    ns = ("memories", "alice")
    store.put(ns, "k", {"v": 1})
    results = store.batch([GetOp(ns, "k"), PutOp(ns, "j", {"v": 2}), SearchOp(ns), GetOp(ns, "none")])
    got, put, found, missing = results
    assert got is not None and got.value == {"v": 1}  # type: ignore[union-attr]
    assert put is None and missing is None
    assert {i.key for i in found} >= {"k"}  # type: ignore[union-attr]


async def test_the_async_methods_do_what_the_sync_ones_do(store: BaseStore) -> None:
    ns = ("memories", "alice")
    await store.aput(ns, "k", {"v": 1})
    item = await store.aget(ns, "k")
    assert item is not None and item.value == {"v": 1}
    assert [i.key for i in await store.asearch(ns, filter={"v": 1})] == ["k"]
    assert await store.alist_namespaces() == [ns]
    await store.adelete(ns, "k")
    assert await store.aget(ns, "k") is None


@pytest.mark.parametrize("bad", [(), ("",), ("a.b",), ("langgraph", "x")])
def test_an_invalid_namespace_is_refused(store: BaseStore, bad: tuple[str, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.put(bad, "k", {"v": 1})


def test_random_ops_agree_with_in_memory_store(empty_backend_memory: Memory, clock: FakeClock) -> None:
    reference, ours = InMemoryStore(), MemstrataStore(empty_backend_memory, now_ms=clock.now_ms)
    rng = random.Random(26)
    spaces = [("memories", "alice"), ("memories", "bob"), ("memories", "alice", "work"), ("notes",)]
    for step in range(60):
        ns, key = rng.choice(spaces), rng.choice(["a", "b", "c"])
        roll = rng.random()
        for s in (reference, ours):
            if roll < 0.5:
                s.put(ns, key, {"step": step % 7, "at": [step]})
            elif roll < 0.65:
                s.delete(ns, key)
        a, b = reference.get(ns, key), ours.get(ns, key)
        assert (a and a.value) == (b and b.value), step
        prefix = ns[: rng.randint(0, len(ns))]
        flt = {"step": {"$gte": 3}} if rng.random() < 0.5 else None
        assert _keys(reference.search(prefix, filter=flt, limit=100)) == _keys(
            ours.search(prefix, filter=flt, limit=100)
        ), step
        # InMemoryStore lists a namespace a get once looked in (its dict of namespaces is a
        # defaultdict); the namespaces that hold items are what both must agree on.
        held = {
            n
            for n in reference.list_namespaces()
            if any(tuple(i.namespace) == n for i in reference.search(n))
        }
        assert held == set(ours.list_namespaces()), step
