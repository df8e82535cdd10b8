"""The stores every contract test runs against, one parameter per backend.

Each fixture is named for the state it gives: an empty store of every part, on a real SQLite file
(and profile folders) in ``tmp_path``, or on a fresh database of the session's real PostgreSQL
(see ``postgres_url`` in tests/conftest.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.ports import PersonaStore, SceneStore, Store
from memstrata.stores.files import FilePersonaStore, FileSceneStore
from memstrata.stores.sqlite.store import SqliteStore


def _postgres(request: pytest.FixtureRequest) -> Iterator[Store]:
    url = request.getfixturevalue("postgres_url")  # first: it skips when the extra is missing
    from memstrata.stores.postgres.store import PostgresStore

    store = PostgresStore(url)
    yield store
    store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store of L0, L1, vectors, pipeline state and scene membership."""
    if request.param == "postgres":
        yield from _postgres(request)
        return
    store = SqliteStore(tmp_path / "data")
    yield store
    store.close()


@pytest.fixture(params=["files", "postgres"])
def empty_scene_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SceneStore]:
    """An empty L2 store (scene documents, their index, backups)."""
    if request.param == "postgres":
        for store in _postgres(request):
            yield store.scene_store(keep=3)  # type: ignore[attr-defined]
        return
    yield FileSceneStore(tmp_path / "profiles", keep=3)


@pytest.fixture(params=["files", "postgres"])
def empty_persona_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[PersonaStore]:
    """An empty L3 store (the persona document and its backups)."""
    if request.param == "postgres":
        for store in _postgres(request):
            yield store.persona_store(keep=2)  # type: ignore[attr-defined]
        return
    yield FilePersonaStore(tmp_path / "profiles", keep=2)
