"""Scoped keys end to end: the facade makes, finds and revokes them; ``memstrata keys`` does it
from the command line; a key revoked through one replica fails at once on another (PostgreSQL,
two ``memstrata serve`` processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from memstrata import AsyncMemory, InputError, NotFoundError
from memstrata.cli.main import app
from memstrata.embeddings.hashing import HashingEmbedder
from tests.security.conftest import ADMIN_KEY, Secured

runner = CliRunner()


async def test_a_key_is_stored_as_a_digest_and_revoked_for_good(tmp_path: Path) -> None:
    mem = await AsyncMemory.open(tmp_path / "data", embedder=HashingEmbedder(32))
    try:
        issued = await mem.create_key([("alice", None)], label="alice's agent")
        assert issued.secret.startswith(f"msk_{issued.key.id}_")
        assert await mem.verify_key(issued.secret) == issued.key
        assert await mem.verify_key(issued.secret + "x") is None
        revoked = await mem.revoke_key(issued.key.id)
        assert revoked.revoked_at is not None
        assert await mem.verify_key(issued.secret) is None
        assert [k.id for k in await mem.keys()] == [issued.key.id]
        with pytest.raises(NotFoundError):
            await mem.revoke_key("nope")
        with pytest.raises(InputError):
            await mem.create_key([])
        with pytest.raises(InputError):
            await mem.create_key([("x" * 513, None)])
    finally:
        await mem.close()
    stored = (tmp_path / "data" / "memstrata.db").read_bytes()
    assert issued.secret.encode() not in stored  # only the digest is on disk


def test_memstrata_keys_create_list_revoke(tmp_path: Path) -> None:
    home = str(tmp_path / "data")
    made = runner.invoke(app, ["--data-dir", home, "keys", "create", "--user", "alice", "--label", "ci"])
    assert made.exit_code == 0, made.output
    secret = made.output.strip().splitlines()[-1]
    assert secret.startswith("msk_")
    listed = runner.invoke(app, ["--data-dir", home, "keys", "list", "--json"])
    assert listed.exit_code == 0, listed.output
    (row,) = [json.loads(line) for line in listed.output.splitlines()]
    assert row["label"] == "ci" and row["tenants"] == [["alice", None]] and row["revoked_at"] is None
    assert secret not in listed.output
    gone = runner.invoke(app, ["--data-dir", home, "keys", "revoke", row["id"]])
    assert gone.exit_code == 0, gone.output
    listed = runner.invoke(app, ["--data-dir", home, "keys", "list"])
    assert "revoked" in listed.output
    missing = runner.invoke(app, ["--data-dir", home, "keys", "revoke", "nope"])
    assert missing.exit_code == 1


def _serve(url: str, port: int) -> subprocess.Popen[str]:
    env = {**os.environ, "MEMSTRATA_API_KEY": ADMIN_KEY, "MEMSTRATA_EMBEDDING__PROVIDER": "none"}
    return subprocess.Popen(
        [sys.executable, "-m", "memstrata", "--store", url, "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def two_replicas(postgres_url: str) -> Iterator[list[str]]:
    from tests.support.serve_process import wait_up
    from tests.support.sockets import free_port

    ports = [free_port(), free_port()]
    procs = [_serve(postgres_url, p) for p in ports]
    try:
        for proc, port in zip(procs, ports, strict=True):
            wait_up(proc, f"http://127.0.0.1:{port}")
        yield [f"http://127.0.0.1:{p}" for p in ports]
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def test_a_key_revoked_on_one_replica_fails_at_once_on_the_other(two_replicas: list[str]) -> None:
    first, second = two_replicas
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    made = httpx.post(first + "/v1/keys", json={"tenants": [["alice", None]]}, headers=admin, timeout=30)
    assert made.status_code == 200, made.text
    key = made.json()
    alice = {"authorization": f"Bearer {key['secret']}"}
    assert httpx.get(second + "/v1/persona", headers=alice, timeout=30).status_code == 200
    revoked = httpx.delete(f"{first}/v1/keys/{key['key']['id']}", headers=admin, timeout=30)
    assert revoked.status_code == 200 and revoked.json()["revoked_at"] is not None
    assert httpx.get(second + "/v1/persona", headers=alice, timeout=30).status_code == 401
    assert httpx.get(first + "/v1/persona", headers=alice, timeout=30).status_code == 401


def test_memstrata_keys_through_a_running_server(secured: Secured) -> None:
    env = {"MEMSTRATA_API_KEY": ADMIN_KEY}
    made = runner.invoke(
        app, ["--url", secured.url, "keys", "create", "--user", "dan", "--agent", "a1"], env=env
    )
    assert made.exit_code == 0, made.output
    secret = made.output.strip().splitlines()[-1]
    with secured.client(secret) as dan:
        assert dan.get("/v1/persona", params={"user_id": "dan", "agent_id": "a1"}).status_code == 200
        assert dan.get("/v1/persona", params={"user_id": "dan", "agent_id": "a2"}).status_code == 403
    listed = runner.invoke(app, ["--url", secured.url, "keys", "list", "--json"], env=env)
    row = next(json.loads(line) for line in listed.output.splitlines() if '"dan"' in line)
    assert row["tenants"] == [["dan", "a1"]]
    refused = runner.invoke(app, ["--url", secured.url, "keys", "list"], env={"MEMSTRATA_API_KEY": secret})
    assert refused.exit_code == 1 and "admin" in refused.output
