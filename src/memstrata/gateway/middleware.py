"""The gateway's outer layers, as plain ASGI middleware (outermost first):

    RequestIds   every request gets an id (a sane ``x-request-id`` is kept), echoed in the
                 response header and in error bodies; one log line per request
    BearerAuth   ``Authorization: Bearer <key>`` on every path but health and the docs
                 (``/docs``, ``/redoc``, their assets, ``/openapi.json``), when a key is
                 configured; attaches the key's principal (``access``); health is open, and
                 answers details only to the admin key
    SingleTenant a tenant field named twice (query, JSON body, header) is a 400: every
                 surface would otherwise read a different one of the two
    BodyLimit    request bodies over the limit get 413, counted while they stream in (a
                 ``Content-Length`` is not trusted); the rest of such a body is drained unread

They answer errors themselves, in the shape of the path's API family (``errors.render``).
"""

from __future__ import annotations

import contextvars
import json
import logging
import re
import secrets
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl

from memstrata.errors import TooManyFailuresError
from memstrata.gateway.access import ADMIN, NOBODY, KeyRing, Principal, attach
from memstrata.gateway.api_docs import is_docs
from memstrata.gateway.errors import Problem, problem_of, render
from memstrata.gateway.throttle import client_address

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

log = logging.getLogger("memstrata.gateway")
request_id: contextvars.ContextVar[str] = contextvars.ContextVar("memstrata_request_id", default="-")
OPEN_PATHS = frozenset({"/health", "/v1/health"})
SELF_AUTHENTICATED = ("/proxy/", "/ui")
_SANE_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


def header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return None


async def answer(send: Send, scope: Scope, problem: Problem, *, retry_after: int | None = None) -> None:
    """Send ``problem`` as the whole response, in the shape of the path's API family."""
    rid = request_id.get()
    status, body = render(problem, scope.get("path", ""), rid)
    raw = json.dumps(body).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(raw)).encode()),
        (b"x-request-id", rid.encode()),
    ]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": raw})


class RequestIds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        given = header(scope, b"x-request-id")
        rid = given if given and _SANE_ID.match(given) else f"req-{secrets.token_hex(8)}"
        token = request_id.set(rid)
        client = scope.get("client")
        client_address.set(str(client[0]) if client else "-")  # whom failed keys slow (throttle)
        status = [0]
        started = time.perf_counter()

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status[0] = message["status"]
                if not any(
                    k.lower() == b"x-request-id" for k, _ in message.get("headers", [])
                ):  # a proxied answer keeps its own
                    message["headers"] = [*message.get("headers", []), (b"x-request-id", rid.encode())]
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        except Exception:
            log.exception("%s unhandled error in %s %s", rid, scope.get("method"), scope.get("path"))
            if status[0]:
                raise
            status[0] = 500
            await answer(send, scope, Problem(500, "internal_error", "internal error (see the server log)"))
        finally:
            elapsed = (time.perf_counter() - started) * 1000
            log.info("%s %s %s %d %.1fms", rid, scope.get("method"), scope.get("path"), status[0], elapsed)
            request_id.reset(token)


class BearerAuth:
    """``Authorization: Bearer <key>`` on every path but health and those that authenticate
    themselves (``SELF_AUTHENTICATED``: the proxy reads provider-style keys, the console a
    session cookie, both through the same ``KeyRing``)."""

    def __init__(self, app: ASGIApp, keyring: KeyRing) -> None:
        self.app = app
        self.keyring = keyring

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http":  # the lifespan: its state is copied into every request's
            await self.app(scope, receive, send)
            return
        if not self.keyring.required:
            attach(scope, ADMIN)  # no key configured: loopback only (check_binding), open
            await self.app(scope, receive, send)
            return
        given = header(scope, b"authorization") or ""
        scheme, _, token = given.partition(" ")
        if path in OPEN_PATHS:  # open, but its details are the admin's (a bad key: anonymous)
            bearer = scheme.lower() == "bearer" and token.strip()
            try:
                found = await self.keyring.principal_for(token.strip()) if bearer else None
            except TooManyFailuresError:
                found = None
            attach(scope, found or NOBODY)
            await self.app(scope, receive, send)
            return
        if is_docs(path) and scope.get("method") in ("GET", "HEAD"):
            attach(scope, NOBODY)  # the docs are open, the API they describe is not (api_docs)
            await self.app(scope, receive, send)
            return
        if path.startswith(SELF_AUTHENTICATED):
            attach(scope, NOBODY)  # until the edge itself authenticates the request
            await self.app(scope, receive, send)
            return
        if scheme.lower() != "bearer" or not token.strip():
            await answer(send, scope, Problem(401, "unauthorized", "Unauthorized: missing Bearer token"))
            return
        principal = await self._principal(send, scope, token.strip())
        if principal is None:
            return
        attach(scope, principal)
        await self.app(scope, receive, send)

    async def _principal(self, send: Send, scope: Scope, token: str) -> Principal | None:
        """The token's principal, or None once the refusal (401, or 429 for a client sending
        too many bad keys: ``throttle``) is sent."""
        try:
            principal = await self.keyring.principal_for(token)
        except TooManyFailuresError as exc:
            await answer(send, scope, problem_of(exc), retry_after=exc.retry_after)
            return None
        if principal is None:
            await answer(send, scope, Problem(401, "unauthorized", "Unauthorized: invalid token"))
        return principal


TENANT_FIELDS = ("user_id", "agent_id", "team_id")
TENANT_HEADERS = frozenset(
    {
        b"x-memstrata-user-id",
        b"x-memstrata-agent-id",
        b"x-tdai-user-id",
        b"x-tdai-agent-id",
        b"x-tdai-team-id",
    }
)


class _Repeated(ValueError):
    def __init__(self, where: str) -> None:
        super().__init__(where)
        self.where = where


def _no_repeated_fields(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    for key, _ in pairs:
        if key in TENANT_FIELDS and key in seen:
            raise _Repeated(f"JSON field {key!r}")
        seen.add(key)
    return dict(pairs)


def repeated_tenant_field(scope: Scope, body: bytes) -> str | None:
    """Where a tenant field is named twice (a query parameter, a header, a key of one JSON
    object), else None. Each place alone would pick a different one of the two values (the
    last query value, the first header, the last JSON key), so the request is refused."""
    query = parse_qsl(bytes(scope.get("query_string", b"")).decode("latin-1"), keep_blank_values=True)
    names = [k for k, _ in query if k in TENANT_FIELDS]
    if len(names) != len(set(names)):
        return f"query parameter {next(n for n in names if names.count(n) > 1)!r}"
    headers = [bytes(k).lower() for k, _ in scope.get("headers", ()) if bytes(k).lower() in TENANT_HEADERS]
    if len(headers) != len(set(headers)):
        return f"header {next(h for h in headers if headers.count(h) > 1).decode()!r}"
    suspicious = b"\\u" in body or any(body.count(f'"{f}"'.encode()) > 1 for f in TENANT_FIELDS)
    if suspicious:
        try:
            json.loads(body, object_pairs_hook=_no_repeated_fields)
        except _Repeated as found:
            return found.where
        except ValueError:
            return None  # not JSON: the route answers that
    return None


class SingleTenant:
    """Refuses (400) a request that names a tenant field twice (``repeated_tenant_field``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        if scope.get("method") in _BODY_METHODS:
            more = True
            while more:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return
                chunks.append(bytes(message.get("body", b"")))
                more = bool(message.get("more_body", False))
        body = b"".join(chunks)
        # A proxied model request's body is the model's, not ours: only its headers name a tenant.
        proxied = str(scope.get("path", "")).startswith("/proxy/")
        where = repeated_tenant_field(scope, b"" if proxied else body)
        if where is not None:
            problem = Problem(400, "repeated_tenant", f"{where} is given more than once: name a tenant once")
            await answer(send, scope, problem)
            return
        await self.app(scope, _replay(body, receive) if chunks else receive, send)


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") not in _BODY_METHODS:
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, more = 0, True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunk = bytes(message.get("body", b""))
            more = bool(message.get("more_body", False))
            size += len(chunk)
            if size > self.limit:
                await self._drain(receive, more)
                await answer(send, scope, _too_large(self.limit))
                return
            chunks.append(chunk)
        await self.app(scope, _replay(b"".join(chunks), receive), send)

    async def _drain(self, receive: Receive, more: bool) -> None:
        """Read (and drop) the rest of an oversized body, up to a cap, so the client gets the 413
        instead of a reset connection; past the cap the connection is closed after the answer."""
        seen = 0
        while more and seen < 32 * self.limit:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            seen += len(message.get("body", b""))
            more = bool(message.get("more_body", False))


def _too_large(limit: int) -> Problem:
    return Problem(413, "payload_too_large", f"Request body exceeds {limit} bytes limit")


def _replay(body: bytes, receive: Receive) -> Receive:
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


class SecretFilter(logging.Filter):
    """Redacts configured secrets and any bearer token from log records."""

    _BEARER = re.compile(r"(?i)(bearer\s+)[^\s'\",]+")

    def __init__(self, secrets_: list[str]) -> None:
        super().__init__()
        self._secrets = [s for s in secrets_ if s]

    def add(self, secrets_: list[str]) -> None:
        self._secrets += [s for s in secrets_ if s and s not in self._secrets]

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        clean = self._BEARER.sub(r"\1***", text)
        for s in self._secrets:
            clean = clean.replace(s, "***")
        if clean != text:
            record.msg, record.args = clean, None
        return True
