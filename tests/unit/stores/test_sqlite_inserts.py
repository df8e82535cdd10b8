"""Inserts into the embedded store skip a repeated id only: a row that breaks another constraint
raises, and its batch is written not at all (``INSERT OR IGNORE`` used to drop it silently, and
capture then counted it as a duplicate)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from memstrata.errors import StoreError
from memstrata.models import Atom, AtomType, Layer, Message, Role, Tenant
from memstrata.stores.sqlite.store import SqliteStore

T = Tenant("ann")
# The store raises the constraint failure, as sqlite3's error or wrapped in a StoreError.
REFUSED = (sqlite3.IntegrityError, StoreError)


@pytest.fixture
def empty_store(tmp_path: Path) -> Iterator[SqliteStore]:
    store = SqliteStore(tmp_path / "data")
    yield store
    store.close()


def message(mid: str) -> Message:
    return Message(mid, T, "s", "s", Role.USER, f"text of {mid}", 1_000, 1_000)


def atom(aid: str) -> Atom:
    return Atom(aid, T, AtomType.PERSONA, f"fact {aid}", 50, "misc", ("m1",), {}, "s", 10, 10)


def test_a_message_breaking_not_null_raises_instead_of_passing_for_a_duplicate(
    empty_store: SqliteStore,
) -> None:
    broken = replace(message("m2"), session_id=None)  # type: ignore[arg-type]
    with pytest.raises(REFUSED, match="NOT NULL constraint failed"):
        empty_store.messages.append([(message("m1"), "one"), (broken, "two")])
    assert empty_store.messages.count(T) == 0  # the whole batch rolled back


def test_a_repeated_message_id_is_still_skipped(empty_store: SqliteStore) -> None:
    assert len(empty_store.messages.append([(message("m1"), "one")])) == 1
    assert empty_store.messages.append([(message("m1"), "one")]) == []


def test_an_atom_breaking_not_null_raises_and_the_cursor_stays(empty_store: SqliteStore) -> None:
    broken = replace(atom("a2"), content=None)  # type: ignore[arg-type]
    with pytest.raises(REFUSED, match="NOT NULL constraint failed"):
        empty_store.atoms.commit(T, [(atom("a1"), "one"), (broken, "two")], {}, ("s", 5))
    assert empty_store.atoms.count(T) == 0
    assert empty_store.pipeline.sessions() == []


def test_a_retried_atom_is_skipped(empty_store: SqliteStore) -> None:
    assert len(empty_store.atoms.commit(T, [(atom("a1"), "one")], {}, ("s", 5))) == 1
    assert empty_store.atoms.commit(T, [(atom("a1"), "one")], {}, ("s", 5)) == []


def test_a_vector_is_replaced_in_place(empty_store: SqliteStore) -> None:
    [m] = empty_store.messages.append([(message("m1"), "one")])
    empty_store.index.put_vectors(T, Layer.L0, [m.seq], np.array([[1.0, 0.0]], dtype=np.float32))
    empty_store.index.put_vectors(T, Layer.L0, [m.seq], np.array([[0.0, 1.0]], dtype=np.float32))
    got = empty_store.index.get_vectors(T, Layer.L0, [m.seq])
    assert got[m.seq].tolist() == [0.0, 1.0]
    assert empty_store.index.count_missing_vectors(Layer.L0) == 0
    empty_store.index.reset_vectors("model-b")
    empty_store.index.reset_vectors("model-c")
    assert empty_store.index.embedding_model() == "model-c"
