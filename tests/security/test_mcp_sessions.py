"""MCP session ids belong to the key that opened the session (issue 48, item 9): another key can
neither end the session nor open its event stream, and the refusal names nobody (it had said
"this MCP session belongs to tenant 'alice'")."""

from __future__ import annotations

import httpx

from tests.security.conftest import Secured

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
ACCEPT = "application/json, text/event-stream"


def _headers(key: str, session_id: str | None = None) -> dict[str, str]:
    sent = {"authorization": f"Bearer {key}", "accept": ACCEPT, "content-type": "application/json"}
    if session_id is not None:
        sent["mcp-session-id"] = session_id
        sent["mcp-protocol-version"] = "2025-06-18"
    return sent


def _open(s: Secured, key: str) -> str:
    with (
        httpx.Client(base_url=s.url, timeout=30) as http,
        http.stream("POST", "/mcp", json=INITIALIZE, headers=_headers(key)) as opened,
    ):
        assert opened.status_code == 200
        session_id = opened.headers["mcp-session-id"]
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    done = httpx.post(s.url + "/mcp", json=initialized, headers=_headers(key, session_id), timeout=30)
    assert done.status_code == 202, done.text
    return session_id


def _tools(s: Secured, key: str, session_id: str) -> httpx.Response:
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    return httpx.post(s.url + "/mcp", json=listing, headers=_headers(key, session_id), timeout=30)


def test_another_key_cannot_end_an_mcp_session_and_is_told_nothing(secured: Secured) -> None:
    alices = _open(secured, secured.alice)
    ended = httpx.delete(secured.url + "/mcp", headers=_headers(secured.bob, alices), timeout=30)
    assert ended.status_code == 404, ended.text
    assert "alice" not in ended.text.lower() and "tenant" not in ended.text.lower()
    assert _tools(secured, secured.alice, alices).status_code == 200  # still alice's, still open
    assert _tools(secured, secured.bob, alices).status_code == 404
    mine = httpx.delete(secured.url + "/mcp", headers=_headers(secured.alice, alices), timeout=30)
    assert mine.status_code == 200, mine.text


def test_another_key_cannot_open_an_mcp_sessions_event_stream(secured: Secured) -> None:
    alices = _open(secured, secured.alice)
    headers = {**_headers(secured.bob, alices), "accept": "text/event-stream"}
    with (
        httpx.Client(base_url=secured.url, timeout=30) as http,
        http.stream("GET", "/mcp", headers=headers) as stream,
    ):
        assert stream.status_code == 404
        assert "alice" not in stream.read().decode().lower()
