"""What a route needs besides its body: the memory the server owns, and the request's tenant."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, MutableMapping
from typing import Annotated, Any, Protocol, cast
from urllib.parse import parse_qsl

from fastapi import Depends, Request, Response
from pydantic import BaseModel, TypeAdapter

from memstrata.errors import InputError
from memstrata.gateway.access import Name, check, check_names, principal_of
from memstrata.interchange.seed import parse_seed
from memstrata.models import DEFAULT, Status, Tenant
from memstrata.operations import MemoryApi, Who
from memstrata.operations import arguments as args

PROBE_SECONDS = 2.0  # health probes share one status for this long
USER_HEADER = "x-memstrata-user-id"
AGENT_HEADER = "x-memstrata-agent-id"
MAX_ID = 512


class _HasTenantFields(Protocol):
    user_id: str | None
    agent_id: str | None


def memory_of(request: Request) -> MemoryApi:
    """The memory the server's lifespan opened (an ``AsyncMemory``, or a client of another server)."""
    mem: MemoryApi = request.app.state.memory
    return mem


async def memory(request: Request) -> MemoryApi:
    """``memory_of`` as a route's dependency (``Mem``)."""
    return memory_of(request)


def _header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    if value is None:
        return None
    if not value.strip() or len(value) > MAX_ID:
        raise InputError(f"must be 1 to {MAX_ID} characters", item=name)
    return value


def tenant(request: Request, user_id: str | None = None, agent_id: str | None = None) -> Tenant:
    """The tenant: explicit values (body or query), else the ``x-memstrata-*`` headers, else the
    key's own tenant (a key scoped to one), else ``default``; refused (403) when the request's key
    may not reach it (``gateway.access``)."""
    return scope_tenant(
        request.scope,
        user_id or _header(request, USER_HEADER),
        agent_id or _header(request, AGENT_HEADER),
    )


def scope_tenant(
    scope: MutableMapping[str, Any],
    user_id: str | None,
    agent_id: str | None,
    also: Iterable[Name] = (),
) -> Tenant:
    """The tenant a request of ``scope`` names (``None``: the key's own, else ``default``),
    validated and checked against the request's key, after every other tenant the request names
    (``names_in``, and ``also``: what its body names besides) is checked too: the one rule of
    every surface. MCP tools resolve theirs here too."""
    principal = principal_of(scope)
    home_user, home_agent = principal.home or (None, None)
    for item, value in (("user_id", user_id), ("agent_id", agent_id)):
        if value is not None and len(value) > MAX_ID:  # as the routes' fields (the library takes more)
            raise InputError(f"must be 1 to {MAX_ID} characters, got {len(value)}", item=item)
    if not principal.admin:
        given = [("user", user_id), ("agent", agent_id)]
        check_names(principal, [*names_in(scope), *also, *((k, v) for k, v in given if v)])
    return check(principal, args.tenant(user_id or home_user or DEFAULT, agent_id or home_agent or DEFAULT))


# Where a request may name a tenant besides its body, and what each names (a TDAM team is the user;
# its ``default`` team names nobody, as in ``tdam.common``).
_QUERY_NAMES = {"user_id": "user", "team_id": "user", "agent_id": "agent"}
_HEADER_NAMES = {
    b"x-memstrata-user-id": ("user", False),
    b"x-memstrata-agent-id": ("agent", False),
    b"x-tdai-user-id": ("user", False),
    b"x-tdai-team-id": ("user", True),
    b"x-tdai-agent-id": ("agent", False),
}


def names_in(scope: MutableMapping[str, Any]) -> list[Name]:
    """Every tenant the request of ``scope`` names in its query string and headers, whether its
    route reads that place or not (``POST /v1/search?user_id=alice`` names alice)."""
    found: list[Name] = []
    query = bytes(scope.get("query_string", b""))
    if query:
        for key, value in parse_qsl(query.decode("latin-1")):
            kind = _QUERY_NAMES.get(key)
            if kind and value.strip() and not (key == "team_id" and value == DEFAULT):
                found.append((kind, value))
    for key, raw in scope.get("headers", ()):
        named = _HEADER_NAMES.get(bytes(key).lower())
        if named is not None:
            value = bytes(raw).decode("latin-1")
            if value.strip() and not (named[1] and value == DEFAULT):
                found.append((named[0], value))
    return found


def check_seed(request: Request, data: object) -> None:
    """Seed history may name its own tenants per session: a scoped key must reach each of them
    (sessions naming none go to the request's tenant, checked by ``tenant``)."""
    principal = principal_of(request.scope)
    if principal.admin:
        return
    for session in parse_seed(data):
        if session.tenant != Tenant():
            check(principal, session.tenant)


def tenant_of(request: Request, body: object) -> Tenant:
    fields = cast(_HasTenantFields, body)
    return tenant(request, fields.user_id, fields.agent_id)


def who(t: Tenant) -> Who:
    """The facade's tenant keywords."""
    return {"user_id": t.user_id, "agent_id": t.agent_id}


Mem = Annotated[MemoryApi, Depends(memory)]


class RecentStatus:
    """The memory's status as health probes see it: computed at most once per ``PROBE_SECONDS``
    and shared. A full status reads every tenant's profile files and counts the vector backlog
    (12 ms on the LoCoMo dev store, growing with it); a load balancer probing every second, or
    many at once, must not make the server do that each time. ``/v1/status`` stays exact."""

    def __init__(self, seconds: float = PROBE_SECONDS) -> None:
        self._seconds = seconds
        self._lock = asyncio.Lock()
        self._value: Status | None = None
        self._at = 0.0

    async def get(self, mem: MemoryApi) -> Status:
        async with self._lock:  # probes arriving together wait for one computation
            if self._value is None or time.monotonic() - self._at > self._seconds:
                self._value = await mem.status()
                self._at = time.monotonic()
            return self._value


async def probed_status(request: Request) -> Status:
    """The status shared by health probes (see ``RecentStatus``)."""
    recent: RecentStatus = request.app.state.recent_status
    return await recent.get(memory_of(request))


ProbedStatus = Annotated[Status, Depends(probed_status)]


def reply(model: type[BaseModel], value: Any) -> Response:
    """``value`` (a record, or already a model) as ``model`` JSON, serialized once (the route's
    ``response_model`` documents it; FastAPI does not validate a returned ``Response`` again)."""
    if value is None:
        return Response(b"null", media_type="application/json")
    return Response(model.model_validate(value).model_dump_json(), media_type="application/json")


def reply_list(model: type[BaseModel], values: Any) -> Response:
    adapter = _adapters.get(model) or _adapters.setdefault(model, TypeAdapter(list[model]))  # type: ignore[valid-type]
    return Response(adapter.dump_json(adapter.validate_python(list(values))), media_type="application/json")


_adapters: dict[type[BaseModel], TypeAdapter[Any]] = {}
