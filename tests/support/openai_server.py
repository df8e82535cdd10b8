"""A scripted OpenAI-compatible HTTP server on 127.0.0.1, so tests exercise the real client path.

It speaks just enough of the API for memstrata's adapters: ``POST /v1/chat/completions`` answers
from a queue (a reply text, an HTTP error, or a reply after a delay) and ``POST /v1/embeddings``
answers with deterministic hashing vectors unless an error or delay is queued for it. Every request
body is recorded for assertions.

    with ScriptedOpenAIServer() as server:
        server.enqueue_chat('{"decisions": []}')
        model = OpenAIChatModel(server.base_url, "", "test-model")
        ...
        assert server.requests[0].body["model"] == "test-model"

Tests get a started server from the ``openai_server`` fixture (import it into a conftest).
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import math
import re
import struct
import threading
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Literal

import pytest

logger = logging.getLogger(__name__)

Endpoint = Literal["chat", "embeddings"]
_PATHS: dict[str, Endpoint] = {"/v1/chat/completions": "chat", "/v1/embeddings": "embeddings"}


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received: its path, JSON body and headers (lower-case names)."""

    path: str
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def endpoint(self) -> Endpoint | None:
        return _PATHS.get(self.path)


@dataclass(frozen=True, slots=True)
class _Scripted:
    """One queued answer: an error when ``status`` is not 200, else a reply after ``delay``."""

    status: int = 200
    error: Mapping[str, Any] | None = None
    text: str = ""
    tool_calls: tuple[tuple[str, str], ...] = ()
    delay: float = 0.0
    finish_reason: str | None = None


@dataclass(slots=True)
class _Script:
    queues: dict[Endpoint, deque[_Scripted]] = field(
        default_factory=lambda: {"chat": deque(), "embeddings": deque()}
    )
    requests: list[RecordedRequest] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)


def hashing_vector(text: str, dimensions: int) -> list[float]:
    """A deterministic unit vector: each word hashed to a signed bucket (shared words -> similar)."""
    vector = [0.0] * dimensions
    for token in re.findall(r"\w+", text.lower()):
        digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
        vector[int.from_bytes(digest[:4], "little") % dimensions] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[0], norm = 1.0, 1.0
    return [x / norm for x in vector]


class ScriptedOpenAIServer:
    """A real HTTP server on an ephemeral loopback port, answering from a script.

    ``base_url`` is ``http://127.0.0.1:PORT/v1``. Chat requests consume the chat queue in order; an
    empty chat queue answers HTTP 500 so a missing script fails loudly. Embedding requests consume
    the embeddings queue, else answer with ``hashing_vector`` of ``embedding_dimensions`` (or the
    request's ``dimensions``), as floats or base64 as the request asks.
    """

    def __init__(self, *, embedding_dimensions: int = 64) -> None:
        self.embedding_dimensions = embedding_dimensions
        self._script = _Script()
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.owner = self
        # A short poll interval keeps close() (and so every test teardown) fast.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, in arrival order (a copy)."""
        with self._script.lock:
            return list(self._script.requests)

    def bodies(self, endpoint: Endpoint = "chat") -> list[dict[str, Any]]:
        """The JSON bodies of the requests made to one endpoint."""
        return [r.body for r in self.requests if r.endpoint == endpoint]

    def enqueue_chat(
        self, text: str, *, tool_calls: Sequence[tuple[str, str]] = (), finish_reason: str | None = None
    ) -> None:
        """Queue a chat reply; ``tool_calls`` are ``(name, arguments JSON)`` pairs; ``finish_reason``
        ``"length"`` plays a reply cut at max_tokens."""
        self._push("chat", _Scripted(text=text, tool_calls=tuple(tool_calls), finish_reason=finish_reason))

    def enqueue_error(
        self, status: int, body: Mapping[str, Any] | str, *, endpoint: Endpoint = "chat"
    ) -> None:
        """Queue an HTTP error. A string body is wrapped in OpenAI's ``{"error": {...}}`` envelope."""
        error = body if not isinstance(body, str) else {"error": {"message": body, "type": "test_error"}}
        self._push(endpoint, _Scripted(status=status, error=error))

    def enqueue_delay(self, seconds: float, text: str = "", *, endpoint: Endpoint = "chat") -> None:
        """Queue a reply (chat: ``text``; embeddings: hashing vectors) sent after ``seconds``."""
        self._push(endpoint, _Scripted(text=text, delay=seconds))

    def close(self) -> None:
        """Stop serving; handlers still sleeping on a delay give up without answering."""
        self._script.stopping.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ScriptedOpenAIServer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # --- called from handler threads -------------------------------------------------------------

    def _push(self, endpoint: Endpoint, item: _Scripted) -> None:
        with self._script.lock:
            self._script.queues[endpoint].append(item)

    def _take(self, request: RecordedRequest) -> _Scripted | None:
        with self._script.lock:
            self._script.requests.append(request)
            queue = self._script.queues[request.endpoint] if request.endpoint else None
            return queue.popleft() if queue else None

    def _answer(self, request: RecordedRequest) -> tuple[int, dict[str, Any]] | None:
        """The status and JSON body to send, or None when the server stopped during a delay."""
        if request.endpoint is None:
            return 404, {"error": {"message": f"no route {request.path}", "type": "not_found"}}
        item = self._take(request)
        if item is not None and item.delay and self._script.stopping.wait(item.delay):
            return None
        if item is not None and item.status != 200:
            return item.status, dict(item.error or {})
        if request.endpoint == "embeddings":
            return 200, self._embeddings(request.body)
        if item is None:
            return 500, {"error": {"message": "scripted server: no chat reply queued", "type": "test"}}
        return 200, _chat_completion(request.body, item)

    def _embeddings(self, body: Mapping[str, Any]) -> dict[str, Any]:
        raw = body.get("input", [])
        texts = [raw] if isinstance(raw, str) else [str(t) for t in raw]
        dims = int(body.get("dimensions") or self.embedding_dimensions)
        as_base64 = body.get("encoding_format") == "base64"
        data = []
        for i, text in enumerate(texts):
            vector = hashing_vector(text, dims)
            encoded: Any = (
                base64.b64encode(struct.pack(f"<{dims}f", *vector)).decode() if as_base64 else vector
            )
            data.append({"object": "embedding", "index": i, "embedding": encoded})
        tokens = sum(len(t.split()) for t in texts)
        return {
            "object": "list",
            "data": data,
            "model": body.get("model", ""),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }


def _chat_completion(body: Mapping[str, Any], item: _Scripted) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": item.text}
    if item.tool_calls:
        message["tool_calls"] = [
            {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": args}}
            for i, (name, args) in enumerate(item.tool_calls)
        ]
    prompt_tokens = sum(len(str(m.get("content") or "").split()) for m in body.get("messages", []))
    completion_tokens = len(item.text.split())
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": item.finish_reason or ("tool_calls" if item.tool_calls else "stop"),
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a handler stuck in a delay must not keep the test process alive
    owner: ScriptedOpenAIServer


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real servers: clients reuse connections
    server: _Server

    def do_POST(self) -> None:
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_json"}})
            return
        headers = {k.lower(): v for k, v in self.headers.items()}
        answer = self.server.owner._answer(RecordedRequest(self.path, body, headers))
        if answer is not None:
            self._send(*answer)

    def _send(self, status: int, payload: Mapping[str, Any]) -> None:
        data = json.dumps(payload).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            # The client gave up first (a timeout test); nothing left to tell it.
            logger.debug("client closed the connection before the reply")

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("openai test server: " + format, *args)


@pytest.fixture
def openai_server() -> Iterator[ScriptedOpenAIServer]:
    """A started ``ScriptedOpenAIServer``, closed after the test."""
    with ScriptedOpenAIServer() as server:
        yield server
