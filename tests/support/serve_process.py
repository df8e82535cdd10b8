"""Waiting for a ``memstrata serve`` subprocess to answer, for the tests that start one."""

from __future__ import annotations

import subprocess
import time

import httpx


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
