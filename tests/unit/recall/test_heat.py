"""Scene heat from recalls: noted per recall, folded into the scene files in batches."""

from __future__ import annotations

from pathlib import Path

from memstrata.models import Scene, SceneEntry, Tenant
from memstrata.recall.heat import HeatLedger, warm_scenes
from memstrata.stores.files import FileSceneStore

T = Tenant("ann")


def test_the_ledger_hands_out_notes_once_they_are_old_enough() -> None:
    ledger = HeatLedger()
    ledger.note(T, ["a1"], now=1_000)
    ledger.note(T, [], now=1_000)  # a recall that showed no atom notes nothing
    ledger.note(T, ["a2", "a3"], now=5_000)
    assert ledger.due(now=5_000, after_ms=10_000) == []
    assert ledger.due(now=11_000, after_ms=10_000) == [T]
    assert ledger.due(now=2_000, after_ms=0) == [T]
    assert ledger.take(T) == [("a1",), ("a2", "a3")]
    assert ledger.take(T) == [] and ledger.due(now=99_000, after_ms=0) == []


def test_each_recall_warms_each_scene_it_touched_by_one(tmp_path: Path) -> None:
    store = FileSceneStore(tmp_path)
    for name in ("work.md", "pets.md", "food.md"):
        store.save(T, Scene(name, name, 3, 0, 0, "# " + name))
    store.save_index(
        T,
        [
            SceneEntry("food.md", "f", 3, 0, 0, ("a9",)),
            SceneEntry("pets.md", "p", 3, 0, 0, ("a3",)),
            SceneEntry("work.md", "w", 3, 0, 0, ("a1", "a2")),
        ],
    )
    added = warm_scenes(store, T, [("a1", "a2"), ("a1", "a3"), ("unknown",)])
    assert added == {"work.md": 2, "pets.md": 1}
    assert {s.name: s.heat for s in store.load(T)} == {"food.md": 3, "pets.md": 4, "work.md": 5}
    assert {e.name: e.heat for e in store.index(T)} == {"food.md": 3, "pets.md": 4, "work.md": 5}
