"""What the container tests (``scripts/container-test``) share: podman and podman-compose run and
checked, a JSON client for the HTTP API, polling with a deadline, and numbered steps on stdout.

Standard library only: the harness runs from the host, with any Python 3.11, against images
built from the repository; nothing here imports memstrata.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

T = TypeVar("T")
PODMAN = os.environ.get("PODMAN", "podman")
COMPOSE = os.environ.get("PODMAN_COMPOSE", "podman-compose")
_started = time.monotonic()


class Failed(AssertionError):
    """A check of the container tests failed; the message says what was expected and seen."""


def check(condition: bool, message: str) -> None:
    if not condition:
        raise Failed(message)


def say(message: str) -> None:
    print(f"[{time.monotonic() - _started:6.1f}s] {message}", flush=True)


@contextmanager
def step(title: str) -> Iterator[None]:
    """One numbered part of a test: its title, then ``ok`` and how long it took (or the error)."""
    t0 = time.monotonic()
    say(f"{title} ...")
    yield
    say(f"  ok ({time.monotonic() - t0:.1f} s)")


def run(
    argv: Sequence[str], *, check_rc: bool = True, timeout: float = 600, env: dict[str, str] | None = None
) -> str:
    """Run a command; its stdout. A non-zero exit raises ``Failed`` with its stderr."""
    proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout, env=env)
    if check_rc and proc.returncode != 0:
        raise Failed(f"{' '.join(argv)}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    return proc.stdout.strip()


def podman(*args: str, check_rc: bool = True, timeout: float = 600) -> str:
    return run([PODMAN, *args], check_rc=check_rc, timeout=timeout)


def inspect(container: str, template: str) -> str:
    return podman("inspect", "--format", template, container)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(what: str, probe: Callable[[], T | None], timeout: float, every: float = 0.2) -> T:
    """The first truthy answer of ``probe`` (errors count as none), or ``Failed`` at the deadline."""
    deadline, last = time.monotonic() + timeout, ""
    while time.monotonic() < deadline:
        try:
            if found := probe():
                return found
        except (OSError, ValueError, Failed) as exc:  # not up yet, or not yet what was expected
            last = f": last error {exc}"
        time.sleep(every)
    raise Failed(f"{what}: not within {timeout:.0f} s{last}")


class Api:
    """The HTTP API at ``base`` with a bearer key; JSON in, JSON out."""

    def __init__(self, base: str, key: str | None) -> None:
        self.base, self.key = base, key

    def with_key(self, key: str | None) -> Api:
        return Api(self.base, key)

    def call(self, method: str, path: str, body: Any = None, *, expect: int = 200) -> Any:
        """The decoded answer; a status other than ``expect`` raises ``Failed`` with the body."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        if self.key:
            request.add_header("Authorization", f"Bearer {self.key}")
        try:
            with urllib.request.urlopen(request, timeout=60) as answer:
                status, text = answer.status, answer.read().decode()
        except urllib.error.HTTPError as exc:
            status, text = exc.code, exc.read().decode(errors="replace")
        check(status == expect, f"{method} {path}: {status}, expected {expect}: {text[:500]}")
        return json.loads(text) if text else None

    def get(self, path: str, *, expect: int = 200) -> Any:
        return self.call("GET", path, expect=expect)

    def post(self, path: str, body: Any, *, expect: int = 200) -> Any:
        return self.call("POST", path, body, expect=expect)

    def healthy(self) -> dict[str, Any] | None:
        """``GET /v1/health`` when it answers ``ok``, else None."""
        health: dict[str, Any] = self.with_key(None).get("/v1/health")
        return health if health.get("status") == "ok" else None


def exit_code(container: str, timeout: float) -> int:
    """Wait for the container to exit; its exit code."""
    return int(podman("wait", container, timeout=timeout).splitlines()[-1])


def logs(container: str) -> str:
    proc = subprocess.run([PODMAN, "logs", container], capture_output=True, text=True, timeout=60)
    return proc.stdout + proc.stderr


def no_tracebacks(container: str) -> None:
    text = logs(container)
    check("Traceback" not in text, f"{container} logged a traceback:\n{text[-3000:]}")


def turn(user: str, session: str, r: int) -> list[dict[str, object]]:
    """A user fact and the assistant's answer, with ids (a replayed capture stores nothing twice)."""
    cities = ["Lisbon", "Porto", "Oslo", "Kyoto", "Lima", "Quito", "Accra", "Hanoi"]
    facts = [
        "I moved to {city} last year and I love the old town.",
        "My dog {name} loves long walks by the river.",
        "I work as a nurse at the {city} children's hospital.",
        "I started learning the violin in March with a teacher called {name}.",
        "My sister {name} lives in {city} with her two cats.",
    ]
    n = sum(map(ord, user + session)) + r
    text = facts[r % len(facts)].format(city=cities[n % len(cities)], name=f"Rex{n}")
    return [
        {"role": "user", "name": user.title(), "content": text, "id": f"{user}-{session}-{r}-u"},
        {"role": "assistant", "content": "Thanks for telling me!", "id": f"{user}-{session}-{r}-a"},
    ]
