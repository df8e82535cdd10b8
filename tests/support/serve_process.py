"""Starting a ``memstrata serve`` subprocess and waiting for it to answer, for the tests that start one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence

import httpx

from tests.support.sockets import free_port


def wait_up(proc: subprocess.Popen[str], base: str, timeout: float = 60.0) -> None:
    """Until ``base`` answers its health route; ``AssertionError`` with the end of the server's
    stderr when it died or took longer than ``timeout`` seconds (then it is killed)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            if httpx.get(base + "/v1/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            raise AssertionError(f"memstrata serve did not start: {proc.communicate()[1][-2000:]}")
        time.sleep(0.1)


def serve(options: Sequence[str], env: Mapping[str, str]) -> tuple[subprocess.Popen[str], str]:
    """Start ``memstrata <options> serve`` on a free loopback port with ``env`` over this process's
    environment, wait until it answers (``wait_up``), and return the process and its base URL.
    Its stderr is kept for ``wait_up``'s report; the caller stops it."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", *options, "serve", "--port", str(port)],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    wait_up(proc, base)
    return proc, base
