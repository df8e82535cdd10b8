"""Taking memory elsewhere: export then import into an empty directory gives identical messages,
atoms (ids, versions, links, pins, expiry), scenes, scene membership and personas, in both
layouts; and the CLI does the same."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from memstrata import AsyncMemory, FakeClock
from memstrata.cli.main import app
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.errors import InputError
from memstrata.models import Tenant

OTHER = Tenant("lena", "coach")
LATER = 1_800_000_000_000  # the importing memory lives later: store times must come from the export


async def rich_memory(home: Path) -> AsyncMemory:
    """The demo history (one tenant) and a second tenant, consolidated into scenes and personas,
    with an edit (two versions), a pin, a time to live, a deleted message and a swept source."""
    mem = await AsyncMemory.open(home, clock=FakeClock(), embedder=HashingEmbedder(64))
    sample = json.loads(files("memstrata.demo").joinpath("sample.json").read_text())
    await mem.import_seed(sample, process=True)
    turns = [
        {"role": "user", "name": "Lena", "content": "I run 10 km every Sunday morning.", "id": "l1"},
        {"role": "assistant", "content": "Great habit!\n\n```py\nprint('x')\n```", "id": "l2"},
        {"role": "user", "name": "Lena", "content": "My coach says I should stretch more.", "id": "l3"},
    ]
    await mem.capture(turns, session_key="train", session_id="train-1", **_who(OTHER))
    await mem.capture(
        [{"role": "user", "name": "Lena", "content": "I am training for the Berlin marathon.", "id": "l4"}],
        session_key="train",
        session_id="train-2",
        **_who(OTHER),
    )
    await mem.end_session("train", **_who(OTHER))
    await mem.run_all()
    user = sample["sessions"][0]["userId"]
    atoms = await mem.atoms(user_id=user)
    await mem.update_atom(atoms[0].id, content=atoms[0].content + " (confirmed)", user_id=user)
    await mem.pin_atom(atoms[1].id, user_id=user)
    await mem.set_atom_ttl(atoms[2].id, expires_at=LATER + 10**10, user_id=user)  # alive in both
    await mem.delete_messages(["l3"], **_who(OTHER))
    await mem.run_all()
    return mem


def _who(t: Tenant) -> dict[str, Any]:
    return {"user_id": t.user_id, "agent_id": t.agent_id}


async def layers(mem: AsyncMemory) -> dict[Tenant, dict[str, Any]]:
    """Every layer of every tenant, store-assigned seqs left out (an import assigns its own)."""
    out: dict[Tenant, dict[str, Any]] = {}
    for t in await mem.tenants():
        messages = sorted(
            (replace(m, seq=0) for m in await mem.messages(**_who(t), limit=1000)), key=lambda m: m.id
        )
        atoms = await mem.atoms(**_who(t), include_superseded=True, limit=1000)
        entries = await mem.scenes(**_who(t))
        persona = await mem.persona(**_who(t))
        out[t] = {
            "messages": messages,
            "atoms": sorted((replace(a, seq=0) for a in atoms), key=lambda a: a.id),
            "scenes": [await mem.read_scene(e.name, **_who(t)) for e in entries],
            "index": [(replace(e, atom_ids=()), frozenset(e.atom_ids)) for e in entries],
            "persona": (persona.body, persona.navigation) if persona else None,
        }
    return out


@pytest.mark.parametrize("layout", ["jsonl", "tdai"])
async def test_export_then_import_into_an_empty_directory_is_identical(tmp_path: Path, layout: str) -> None:
    mem = await rich_memory(tmp_path / "a")
    try:
        original = await layers(mem)
        report = await mem.export(tmp_path / "out", format=layout)
    finally:
        await mem.close()
    assert {Tenant("maya"), OTHER} <= set(original) and report.tenants == tuple(sorted(original, key=str))
    maya = original[Tenant("maya")]
    assert any(a.superseded_by for a in maya["atoms"]) and any(a.pinned for a in maya["atoms"])
    assert any(a.expires_at for a in maya["atoms"]) and maya["scenes"] and maya["persona"]
    assert report.messages == sum(len(v["messages"]) for v in original.values())
    assert report.atoms == sum(len(v["atoms"]) for v in original.values())
    fresh = await AsyncMemory.open(tmp_path / "b", clock=FakeClock(LATER), embedder=HashingEmbedder(64))
    try:
        done = await fresh.import_export(tmp_path / "out")
        assert done.skipped == () and done.messages_stored == report.messages
        assert await layers(fresh) == original
        again = await fresh.import_export(tmp_path / "out")  # idempotent
        assert again.messages_stored == 0 and again.atoms_stored == 0
        await fresh.run_all()  # nothing is extracted or consolidated again
        assert await layers(fresh) == original
    finally:
        await fresh.close()


async def test_the_tdai_layout_is_read_by_the_tdai_import_too(tmp_path: Path) -> None:
    mem = await rich_memory(tmp_path / "a")
    try:
        original = await layers(mem)
        await mem.export(tmp_path / "out", format="tdai")
        one = await mem.export(tmp_path / "one", format="jsonl", user_id=OTHER.user_id)
        assert one.tenants == (OTHER,)
    finally:
        await mem.close()
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "conversations",
        "memstrata-export.json",
        "profiles",
        "records",
    ]
    fresh = await AsyncMemory.open(tmp_path / "b", clock=FakeClock(LATER), embedder=HashingEmbedder(64))
    try:
        await fresh.import_tdai(tmp_path / "out")
        assert await layers(fresh) == original
    finally:
        await fresh.close()


async def test_export_refuses_a_folder_that_holds_files_and_an_unknown_format(tmp_path: Path) -> None:
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "keep.txt").write_text("mine")
    mem = await AsyncMemory.open(tmp_path / "a", clock=FakeClock(), embedder=None)
    try:
        with pytest.raises(InputError, match="not an empty folder"):
            await mem.export(tmp_path / "busy")
        with pytest.raises(InputError, match="unknown export format"):
            await mem.export(tmp_path / "x", format="csv")
    finally:
        await mem.close()
    assert (tmp_path / "busy" / "keep.txt").read_text() == "mine"


def test_the_cli_exports_and_imports_back(tmp_path: Path) -> None:
    runner = CliRunner()
    seed = tmp_path / "seed.json"
    seed.write_text(files("memstrata.demo").joinpath("sample.json").read_text())
    a, b, out = str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "out")
    env = {"MEMSTRATA_EMBEDDING__PROVIDER": "hashing"}
    assert runner.invoke(app, ["--data-dir", a, "import", str(seed)], env=env).exit_code == 0
    done = runner.invoke(app, ["--data-dir", a, "export", "--format", "jsonl", "--out", out], env=env)
    assert done.exit_code == 0 and "exported 1 tenants" in done.output
    back = runner.invoke(app, ["--data-dir", b, "import", "--from-export", out, "--no-process"], env=env)
    assert back.exit_code == 0, back.output
    listed = [
        runner.invoke(
            app,
            ["--data-dir", d, "inspect", "l1", "--history", "--user", "maya", "--format", "json"],
            env=env,
        )
        for d in (a, b)
    ]
    first, second = (json.loads(r.output) for r in listed)
    assert first and [{**x, "seq": 0} for x in first] == [{**x, "seq": 0} for x in second]
