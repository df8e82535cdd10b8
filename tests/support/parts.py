"""Memories assembled by hand from real stores and test engines (what ``wiring.assemble`` does from
settings)."""

from __future__ import annotations

from pathlib import Path

from memstrata.clock import FakeClock
from memstrata.memory import AsyncMemory
from memstrata.ports import Deduplicator, Extractor, UpperLayers
from memstrata.retrieval.vectors import VectorState
from memstrata.settings import load_settings
from memstrata.stores.sqlite.store import SqliteStore
from memstrata.wiring import Parts


def memory_from(
    home: Path,
    clock: FakeClock,
    extractor: Extractor,
    deduplicator: Deduplicator,
    upper: UpperLayers | None = None,
) -> AsyncMemory:
    """An AsyncMemory on a real SQLite store in ``home``, without vectors; L1 only unless
    ``upper`` is given."""
    store = SqliteStore(home)
    parts = Parts(store, clock, VectorState(store.index, None), extractor, deduplicator, upper)
    return AsyncMemory(parts, load_settings(home))
