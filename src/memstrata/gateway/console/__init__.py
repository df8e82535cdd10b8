"""The web console at ``/ui``: see, check and correct what an agent remembers.

Server-rendered pages (Jinja2 templates, one stylesheet and a few lines of script, all served
from this package: nothing from outside), one router per page group:

    pages_home      login, logout, the tenants (``/ui/``), the pipeline status (``/ui/status``)
    pages_tenant    a tenant's overview and its scenes, persona and scene edits
    pages_records   atoms and messages, atom curation (edit, pin, time to live, delete)
    pages_query     search and the recall preview
    pages_manage    run the pipeline now, import, export, forget

``views`` and ``records`` read the facade and shape what a page shows; ``web`` says who is looking
(``session`` keeps the login) and checks every tenant through ``gateway.access.check``. The
console is its own small application mounted in the gateway, so its errors are pages, not the
API's JSON; it reads the gateway's memory and key ring (``app.state``) when a request comes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import quote

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException

from memstrata.errors import MemstrataError, TooManyFailuresError
from memstrata.gateway.console import pages_home, pages_manage, pages_query, pages_records, pages_tenant
from memstrata.gateway.console.cache import TenantCache
from memstrata.gateway.console.render import templates
from memstrata.gateway.console.session import Sessions
from memstrata.gateway.console.web import LoginNeeded
from memstrata.gateway.errors import problem_of

PREFIX = "/ui"
# Pages may load only what this server serves, and never be framed by another site.
POLICY = (
    "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


def build(gateway: FastAPI) -> FastAPI:
    """The console application, reading ``gateway``'s state (memory, key ring) per request."""
    console = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    console.state.gateway = gateway
    console.state.sessions = Sessions()
    gateway.state.console_sessions = console.state.sessions  # connection admission asks it too
    console.state.kept = TenantCache()
    for module in (pages_home, pages_tenant, pages_records, pages_query, pages_manage):
        console.include_router(module.router)
    console.mount("/static", StaticFiles(packages=[("memstrata.gateway.console", "static")]), name="static")
    _handlers(console)

    @console.middleware("http")
    async def headers(request: Request, call_next: Callable[[Request], Awaitable[Response]]) -> Response:
        started = time.perf_counter()
        response = await call_next(request)
        # How long the page took to make, for the browser's network panel and the page bench.
        response.headers["server-timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.2f}"
        response.headers.setdefault("content-security-policy", POLICY)
        response.headers.setdefault("x-content-type-options", "nosniff")
        response.headers.setdefault("referrer-policy", "same-origin")
        if response.media_type == "text/html" or "text/html" in response.headers.get("content-type", ""):
            response.headers.setdefault("cache-control", "no-store")
        return response

    return console


def mount(gateway: FastAPI) -> None:
    """Serve the console at ``/ui`` of ``gateway``."""
    gateway.mount(PREFIX, build(gateway), name="console")


def _error(request: Request, status: int, title: str, message: str) -> HTMLResponse:
    body = (
        templates()
        .get_template("error.html")
        .render(request=request, view=None, status=status, title=title, message=message)
    )
    return HTMLResponse(body, status_code=status)


def _handlers(console: FastAPI) -> None:
    @console.exception_handler(LoginNeeded)
    async def login_needed(request: Request, exc: LoginNeeded) -> Response:
        return RedirectResponse(f"{PREFIX}/login?next={quote(exc.next_path, safe='/')}", status_code=303)

    @console.exception_handler(MemstrataError)
    async def memstrata_error(request: Request, exc: MemstrataError) -> Response:
        problem = problem_of(exc)
        page = _error(request, problem.status, problem.code.replace("_", " "), problem.message)
        if isinstance(exc, TooManyFailuresError):  # a login form sent too many bad keys
            page.headers["retry-after"] = str(exc.retry_after)
        return page

    @console.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        first: dict[str, Any] = next(iter(exc.errors()), {})
        where = ".".join(str(p) for p in first.get("loc", ())[1:]) or "request"
        return _error(request, 422, "invalid input", f"{where}: {first.get('msg', 'invalid')}")

    @console.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        return _error(
            request, exc.status_code, "not found" if exc.status_code == 404 else "error", str(exc.detail)
        )
