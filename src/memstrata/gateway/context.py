"""What a route needs besides its body: the memory the server owns, and the request's tenant."""

from __future__ import annotations

from typing import Annotated, Any, Protocol, cast

from fastapi import Depends, Request, Response
from pydantic import BaseModel, TypeAdapter

from memstrata import arguments as args
from memstrata.errors import InputError
from memstrata.models import DEFAULT, Tenant

USER_HEADER = "x-memstrata-user-id"
AGENT_HEADER = "x-memstrata-agent-id"
MAX_ID = 512


class _HasTenantFields(Protocol):
    user_id: str | None
    agent_id: str | None


async def memory(request: Request) -> Any:
    """The ``AsyncMemory`` (or, behind ``--url``-less tests, any object with its methods) the
    server's lifespan opened."""
    return request.app.state.memory


def _header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    if value is None:
        return None
    if not value.strip() or len(value) > MAX_ID:
        raise InputError(f"must be 1 to {MAX_ID} characters", item=name)
    return value


def tenant(request: Request, user_id: str | None = None, agent_id: str | None = None) -> Tenant:
    """The tenant: explicit values (body or query), else the ``x-memstrata-*`` headers, else
    ``default``."""
    return args.tenant(
        user_id or _header(request, USER_HEADER) or DEFAULT,
        agent_id or _header(request, AGENT_HEADER) or DEFAULT,
    )


def tenant_of(request: Request, body: object) -> Tenant:
    fields = cast(_HasTenantFields, body)
    return tenant(request, fields.user_id, fields.agent_id)


def who(t: Tenant) -> dict[str, str]:
    """The facade's tenant keywords."""
    return {"user_id": t.user_id, "agent_id": t.agent_id}


Mem = Annotated[Any, Depends(memory)]


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
