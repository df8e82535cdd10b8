"""A store another process has locked (issue 48, item 3): a capture had hung 25 s before its 503,
health said ``ok`` with no problem, and the proxy dropped every turn with its failures counted
nowhere a person looks. Now a write fails within about a second with a 503 that says the database
is locked, health is ``degraded`` with that reason, and the proxy's capture failures show in
``/v1/status`` and on the console's status page."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import openai

from tests.proxy.conftest import proxy_settings, wait_for
from tests.security.conftest import ADMIN_KEY
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import ScriptedUpstream

HOLD = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=30)
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(120)
"""
SAID = {"session_key": "s", "messages": [{"role": "user", "content": "I like green tea."}]}


@contextmanager
def locked(db: Path) -> Iterator[None]:
    """Another process holding ``BEGIN EXCLUSIVE`` on ``db`` until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        yield
    finally:
        holder.kill()
        holder.wait()


def _ask(live: LiveServer, text: str) -> str:
    client = openai.OpenAI(
        base_url=live.url + "/proxy/openai/v1",
        api_key="sk-provider",
        max_retries=0,
        default_headers={"x-memstrata-key": ADMIN_KEY},
    )
    reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": text}])
    return reply.choices[0].message.content or ""


def test_a_locked_store_fails_writes_fast_and_says_so_everywhere(tmp_path: Path) -> None:
    with (
        ScriptedUpstream() as upstream,
        LiveServer(
            tmp_path / "data",
            api_key=ADMIN_KEY,
            proxy=proxy_settings(upstream),
            pipeline={"retry_delay_seconds": 1.0},  # the background's retries, soon after the unlock
        ) as live,
        httpx.Client(base_url=live.url, headers=live.headers(), timeout=60) as admin,
    ):
        assert admin.post("/v1/capture", json=SAID).status_code == 200
        with locked(live.settings.home / "memstrata.db"):
            started = time.monotonic()
            refused = admin.post("/v1/capture", json={**SAID, "session_key": "t"})
            took = time.monotonic() - started
            assert refused.status_code == 503, refused.text
            error = refused.json()["error"]
            assert error["code"] == "store_unavailable" and "locked" in error["message"], error
            # The writer's 1 s wait for the lock, not a reader's 10 s (room for a slow machine).
            assert took < 6, f"the refusal took {took:.2f} s"
            time.sleep(2.1)  # past the probes' shared status
            health = admin.get("/v1/health").json()
            assert health["status"] == "degraded", health
            assert any("locked" in e for e in health["last_errors"]), health
            assert httpx.get(live.url + "/v1/health").json()["status"] == "degraded"
            assert _ask(live, "I water the plants on Sundays.")  # the proxy still answers
            stats = live.app.state.proxy.stats
            assert wait_for(lambda: stats.capture_failures >= 1, 30)
            assert admin.get("/v1/status").json()["proxy"]["capture_failures"] >= 1
            with httpx.Client(base_url=live.url, timeout=30) as browser:
                browser.post("/ui/login", data={"key": ADMIN_KEY})
                page = browser.get("/ui/status").text
            shown = re.search(r"Proxy capture failures</dt>\s*<dd>(\d+)", page)
            assert shown and int(shown.group(1)) >= 1, page
            assert "locked" in page
        # Unlocked: writes go through again, and the background pipeline, which met the lock too,
        # is still running (a refused write had ended it): the health comes back, every vector too.
        assert admin.post("/v1/capture", json={**SAID, "session_key": "u"}).status_code == 200
        assert wait_for(lambda: admin.get("/v1/health").json()["status"] == "ok", 30)
        assert wait_for(lambda: admin.get("/v1/status").json()["unembedded"] == 0, 30)
