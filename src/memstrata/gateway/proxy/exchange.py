"""One proxied request: authenticate, recall, inject, forward, answer, capture.

    model call      the key names a principal, the principal a tenant; the body is read into a
                    ``Turn``; an auxiliary request is forwarded as it came; else recall (bounded,
                    fail-open) gives an ``Injection``, the body goes upstream with it, the turn's
                    prompt is stored beside it, the answer comes back verbatim (streamed event
                    by event, or whole) and ends once the prompt is stored, and the answer is
                    stored once the client has it
    pass-through    every other path under a prefix (model listings, token counting): the same
                    authentication, then forwarded with no memory involved

The body sent upstream is the client's own bytes when nothing is injected; else the client's
bytes with only the injected fields re-encoded (``body``). ``x-memstrata-injected`` on the answer says how many
characters went in (``system=..; memories=..``) and the session they were filed under.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import httpx
from fastapi import Request
from starlette.background import BackgroundTask
from starlette.responses import JSONResponse, Response

from memstrata.gateway.access import attach
from memstrata.gateway.context import memory_of, tenant
from memstrata.gateway.errors import Problem, render
from memstrata.gateway.middleware import request_id
from memstrata.gateway.proxy import auth, upstream
from memstrata.gateway.proxy.body import read_body, write_body
from memstrata.gateway.proxy.capture import auxiliary, commit, stored_role
from memstrata.gateway.proxy.dialect import Body, Dialect, Injection, Turn
from memstrata.gateway.proxy.session import session_key
from memstrata.gateway.proxy.settings import Provider
from memstrata.gateway.proxy.state import ProxyState
from memstrata.gateway.proxy.stream import TappedStream
from memstrata.layers.host_turns import TurnMessage
from memstrata.models import Tenant
from memstrata.operations import MemoryApi

log = logging.getLogger("memstrata.proxy")
RECALL_HEADER = "x-memstrata-recall"
CAPTURE_HEADER = "x-memstrata-capture"
INJECTED_HEADER = "x-memstrata-injected"


def _problem(request: Request, status: int, code: str, message: str) -> Response:
    status, body = render(Problem(status, code, message), request.url.path, request_id.get())
    return JSONResponse(body, status_code=status)


async def _authenticated(request: Request, provider: Provider) -> Response | None:
    """None when the request's key names a principal (now attached), else the 401 answer."""
    found = await auth.principal(request, provider.family, provider.key)
    if found is None:
        where = "the API key" if provider.key is not None else f"the {auth.MEMSTRATA_KEY} header"
        return _problem(
            request, 401, "unauthorized", f"memstrata: {where} is missing or not a key of this server"
        )
    attach(request.scope, found)
    return None


def _object(raw: bytes) -> Body | None:
    try:
        body = json.loads(raw)
    except ValueError:
        return None
    return body if isinstance(body, dict) else None


def _off(request: Request, header: str) -> bool:
    return (request.headers.get(header) or "").strip().lower() in ("off", "false", "0", "no")


async def model_call(request: Request, dialect: Dialect, provider: Provider, path: str) -> Response:
    """A chat, responses or messages call: with memory (see the module docstring)."""
    if (denied := await _authenticated(request, provider)) is not None:
        return denied
    state: ProxyState = request.app.state.proxy
    raw = await request.body()
    try:
        parsed = read_body(raw)
        turn = dialect.read(parsed.body, state.config.tools) if parsed is not None else None
    except RecursionError:  # json's own limit (about 1,000 levels): no provider body is that deep
        return _problem(request, 400, "invalid_input", "memstrata: the request body is nested too deeply")
    if parsed is None or turn is None:  # not a JSON object: the upstream words the error
        return await _relay(request, state, provider, path, raw)
    state.stats.requests += 1
    who, mem = tenant(request), memory_of(request)
    session = session_key(request.headers, turn.system, turn.first_user)
    recall, capture = _plan(request, state, turn)
    injection = await state.injector.injection(mem, who, session, turn) if recall else Injection()
    content = raw
    if not injection.empty:
        state.stats.injected += 1
        state.stats.injected_chars += len(injection.system) + len(injection.memories)
        content = write_body(parsed, dialect.inject(parsed.body, turn, injection))
    note = f"system={len(injection.system)}; memories={len(injection.memories)}; session={session}"
    log.info("proxy: %s %s injected %s", provider.family, path, note)
    # The prompt is stored while the upstream works on the answer, and the answer's end waits for
    # it (``_Turn.durable``). A whole (non-streamed) answer's headers come only with the answer,
    # so its capture starts before the request goes: the generation is the time the store has. A
    # stream's starts once its first event has gone to the client, so the store's work does not
    # compete with the time to first token (at the latest when the stream ends, however it ends).
    stored = _Turn(state, mem, who, session, turn) if capture else None
    if stored is not None and not dialect.streaming(parsed.body):
        stored.start()
    sent = await _send(request, state, provider, path, content)
    if isinstance(sent, Response):
        await _durable(stored)
        return sent
    headers = [
        *upstream.answer_headers(sent.headers.multi_items()),
        (INJECTED_HEADER.encode(), note.encode()),
    ]
    kept = stored if sent.status_code == 200 else None  # an error answer is not the turn's answer
    return await _answer(request, state, dialect, sent, headers, stored, kept)


class _Turn:
    """One turn's capture: the prompt (stored beside the upstream's work: ``start``), then the
    answer once the client has it."""

    def __init__(self, state: ProxyState, mem: MemoryApi, who: Tenant, session: str, turn: Turn) -> None:
        self._state, self._mem, self._who, self._session, self._turn = state, mem, who, session, turn
        self._prompt: asyncio.Task[bool] | None = None

    def start(self) -> asyncio.Task[bool]:
        """The prompt's capture, started on the first call."""
        if self._prompt is None:
            self._prompt = self._state.pending.start(self._store_prompt())
        return self._prompt

    async def _store_prompt(self) -> bool:
        t = self._turn
        done = await commit(self._mem, self._state.stats, self._who, self._session, t.messages, t.new_from)
        self._state.stats.prompts_captured += stored_role(done, "user")
        return done is not None

    async def durable(self) -> bool:
        """Whether the prompt is stored, once its capture has ended (started now if it was
        not); shielded: a client that leaves stops the wait, never the capture."""
        return await asyncio.shield(self.start())

    async def answer(self, answer: list[TurnMessage]) -> None:
        # The answer alone is new, unless the prompt could not be stored: then it goes again.
        t = self._turn
        prompt_stored = await self.durable()
        stored_before = len(t.messages) if prompt_stored else t.new_from
        messages = [*t.messages, *answer]
        done = await commit(self._mem, self._state.stats, self._who, self._session, messages, stored_before)
        if stored_role(done, "assistant"):
            self._state.stats.captured += 1
        elif done is not None:  # nothing of it kept: only tool calls, or only what L0 drops
            self._state.stats.answers_empty += 1


async def _durable(stored: _Turn | None) -> None:
    if stored is not None:
        await stored.durable()


async def _answer(
    request: Request,
    state: ProxyState,
    dialect: Dialect,
    sent: httpx.Response,
    headers: list[tuple[bytes, bytes]],
    stored: _Turn | None,
    kept: _Turn | None,
) -> Response:
    """The upstream's answer as the client gets it: it ends after the prompt is stored
    (``stored``); the answer is stored by ``kept`` once the client has it (a stream: when it
    ended complete), its body read off the request's path."""
    if _is_stream(sent):
        acc = dialect.accumulator(state.config.tools)

        async def done(complete: bool) -> None:
            if complete and kept is not None:
                await kept.answer(acc.messages())

        began = stored.start if stored is not None else None
        return TappedStream(sent, headers, acc, state.stats, done, lambda: _durable(stored), began)
    data = await _read(sent)
    await _durable(stored)
    if data is None:
        return _broken(request, state)
    if kept is None:
        return _whole(sent, headers, data, None)

    async def store() -> None:
        await kept.answer(dialect.answer(_object(data), state.config.tools))

    return _whole(sent, headers, data, BackgroundTask(store))


def _plan(request: Request, state: ProxyState, turn: Turn) -> tuple[bool, bool]:
    """Whether to recall and whether to capture."""
    reason = auxiliary(turn, state.config.auxiliary, request.headers)
    if reason is not None:
        state.stats.auxiliary += 1
        log.info("proxy: auxiliary request (%s): no recall, no capture", reason)
        return False, False
    recall, capture = not _off(request, RECALL_HEADER), not _off(request, CAPTURE_HEADER)
    state.stats.recall_skipped += not recall
    state.stats.capture_skipped += not capture
    return recall, capture


async def pass_through(request: Request, provider: Provider, prefix: str) -> Response:
    """Any other path under ``prefix``: authenticated, then forwarded with no memory; a path
    that could leave the upstream's base path is a 400 (``upstream.forwarded_path``)."""
    if (denied := await _authenticated(request, provider)) is not None:
        return denied
    raw = request.scope.get("raw_path") or request.scope["path"].encode("utf-8")
    try:
        path = upstream.forwarded_path(raw, prefix)
    except upstream.PathRefused as exc:
        return _refused_path(request, exc)
    return await _relay(request, request.app.state.proxy, provider, path, await request.body())


def _refused_path(request: Request, exc: upstream.PathRefused) -> Response:
    log.warning("proxy: refused path %r (%s)", request.scope.get("raw_path"), exc)
    return _problem(request, 400, "invalid_path", f"memstrata: {exc}; not forwarded")


async def _relay(
    request: Request, state: ProxyState, provider: Provider, path: str, content: bytes
) -> Response:
    sent = await _send(request, state, provider, path, content)
    if isinstance(sent, Response):
        return sent
    headers = upstream.answer_headers(sent.headers.multi_items())
    if _is_stream(sent):
        acc = _Ignored()

        async def done(complete: bool) -> None:
            return None

        return TappedStream(sent, headers, acc, state.stats, done)
    data = await _read(sent)
    return _broken(request, state) if data is None else _whole(sent, headers, data, None)


async def _send(
    request: Request, state: ProxyState, provider: Provider, path: str, content: bytes
) -> httpx.Response | Response:
    """The upstream's answer, its body not read yet; or the 502 when it cannot be reached (the
    400 when the target would leave the upstream's base path)."""
    try:
        target = upstream.url(provider.base_url, path, request.url.query)
    except upstream.PathRefused as exc:
        return _refused_path(request, exc)
    headers = upstream.request_headers(
        request.headers.items(), auth.upstream_key(provider.family, provider.key)
    )
    built = state.client.build_request(request.method, target, headers=headers, content=content)
    try:
        return await state.client.send(built, stream=True)
    except httpx.HTTPError as exc:
        state.stats.upstream_unreachable += 1
        log.warning("proxy: upstream %s unreachable (%s: %s)", provider.base_url, type(exc).__name__, exc)
        return _problem(
            request,
            502,
            "upstream_unreachable",
            f"memstrata could not reach the upstream: {type(exc).__name__}",
        )


async def _read(sent: httpx.Response) -> bytes | None:
    """The whole answer body, or None when the upstream broke off while sending it."""
    try:
        return await sent.aread()
    except httpx.HTTPError as exc:
        log.warning("proxy: the upstream broke off its answer (%s: %s)", type(exc).__name__, exc)
        return None
    finally:
        await sent.aclose()


def _broken(request: Request, state: ProxyState) -> Response:
    state.stats.upstream_broken += 1
    return _problem(request, 502, "upstream_broken", "the upstream broke off its answer")


def _is_stream(sent: httpx.Response) -> bool:
    return str(sent.headers.get("content-type", "")).startswith("text/event-stream")


def _whole(
    sent: httpx.Response, headers: list[tuple[bytes, bytes]], data: bytes, task: BackgroundTask | None
) -> Response:
    out = Response(content=data, status_code=sent.status_code, background=task)
    out.raw_headers = [*headers, (b"content-length", str(len(data)).encode())]
    return out


class _Ignored:
    """The accumulator of a pass-through stream: nothing is kept."""

    def feed(self, event: Any) -> None:
        return None

    def messages(self) -> list[TurnMessage]:
        return []
