"""MCP sessions owned by the key that opened them.

The MCP SDK keeps, per session id, the credential that created the session, and answers a request
for that session with any other credential exactly as for an unknown id (404 "Session not
found"): ending it (``DELETE``), opening its event stream (``GET``) and posting to it alike. It
reads the credential from the ASGI scope's ``user``; ``owned`` puts the request's principal there
(``BearerAuth`` attached it), so another key, another tenant's above all, can neither end a session
nor listen to it, and the refusal names nobody. On an open server (no key) every request is the
admin's: there is nobody to tell apart.
"""

from __future__ import annotations

from typing import Any

from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from starlette.routing import Route

from memstrata.gateway.access import principal_of
from memstrata.gateway.middleware import ASGIApp, Receive, Scope, Send

MCP_PATH = "/mcp"


class _Owned:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        principal = principal_of(scope)
        if principal.authenticated:
            token = AccessToken(token="-", client_id=principal.identity, scopes=[])
            scope["user"] = AuthenticatedUser(token)
        await self.app(scope, receive, send)


def owned(routes: list[Any]) -> list[Any]:
    """The MCP app's ``routes``, its endpoint at ``/mcp`` made to record each session's owner."""
    return [
        Route(route.path, endpoint=_Owned(route.endpoint), methods=route.methods)
        if isinstance(route, Route) and route.path == MCP_PATH
        else route
        for route in routes
    ]
