"""Fixtures for the LLM proxy: a scripted upstream and a real gateway in front of it."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream


@pytest.fixture
def upstream() -> Iterator[ScriptedUpstream]:
    """A scripted provider on loopback, recording every request."""
    with ScriptedUpstream() as up:
        yield up


def proxy_settings(up: ScriptedUpstream, **more: Any) -> dict[str, Any]:
    return {"openai_url": up.openai_url, "anthropic_url": up.url, **more}


@pytest.fixture
def open_proxy(home: Path, upstream: ScriptedUpstream) -> Iterator[LiveServer]:
    """A gateway with no key (loopback, pass-through mode) proxying to ``upstream``."""
    with LiveServer(home, proxy=proxy_settings(upstream)) as server:
        yield server


def stored(server: LiveServer, session: str, *, want: int, user: str = "default") -> list[dict[str, Any]]:
    """The session's L0 messages once ``want`` are stored (the capture runs after the answer)."""
    deadline = time.monotonic() + 15
    while True:
        got = httpx.get(
            server.url + "/v1/messages",
            params={"session_key": session, "user_id": user},
            headers=server.headers(),
        ).json()
        if len(got) >= want or time.monotonic() > deadline:
            return list(got)
        time.sleep(0.05)


def stored_turns(server: LiveServer, session: str, *, want: int) -> list[tuple[str, str]]:
    """``stored``'s messages as (role, content) pairs, what the proxy's capture is judged by."""
    return [(m["role"], m["content"]) for m in stored(server, session, want=want)]


def wait_for(check: Callable[[], bool], seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True
