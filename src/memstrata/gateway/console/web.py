"""What every console route shares: who is looking (``Viewer``, the ``Viewing`` dependency), the
tenant a page's URL names (``PageTenant``: checked through ``gateway.access.check`` and known to
the memory), the forms' CSRF check, and rendering a template.

A scoped key that names another tenant gets 404, as if the tenant did not exist: the console
never tells a key which other tenants there are.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from memstrata.errors import AccessError, InputError, NotFoundError
from memstrata.gateway.access import ADMIN, KeyRing, Principal, check
from memstrata.gateway.console import views
from memstrata.gateway.console.cache import TenantCache
from memstrata.gateway.console.render import templates
from memstrata.gateway.console.session import COOKIE, Session, Sessions
from memstrata.gateway.context import RecentStatus
from memstrata.models import DEFAULT, Status, Tenant
from memstrata.operations import MemoryApi
from memstrata.operations import arguments as args
from memstrata.settings import Settings


class LoginNeeded(Exception):  # a redirect, not an error
    """The request has no live session on a server with keys: go to the login form."""

    def __init__(self, next_path: str) -> None:
        super().__init__(next_path)
        self.next_path = next_path


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who a console request acts for, and the session to sign its forms with. ``cookie`` is set
    when the session is new (an open server gives each browser one, for its CSRF token)."""

    principal: Principal
    session: Session
    csrf: str
    open_server: bool
    cookie: str | None = None


def parent(request: Request) -> Any:
    """The gateway application the console is mounted in (it owns the memory and the keys)."""
    return request.app.state.gateway


def settings(request: Request) -> Settings:
    """The settings the server and its memory were opened with."""
    found: Settings = parent(request).state.settings
    return found


def memory(request: Request) -> MemoryApi:
    """The memory the API uses: every console write goes through it."""
    mem: MemoryApi = parent(request).state.memory
    return mem


def kept(request: Request) -> TenantCache:
    """The console's short-lived cache of whole record lists (``cache``)."""
    found: TenantCache = request.app.state.kept
    return found


async def recent_status(request: Request) -> Status:
    """The memory's status as health probes share it (at most a couple of seconds old): the
    tenants list and the messages page need it on every view, and a full status is costly."""
    recent: RecentStatus = parent(request).state.recent_status
    return await recent.get(memory(request))


def sessions(request: Request) -> Sessions:
    found: Sessions = request.app.state.sessions
    return found


def keyring(request: Request) -> KeyRing:
    ring: KeyRing = parent(request).state.keyring
    return ring


async def viewer(request: Request) -> Viewer:
    """The viewer of a request (a FastAPI dependency); ``LoginNeeded`` when a key is required and
    the browser has no live session."""
    live = sessions(request)
    found = live.find(request.cookies.get(COOKIE))
    required = keyring(request).required
    if found is not None and (required or found.principal.admin):
        return Viewer(found.principal, found, live.csrf(found), not required)
    if required:
        target = request.url.path + (f"?{request.url.query}" if request.url.query else "")
        raise LoginNeeded(target)
    session, cookie = live.open(ADMIN)  # open server (loopback only): everyone is the admin
    return Viewer(ADMIN, session, live.csrf(session), True, cookie)


Viewing = Annotated[Viewer, Depends(viewer)]  # FastAPI resolves it once per request


def tenant(view: Viewer, user_id: str, agent_id: str | None) -> Tenant:
    """The tenant a page URL names, if this viewer may see it; otherwise ``NotFoundError``."""
    t = args.tenant(user_id, agent_id or DEFAULT)
    try:
        return check(view.principal, t)
    except AccessError:
        raise NotFoundError("tenant", user_id) from None


async def page_tenant(request: Request, view: Viewing, user_id: str, agent: str | None = None) -> Tenant:
    """The tenant of a page under ``/t/{user_id}`` (the agent is the ``agent`` query parameter;
    absent: the default agent): one this viewer may reach (``tenant``) and this memory holds,
    else ``NotFoundError`` (a 404 page) before the route reads or writes anything."""
    t = tenant(view, user_id, agent)
    await views.known(memory(request), t)
    return t


PageTenant = Annotated[Tenant, Depends(page_tenant)]


async def form(request: Request, view: Viewer) -> dict[str, str]:
    """The posted form's text fields, after its CSRF token is checked (``AccessError`` when it is
    missing or wrong: nothing is written)."""
    data = await request.form()
    fields = {k: v for k, v in data.items() if isinstance(v, str)}
    if not sessions(request).csrf_ok(view.session, fields.get("csrf")):
        raise AccessError("this form has no valid CSRF token: reload the page and send it again")
    return fields


def field(fields: dict[str, str], name: str, *, required: bool = True) -> str:
    value = fields.get(name, "").strip()
    if required and not value:
        raise InputError(f"{name} is required", item=name)
    return value


def page(request: Request, view: Viewer, template: str, *, code: int = 200, **context: Any) -> Response:
    """Render ``template`` for this viewer (the CSRF token and principal are in every page)."""
    body = templates().get_template(template).render(request=request, view=view, **context)
    response = HTMLResponse(body, status_code=code)
    return remember(response, request, view)


def remember(response: Response, request: Request, view: Viewer) -> Response:
    """Set the session cookie on ``response`` when the session is new."""
    if view.cookie is not None:
        set_cookie(response, request, view.cookie)
    return response


def set_cookie(response: Response, request: Request, value: str) -> None:
    response.set_cookie(
        COOKIE,
        value,
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/ui",
    )


def redirect(request: Request, view: Viewer, to: str) -> Response:
    """After a write: see the result (303, so a reload does not post again); what the console
    kept may be out of date now."""
    kept(request).clear()
    return remember(RedirectResponse(to, status_code=303), request, view)
