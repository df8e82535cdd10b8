"""Who a proxied request acts for, in the two auth modes (docs/proxy.md).

- **Gateway mode** (the provider's key is configured: ``proxy.openai_api_key`` /
  ``proxy.anthropic_api_key``): the client's key is a memstrata key, read where its SDK puts a
  provider key (``Authorization: Bearer`` for OpenAI, ``x-api-key`` or ``Authorization`` for
  Anthropic). The server's ``KeyRing`` names its principal; the provider key goes upstream.
- **Pass-through mode** (no provider key configured): the client's provider key goes upstream
  unchanged. A server with keys wants its memstrata key in ``x-memstrata-key``; an open server
  (no key configured, so loopback only) acts for the admin.

The tenant is then what every edge resolves (``gateway.context.tenant``): the
``x-memstrata-user-id`` / ``-agent-id`` headers, else a scoped key's own tenant, checked against
the principal.
"""

from __future__ import annotations

from collections.abc import Mapping

from fastapi import Request
from pydantic import SecretStr

from memstrata.gateway.access import ADMIN, KeyRing, Principal

MEMSTRATA_KEY = "x-memstrata-key"


def provider_key(request: Request, family: str) -> str:
    """The key a provider SDK sent, for its family ("" when none)."""
    if family == "anthropic" and (given := request.headers.get("x-api-key")):
        return given.strip()
    scheme, _, token = (request.headers.get("authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


async def principal(request: Request, family: str, gateway_key: SecretStr | None) -> Principal | None:
    """The request's principal, or None when its key is missing or no key of this server."""
    ring: KeyRing = request.app.state.keyring
    if gateway_key is not None:
        token = provider_key(request, family)
    else:
        if not ring.required:
            return ADMIN
        token = (request.headers.get(MEMSTRATA_KEY) or "").strip()
    return await ring.principal_for(token) if token else None


def upstream_key(family: str, gateway_key: SecretStr | None) -> Mapping[str, str] | None:
    """The provider key's headers in gateway mode (None: pass the client's through)."""
    if gateway_key is None:
        return None
    key = gateway_key.get_secret_value()
    return {"x-api-key": key} if family == "anthropic" else {"authorization": f"Bearer {key}"}
