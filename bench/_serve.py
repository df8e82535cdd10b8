"""A real ``memstrata serve`` subprocess on a free loopback port, for the benchmarks that measure
the server as users run it: a process of its own, so the load generator's Python work (its event
loop, its HTTP client, a scripted upstream's threads) never shares the server's interpreter lock.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class Served:
    proc: subprocess.Popen[bytes]
    url: str


def server_env(**settings: str) -> dict[str, str]:
    """This environment, offline, plus ``MEMSTRATA_...`` settings given as keyword arguments
    (``embedding__provider="hashing"`` -> ``MEMSTRATA_EMBEDDING__PROVIDER``)."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.update({f"MEMSTRATA_{name.upper()}": value for name, value in settings.items()})
    return env


def start(home: Path, env: Mapping[str, str], *, timeout: float = 120.0) -> Served:
    """Start ``memstrata serve`` on ``home`` and wait until its health route answers."""
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memstrata", "serve", "--port", str(port), "--data-dir", str(home)],
        env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                return Served(proc, url)
        except httpx.TransportError:
            time.sleep(0.1)
        if proc.poll() is not None:
            break
    proc.kill()
    raise SystemExit(f"the server did not start: {proc.communicate()[1].decode()[-2000:]}")


def stop(served: Served, timeout: float = 120.0) -> None:
    """SIGTERM (the server drains its pipeline), then SIGKILL if it outlives ``timeout``."""
    served.proc.terminate()
    try:
        served.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        served.proc.kill()
        served.proc.wait()


@contextmanager
def serving(home: Path, env: Mapping[str, str]) -> Iterator[Served]:
    served = start(home, env)
    try:
        yield served
    finally:
        stop(served)
