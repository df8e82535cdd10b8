"""One real gateway per test module, on a free loopback port, with an API key; tests keep apart
by using tenants of their own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.support.live_server import LiveServer

KEY = "test-key-0123456789"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    with LiveServer(Path(tmp_path_factory.mktemp("gateway")) / "data", api_key=KEY) as live:
        yield live


@pytest.fixture
def http(server: LiveServer) -> Iterator[httpx.Client]:
    """An HTTP client with the right key."""
    with httpx.Client(base_url=server.url, headers=server.headers(), timeout=30) as client:
        yield client


@pytest.fixture
def user() -> str:
    """A tenant user of the test's own."""
    return f"u-{uuid.uuid4().hex[:10]}"
