"""Auth, body limits, bad input, request ids and log redaction, against a real server."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from memstrata.errors import ConfigError
from memstrata.gateway.app import check_binding, install_redaction
from memstrata.settings import load_settings
from tests.e2e.gateway.conftest import KEY
from tests.support.live_server import LiveServer

TWO_MIB = 2 * 1024 * 1024


@pytest.mark.parametrize("path", ["/v1/status", "/v1/messages", "/v1/atoms", "/mcp"])
def test_every_route_but_health_needs_the_key(server: LiveServer, path: str) -> None:
    missing = httpx.get(server.url + path)
    wrong = httpx.get(server.url + path, headers={"authorization": "Bearer wrong-key"})
    assert missing.status_code == 401 and wrong.status_code == 401
    assert missing.json()["error"]["message"] == "Unauthorized: missing Bearer token"
    assert wrong.json()["error"]["message"] == "Unauthorized: invalid token"


def test_the_right_key_is_let_in_and_health_is_open(server: LiveServer) -> None:
    assert httpx.get(server.url + "/v1/status", headers=server.headers()).status_code == 200
    assert httpx.get(server.url + "/v1/health").status_code == 200
    assert httpx.get(server.url + "/health").status_code == 200


def test_tdam_routes_answer_401_in_their_own_shapes(server: LiveServer) -> None:
    v1 = httpx.post(server.url + "/recall", json={"query": "x", "session_key": "s"})
    v3 = httpx.post(server.url + "/v3/core/read", json={}, headers={"authorization": "Bearer nope"})
    assert v1.status_code == 401 and v1.json() == {
        "error": "Unauthorized: missing Bearer token",
        "code": "unauthorized",
    }
    assert v3.status_code == 401 and v3.json()["code"] == 401 and v3.json()["request_id"].startswith("req-")


def _two_mib_body() -> bytes:
    return b'{"messages": [{"role": "user", "content": "' + b"x" * TWO_MIB + b'"}]}'


def test_a_2_mib_body_is_refused_with_413(http: httpx.Client, user: str) -> None:
    r = http.post("/v1/capture", content=_two_mib_body(), headers={"content-type": "application/json"})
    assert r.status_code == 413 and r.json()["error"]["code"] == "payload_too_large"
    assert http.get("/v1/messages", params={"user_id": user}).json() == []


def test_the_limit_holds_for_a_streamed_body_without_content_length(http: httpx.Client) -> None:
    def chunks() -> Iterator[bytes]:
        body = _two_mib_body()
        for i in range(0, len(body), 64 * 1024):
            yield body[i : i + 64 * 1024]

    r = http.post("/v1/capture", content=chunks(), headers={"content-type": "application/json"})
    assert r.request.headers.get("transfer-encoding") == "chunked"
    assert r.status_code == 413


def test_the_limit_counts_bytes_on_a_raw_chunked_upload(server: LiveServer) -> None:
    """No Content-Length to go by: the bytes are counted as they stream in."""
    import socket

    body = _two_mib_body()
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        head = (
            f"POST /v1/capture HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {KEY}\r\n"
            "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        ).encode()
        sock.sendall(head)
        for i in range(0, len(body), 256 * 1024):
            part = body[i : i + 256 * 1024]
            sock.sendall(f"{len(part):x}\r\n".encode() + part + b"\r\n")
        sock.sendall(b"0\r\n\r\n")
        answer = sock.recv(4096).decode("latin-1")
    assert answer.startswith("HTTP/1.1 413")


def test_invalid_json_is_400_and_validation_is_422_naming_the_field(http: httpx.Client) -> None:
    broken = http.post("/v1/capture", content=b'{"messages": [', headers={"content-type": "application/json"})
    assert broken.status_code == 400 and broken.json()["error"]["code"] == "invalid_json"
    untyped = http.post("/v1/capture", content=b"not json at all")
    assert untyped.status_code == 400
    wrong = http.post("/v1/capture", json={"messages": [{"role": "robot", "content": "hi"}]})
    err = wrong.json()["error"]
    assert (
        wrong.status_code == 422 and err["code"] == "validation_error" and err["field"] == "messages[0].role"
    )
    too_many = http.post("/v1/capture", json={"messages": [{"role": "user", "content": "x"}] * 101})
    assert too_many.status_code == 422 and too_many.json()["error"]["field"] == "messages"
    surrogate = http.post(
        "/v1/capture",
        content=b'{"messages": [{"role": "user", "content": "\\ud800"}]}',
        headers={"content-type": "application/json"},
    )
    assert surrogate.status_code == 422


def test_a_path_parameter_has_its_declared_bounds(http: httpx.Client) -> None:
    """``backup_id`` is declared at most 512 characters (``operations.records``): the route says
    so with a 422 naming it, as a body field would, rather than looking the id up."""
    long = http.get("/v1/persona/backups/" + "b" * 513)
    assert long.status_code == 422 and long.json()["error"]["field"] == "backup_id"
    assert http.get("/v1/persona/backups/" + "b" * 512).status_code == 404


def test_bad_tenant_headers_are_4xx(http: httpx.Client) -> None:
    r = http.get("/v1/messages", headers={"x-memstrata-user-id": "x" * 600})
    assert r.status_code == 422 and r.json()["error"]["field"] == "x-memstrata-user-id"


def test_the_key_never_reaches_the_log(server: LiveServer, caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("memstrata.gateway")
    caplog.set_level(logging.INFO)
    install_redaction(server.settings)  # as `memstrata serve` does, on every handler of the root
    logger.info("a client sent Authorization: Bearer %s and api_key=%s", "abc.def", KEY)
    httpx.get(server.url + "/v1/status", headers={"authorization": f"Bearer {KEY}"})
    text = "\n".join(r.getMessage() for r in caplog.records)
    assert "abc.def" not in text and KEY not in text and "Bearer ***" in text


def test_refuses_to_listen_off_loopback_without_a_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="MEMSTRATA_API_KEY"):
        check_binding("0.0.0.0", load_settings(tmp_path))
    check_binding("0.0.0.0", load_settings(tmp_path, api_key="k"))
    check_binding("127.0.0.1", load_settings(tmp_path))
    check_binding("::1", load_settings(tmp_path))
