"""SIGKILL while ``remember`` runs, then restart: every note acknowledged before the kill (its
call returned) is there, once, as an atom with its source message, and search finds it first.

A child process (``_remember_child.py``) remembers notes in a loop and prints each one after its
call returns; the parent reads those acknowledgements, kills the child with SIGKILL at a chosen
point (after some acknowledgements, so a later ``remember`` is in flight; or a fixed time after
start, landing anywhere), reads whatever else the child acknowledged before it died, reopens the
memory in this process and checks every acknowledged note. The note the kill interrupted may or
may not be there, but never half: remembering it again gives one atom.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from memstrata import Memory
from memstrata.embeddings.hashing import HashingEmbedder
from tests.reliability import _remember_child as child

CHILD = Path(__file__).with_name("_remember_child.py")
ROOT = Path(__file__).resolve().parents[2]


def run_and_kill(home: Path, *, acks: int, background: bool) -> list[dict[str, str]]:
    """Start the child, SIGKILL it once it acknowledged ``acks`` notes; every note it acknowledged."""
    argv = [sys.executable, str(CHILD), str(home), *(["--background"] if background else [])]
    proc = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT, env=_env()
    )
    assert proc.stdout is not None
    seen: list[dict[str, str]] = []
    deadline = time.monotonic() + 60
    while len(seen) < acks:
        line = proc.stdout.readline()
        if not line:
            pytest.fail(f"the child stopped before {acks} notes: {proc.stderr.read() if proc.stderr else ''}")
        seen.append(json.loads(line))
        assert time.monotonic() < deadline, "the child is too slow"
    proc.send_signal(signal.SIGKILL)
    rest, err = proc.communicate(timeout=30)
    assert proc.returncode == -signal.SIGKILL, err
    # Lines printed before the kill but not read yet were acknowledged too.
    return seen + [json.loads(line) for line in rest.splitlines() if line.strip()]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), str(ROOT), env.get("PYTHONPATH")) if p)
    return env


@pytest.mark.parametrize(
    ("acks", "background"),
    [(1, False), (12, False), (12, True), (40, True)],
    ids=["after-1", "after-12", "after-12-background", "after-40-background"],
)
def test_every_acknowledged_note_survives_sigkill(tmp_path: Path, acks: int, background: bool) -> None:
    home = tmp_path / "mem"
    acknowledged = run_and_kill(home, acks=acks, background=background)
    assert len(acknowledged) >= acks
    with Memory.open(home, embedder=HashingEmbedder(64)) as mem:
        atoms = {a.id: a for a in mem.atoms(user_id=child.USER, limit=1000)}
        for note in acknowledged:
            atom = atoms.get(note["id"])
            assert atom is not None, f"acknowledged note lost: {note}"
            assert atom.content == note["text"]
            (source,) = atom.source_message_ids
            assert mem.get_message(source, user_id=child.USER).content == note["text"]
            first = mem.search(note["text"], user_id=child.USER, layers=["L1"], limit=3)
            assert first and first[0].id == note["id"], f"{note['text']!r} not found first"
        # The note the kill interrupted is there whole or not at all: remembering it gives one atom.
        interrupted = child.note(len(acknowledged))
        again = mem.remember(interrupted, user_id=child.USER)
        assert mem.remember(interrupted, user_id=child.USER).id == again.id
        texts = [a.content for a in mem.atoms(user_id=child.USER, limit=1000)]
        assert len(texts) == len(set(texts)) == len(acknowledged) + 1
