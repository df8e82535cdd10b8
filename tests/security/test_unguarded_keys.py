"""Scoped keys on a server without an admin key restrict nothing (issue 48, item 12): the server
then takes any bearer token as the admin's. ``memstrata keys create`` and ``memstrata serve`` said
nothing of it; both now warn when active scoped keys exist and ``MEMSTRATA_API_KEY`` is not set."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.serve_process import wait_up
from tests.support.sockets import free_port

WARNING = "no admin key is set"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "MEMSTRATA_API_KEY"}
    return {**env, "MEMSTRATA_EMBEDDING__PROVIDER": "hashing", "HF_HUB_OFFLINE": "1", **extra}


def _cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "memstrata", *args], capture_output=True, text=True, env=env, timeout=120
    )


def _serve_stderr(home: Path, env: dict[str, str]) -> str:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "serve", "--port", str(port), "--data-dir", str(home)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_up(proc, f"http://127.0.0.1:{port}")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=60)
        return err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_keys_create_and_serve_warn_when_no_admin_key_is_set(tmp_path: Path) -> None:
    home = str(tmp_path / "data")
    made = _cli("--data-dir", home, "keys", "create", "--user", "alice", env=_env())
    assert made.returncode == 0, made.stderr
    assert WARNING in made.stderr and "restrict nothing" in made.stderr
    assert made.stdout.strip().splitlines()[-1].startswith("msk_")  # the key is still printed last
    assert WARNING in _serve_stderr(tmp_path / "data", _env())


@pytest.mark.parametrize("revoked", [False, True], ids=["admin-key-set", "every-key-revoked"])
def test_no_warning_with_an_admin_key_or_without_active_keys(tmp_path: Path, revoked: bool) -> None:
    home = str(tmp_path / "data")
    env = _env() if revoked else _env(MEMSTRATA_API_KEY="admin-key-0123456789abcdef")
    made = _cli("--data-dir", home, "keys", "create", "--user", "alice", env=env)
    assert made.returncode == 0, made.stderr
    if revoked:
        key_id = made.stdout.split("created key ", 1)[1].split(" ", 1)[0]
        assert _cli("--data-dir", home, "keys", "revoke", key_id, env=env).returncode == 0
    else:
        assert WARNING not in made.stderr
    assert WARNING not in _serve_stderr(tmp_path / "data", env)
