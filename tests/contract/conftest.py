"""The stores every contract test runs against, one parameter per backend.

Each fixture is named for the state it gives: an empty store of every part. A backend added later
(PostgreSQL) adds its parameter here and the whole suite runs on it too.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata.ports import PersonaStore, SceneStore, Store
from memstrata.stores.files import FilePersonaStore, FileSceneStore
from memstrata.stores.sqlite.store import SqliteStore


@pytest.fixture(params=["sqlite"])
def empty_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """An empty store of L0, L1, vectors, pipeline state and scene membership."""
    store = SqliteStore(tmp_path / "data")
    yield store
    store.close()


@pytest.fixture(params=["files"])
def empty_scene_store(request: pytest.FixtureRequest, tmp_path: Path) -> SceneStore:
    """An empty L2 store (scene documents, their index, backups)."""
    return FileSceneStore(tmp_path / "profiles", keep=3)


@pytest.fixture(params=["files"])
def empty_persona_store(request: pytest.FixtureRequest, tmp_path: Path) -> PersonaStore:
    """An empty L3 store (the persona document and its backups)."""
    return FilePersonaStore(tmp_path / "profiles", keep=2)
