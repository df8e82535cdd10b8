"""The gateway application: routes, error handlers, middleware and the lifespan that owns the
data directory.

The lifespan opens the one ``AsyncMemory`` of the directory (as its writer, with the pipeline
running in the background) before the first request and closes it after the last one: on
SIGTERM uvicorn stops accepting, finishes what is in flight, and ``close()`` drains the L1 work
this process captured.
"""

from __future__ import annotations

import gc
import ipaddress
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.routing import APIRoute
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route

from memstrata.errors import ConfigError, MemstrataError, TooManyFailuresError
from memstrata.gateway import api_docs, console
from memstrata.gateway.access import StoreKeys
from memstrata.gateway.context import RecentStatus, scope_tenant
from memstrata.gateway.errors import Problem, field_of, problem_of, render
from memstrata.gateway.middleware import BearerAuth, RequestIds, SecretFilter, SingleTenant, request_id
from memstrata.gateway.proxy import BodyLimits, ProxyState
from memstrata.gateway.proxy import router as proxy_router
from memstrata.gateway.routes import atoms, forgetting, keys, layers, messages, search, service, turns
from memstrata.gateway.serving import drain_seconds
from memstrata.gateway.tdam.router import router as tdam_router
from memstrata.gateway.throttle import Throttled
from memstrata.models import Tenant
from memstrata.models.keys import unguarded_keys
from memstrata.operations import MemoryApi
from memstrata.settings import Settings

Opener = Callable[[], Awaitable[MemoryApi]]  # opens the memory the server holds
log = logging.getLogger("memstrata.gateway")
LOOPBACK_NAMES = frozenset({"localhost"})
# The error answers any route may give (bodies: see gateway.errors), declared in the schema.
ANSWERS: dict[int | str, dict[str, Any]] = {
    400: {"description": "Invalid JSON, a tenant field named twice, or (TDAM routes) invalid input"},
    401: {"description": "Missing or invalid key"},
    403: {"description": "The key may not reach that tenant or route"},
    404: {"description": "No such record for this tenant"},
    413: {"description": "Request body too large"},
    429: {"description": "Too many bad keys from this client: retry after Retry-After seconds"},
}


def is_loopback(host: str) -> bool:
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, settings: Settings) -> None:
    """Refuse to serve off loopback without an API key."""
    if not is_loopback(host) and settings.api_key is None:
        raise ConfigError(
            f"refusing to listen on {host} without an API key: set MEMSTRATA_API_KEY "
            "(clients then send 'Authorization: Bearer <key>'), or bind to 127.0.0.1"
        )


def install_redaction(settings: Settings) -> None:
    """Keep the API key, the proxy's provider keys and bearer tokens out of every log handler."""
    p = settings.proxy
    keys = (settings.api_key, p.openai_api_key, p.anthropic_api_key)
    secrets = [k.get_secret_value() for k in keys if k is not None]
    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "memstrata")
    for handler in {h for n in names for h in logging.getLogger(n).handlers}:
        found = next((f for f in handler.filters if isinstance(f, SecretFilter)), None)
        if found is None:
            handler.addFilter(SecretFilter(secrets))
        else:  # a handler filtered for another server's keys (tests run several) learns these too
            found.add(secrets)


def create_app(
    settings: Settings, open_memory: Opener, *, host: str | None = None, store: str = "sqlite"
) -> FastAPI:
    """The gateway for ``settings``; ``open_memory`` opens the memory in the lifespan; ``store``
    names its backend in ``/health`` (``sqlite`` or ``postgresql``)."""
    mcp_server: Any = None

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        app.state.memory = await open_memory()
        app.state.recent_status = RecentStatus()
        await _warn_unguarded_keys(app.state.memory, settings)
        # Everything loaded so far (the app, its schemas, the memory's parts) lives as long as the
        # server: keep it out of the collector's full passes, which otherwise stalled every thread
        # ~100 ms at a time under load (recall p95 at 50 clients: 142 -> 46 ms server-side). On the
        # split server, gateway_load.py with the local model, two alternated pairs: recall p95
        # 29.6 / 37.7 ms with it, 37.2 / 40.0 without; capture p99 19.9 / 20.6 against 21.0 / 27.2.
        gc.freeze()
        try:
            async with AsyncExitStack() as stack:
                stack.push_async_callback(app.state.proxy.aclose)
                if mcp_server is not None:
                    await stack.enter_async_context(mcp_server.session_manager.run())
                yield
        finally:
            grace = settings.server.shutdown_grace_seconds
            await app.state.memory.close(within=drain_seconds(app.state, grace))

    app = FastAPI(
        title="memstrata",
        version=version("memstrata"),
        description="Layered long-term memory for LLM agents: the native API under /v1, "
        "TencentDB-Agent-Memory compatible routes, and MCP at /mcp.",
        lifespan=lifespan,
        docs_url=None,  # api_docs serves the pages with local assets (FastAPI's load a CDN)
        redoc_url=None,
    )
    api_docs.mount(app)
    app.state.store_name = (
        "postgresql" if settings.store.url.startswith(("postgres://", "postgresql://")) else "sqlite"
    )
    # The proxy's routes first: Starlette tries routes in order, and a proxied call, whose added
    # time to first token is the tightest budget, otherwise tried every other route before its
    # own (matching took 240 us, now 15); a /v1 call tries the proxy's first (25 -> 45 us).
    app.include_router(proxy_router)
    for module in (turns, search, messages, atoms, forgetting, layers, service, keys):
        app.include_router(module.router, responses=ANSWERS)
    app.include_router(tdam_router, responses=ANSWERS)
    app.state.settings = settings  # what the served memory was opened with (the console shows it)
    app.state.proxy = ProxyState(settings)
    console.mount(app)  # the web console at /ui (authenticates itself)
    if settings.server.mcp:
        from memstrata.mcp import load

        mcp_server = load().build_server(lambda: app.state.memory, resolve=_mcp_tenant)
        sub = mcp_server.streamable_http_app(streamable_http_path="/mcp", host=host or settings.server.host)
        from memstrata.gateway.mcp_owners import owned

        app.router.routes.extend(owned(list(sub.routes)))
    _handlers(app)
    app.add_middleware(SingleTenant)
    app.add_middleware(
        BodyLimits, limit=settings.server.max_body_bytes, proxy_limit=settings.proxy.max_body_bytes
    )
    admin_key = settings.api_key.get_secret_value() if settings.api_key else None
    app.state.keyring = Throttled(
        StoreKeys(admin_key, lambda: app.state.memory), free=settings.server.free_key_failures
    )
    app.add_middleware(BearerAuth, keyring=app.state.keyring)
    app.add_middleware(RequestIds)
    return app


async def _warn_unguarded_keys(memory: MemoryApi, settings: Settings) -> None:
    """Scoped keys on a server without an admin key restrict nothing: say so at start."""
    warning = unguarded_keys(await memory.keys(), settings.api_key is not None)
    if warning is not None:
        log.warning("%s", warning)


def _mcp_tenant(request: Any, user_id: str | None, agent_id: str | None) -> Tenant:
    """An MCP tool call's tenant, by the rule of every route (``context.scope_tenant``)."""
    return scope_tenant(request.scope if request is not None else {}, user_id, agent_id)


def _unparsed(body: Any) -> bool:
    """A body FastAPI could not read as JSON (sent without a JSON content type, say)."""
    if not isinstance(body, bytes | str):
        return False
    try:
        json.loads(body)
    except ValueError:
        return True
    return False


def _problem_response(request: Request, problem: Problem) -> JSONResponse:
    status, body = render(problem, request.url.path, request_id.get())
    return JSONResponse(body, status_code=status)


def _handlers(app: FastAPI) -> None:
    @app.exception_handler(MemstrataError)
    async def memstrata_error(request: Request, exc: MemstrataError) -> JSONResponse:
        answer = _problem_response(request, problem_of(exc))
        if isinstance(exc, TooManyFailuresError):
            answer.headers["retry-after"] = str(exc.retry_after)
        return answer

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        # (JSON text in a query parameter, such as ``filters``, is that field's error, below.)
        in_body = [err for err in errors if tuple(err.get("loc", ()))[:1] != ("query",)]
        if any(err.get("type") == "json_invalid" for err in in_body) or _unparsed(exc.body):
            return _problem_response(
                request, Problem(400, "invalid_json", "the request body is not valid JSON")
            )
        first = errors[0] if errors else {"loc": ("body",), "msg": "invalid request"}
        field = field_of(tuple(first.get("loc", ("body",))))
        listed = [
            {"field": field_of(tuple(err.get("loc", ()))), "message": err.get("msg", "")} for err in errors
        ]
        problem = Problem(
            422, "validation_error", f"{field}: {first.get('msg')}", field, {"errors": listed[:20]}
        )
        return _problem_response(request, problem)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        codes = {404: "not_found", 405: "method_not_allowed"}
        problem = Problem(exc.status_code, codes.get(exc.status_code, "http_error"), str(exc.detail))
        answer = _problem_response(request, problem)
        answer.headers.update(exc.headers or {})
        if exc.status_code == 405:  # every method of the path (Starlette names one route's)
            answer.headers["allow"] = ", ".join(_allowed(request))
        return answer


def _allowed(request: Request) -> list[str]:
    """The methods of the path's most specific template (``/v1/atoms/delete``, not the
    ``/v1/atoms/{atom_id}`` it also matches)."""
    by_template: dict[str, set[str]] = {}
    for route in _routes(request.app.router.routes):
        if route.matches(request.scope)[0] != Match.NONE:
            by_template.setdefault(route.path, set()).update(route.methods or ())
    if not by_template:
        return []
    best = min(by_template, key=lambda template: template.count("{"))
    return sorted(by_template[best])


def _routes(routes: list[Any]) -> Iterator[APIRoute | Route]:
    """Every route, inside included routers too (FastAPI keeps them nested)."""
    for route in routes:
        if isinstance(route, APIRoute | Route):
            yield route
        elif (inner := getattr(route, "original_router", None)) is not None:
            yield from _routes(list(inner.routes))
