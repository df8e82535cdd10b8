"""Memories for the framework adapters, named for the state they give: an empty library memory
on SQLite or on PostgreSQL (one parameter per backend), and an HTTP client of a real gateway on
loopback. Each framework's tests skip when its extra is not installed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memstrata import FakeClock, Memory
from memstrata.client import MemoryClient
from memstrata.embeddings.hashing import HashingEmbedder
from tests.support.live_server import LiveServer


def open_backend(request: pytest.FixtureRequest, backend: str, home: Path, clock: FakeClock) -> Memory:
    """An empty sync Memory (fake clock, hashing embedder) on SQLite files or on PostgreSQL;
    the caller closes it."""
    where: str | Path = home
    if backend == "postgres":
        where = request.getfixturevalue("postgres_url")  # skips when the extra is missing
    mem = Memory.open(where, clock=clock, embedder=HashingEmbedder(64))
    assert isinstance(mem, Memory)  # a path or a database, not a server's URL
    return mem


@pytest.fixture(params=["sqlite", "postgres"])
def empty_backend_memory(request: pytest.FixtureRequest, home: Path, clock: FakeClock) -> Iterator[Memory]:
    """An empty sync Memory on SQLite files or on PostgreSQL."""
    with open_backend(request, request.param, home, clock) as mem:
        yield mem


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    """A real gateway (``memstrata serve``'s app under uvicorn) on a free loopback port."""
    with LiveServer(Path(tmp_path_factory.mktemp("gateway")) / "data") as live:
        yield live


@pytest.fixture
def gateway_client(gateway: LiveServer) -> Iterator[MemoryClient]:
    """``Memory.open("http://...")`` of the gateway: the HTTP client, same methods."""
    with Memory.open(gateway.url) as mem:
        assert isinstance(mem, MemoryClient)
        yield mem
