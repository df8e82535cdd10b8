"""The body limit of the proxy's paths: agents resend whole transcripts (with images and tool
output) every turn, so ``/proxy/`` requests get ``proxy.max_body_bytes`` instead of the native
API's ``server.max_body_bytes``."""

from __future__ import annotations

from memstrata.gateway.middleware import ASGIApp, BodyLimit, Receive, Scope, Send

PREFIX = "/proxy/"


class BodyLimits:
    """``BodyLimit`` with one limit for ``/proxy/`` paths and another for the rest."""

    def __init__(self, app: ASGIApp, limit: int, proxy_limit: int) -> None:
        self._rest = BodyLimit(app, limit)
        self._proxy = BodyLimit(app, proxy_limit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        chosen = self._proxy if str(scope.get("path", "")).startswith(PREFIX) else self._rest
        await chosen(scope, receive, send)
