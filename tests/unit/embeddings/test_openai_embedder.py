"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 with scripted behaviour."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

from memstrata.embeddings.openai_compat import MAX_INPUT_CHARS, OpenAIEmbedder
from memstrata.errors import ConfigError, EmbeddingError

API_KEY = "sk-test-secret-123"


def vector_for(text: str, dims: int) -> list[float]:
    """What the fake endpoint returns for a text: depends on the text, so order mistakes show."""
    base = [float(len(text) + 1), float(sum(map(ord, text)) % 97 + 1)]
    return (base + [1.0] * dims)[:dims]


@dataclass
class Endpoint:
    """Scripted behaviour of the fake server, and what it received."""

    dims: int = 8
    mode: str = "ok"  # ok | reversed | status500 | slow | badjson | short | echo_key
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    url: str = ""


def _handler(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            body = json.loads(self.rfile.read(length))
            endpoint.requests.append(body)
            endpoint.headers.append(dict(self.headers))
            if self.path != "/v1/embeddings":
                self._send(404, b'{"error": "not found"}')
            elif endpoint.mode == "status500":
                self._send(500, b'{"error": {"message": "model overloaded"}}')
            elif endpoint.mode == "echo_key":
                self._send(401, f"bad key {self.headers['Authorization']}".encode())
            elif endpoint.mode == "badjson":
                self._send(200, b"<html>gateway</html>")
            else:
                if endpoint.mode == "slow":
                    time.sleep(5.0)
                dims = body.get("dimensions", endpoint.dims)
                data: list[dict[str, Any]] = [
                    {"object": "embedding", "index": i, "embedding": vector_for(text, dims)}
                    for i, text in enumerate(body["input"])
                ]
                if endpoint.mode == "short":
                    data[-1]["embedding"] = data[-1]["embedding"][:-1]
                if endpoint.mode == "reversed":
                    data.reverse()
                self._send(200, json.dumps({"object": "list", "data": data}).encode())

        def _send(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    server.daemon_threads = True
    server.block_on_close = False  # a "slow" handler may still be sleeping at teardown
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()


def make(endpoint: Endpoint, **kwargs: Any) -> OpenAIEmbedder:
    return OpenAIEmbedder(endpoint.url, API_KEY, "text-embed-test", **kwargs)


def expected(texts: list[str], dims: int) -> np.ndarray[Any, np.dtype[np.float32]]:
    rows = np.array([vector_for(t, dims) for t in texts], dtype=np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows


TEXTS = [f"message number {i}" + "!" * i for i in range(5)]


def test_batches_and_sends_model_and_key(endpoint: Endpoint) -> None:
    emb = make(endpoint, batch_size=2)
    vectors = emb.embed(TEXTS)
    assert len(endpoint.requests) == 3  # 2 + 2 + 1
    assert [r["input"] for r in endpoint.requests] == [TEXTS[0:2], TEXTS[2:4], TEXTS[4:]]
    assert all(r["model"] == "text-embed-test" for r in endpoint.requests)
    assert all("dimensions" not in r for r in endpoint.requests)
    assert endpoint.headers[0]["Authorization"] == f"Bearer {API_KEY}"
    np.testing.assert_allclose(vectors, expected(TEXTS, 8), rtol=1e-6)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_orders_results_by_index(endpoint: Endpoint) -> None:
    endpoint.mode = "reversed"
    vectors = make(endpoint).embed(TEXTS)
    np.testing.assert_allclose(vectors, expected(TEXTS, 8), rtol=1e-6)


def test_sends_configured_dimensions(endpoint: Endpoint) -> None:
    emb = make(endpoint, dimensions=4)
    assert emb.name == "openai:text-embed-test@4"
    assert endpoint.requests == []  # configured dimensions need no probe
    vectors = emb.embed(["hello"])
    assert endpoint.requests[0]["dimensions"] == 4
    assert vectors.shape == (1, 4)


def test_learns_dimensions_from_a_probe(endpoint: Endpoint) -> None:
    emb = make(endpoint)
    assert emb.dimensions == 8
    assert len(endpoint.requests) == 1
    assert emb.name == "openai:text-embed-test@8"
    assert len(endpoint.requests) == 1  # learnt once


def test_wrong_length_vector_is_an_error(endpoint: Endpoint) -> None:
    endpoint.mode = "short"
    with pytest.raises(EmbeddingError, match="length 7"):
        make(endpoint).embed(["a", "b"])


def test_configured_dimensions_are_enforced(endpoint: Endpoint) -> None:
    emb = make(endpoint)
    emb.embed(["learn eight"])
    endpoint.dims = 6  # the endpoint changes its model under us
    with pytest.raises(EmbeddingError, match="expected 8"):
        emb.embed(["now six"])


def test_http_500_is_an_error(endpoint: Endpoint) -> None:
    endpoint.mode = "status500"
    with pytest.raises(EmbeddingError, match=r"HTTP 500.*overloaded"):
        make(endpoint).embed(["hello"])


def test_timeout_is_an_error(endpoint: Endpoint) -> None:
    endpoint.mode = "slow"
    started = time.monotonic()
    with pytest.raises(EmbeddingError, match="timed out"):
        make(endpoint, timeout_seconds=0.2).embed(["hello"])
    assert time.monotonic() - started < 4  # the 0.2 s timeout, not the 5 s answer


def test_invalid_json_is_an_error(endpoint: Endpoint) -> None:
    endpoint.mode = "badjson"
    with pytest.raises(EmbeddingError, match="invalid JSON"):
        make(endpoint).embed(["hello"])


def test_errors_never_show_the_key(endpoint: Endpoint) -> None:
    endpoint.mode = "echo_key"
    with pytest.raises(EmbeddingError) as info:
        make(endpoint).embed(["hello"])
    assert "HTTP 401" in str(info.value)
    assert API_KEY not in str(info.value)


def test_connection_refused_is_an_error() -> None:
    emb = OpenAIEmbedder("http://127.0.0.1:9/v1", API_KEY, "m", timeout_seconds=2)
    with pytest.raises(EmbeddingError, match="failed"):
        emb.embed(["hello"])


def test_needs_url_and_model() -> None:
    with pytest.raises(ConfigError):
        OpenAIEmbedder("", "", "m")
    with pytest.raises(ConfigError):
        OpenAIEmbedder("http://127.0.0.1:1/v1", "", "")


def test_each_input_is_cut_to_a_fixed_length(endpoint: Endpoint) -> None:
    make(endpoint).embed(["short", "x" * (MAX_INPUT_CHARS * 50)])
    sent = endpoint.requests[0]["input"]
    assert sent == ["short", "x" * MAX_INPUT_CHARS]
