"""Forgetting a person is provable: after ``forget``, a byte scan of the whole data directory
(database, WAL, mirrors, scene and persona files and their backups, every file and file name)
finds none of the tenant's distinctive strings; search and recall for the tenant find nothing;
other tenants' rows, vectors, pipeline state, mirror lines and files are byte-for-byte as before."""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.models import AtomFilter, Layer, MessageFilter, Tenant
from memstrata.ports import Store

ALICE = "alice-Qx7v"  # the user to forget: the id itself must go too
SECRETS = ["Zanzibarquux", "Vexmorrow", "Plinkertonia", "Quorbital", "Snargleton"]
BOB = "bob"
BOB_WORDS = ["Glimmerfax", "Tordwick"]


def alice_turns(agent: str, n: int) -> list[dict[str, Any]]:
    words = SECRETS if agent == "default" else ["Quorbital", "Snargleton"]
    return [
        {
            "role": "user",
            "name": "Alice",
            "content": f"I am allergic to {words[0]} and my sister is called {words[1]}.",
        },
        {"role": "assistant", "content": f"Noted: no {words[0]} for you."},
        {
            "role": "user",
            "name": "Alice",
            "content": f"I work as a baker in {words[-1]} since 2019, round {n}.",
        },
        {"role": "assistant", "content": "Baking sounds lovely."},
    ]


def bob_turns(n: int) -> list[dict[str, Any]]:
    return [
        {"role": "user", "name": "Bob", "content": f"I live in {BOB_WORDS[0]} and I love hiking, visit {n}."},
        {"role": "assistant", "content": "Hiking is great."},
        {"role": "user", "name": "Bob", "content": f"My dog is called {BOB_WORDS[1]}."},
    ]


@pytest.fixture
async def mem(tmp_path: Path) -> AsyncIterator[AsyncMemory]:
    m = await AsyncMemory.open(tmp_path / "d", clock=FakeClock(), embedder=HashingEmbedder(64))
    yield m
    await m.close()


async def populate(mem: AsyncMemory, clock: FakeClock) -> None:
    """Two rounds of history for three tenants (alice's two agents, bob), each round ending in L2
    and L3 runs (so scene and persona backups exist); an edit (versions) and a delete (a mirror
    rewrite) on the way, and a recall (scene heat written back)."""
    for n in range(2):
        for agent in ("default", "helper"):
            await mem.capture(
                alice_turns(agent, n), session_key=f"chat-{SECRETS[2]}", user_id=ALICE, agent_id=agent
            )
            await mem.end_session(f"chat-{SECRETS[2]}", user_id=ALICE, agent_id=agent)
        await mem.capture(bob_turns(n), session_key="walks", user_id=BOB)
        await mem.end_session("walks", user_id=BOB)
        await mem.run_all()
        clock.advance(3600)
    baker = next(a for a in await mem.atoms(user_id=ALICE) if "baker" in a.content)
    await mem.update_atom(baker.id, content=f"Alice bakes sourdough in {SECRETS[3]}.", user_id=ALICE)
    first = (await mem.messages(user_id=ALICE))[0]
    await mem.delete_messages([first.id], user_id=ALICE)
    await mem.recall(f"what is Alice allergic to? {SECRETS[0]}", user_id=ALICE)
    await mem.run_all()


def needles() -> list[bytes]:
    words = [*SECRETS, ALICE]
    return sorted({w.encode() for w in words} | {w.lower().encode() for w in words})


def scan(root: Path) -> list[str]:
    """Every file (hidden ones, the database, its WAL and SHM) and every name under ``root`` that
    holds one of the needles."""
    found: list[str] = []
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            if any(n in name.encode() or n in name.lower().encode() for n in needles()):
                found.append(f"name: {os.path.join(folder, name)}")
        for name in files:
            data = Path(folder, name).read_bytes()
            found += [
                f"{os.path.relpath(os.path.join(folder, name), root)}: {n.decode()}"
                for n in needles()
                if n in data
            ]
    return found


def snapshot(mem: AsyncMemory, home: Path, tenant: Tenant) -> dict[str, Any]:
    """Everything of ``tenant``: rows, vectors, search answers, state, mirror lines, files."""
    store: Store = mem._store
    messages = store.messages.list(tenant, MessageFilter(), limit=1000)
    atoms = store.atoms.list(tenant, AtomFilter(include_superseded=True), limit=1000)
    vectors = {
        layer: {
            k: v.tobytes() for k, v in store.index.get_vectors(tenant, layer, [r.seq for r in rows]).items()
        }
        for layer, rows in ((Layer.L0, messages), (Layer.L1, atoms))
    }
    words = [w.lower() for w in BOB_WORDS]
    mirrors = {
        str(p.relative_to(home)): [ln for ln in p.read_bytes().splitlines() if _of(ln) == tenant]
        for p in sorted([*home.glob("conversations/*.jsonl"), *home.glob("records/*.jsonl")])
    }
    profile = home / "profiles" / tenant.folder
    files = {str(p.relative_to(profile)): p.read_bytes() for p in sorted(profile.rglob("*")) if p.is_file()}
    return {
        "messages": messages,
        "atoms": atoms,
        "vectors": vectors,
        # what keyword search finds (its BM25 scores follow the corpus, which lost a tenant)
        "keyword": sorted(s.seq for s in store.index.keyword(tenant, MessageFilter(), words, 50)),
        "members": store.members.get(tenant),
        "sessions": [s for s in store.pipeline.sessions() if s.tenant == tenant],
        "state": store.pipeline.tenant(tenant),
        "mirrors": {k: v for k, v in mirrors.items() if v},
        "files": files,
    }


def _of(line: bytes) -> Tenant:
    doc = json.loads(line)
    return Tenant(doc["user_id"], doc["agent_id"])


async def test_after_forget_no_byte_of_the_person_is_left_and_others_are_untouched(tmp_path: Path) -> None:
    home, clock = tmp_path / "d", FakeClock()
    mem = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    await populate(mem, clock)
    before = scan(home)
    # the scan sees the person everywhere before: the database (or its WAL), both mirrors, the
    # scene and persona files and their backups
    hit_where = {part for line in before for part in Path(line.split(":")[0]).parts}
    assert {"conversations", "records", "profiles", ".backup"} <= hit_where, before
    assert any(line.startswith("memstrata.db") for line in before), before
    bob = snapshot(mem, home, Tenant(BOB))
    assert bob["files"] and bob["vectors"][Layer.L1] and bob["mirrors"]
    alice_messages = len(await mem.messages(user_id=ALICE)) + len(
        await mem.messages(user_id=ALICE, agent_id="helper")
    )
    alice_atoms = 0
    for agent in ("default", "helper"):
        alice_atoms += len(await mem.atoms(user_id=ALICE, agent_id=agent, include_superseded=True))

    report = await mem.forget(user_id=ALICE)

    assert report.tenants == (Tenant(ALICE, "default"), Tenant(ALICE, "helper"))
    e = report.erased
    assert (e.messages, e.atoms) == (alice_messages, alice_atoms)
    assert e.vectors == alice_messages + alice_atoms and e.mirror_lines == alice_messages + alice_atoms
    assert e.sessions == 2 and e.tenant_states == 2 and e.scene_members > 0 and report.files > 0
    assert report.reclaimed and report.notes == ()
    assert scan(home) == []
    assert not (home / "profiles" / Tenant(ALICE).folder).exists()
    for agent in ("default", "helper"):
        found = await mem.search(SECRETS[0], user_id=ALICE, agent_id=agent, layers=("L0", "L1"))
        assert len(found) == 0
        recalled = await mem.recall(f"{SECRETS[0]} {SECRETS[1]} baker", user_id=ALICE, agent_id=agent)
        assert recalled.hits == () and not any(
            s in recalled.system_context + recalled.prepend_context for s in SECRETS
        )
        assert await mem.persona(user_id=ALICE, agent_id=agent) is None
        assert await mem.scenes(user_id=ALICE, agent_id=agent) == []
    status = await mem.status()
    assert all(s.tenant.user_id != ALICE for s in status.sessions) and all(
        t.tenant.user_id != ALICE for t in status.tenants
    )
    assert ALICE not in {t.user_id for t in await mem.tenants()}
    assert snapshot(mem, home, Tenant(BOB)) == bob
    assert len(await mem.search(BOB_WORDS[0], user_id=BOB)) > 0
    assert mem._store.check() == []  # the mirrors still agree with the tables
    await mem.close()
    reopened = await AsyncMemory.open(home, clock=clock, embedder=HashingEmbedder(64))
    try:
        await reopened.run_all()
        assert scan(home) == []
        assert snapshot(reopened, home, Tenant(BOB)) == bob
    finally:
        await reopened.close()


async def test_forgetting_one_agent_keeps_the_users_other_agents(mem: AsyncMemory, tmp_path: Path) -> None:
    clock: Any = mem._clock
    await populate(mem, clock)
    default = snapshot(mem, tmp_path / "d", Tenant(ALICE))
    report = await mem.forget(user_id=ALICE, agent_id="helper")
    assert report.tenants == (Tenant(ALICE, "helper"),) and report.erased.messages > 0
    assert await mem.messages(user_id=ALICE, agent_id="helper") == []
    assert snapshot(mem, tmp_path / "d", Tenant(ALICE)) == default
    again = await mem.forget(user_id=ALICE, agent_id="helper")  # idempotent: nothing left to remove
    assert again.erased.messages == 0 and again.files == 0


async def test_a_reader_holding_the_wal_is_reported_not_ignored(mem: AsyncMemory, tmp_path: Path) -> None:
    await mem.capture([{"role": "user", "content": f"I love {SECRETS[0]}."}], user_id=ALICE)
    reader = sqlite3.connect(tmp_path / "d" / "memstrata.db")
    try:
        reader.execute("BEGIN")
        reader.execute("SELECT COUNT(*) FROM messages").fetchone()  # a read snapshot pins the WAL
        report = await mem.forget(user_id=ALICE)
        assert report.erased.messages == 1
        assert not report.reclaimed and "could not be truncated" in report.notes[0]
    finally:
        reader.close()
    assert (await mem.forget(user_id=ALICE)).reclaimed  # the next forget finishes the job
    assert scan(tmp_path / "d") == []


async def test_a_forget_cut_short_is_finished_by_running_it_again(mem: AsyncMemory, tmp_path: Path) -> None:
    clock: Any = mem._clock
    await populate(mem, clock)
    upper: Any = mem._upper
    erase = upper.scenes.erase

    def fail(tenant: Tenant) -> int:
        raise OSError("the machine died here")

    upper.scenes.erase = fail  # the rows and mirror lines are gone, the profile is not
    with pytest.raises(OSError, match="machine died"):
        await mem.forget(user_id=ALICE)
    assert await mem.messages(user_id=ALICE) == [] and scan(tmp_path / "d") != []
    upper.scenes.erase = erase
    report = await mem.forget(user_id=ALICE)  # the profile folders still name the tenants
    assert set(report.tenants) == {Tenant(ALICE), Tenant(ALICE, "helper")} and report.files > 0
    assert scan(tmp_path / "d") == []
