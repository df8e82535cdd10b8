"""Room for clients with a key (issue 48, item 6): 1,000 idle connections without a key filled
``max_connections`` and every other request got 503; an attacker reconnected each time the read
timeout let them go. Now a connection that has not carried a complete, authenticated request
within ``server.authenticate_within_seconds`` is closed, and connections waiting for one never
take the last ``server.reserved_connections`` places (a newer one closes the oldest)."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.security.conftest import ADMIN_KEY
from tests.support.live_server import LiveServer
from tests.support.sockets import free_port

WITHIN = 1.0
MAX_CONNECTIONS = 8
RESERVED = 3


@pytest.fixture(scope="module")
def guarded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    home = Path(tmp_path_factory.mktemp("connections")) / "data"
    nowhere = f"http://127.0.0.1:{free_port()}/v1"  # a proxied call reaches no upstream: 502
    with LiveServer(
        home,
        api_key=ADMIN_KEY,
        server={
            "max_connections": MAX_CONNECTIONS,
            "reserved_connections": RESERVED,
            "authenticate_within_seconds": WITHIN,
            "request_read_timeout_seconds": 20,
        },
        proxy={"openai_url": nowhere, "anthropic_url": nowhere},
    ) as live:
        yield live


def _connect(live: LiveServer) -> socket.socket:
    return socket.create_connection(("127.0.0.1", live.port), timeout=10)


def _request(path: str, key: str | None = None, method: str = "GET", extra: str = "") -> bytes:
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    return f"{method} {path} HTTP/1.1\r\nHost: x\r\n{auth}{extra}\r\n".encode()


def _answer(sock: socket.socket) -> bytes:
    """One HTTP answer's head and (content-length) body, or b"" when the server closed."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (
            int(line.split(b":")[1])
            for line in head.split(b"\r\n")
            if line.lower().startswith(b"content-length")
        ),
        0,
    )
    while len(body) < length:
        body += sock.recv(65536)
    return head


def _closed_within(sock: socket.socket, seconds: float) -> bool:
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return False
    except ConnectionError:
        return True
    return True


def test_idle_connections_without_a_key_leave_room_for_one_with_a_key(guarded: LiveServer) -> None:
    held = [_connect(guarded) for _ in range(3 * MAX_CONNECTIONS)]  # an attacker's flood
    try:
        time.sleep(0.2)
        with httpx.Client(base_url=guarded.url, headers=guarded.headers(), timeout=10) as admin:
            answers = [admin.get("/v1/status").status_code for _ in range(3)]
        assert answers == [200, 200, 200]
        assert guarded.app.state.admission.count() <= MAX_CONNECTIONS - RESERVED
        assert guarded.app.state.admission.evicted >= 2 * MAX_CONNECTIONS
    finally:
        for sock in held:
            sock.close()


@pytest.mark.parametrize(
    "sent",
    [b"", b"GET /v1/health HTTP/1.1\r\nHost: x\r\n", None],
    ids=["nothing", "half-the-headers", "only-keyless-requests"],
)
def test_a_connection_without_an_authenticated_request_is_closed_in_its_time(
    guarded: LiveServer, sent: bytes | None
) -> None:
    with _connect(guarded) as sock:
        started = time.monotonic()
        if sent is None:  # open health probes and 401s, one after another, on one connection
            while time.monotonic() - started < WITHIN + 3:
                sock.sendall(_request("/v1/health"))
                if not _answer(sock):
                    break
                sock.sendall(_request("/v1/status", key="not-a-key"))
                if not _answer(sock):
                    break
                time.sleep(0.2)
        else:
            sock.sendall(sent)
            assert _closed_within(sock, WITHIN + 3)
        assert time.monotonic() - started < WITHIN + 2.5


def test_a_connection_that_carried_an_authenticated_request_stays(guarded: LiveServer) -> None:
    with _connect(guarded) as sock:
        sock.sendall(_request("/v1/status", key=ADMIN_KEY))
        assert _answer(sock).startswith(b"HTTP/1.1 200")
        time.sleep(WITHIN + 0.8)  # past the time a keyless connection gets (and within keep-alive)
        sock.sendall(_request("/v1/status", key=ADMIN_KEY))
        assert _answer(sock).startswith(b"HTTP/1.1 200")


def _dribble(sock: socket.socket, head: bytes, body: bytes, seconds: float) -> bytes:
    sock.sendall(head)
    pieces = 10
    step = max(1, len(body) // pieces)
    for i in range(0, len(body), step):
        try:
            sock.sendall(body[i : i + step])
        except OSError:
            return b""
        time.sleep(seconds / pieces)
    return _answer(sock)


def test_a_slow_first_upload_with_a_key_is_not_cut(guarded: LiveServer) -> None:
    body = b'{"messages": [{"role": "user", "content": "' + b"I like tea. " * 200 + b'"}]}'
    extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    with _connect(guarded) as sock:
        head = _request("/v1/capture", key=ADMIN_KEY, method="POST", extra=extra)
        assert _dribble(sock, head, body, WITHIN + 1.5).startswith(b"HTTP/1.1 200")


def test_a_slow_proxied_upload_is_kept_only_with_a_key(guarded: LiveServer) -> None:
    """The proxy reads its key after the body: a key in the headers vouches for the connection."""
    body = b'{"model": "m", "messages": [{"role": "user", "content": "' + b"hello " * 400 + b'"}]}'
    extra = f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
    path = "/proxy/openai/v1/chat/completions"
    with _connect(guarded) as sock:
        head = _request(path, method="POST", extra=extra + f"x-memstrata-key: {ADMIN_KEY}\r\n")
        answered = _dribble(sock, head, body, WITHIN + 1.5)
        assert answered.startswith(b"HTTP/1.1 "), answered  # answered (the upstream is nowhere: 502)
    with _connect(guarded) as sock:
        head = _request(path, method="POST", extra=extra + "x-memstrata-key: not-a-key\r\n")
        assert _dribble(sock, head, body, WITHIN + 1.5) == b""  # closed before any answer
