"""Hostile input at the proxy (issue 48, items 4, 7 and 11): a forwarded path never leaves the
upstream's base path (so the provider key goes nowhere else), a body nested past any sane depth
is a 4xx, and a prompt with a lone surrogate is stored (the character replaced), never
acknowledged and dropped."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator
from pathlib import Path
from tempfile import TemporaryDirectory

import httpx
import pytest

from tests.proxy.conftest import proxy_settings, stored_turns, wait_for
from tests.support.live_server import LiveServer
from tests.support.llm_upstream import Reply, ScriptedUpstream

PROVIDER_KEY = "sk-provider-held-by-memstrata"
ADMIN_KEY = "admin-key-of-the-gateway"


def _gateway(home: Path, upstream: ScriptedUpstream) -> LiveServer:
    """Gateway mode for both providers: memstrata holds the provider keys."""
    settings = proxy_settings(upstream, openai_api_key=PROVIDER_KEY, anthropic_api_key=PROVIDER_KEY)
    return LiveServer(home, api_key=ADMIN_KEY, proxy=settings)


@pytest.fixture
def gateway(home: Path, upstream: ScriptedUpstream) -> Iterator[LiveServer]:
    with _gateway(home, upstream) as server:
        yield server


@pytest.fixture(scope="module")
def shared() -> Iterator[tuple[LiveServer, ScriptedUpstream]]:
    """One gateway for the path probes (refused requests store nothing), its upstream's record
    emptied before each."""
    with ScriptedUpstream() as up, TemporaryDirectory() as home, _gateway(Path(home), up) as server:
        yield server, up


@pytest.fixture
def probed(shared: tuple[LiveServer, ScriptedUpstream]) -> tuple[LiveServer, ScriptedUpstream]:
    shared[1].requests.clear()
    return shared


def _raw(server: LiveServer, method: str, path: str, body: bytes = b"") -> tuple[int, bytes]:
    """One request with ``path`` sent byte for byte (``curl --path-as-is``): http.client
    neither normalises dot segments nor re-encodes."""
    url = httpx.URL(server.url)
    conn = http.client.HTTPConnection(url.host, url.port, timeout=30)
    try:
        # The memstrata key where each SDK puts its provider key (gateway mode).
        headers = {"authorization": f"Bearer {ADMIN_KEY}", "x-api-key": ADMIN_KEY}
        if body:
            headers["content-type"] = "application/json"
        conn.request(method, path, body=body or None, headers=headers)
        answer = conn.getresponse()
        return answer.status, answer.read()
    finally:
        conn.close()


ESCAPES = [
    "/proxy/openai/v1/%2e%2e/%2e%2e/internal/admin",  # the reported one
    "/proxy/openai/v1/../../internal/admin",
    "/proxy/openai/v1/%2E%2E/%2E%2E/internal/admin",
    "/proxy/openai/v1/.%2e/internal/admin",
    "/proxy/openai/v1/%2e./internal/admin",
    "/proxy/openai/v1/models/../../../internal/admin",
    "/proxy/openai/v1/models/%2e%2e",
    "/proxy/openai/v1/%2e/models",
    "/proxy/openai/v1/./models",
    "/proxy/openai/v1/models%2f..%2f..%2finternal",  # encoded slashes
    "/proxy/openai/v1/models%2F..%2F..%2Finternal",
    "/proxy/openai/v1/..%5c..%5cinternal",  # encoded backslashes
    "/proxy/openai/v1/%252e%252e/%252e%252e/internal/admin",  # double encoding
    "/proxy/openai/v1/%25252e%25252e/internal",  # triple
    "/proxy/openai/v1/models%252f..%252finternal",
    "/proxy/openai/v1/models%3f..",  # an encoded '?' would start a query
    "/proxy/openai/v1/models%23x",
    "/proxy/anthropic/v1/%2e%2e%2f%2e%2e%2fetc/passwd",  # the reported one
    "/proxy/anthropic/%2e%2e/etc/passwd",
    "/proxy/anthropic/../etc/passwd",
    "/proxy/anthropic/v1/..",
    "/proxy/anthropic/v1/%2e%2e",
    "/proxy/anthropic/%252e%252e/etc/passwd",
    "/proxy/%6fpenai/v1/%2e%2e/%2e%2e/internal/admin",  # the prefix itself encoded
]


@pytest.mark.parametrize("path", ESCAPES)
@pytest.mark.parametrize("method", ["GET", "POST"])
def test_a_path_that_could_leave_the_upstreams_base_is_a_400_and_goes_nowhere(
    probed: tuple[LiveServer, ScriptedUpstream], path: str, method: str
) -> None:
    gateway, upstream = probed
    status, body = _raw(gateway, method, path, b'{"model": "m"}' if method == "POST" else b"")
    assert status == 400, (status, body[:300])
    assert "not forwarded" in json.loads(body)["error"]["message"]  # in the provider's shape
    assert upstream.requests == []  # the provider key went nowhere


def test_ordinary_paths_still_forward_with_the_provider_key(
    probed: tuple[LiveServer, ScriptedUpstream],
) -> None:
    gateway, upstream = probed
    assert _raw(gateway, "GET", "/proxy/openai/v1/models?limit=2")[0] == 200
    status, _ = _raw(
        gateway, "POST", "/proxy/anthropic/v1/messages/count_tokens?beta=true", b'{"model": "m"}'
    )
    assert status == 200
    assert [(r.method, r.path) for r in upstream.requests] == [
        ("GET", "/v1/models?limit=2"),
        ("POST", "/v1/messages/count_tokens?beta=true"),
    ]
    assert upstream.requests[0].headers["authorization"] == f"Bearer {PROVIDER_KEY}"
    assert upstream.requests[1].headers["x-api-key"] == PROVIDER_KEY


def _deep(depth: int) -> bytes:
    nested = "[" * depth + "]" * depth
    return (
        f'{{"model": "m", "messages": [{{"role": "user", "content": "hi"}}], "metadata": {nested}}}'.encode()
    )


@pytest.mark.parametrize(
    "path",
    ["/proxy/openai/v1/chat/completions", "/proxy/openai/v1/responses", "/proxy/anthropic/v1/messages"],
)
def test_a_body_nested_100000_levels_deep_is_a_400_not_a_500(
    gateway: LiveServer, upstream: ScriptedUpstream, path: str
) -> None:
    status, body = _raw(gateway, "POST", path, _deep(100_000))
    assert status == 400, (status, body[:300])
    assert "nested" in json.loads(body)["error"]["message"]
    assert upstream.requests == []
    # The server is still whole, and an ordinary body nested a little goes through.
    status, _ = _raw(gateway, "POST", path, _deep(20))
    assert status == 200


def _status(server: LiveServer) -> dict[str, int]:
    answer = httpx.get(server.url + "/v1/status", headers=server.headers(), timeout=30)
    return dict(answer.json()["proxy"])


@pytest.mark.parametrize(
    ("path", "body"),
    [
        (
            "/proxy/openai/v1/chat/completions",
            '{"model": "m", "messages": [{"role": "user", "content": "I keep bees \\ud800 on the roof."}]}',
        ),
        (
            "/proxy/anthropic/v1/messages",
            '{"model": "m", "max_tokens": 9, "messages": [{"role": "user", "content": '
            '[{"type": "text", "text": "I keep bees \\ud800 on the roof."}]}]}',
        ),
        ("/proxy/openai/v1/responses", '{"model": "m", "input": "I keep bees \\ud800 on the roof."}'),
    ],
)
def test_a_prompt_with_a_lone_surrogate_is_stored_with_the_character_replaced(
    gateway: LiveServer, upstream: ScriptedUpstream, path: str, body: str
) -> None:
    session = {"x-memstrata-session": "surrogate"}
    url = httpx.URL(gateway.url)
    conn = http.client.HTTPConnection(url.host, url.port, timeout=30)
    headers = {"authorization": f"Bearer {ADMIN_KEY}", "x-api-key": ADMIN_KEY, **session}
    conn.request("POST", path, body=body.encode(), headers={**headers, "content-type": "application/json"})
    assert conn.getresponse().status == 200
    conn.close()
    turns = stored_turns(gateway, "surrogate", want=2)
    assert turns == [("user", "I keep bees \ufffd on the roof."), ("assistant", "Noted, thank you.")]
    counts = _status(gateway)
    assert counts["capture_failures"] == 0
    assert (counts["prompts_captured"], counts["captured"]) == (1, 1)


def test_an_answer_that_only_echoes_injected_tags_is_not_counted_as_captured(
    gateway: LiveServer, upstream: ScriptedUpstream
) -> None:
    echo = "<relevant-memories>\n- the user keeps bees\n</relevant-memories>"
    upstream.enqueue(Reply(text=echo), Reply(text="Bees are fine."))
    headers = {"x-memstrata-session": "echo", "authorization": f"Bearer {ADMIN_KEY}"}
    for prompt in ("What do you know about me?", "And about my bees?"):
        body = {"model": "m", "messages": [{"role": "user", "content": prompt}]}
        url = gateway.url + "/proxy/openai/v1/chat/completions"
        assert httpx.post(url, json=body, headers=headers, timeout=30).status_code == 200
        assert wait_for(lambda: sum(_status(gateway)[k] for k in ("captured", "answers_empty")) >= 1)
    assert wait_for(lambda: _status(gateway)["captured"] + _status(gateway)["answers_empty"] == 2)
    turns = stored_turns(gateway, "echo", want=3)
    assert [role for role, _ in turns] == ["user", "user", "assistant"]  # the echo is not stored
    counts = _status(gateway)
    assert (counts["prompts_captured"], counts["captured"], counts["answers_empty"]) == (2, 1, 1)
