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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from importlib.metadata import version
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from memstrata.errors import ConfigError, MemstrataError
from memstrata.gateway import console
from memstrata.gateway.access import AdminKey
from memstrata.gateway.context import RecentStatus
from memstrata.gateway.errors import Problem, field_of, problem_of, render
from memstrata.gateway.middleware import BearerAuth, BodyLimit, RequestIds, SecretFilter, request_id
from memstrata.gateway.routes import atoms, forgetting, layers, messages, search, service, turns
from memstrata.gateway.tdam.router import router as tdam_router
from memstrata.settings import Settings

Opener = Callable[[], Awaitable[Any]]
log = logging.getLogger("memstrata.gateway")
LOOPBACK_NAMES = frozenset({"localhost"})


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
    """Keep the API key and bearer tokens out of every log handler."""
    secret = settings.api_key.get_secret_value() if settings.api_key else ""
    names = ("", "uvicorn", "uvicorn.error", "uvicorn.access", "memstrata")
    for handler in {h for n in names for h in logging.getLogger(n).handlers}:
        if not any(isinstance(f, SecretFilter) for f in handler.filters):
            handler.addFilter(SecretFilter([secret]))


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
        # Everything loaded so far (the app, its schemas, the memory's parts) lives as long as the
        # server: keep it out of the collector's full passes, which otherwise stalled every thread
        # ~100 ms at a time under load (recall p95 at 50 clients: 142 -> 46 ms server-side).
        gc.freeze()
        try:
            async with AsyncExitStack() as stack:
                if mcp_server is not None:
                    await stack.enter_async_context(mcp_server.session_manager.run())
                yield
        finally:
            await app.state.memory.close()

    app = FastAPI(
        title="memstrata",
        version=version("memstrata"),
        description="Layered long-term memory for LLM agents: the native API under /v1, "
        "TencentDB-Agent-Memory compatible routes, and MCP at /mcp.",
        lifespan=lifespan,
    )
    app.state.store_name = (
        "postgresql" if settings.store.url.startswith(("postgres://", "postgresql://")) else "sqlite"
    )
    for module in (turns, search, messages, atoms, forgetting, layers, service):
        app.include_router(module.router)
    app.include_router(tdam_router)
    console.mount(app)  # the web console at /ui (authenticates itself)
    if settings.server.mcp:
        from memstrata.mcp import load

        mcp_server = load().build_server(lambda: app.state.memory)
        sub = mcp_server.streamable_http_app(streamable_http_path="/mcp", host=host or settings.server.host)
        app.router.routes.extend(sub.routes)
    _handlers(app)
    app.add_middleware(BodyLimit, limit=settings.server.max_body_bytes)
    app.state.keyring = AdminKey(settings.api_key.get_secret_value() if settings.api_key else None)
    app.add_middleware(BearerAuth, keyring=app.state.keyring)
    app.add_middleware(RequestIds)
    return app


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
        return _problem_response(request, problem_of(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        errors = list(exc.errors())
        if any(err.get("type") == "json_invalid" for err in errors) or _unparsed(exc.body):
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
        return _problem_response(request, problem)
