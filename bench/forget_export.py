"""What forgetting a tenant and exporting a memory cost, on the LoCoMo dev set (one tenant per
conversation), against importing the same data in the same run.

    python bench/forget_export.py [DATA.json]

Imports the file (hashing embedder, offline pipeline to L3), exports it in both layouts and
imports each export into an empty directory (checking every layer is identical), then forgets the
first conversation's tenant and scans every file of the data directory for strings only that
tenant's messages hold. Prints one line.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from memstrata import AsyncMemory, FakeClock
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.interchange import ImportSession, parse_import

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data" / "locomo" / "locomo-dev.json"


async def open_memory(home: Path) -> AsyncMemory:
    return await AsyncMemory.open(home, clock=FakeClock(), embedder=HashingEmbedder(256))


async def layers(mem: AsyncMemory) -> list[object]:
    out: list[object] = []
    for t in await mem.tenants():
        who: dict[str, Any] = {"user_id": t.user_id, "agent_id": t.agent_id}
        out.append(
            sorted((replace(m, seq=0) for m in await mem.messages(**who, limit=1000)), key=lambda m: m.id)
        )
        atoms = await mem.atoms(**who, include_superseded=True, limit=1000)
        out.append(sorted((replace(a, seq=0) for a in atoms), key=lambda a: a.id))
        out.append([await mem.read_scene(e.name, **who) for e in await mem.scenes(**who)])
        p = await mem.persona(**who)
        out.append((p.body, p.navigation) if p else None)
    return out


# Words memstrata writes itself (scene headings, notes): not the tenant's.
OWN_WORDS = "preferences profile timeline instructions memories navigation persona"


def only_in(sessions: list[ImportSession], user: str) -> list[bytes]:
    """Words of 9+ letters said in ``user``'s conversation that occur nowhere in the others' (not
    even inside a longer word) nor in what memstrata writes around them."""
    mine = {
        w.lower()
        for s in sessions
        if s.tenant.user_id == user
        for m in s.messages
        for w in re.findall(r"[A-Za-z]{9,}", m.content)
    }
    others = " ".join(m.content.lower() for s in sessions if s.tenant.user_id != user for m in s.messages)
    others += " " + OWN_WORDS
    return [w.encode() for w in sorted(mine) if w not in others]


def scan(root: Path, needles: list[bytes]) -> int:
    return sum(1 for p in root.rglob("*") if p.is_file() for n in needles if n in p.read_bytes().lower())


def size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.glob("memstrata.db*"))


async def main(sessions: list[ImportSession]) -> int:
    tmp = Path(tempfile.mkdtemp(prefix="bench-forget-"))
    mem = await open_memory(tmp / "mem")
    t0 = time.perf_counter()
    await mem.import_sessions(sessions)
    imported = time.perf_counter() - t0
    original = await layers(mem)
    timings, identical = {}, {}
    for layout in ("jsonl", "tdai"):
        t0 = time.perf_counter()
        await mem.export(tmp / f"out-{layout}", format=layout)
        timings[layout] = time.perf_counter() - t0
        back = await open_memory(tmp / f"back-{layout}")
        await back.import_export(tmp / f"out-{layout}")
        identical[layout] = await layers(back) == original
        await back.close()
    user = sessions[0].tenant.user_id
    needles = [*only_in(sessions, user), user.encode()]
    before, db_before = scan(tmp / "mem", needles), size(tmp / "mem")
    t0 = time.perf_counter()
    report = await mem.forget(user_id=user)
    forgot = time.perf_counter() - t0
    after, db_after = scan(tmp / "mem", needles), size(tmp / "mem")
    await mem.close()
    e = report.erased
    print(
        f"forget_export: import {imported:.1f} s; export jsonl {timings['jsonl']:.2f} s (x{timings['jsonl'] / imported:.3f}), "
        f"tdai {timings['tdai']:.2f} s, round trip identical jsonl={identical['jsonl']} tdai={identical['tdai']}; "
        f"forget {user}: {forgot:.2f} s (x{forgot / imported:.3f} of import), {e.messages} messages, {e.atoms} atoms, "
        f"{e.vectors} vectors, {e.mirror_lines} mirror lines, {report.files} files; db {db_before / 1e6:.1f} -> "
        f"{db_after / 1e6:.1f} MB; {len(needles)} distinctive strings: {before} file hits before, {after} after"
    )
    return 0 if after == 0 and all(identical.values()) else 1


if __name__ == "__main__":
    data = Path(sys.argv[1]) if len(sys.argv) > 1 else DATA
    sys.exit(asyncio.run(main(parse_import(json.loads(data.read_text()), None))))
