"""Data files are the owner's alone (issue 48, item 10): under a permissive umask the database,
its WAL and shared-memory files, the ``conversations/`` and ``records/`` mirrors, the profile
files, their backups and every folder had been readable by every user (0644 / 0755); now every
file is 0600 and every folder 0700, whatever the umask, and a data directory an older version
left open is tightened when a writer opens it."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memstrata import AsyncMemory
from memstrata.embeddings.hashing import HashingEmbedder
from memstrata.stores.files.modes import TIGHTENED
from tests.support.serve_process import wait_up
from tests.support.sockets import free_port


@pytest.fixture
def permissive_umask() -> Iterator[None]:
    previous = os.umask(0o000)  # the worst case: nothing masked
    try:
        yield
    finally:
        os.umask(previous)


def _modes(home: Path) -> dict[str, int]:
    found = {".": stat.S_IMODE(home.stat().st_mode)}
    for path in home.rglob("*"):
        if not path.is_symlink():
            found[str(path.relative_to(home))] = stat.S_IMODE(path.stat().st_mode)
    return found


def _too_open(modes: dict[str, int], home: Path) -> dict[str, str]:
    wrong = {}
    for name, mode in modes.items():
        want = 0o700 if (home / name).is_dir() else 0o600
        if mode != want:
            wrong[name] = oct(mode)
    return wrong


async def _fill(home: Path) -> dict[str, int]:
    """Write every layer, then read the modes while the memory is open (the WAL is there)."""
    mem = await AsyncMemory.open(home, embedder=HashingEmbedder(32))
    try:
        said = [
            {"role": "user", "content": "I live in Porto and I play the cello every evening."},
            {"role": "assistant", "content": "Lovely."},
        ]
        await mem.capture(said, session_key="s1", user_id="ann")
        await mem.run_all()
        await mem.write_scene("music.md", "Ann plays the cello.", user_id="ann")
        await mem.write_scene("music.md", "Ann plays the cello in Porto.", user_id="ann")
        await mem.write_persona("Ann plays the cello.", user_id="ann")
        await mem.write_persona("Ann plays the cello in Porto.", user_id="ann")
        return _modes(home)
    finally:
        await mem.close()


async def test_every_data_file_is_0600_and_every_folder_0700_whatever_the_umask(
    tmp_path: Path, permissive_umask: None
) -> None:
    home = tmp_path / "data"
    modes = await _fill(home)
    for expected in ("memstrata.db", "memstrata.db-wal", "memstrata.db-shm", "conversations", "records"):
        assert expected in modes, sorted(modes)
    assert any(name.startswith("conversations/") for name in modes)
    assert any(name.startswith("records/") for name in modes)
    assert any(name.startswith("profiles/") and name.endswith("persona.md") for name in modes)
    assert any(".backup" in name for name in modes)
    assert _too_open(modes, home) == {}
    assert _too_open(_modes(home), home) == {}  # after close too


async def test_a_data_directory_left_readable_is_tightened_when_opened(tmp_path: Path) -> None:
    home = tmp_path / "data"
    await _fill(home)
    (home / TIGHTENED).unlink()  # as an older version left it: never walked
    for path in [home, *home.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    mem = await AsyncMemory.open(home, embedder=HashingEmbedder(32))
    try:
        assert _too_open(_modes(home), home) == {}
    finally:
        await mem.close()


def test_a_served_directory_and_its_workers_files_are_the_owners_alone(tmp_path: Path) -> None:
    """``memstrata serve`` with its worker process (the shared mirrors' lock files, the leases
    file), under umask 000."""
    home, port = tmp_path / "data", free_port()
    env = {**os.environ, "MEMSTRATA_EMBEDDING__PROVIDER": "hashing", "HF_HUB_OFFLINE": "1"}
    env.pop("MEMSTRATA_API_KEY", None)
    command = [sys.executable, "-m", "memstrata", "serve", "--port", str(port), "--data-dir", str(home)]
    proc = subprocess.Popen(
        command, env=env, umask=0, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_up(proc, url)
        said = [{"role": "user", "content": f"I keep {n} bees in Porto."} for n in range(6)]
        assert httpx.post(url + "/v1/capture", json={"messages": said, "user_id": "ann"}).status_code == 200
        assert httpx.post(url + "/v1/pipeline/run-all", json={}, timeout=120).status_code == 200
        modes = _modes(home)
        assert any(name.startswith("records/") for name in modes), sorted(modes)
        assert _too_open(modes, home) == {}
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
    assert _too_open(_modes(home), home) == {}
