"""The facade on PostgreSQL, end to end: selecting the store (URL, setting, CLI option), the whole
pipeline (capture -> L1 atoms -> L2 scenes -> L3 persona) and recall, with every layer in the
database and no file written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memstrata import FakeClock, Memory
from memstrata.cli.main import app
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.interchange import parse_import
from tests.conftest import LOCOMO

pytest.importorskip("psycopg")
from memstrata.stores.postgres.store import PostgresStore

TALK = [
    "I'm Caroline. I moved to Lisbon in 2021 to work as a nurse at the children's hospital.",
    "My dog Biscuit loves the beach at Cascais; we go there every Sunday morning.",
    "I started pottery classes last week and made my first bowl.",
    "My sister Maria lives in Porto and she is a violin teacher.",
    "Please always answer me in short bullet points.",
    "Biscuit is a golden retriever and he is three years old.",
    "On Saturday I ran my first half marathon in Lisbon.",
    "I am learning Portuguese; my teacher says my accent is getting better.",
]


def turns(texts: list[str]) -> list[dict[str, object]]:
    return [
        {
            "role": "user",
            "content": t,
            "name": "Caroline",
            "id": f"m{i}",
            "timestamp": 1_700_000_000_000 + i * 60_000,
        }
        for i, t in enumerate(texts)
    ]


def test_the_whole_pipeline_runs_on_postgres_and_writes_no_file(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMSTRATA_HOME", str(tmp_path / "home"))
    with Memory.open(postgres_url, clock=FakeClock(), embedder=HashingEmbedder(64)) as mem:
        captured = mem.capture(turns(TALK), session_key="chat", user_id="caroline")
        assert len(captured.stored) == len(TALK)
        mem.end_session("chat", user_id="caroline")
        report = mem.run_all()
        status = mem.status()
        atoms = mem.atoms(user_id="caroline", limit=200)
        scenes = mem.scenes(user_id="caroline")
        persona = mem.persona(user_id="caroline")
        found = mem.search("Where does Caroline's sister live?", user_id="caroline", layers=("L1", "L0"))
        recalled = mem.recall("What is the name of my dog?", user_id="caroline")
        first = mem.read_scene(scenes[0].name, user_id="caroline")
    assert report is not None and status.messages == len(TALK)
    assert atoms and status.atoms == len(atoms) and status.unembedded == 0
    assert scenes and sorted(i for e in scenes for i in e.atom_ids) == sorted(a.id for a in atoms)
    assert first.body.strip() and first.summary == scenes[0].summary
    assert persona is not None and "Caroline" in persona.body
    assert persona.navigation.count("- path: scene_blocks/") == len(scenes)
    assert found.strategy == "hybrid" and any("Porto" in h.content for h in found.hits[:5])
    assert "<user-persona>" in recalled.system_context  # the dog is there, or in the memories
    assert "Biscuit" in recalled.system_context + recalled.prepend_context
    assert not (tmp_path / "home").exists()  # every layer is in the database

    with Memory.open(postgres_url, read_only=True, embedder=None) as reader:  # a second process
        assert [a.id for a in reader.atoms(user_id="caroline", limit=200)] == [a.id for a in atoms]
        assert reader.persona(user_id="caroline") == persona


def test_scene_and_persona_edits_on_postgres_keep_backups_that_read_back(postgres_url: str) -> None:
    with Memory.open(postgres_url, clock=FakeClock(), embedder=HashingEmbedder(64)) as mem:
        who: dict[str, Any] = {"user_id": "edith"}
        mem.write_scene("garden.md", "# Garden\n- Edith grows tomatoes.", summary="garden", **who)
        mem.write_scene("garden.md", "# Garden\n- Edith grows roses.", **who)
        mem.delete_scene("scene_blocks/garden.md", **who)
        backups = mem.scene_backups("garden.md", **who)
        bodies = [mem.read_scene_backup("garden.md", b.id, **who).body for b in backups]
        mem.write_persona("Edith gardens.", **who)
        mem.write_persona("Edith gardens and paints.", **who)
        persona_backups = mem.persona_backups(**who)
        before = mem.read_persona_backup(persona_backups[0].id, **who)
    assert [b.id.startswith("scenes-") for b in backups] == [True, True]
    assert bodies == ["# Garden\n- Edith grows roses.", "# Garden\n- Edith grows tomatoes."]  # newest first
    assert len(persona_backups) == 1 and before.body.strip() == "Edith gardens."
    assert before.updated == persona_backups[0].made_at


def test_store_url_setting_selects_postgres(postgres_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMSTRATA_STORE__URL", postgres_url)
    with Memory.open(embedder=None) as mem:
        mem.capture(turns(TALK[:1]), session_key="s")
    store = PostgresStore(postgres_url, read_only=True)
    try:
        assert store.messages.count(None) == 1
    finally:
        store.close()


def test_the_cli_store_option_selects_postgres(postgres_url: str, tmp_path: Path) -> None:
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps([{"sessionKey": "s", "conversations": [turns(TALK[:3])]}]))
    env = {"MEMSTRATA_EMBEDDING__PROVIDER": "none", "MEMSTRATA_HOME": str(tmp_path / "home")}
    runner = CliRunner()
    done = runner.invoke(app, ["--store", postgres_url, "import", str(seed), "--no-process"], env=env)
    assert done.exit_code == 0, done.output
    shown = runner.invoke(app, ["--store", postgres_url, "inspect", "l0", "--format", "json"], env=env)
    assert shown.exit_code == 0, shown.output
    assert [m["content"] for m in json.loads(shown.stdout)] == TALK[:3]
    both = runner.invoke(app, ["--store", postgres_url, "--data-dir", str(tmp_path), "status"], env=env)
    assert both.exit_code != 0 and "not both" in both.output


def test_a_locomo_conversation_gets_scenes_and_a_persona_on_postgres(postgres_url: str) -> None:
    if not LOCOMO.exists():
        pytest.skip("LoCoMo dev set not present")
    sample = json.loads(LOCOMO.read_text())[:1]
    with Memory.open(postgres_url, embedder=None) as mem:
        mem.import_sessions(parse_import(sample, "locomo"))
        scenes = mem.scenes(user_id="conv-26")
        atoms = mem.atoms(user_id="conv-26", limit=2000)
        persona = mem.persona(user_id="conv-26")
    assert 3 <= len(scenes) <= 15
    assert sorted(i for e in scenes for i in e.atom_ids) == sorted(a.id for a in atoms)
    assert persona is not None and "Caroline" in persona.body and "Melanie" in persona.body
