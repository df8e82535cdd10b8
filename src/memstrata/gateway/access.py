"""Who a request acts for: the principal its key stands for, and what that principal may reach.

Every edge that serves people or agents (native routes, TDAM routes, MCP tools, the LLM proxy,
the web console) asks here, through ``principal_of`` and ``gateway.context.tenant``, so one rule
decides tenancy everywhere:

    admin          the configured ``MEMSTRATA_API_KEY``, or an open server on loopback (no key
                   configured): every tenant, and the cross-tenant routes
    scoped         a key bound to one tenant or a set of tenants: only those; a request that
                   names another tenant is refused (403), never served another tenant's data and
                   never silently its own

``BearerAuth`` (``gateway.middleware``) asks the server's ``KeyRing`` which principal a token
stands for and attaches it to the ASGI scope; a scope without one (a route mounted outside the
middleware, a test calling the app directly) counts as admin, which is what the server without
a key already was. Edges that read their key elsewhere (the proxy's ``x-api-key``, the
console's session cookie) ask the same ``KeyRing`` (``app.state.keyring``).
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass
from typing import Any, Protocol

from memstrata.errors import AccessError
from memstrata.models import Tenant
from memstrata.operations import MemoryApi

STATE_KEY = "memstrata_principal"


@dataclass(frozen=True, slots=True)
class Principal:
    """What one key may reach. ``tenants`` holds ``(user_id, agent_id)`` pairs; an ``agent_id``
    of ``None`` reaches every agent of that user. ``label`` names the key in logs and listings
    (never the key itself); ``key_id`` is the stored key's public id (``admin`` for the admin
    key), what sessions (console, MCP) are owned by."""

    label: str
    admin: bool = False
    tenants: tuple[tuple[str, str | None], ...] = ()
    key_id: str | None = None

    @property
    def identity(self) -> str:
        """Who owns a session: the key's id, else (a key ring without ids) all it is."""
        if self.key_id is not None:
            return self.key_id
        return f"{'admin' if self.admin else 'scoped'}:{self.label}:{self.tenants!r}"

    @property
    def authenticated(self) -> bool:
        """Whether a key (or an open server) stands behind this principal."""
        return self.admin or bool(self.tenants)

    def may_reach(self, tenant: Tenant) -> bool:
        if self.admin:
            return True
        return any(
            user == tenant.user_id and (agent is None or agent == tenant.agent_id)
            for user, agent in self.tenants
        )

    @property
    def home(self) -> tuple[str, str | None] | None:
        """The tenant a request that names none acts on: a key's only tenant, else none."""
        if self.admin or len(self.tenants) != 1:
            return None
        return self.tenants[0]


ADMIN = Principal("admin", admin=True, key_id="admin")
NOBODY = Principal("anonymous")  # a request not yet authenticated: reaches no tenant


class KeyRing(Protocol):
    """Which principal a presented token stands for (``None``: no key of this server)."""

    @property
    def required(self) -> bool:
        """Whether requests need a key at all (``False``: an open server on loopback)."""

    async def principal_for(self, token: str) -> Principal | None: ...


class AdminKey:
    """The key ring of a server with at most one key, the admin's (``MEMSTRATA_API_KEY``);
    compared in constant time."""

    def __init__(self, key: str | None) -> None:
        self._key = key.encode() if key else None

    @property
    def required(self) -> bool:
        return self._key is not None

    async def principal_for(self, token: str) -> Principal | None:
        if self._key is None:
            return ADMIN
        return ADMIN if hmac.compare_digest(token.encode(), self._key) else None


class StoreKeys:
    """The key ring of a server: the admin key (``MEMSTRATA_API_KEY``, compared in constant time)
    and the scoped keys in the store of ``memory()`` (``AsyncMemory.verify_key``: a digest lookup
    per request, no cache, so a key revoked through any replica fails on the next request here).

    Keys are required when an admin key is configured; without one the server is open on
    loopback and every request is the admin's (scoped keys then restrict nothing)."""

    def __init__(self, admin_key: str | None, memory: Callable[[], MemoryApi]) -> None:
        self._admin = AdminKey(admin_key)
        self._memory = memory

    @property
    def required(self) -> bool:
        return self._admin.required

    async def principal_for(self, token: str) -> Principal | None:
        if not self.required or await self._admin.principal_for(token) is not None:
            return ADMIN
        found = await self._memory().verify_key(token)
        if found is None:
            return None
        return Principal(found.label, tenants=tuple(found.tenants), key_id=found.id)


def attach(scope: MutableMapping[str, Any], principal: Principal) -> None:
    """Record ``principal`` in the ASGI scope (Starlette's ``request.state`` reads it there)."""
    scope.setdefault("state", {})[STATE_KEY] = principal


def principal_of(scope: MutableMapping[str, Any]) -> Principal:
    """The principal ``BearerAuth`` attached to ``scope`` (``request.scope`` for a route)."""
    found = scope.get("state", {}).get(STATE_KEY)
    return found if isinstance(found, Principal) else ADMIN


def check(principal: Principal, tenant: Tenant) -> Tenant:
    """``tenant`` when ``principal`` may reach it, else ``AccessError`` (403)."""
    if not principal.may_reach(tenant):
        raise AccessError(f"this key ({principal.label}) cannot reach tenant {tenant.user_id!r}")
    return tenant


Name = tuple[str, str]  # ("user" | "agent", the id a request names)


def check_names(principal: Principal, names: Iterable[Name]) -> None:
    """Every tenant a request names, wherever it names it (``context.names_in``: body, query,
    ``x-memstrata-*`` or ``x-tdai-*`` headers, even one its route does not read), must be one the
    key reaches: a user among its users, an agent among those it reaches; else ``AccessError``
    (403). So a request naming another tenant is refused, never served the key's own data."""
    if principal.admin:
        return
    for kind, value in names:
        if kind == "user":
            reached = any(user == value for user, _ in principal.tenants)
        else:
            reached = any(agent is None or agent == value for _, agent in principal.tenants)
        if not reached:
            what = "tenant" if kind == "user" else "agent"
            raise AccessError(f"this key ({principal.label}) cannot reach {what} {value!r}")


def check_user(principal: Principal, user_id: str, agent_id: str | None) -> None:
    """For an operation on every agent of a user (``agent_id`` None) or on one: the key must reach
    all of it (a key for one agent may not erase the user's other agents)."""
    if principal.admin:
        return
    if not any(u == user_id and a in (None, agent_id) for u, a in principal.tenants):
        raise AccessError(f"this key ({principal.label}) cannot reach user {user_id!r}")


def require_admin(principal: Principal, what: str) -> None:
    """Cross-tenant operations (listing tenants, status of all, ``all_tenants``) are admin-only."""
    if not principal.admin:
        raise AccessError(f"{what} needs the admin key")
