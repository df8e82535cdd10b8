"""``memstrata serve`` as users run it: a subprocess that owns its directory (the lock names its
URL), serves CLI commands given ``--url``, and on SIGTERM drains the L1 work it captured."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from memstrata import Memory
from tests.support.serve_process import wait_up
from tests.support.sockets import free_port

SEED = {"sessions": [{"sessionKey": "cli", "userId": "maya", "conversations": [[
    {"role": "user", "content": "I work as a carpenter in Porto."},
    {"role": "assistant", "content": "A fine trade."},
]]}]}  # fmt: skip


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memstrata", *args], capture_output=True, text=True, env=env, timeout=120
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        **os.environ,
        "MEMSTRATA_EMBEDDING__PROVIDER": "hashing",
        "MEMSTRATA_PIPELINE__WARM_UP": "false",  # L1 waits for 5 turns: shutdown has work to drain
        "HF_HUB_OFFLINE": "1",
    }


@contextmanager
def served(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    """``memstrata serve`` on ``tmp_path / "data"``, up and answering; killed on the way out."""
    home, port = tmp_path / "data", free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "serve", "--port", str(port), "--data-dir", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_up(proc, url)
        yield proc, url, home
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


@pytest.fixture
def serving(tmp_path: Path, env: dict[str, str]) -> Iterator[tuple[subprocess.Popen[str], str, Path]]:
    with served(tmp_path, env) as server:
        yield server


def test_the_cli_is_told_to_go_through_the_server_and_can(
    serving: tuple[subprocess.Popen[str], str, Path], env: dict[str, str], tmp_path: Path
) -> None:
    _, url, home = serving
    seed = tmp_path / "seed.json"
    seed.write_text(json.dumps(SEED))
    locked = cli("import", str(seed), "--data-dir", str(home), env=env)
    assert locked.returncode == 1 and f"--url {url}" in locked.stderr  # the lock names the server
    through = cli("--url", url, "import", str(seed), env=env)
    assert through.returncode == 0, through.stderr
    assert "extracted 1 sessions into" in through.stdout and "no new atoms" not in through.stdout
    again = cli("--url", url, "import", str(seed), env=env)  # a retry: said so, not "0 new atoms"
    assert again.returncode == 0 and "0 messages stored, 2 already present" in again.stdout, again.stdout
    assert "already present (every message stored before): no new atoms" in again.stdout, again.stdout
    assert "0 new atoms" not in again.stdout
    found = cli("--url", url, "search", "carpenter", "--user", "maya", "--json", env=env)
    assert found.returncode == 0 and "carpenter" in found.stdout
    read_only = cli("inspect", "l0", "--user", "maya", "--data-dir", str(home), "--format", "json", env=env)
    assert read_only.returncode == 0 and "Porto" in read_only.stdout  # reads never need the server


def test_sigterm_drains_the_captured_sessions_then_exits(
    serving: tuple[subprocess.Popen[str], str, Path],
) -> None:
    proc, url, home = serving
    turns = [{"role": "user", "content": f"I visited {city} last summer."} for city in ("Oslo", "Bergen")]
    r = httpx.post(url + "/v1/capture", json={"messages": turns, "session_key": "trip", "user_id": "ann"})
    assert r.status_code == 200
    status = httpx.get(url + "/v1/status").json()
    assert any(s["session_key"] == "trip" and s["lag"] == 2 for s in status["sessions"])  # not extracted yet
    proc.send_signal(signal.SIGTERM)
    # uvicorn shuts down gracefully, then re-raises the signal for the process manager to see.
    assert proc.wait(timeout=60) in (0, -signal.SIGTERM)
    with Memory.open(home, read_only=True) as mem:
        atoms = mem.atoms(user_id="ann")
        assert any("Oslo" in a.content for a in atoms)  # extracted on the way out
        assert not [s for s in mem.status().sessions if s.lag]


def capture_and_wait_for_its_vector(url: str) -> None:
    turn = [{"role": "user", "content": "I adopted a greyhound called Pixel."}]
    assert httpx.post(url + "/v1/capture", json={"messages": turn, "session_key": "s"}).status_code == 200
    deadline = time.monotonic() + 60
    while httpx.get(url + "/v1/status").json()["unembedded"]:  # the server's worker embeds captures
        assert time.monotonic() < deadline
        time.sleep(0.1)


def children_of(pid: int) -> list[str]:
    """The pids of ``pid``'s child processes, started by any of its threads."""
    return [
        c for task in Path(f"/proc/{pid}/task").iterdir() for c in (task / "children").read_text().split()
    ]


def test_the_servers_passes_run_in_processes_that_end_with_it(tmp_path: Path, env: dict[str, str]) -> None:
    env = {**env, "MEMSTRATA_EMBEDDING__PROVIDER": "local"}  # the shipped model: serve gives it children
    with served(tmp_path, env) as (proc, url, _):
        # A server opens warmed: its children answer before the first request arrives.
        q = httpx.get(url + "/v1/status").json()["query_embedding"]
        assert q["process"] == "running"
        capture_and_wait_for_its_vector(url)  # embedded by the worker, not in the server's processes
        found = httpx.post(url + "/v1/search", json={"query": "What is my dog called?", "layers": ["L0"]})
        assert found.status_code == 200 and "Pixel" in found.text
        q = httpx.get(url + "/v1/status").json()["query_embedding"]
        assert q["process_passes"] >= 1 and q["process_failures"] == 0
        pids = children_of(proc.pid)
        lines = sorted(Path(f"/proc/{c}/cmdline").read_text() for c in pids)
        assert len(lines) == 2 and sum("query_child" in line for line in lines) == 1
        assert sum("\0worker\0" in line for line in lines) == 1  # the pipeline's process
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) in (0, -signal.SIGTERM)
        deadline = time.monotonic() + 10
        while any(Path(f"/proc/{c}").exists() for c in pids):
            assert time.monotonic() < deadline, "a child process outlived the server"
            time.sleep(0.05)


def test_settings_can_keep_a_servers_query_passes_at_home(tmp_path: Path, env: dict[str, str]) -> None:
    env = {**env, "MEMSTRATA_EMBEDDING__PROVIDER": "local", "MEMSTRATA_EMBEDDING__QUERY_PROCESS": "false"}
    with served(tmp_path, env) as (proc, url, _):
        capture_and_wait_for_its_vector(url)
        found = httpx.post(url + "/v1/search", json={"query": "What is my dog called?", "layers": ["L0"]})
        assert found.status_code == 200 and "Pixel" in found.text
        q = httpx.get(url + "/v1/status").json()["query_embedding"]
        assert (q["process"], q["passes"]) == ("off", 1)
        lines = [Path(f"/proc/{c}/cmdline").read_text() for c in children_of(proc.pid)]
        assert len(lines) == 1 and "\0worker\0" in lines[0]  # its worker alone
