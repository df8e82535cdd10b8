"""A data directory shared by its owner (a server) and a worker that joins it, two processes:
claims exclude each other and die with their holder, and the owner's kept vector matrix sees the
vectors the worker adds (it searched before they came)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from memstrata.errors import DirectoryLockedError
from memstrata.models import Layer, Message, MessageFilter, Role, Tenant
from memstrata.stores.sqlite.store import SqliteStore

ALICE = Tenant("alice")
REPO = Path(__file__).resolve().parents[3]

WORKER = textwrap.dedent(
    """
    import sys, numpy as np
    from memstrata.models import Layer, Tenant
    from memstrata.stores.sqlite.store import SqliteStore
    store = SqliteStore(__import__("pathlib").Path(sys.argv[1]), joins=int(sys.argv[2]), wait=10)
    assert store.leases.claim("held by the worker")
    vectors = np.zeros((1, 4), dtype=np.float32)
    vectors[0, 1] = 1.0
    store.index.put_vectors(Tenant("alice"), Layer.L0, [int(sys.argv[3])], vectors)
    print("ready", flush=True)
    sys.stdin.readline()  # holds its claim until told
    """
)


def test_a_joined_worker_shares_claims_and_vectors_with_its_owner(tmp_path: Path) -> None:
    owner = SqliteStore(tmp_path, shared=True, url="http://127.0.0.1:1")
    try:
        stored = owner.messages.append([(_msg(i), "s") for i in range(2)])
        first = np.zeros((1, 4), dtype=np.float32)
        first[0, 0] = 1.0
        owner.index.put_vectors(ALICE, Layer.L0, [stored[0].seq], first)
        along = np.asarray([[0.0, 1.0, 0.0, 0.0]], dtype=np.float32)
        before = owner.index.vector(ALICE, MessageFilter(), along, 5)  # the matrix is kept now
        assert [s.seq for s in before] == [stored[0].seq]
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        worker = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tmp_path), str(os.getpid()), str(stored[1].seq)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert worker.stdout is not None and worker.stdout.readline().strip() == "ready"
        assert not owner.leases.claim("held by the worker")  # across the two processes
        found = owner.index.vector(ALICE, MessageFilter(), along, 5)
        assert found[0].seq == stored[1].seq  # the worker's vector, found by the owner's kept matrix
        worker.kill()  # SIGKILL: its claim goes with it
        worker.wait(timeout=30)
        assert owner.leases.claim("held by the worker")
    finally:
        owner.close()


def test_a_worker_joins_only_a_live_owner(tmp_path: Path) -> None:
    with pytest.raises(DirectoryLockedError, match="not owned by process"):
        SqliteStore(tmp_path, joins=os.getpid(), wait=0.2)  # nobody owns it


def _msg(i: int) -> Message:
    return Message(
        id=f"m{i}",
        tenant=ALICE,
        session_key="s",
        session_id="s",
        role=Role.USER,
        content=f"message {i}",
        timestamp=1,
        recorded_at=1,
    )
