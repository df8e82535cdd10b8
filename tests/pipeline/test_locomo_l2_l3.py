"""After an offline import of the first two LoCoMo conversations: 3-15 scenes per tenant, every
atom in exactly one scene's index entry, and a persona that names the people."""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.interchange import parse_import
from tests.conftest import LOCOMO


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, float]:
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    home = tmp_path_factory.mktemp("locomo") / "data"
    samples = json.loads(LOCOMO.read_text())[:2]
    with Memory.open(home, embedder=None) as mem:
        for s in parse_import(samples):
            t = s.tenant
            mem.capture(
                list(s.messages), session_key=s.session_key, session_id=s.session_id, user_id=t.user_id
            )
        for s in parse_import(samples):
            mem.end_session(s.session_key, user_id=s.tenant.user_id)
        started = time.perf_counter()
        mem.run_all()
        return home, time.perf_counter() - started


def speakers(sample_index: int) -> set[str]:
    conv = json.loads(LOCOMO.read_text())[sample_index]["conversation"]
    return {conv["speaker_a"], conv["speaker_b"]}


@pytest.mark.parametrize(("index", "user"), [(0, "conv-26"), (1, "conv-30")])
def test_each_tenant_has_3_to_15_scenes_holding_every_atom_once(
    imported: tuple[Path, float], index: int, user: str
) -> None:
    home, _ = imported
    with Memory.open(home, embedder=None) as mem:
        scenes = mem.scenes(user_id=user)
        atoms = mem.atoms(user_id=user, limit=1000)
        assert 3 <= len(scenes) <= 15
        listed = [i for e in scenes for i in e.atom_ids]
        assert sorted(listed) == sorted(a.id for a in atoms)  # every atom, each in one scene
        for e in scenes:
            assert e.atom_ids and re.fullmatch(r"[a-z0-9_-]+\.md", e.name)
            scene = mem.read_scene(f"scene_blocks/{e.name}", user_id=user)
            assert scene.summary == e.summary and scene.body.startswith("# ")
        persona = mem.persona(user_id=user)
        assert persona is not None
        assert all(name in persona.body for name in speakers(index))
        assert persona.navigation.count("- path: scene_blocks/") == len(scenes)


def test_l2_and_l3_of_the_import_are_fast(imported: tuple[Path, float]) -> None:
    _, seconds = imported
    assert seconds < 30  # about 1 s on a laptop core; generous for a shared CI machine
