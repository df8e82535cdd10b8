"""The cross-tenant pages: login and logout, the tenants list (``/ui/``), the pipeline status
(``/ui/status``)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from memstrata.gateway.console import views
from memstrata.gateway.console.render import templates
from memstrata.gateway.console.session import COOKIE
from memstrata.gateway.console.web import (
    Viewing,
    form,
    keyring,
    memory,
    page,
    parent,
    recent_status,
    sessions,
    set_cookie,
    settings,
)

router = APIRouter()


def _safe_next(target: str | None) -> str:
    """Only a console path may follow a login (never another site: an open redirect)."""
    return target if target and target.startswith("/ui/") and not target.startswith("//") else "/ui/"


@router.get("/login")
async def login_form(request: Request, next: str | None = None) -> Response:
    if not keyring(request).required:
        return RedirectResponse(_safe_next(next), status_code=303)
    body = templates().get_template("login.html").render(request=request, view=None, next=_safe_next(next))
    return HTMLResponse(body)


@router.post("/login")
async def login(request: Request) -> Response:
    """Trade a key for a session: the key is checked against the server's ``KeyRing`` and then
    forgotten; the cookie names the session, never the key. Login is the one form without a CSRF
    token (there is no session yet to tie one to); SameSite=Strict keeps it from other sites."""
    data = await request.form()
    key, target = str(data.get("key", "")).strip(), _safe_next(str(data.get("next", "")))
    principal = await keyring(request).principal_for(key) if key else None
    if principal is None:
        body = (
            templates()
            .get_template("login.html")
            .render(request=request, view=None, next=target, error="That key is not valid here.")
        )
        return HTMLResponse(body, status_code=401)
    _, cookie = sessions(request).open(principal)
    response = RedirectResponse(target, status_code=303)
    set_cookie(response, request, cookie)
    return response


@router.post("/logout")
async def logout(request: Request, view: Viewing) -> Response:
    await form(request, view)
    sessions(request).close(view.session)
    response = RedirectResponse("/ui/login" if keyring(request).required else "/ui/", status_code=303)
    response.delete_cookie(COOKIE, path="/ui")
    return response


@router.get("/")
async def home(request: Request, view: Viewing) -> Response:
    rows = await views.tenant_rows(memory(request), view.principal, await recent_status(request))
    return page(request, view, "home.html", rows=rows)


@router.get("/status")
async def status(request: Request, view: Viewing) -> Response:
    """The pipeline of the tenants this viewer may see; the page refreshes itself every few
    seconds (``console.js``), and a reload does the same without script."""
    mem = memory(request)
    found = await recent_status(request)
    reachable = {t for t in await mem.tenants() if view.principal.may_reach(t)}
    tenants = [t for t in found.tenants if t.tenant in reachable]
    sessions_ = [s for s in found.sessions if s.tenant in reachable]
    configured = settings(request)
    engine: str = configured.pipeline.engine
    if engine == "llm":
        engine = f"llm ({configured.llm.model})"
    proxy = getattr(parent(request).state, "proxy", None)  # its counters: every tenant's together
    return page(
        request,
        view,
        "status.html",
        status=found,
        tenants=tenants,
        sessions=sessions_,
        engine=engine,
        proxy=proxy.stats.snapshot() if proxy is not None and view.principal.admin else None,
    )
