"""A scripted LLM provider on 127.0.0.1: answers OpenAI Chat Completions, OpenAI Responses and
Anthropic Messages in each provider's format, whole or streamed, and records every request.

    with ScriptedUpstream() as up:
        up.enqueue(Reply(text="Hello Ana"))           # else the default reply
        ... point the proxy's openai_url at up.openai_url, anthropic_url at up.url ...
        assert up.requests[0].json["messages"][0]["role"] == "system"

A streamed reply sends one event per word, ``delay`` seconds apart, over HTTP/1.1 chunked
encoding; a client that goes away mid-stream is noted in ``Recorded.cancelled``. Each answer
carries the headers a provider sends (a request id, rate-limit headers) so tests can check
they come back.
"""

from __future__ import annotations

import gzip
import json
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True, slots=True)
class Reply:
    """One scripted answer: ``text`` (and a tool call when ``tool`` names one), or an error when
    ``status`` is not 200 (with ``headers`` such as ``retry-after``). Streams wait ``delay``
    seconds before each event and keep the connection open ``linger`` seconds after the last one
    (as a provider may before it ends the response); ``usage`` is reported as given. ``gzip``
    compresses the body (a stream event by event, each flushed so it can be read on arrival);
    ``cut_after`` breaks the connection off after that many events of a stream, or halfway
    through a whole body, with no proper end. A ``tool`` reply with ``text=""`` is the call
    alone (no text part). A stream with a ``gate`` sends its first event only once the gate is
    set (at most 30 s): a test holds the stream there for as long as it looks."""

    text: str = "Noted, thank you."
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    tool: str | None = None
    delay: float = 0.0
    linger: float = 0.0
    usage: tuple[int, int] = (11, 7)
    gzip: bool = False
    cut_after: int | None = None
    tool_input: str = '{"city": "Paris"}'  # the tool call's arguments, JSON text
    namespace: str | None = None  # a Responses function call's tool namespace (Codex's MCP tools)
    gate: threading.Event | None = None


@dataclass(slots=True)
class Recorded:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    started: float = field(default_factory=time.monotonic)
    finished: float | None = None  # when the last byte was written
    cancelled: bool = False  # the client went away before the end

    @property
    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


class _Server(ThreadingHTTPServer):
    request_queue_size = 256  # the default 5 resets connections under 20 concurrent streams


class ScriptedUpstream:
    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.openai_url = self.url + "/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._count = 0
        self.default = Reply()  # the answer when nothing is queued
        self.script: Callable[[Recorded], Reply] | None = None  # else this picks it, by request

    def enqueue(self, *replies: Reply) -> None:
        with self._lock:
            self._queue.extend(replies)

    def next_reply(self, rec: Recorded) -> tuple[int, Reply]:
        with self._lock:
            self.requests.append(rec)
            self._count += 1
            if self._queue:
                return self._count, self._queue.popleft()
        return self._count, (self.script(rec) if self.script is not None else self.default)

    def __enter__(self) -> ScriptedUpstream:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()


# --- answers in each format -----------------------------------------------------------------------


def _halves(text: str) -> tuple[str, str]:
    """JSON text in two pieces, as a stream sends it."""
    return text[: len(text) // 2], text[len(text) // 2 :]


def _words(text: str) -> list[str]:
    parts = text.split(" ")
    return [p if i == len(parts) - 1 else p + " " for i, p in enumerate(parts)]


def chat_body(n: int, model: str, r: Reply) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": r.text, "refusal": None}
    if r.tool:
        message["tool_calls"] = [
            {
                "id": f"call_{n}",
                "type": "function",
                "function": {"name": r.tool, "arguments": r.tool_input},
            }
        ]
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "created": 1_700_000_000 + n,
        "model": model,
        "system_fingerprint": "fp_scripted",
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if r.tool else "stop",
            }
        ],
        "usage": {"prompt_tokens": r.usage[0], "completion_tokens": r.usage[1], "total_tokens": sum(r.usage)},
    }


def chat_events(n: int, model: str, r: Reply) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> str:
        body = {
            "id": f"chatcmpl-{n}",
            "object": "chat.completion.chunk",
            "created": 1_700_000_000 + n,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }
        if usage is not None:
            body["usage"] = usage
        return f"data: {json.dumps(body)}\n\n"

    yield chunk({"role": "assistant", "content": ""})
    for w in _words(r.text):
        yield chunk({"content": w})
    if r.tool:
        call = {
            "index": 0,
            "id": f"call_{n}",
            "type": "function",
            "function": {"name": r.tool, "arguments": ""},
        }
        yield chunk({"tool_calls": [call]})
        for piece in _halves(r.tool_input):
            yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": piece}}]})
    usage = {"prompt_tokens": r.usage[0], "completion_tokens": r.usage[1], "total_tokens": sum(r.usage)}
    yield chunk({}, "tool_calls" if r.tool else "stop", usage)
    yield "data: [DONE]\n\n"


def _response_output(n: int, r: Reply) -> list[dict[str, Any]]:
    output: list[dict[str, Any]] = []
    if r.text or not r.tool:
        output.append(
            {
                "type": "message",
                "id": f"msg_{n}",
                "status": "completed",
                "role": "assistant",
                "content": [{"type": "output_text", "text": r.text, "annotations": []}],
            }
        )
    if r.tool:
        output.append(
            {
                "type": "function_call",
                "id": f"fc_{n}",
                "call_id": f"call_{n}",
                "name": r.tool,
                **({"namespace": r.namespace} if r.namespace else {}),
                "arguments": r.tool_input,
                "status": "completed",
            }
        )
    return output


def response_body(n: int, model: str, r: Reply) -> dict[str, Any]:
    return {
        "id": f"resp_{n}",
        "object": "response",
        "created_at": 1_700_000_000 + n,
        "status": "completed",
        "model": model,
        "output": _response_output(n, r),
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
        "usage": {
            "input_tokens": r.usage[0],
            "output_tokens": r.usage[1],
            "total_tokens": sum(r.usage),
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens_details": {"reasoning_tokens": 0},
        },
    }


def response_events(n: int, model: str, r: Reply) -> Iterator[str]:
    """The events a Responses stream sends, in order: each output item added, its parts and
    deltas, done; then ``response.completed`` (what the Codex CLI needs to see)."""
    final = response_body(n, model, r)
    seq = iter(range(1000))

    def event(kind: str, **data: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, 'sequence_number': next(seq), **data})}\n\n"

    yield event("response.created", response={**final, "status": "in_progress", "output": []})
    yield event("response.in_progress", response={**final, "status": "in_progress", "output": []})
    for at, done in enumerate(final["output"]):
        if done["type"] == "message":
            yield event(
                "response.output_item.added",
                output_index=at,
                item={**done, "status": "in_progress", "content": []},
            )
            part = {"type": "output_text", "text": "", "annotations": []}
            where = {"item_id": done["id"], "output_index": at, "content_index": 0}
            yield event("response.content_part.added", **where, part=part)
            for w in _words(r.text):
                yield event("response.output_text.delta", **where, delta=w)
            yield event("response.output_text.done", **where, text=r.text)
            yield event("response.content_part.done", **where, part={**part, "text": r.text})
        else:
            yield event(
                "response.output_item.added",
                output_index=at,
                item={**done, "arguments": "", "status": "in_progress"},
            )
            for piece in _halves(r.tool_input):
                yield event(
                    "response.function_call_arguments.delta", item_id=done["id"], output_index=at, delta=piece
                )
            yield event(
                "response.function_call_arguments.done",
                item_id=done["id"],
                output_index=at,
                arguments=r.tool_input,
            )
        yield event("response.output_item.done", output_index=at, item=done)
    yield event("response.completed", response=final)


def message_body(n: int, model: str, r: Reply) -> dict[str, Any]:
    content: list[dict[str, Any]] = [{"type": "text", "text": r.text}] if r.text or not r.tool else []
    if r.tool:
        content.append(
            {"type": "tool_use", "id": f"toolu_{n}", "name": r.tool, "input": json.loads(r.tool_input)}
        )
    return {
        "id": f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": content,
        "stop_reason": "tool_use" if r.tool else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": r.usage[0], "output_tokens": r.usage[1]},
    }


def message_events(n: int, model: str, r: Reply) -> Iterator[str]:
    def event(kind: str, **data: Any) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    start = {**message_body(n, model, r), "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": r.usage[0], "output_tokens": 1}
    yield event("message_start", message=start)
    at = 0
    if r.text or not r.tool:
        yield event("content_block_start", index=0, content_block={"type": "text", "text": ""})
        for w in _words(r.text):
            yield event("content_block_delta", index=0, delta={"type": "text_delta", "text": w})
        yield event("content_block_stop", index=0)
        at = 1
    if r.tool:
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": r.tool, "input": {}}
        yield event("content_block_start", index=at, content_block=block)
        for piece in _halves(r.tool_input):
            yield event(
                "content_block_delta", index=at, delta={"type": "input_json_delta", "partial_json": piece}
            )
        yield event("content_block_stop", index=at)
    stop = "tool_use" if r.tool else "end_turn"
    yield event(
        "message_delta",
        delta={"stop_reason": stop, "stop_sequence": None},
        usage={"output_tokens": r.usage[1]},
    )
    yield event("message_stop")


def error_body(path: str, r: Reply) -> dict[str, Any]:
    if path.startswith("/v1/messages"):
        return {"type": "error", "error": {"type": "rate_limit_error", "message": f"scripted {r.status}"}}
    return {
        "error": {
            "message": f"scripted {r.status}",
            "type": "requests",
            "param": None,
            "code": "rate_limit_exceeded",
        }
    }


_WHOLE = {"/v1/chat/completions": chat_body, "/v1/responses": response_body, "/v1/messages": message_body}
_STREAMS = {
    "/v1/chat/completions": chat_events,
    "/v1/responses": response_events,
    "/v1/messages": message_events,
}


def _handler(owner: ScriptedUpstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True  # headers and body are separate writes: no 40 ms ACK wait

        def log_message(self, format: str, *args: Any) -> None:
            return None

        def do_GET(self) -> None:
            self._serve()

        def do_POST(self) -> None:
            self._serve()

        def _serve(self) -> None:
            size = int(self.headers.get("content-length") or 0)
            rec = Recorded(
                self.command,
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                self.rfile.read(size),
            )
            n, r = owner.next_reply(rec)
            path = self.path.split("?")[0]
            ids = {
                "x-request-id": f"req_up_{n}",
                "request-id": f"req_up_{n}",
                "x-ratelimit-remaining-requests": "99",
            }
            if r.status != 200:
                self._whole(r.status, error_body(path, r), {**ids, **r.headers}, rec, r)
                return
            body = rec.json if rec.body else {}
            model = str((body or {}).get("model", "scripted"))
            if path in _STREAMS and (body or {}).get("stream") is True:
                self._stream(_STREAMS[path](n, model, r), {**ids, **r.headers}, r, rec)
            elif path in _WHOLE:
                self._whole(200, _WHOLE[path](n, model, r), {**ids, **r.headers}, rec, r)
            elif path.endswith("/count_tokens"):
                self._whole(200, {"input_tokens": 42}, ids, rec)
            elif path.endswith("/models"):
                self._whole(
                    200, {"object": "list", "data": [{"id": "scripted-1", "object": "model"}]}, ids, rec
                )
            else:
                self._whole(
                    404, {"error": {"message": f"no route {path}", "type": "invalid_request_error"}}, ids, rec
                )

        def _whole(
            self, status: int, body: Any, headers: dict[str, str], rec: Recorded, r: Reply | None = None
        ) -> None:
            raw = json.dumps(body).encode()
            if r is not None and r.gzip:
                raw = gzip.compress(raw)
                headers = {**headers, "content-encoding": "gzip"}
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(raw)))
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            if r is not None and r.cut_after is not None:
                self.wfile.write(raw[: len(raw) // 2])
                self.close_connection = True  # the length promised more: a broken answer
            else:
                self.wfile.write(raw)
            rec.finished = time.monotonic()

        def _stream(self, events: Iterator[str], headers: dict[str, str], r: Reply, rec: Recorded) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream; charset=utf-8")
            self.send_header("transfer-encoding", "chunked")
            if r.gzip:
                self.send_header("content-encoding", "gzip")
            for k, v in headers.items():
                self.send_header(k, v)
            self.end_headers()
            packer = zlib.compressobj(wbits=31) if r.gzip else None  # 31: the gzip format

            def chunk(data: bytes) -> None:
                if data:
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                    self.wfile.flush()

            try:
                for i, e in enumerate(events):
                    if i == r.cut_after:
                        self.close_connection = True  # no last chunk: the stream broke
                        rec.finished = time.monotonic()
                        return
                    if i == 0 and r.gate is not None:
                        r.gate.wait(30)
                    if r.delay:
                        time.sleep(r.delay)
                    data = e.encode()
                    chunk(packer.compress(data) + packer.flush(zlib.Z_SYNC_FLUSH) if packer else data)
                time.sleep(r.linger)
                chunk(packer.flush() if packer else b"")
                self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except OSError:  # the client went away: what the proxy does when its client does
                rec.cancelled = True
                self.close_connection = True
            rec.finished = time.monotonic()

    return Handler
