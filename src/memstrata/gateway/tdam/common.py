"""TDAM's tenant fields, envelope and time format.

Tenants come from the body (``team_id``, ``agent_id``, ``user_id``, ``session_id``, ``task_id``)
or the ``x-tdai-{team,agent,user,session,task}-id`` headers. memstrata's tenant is (user, agent):
a TDAM team maps to the user (TDAM keys its profiles by ``team || user``); a ``team_id`` of
``default`` counts as no team, so ``user_id`` then isolates. When the body and the headers each
name a tenant and they differ, the request is refused (400), never resolved by precedence; a
scoped key must first reach every tenant the request names (team and user, body, headers and
query alike: 403), as on the native routes (``gateway.context.scope_tenant``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import Request
from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator

from memstrata.errors import InputError
from memstrata.gateway.access import check_names, principal_of
from memstrata.gateway.context import names_in, scope_tenant
from memstrata.gateway.middleware import request_id
from memstrata.gateway.requests import _check_text
from memstrata.models import DEFAULT, Tenant

IdText = Annotated[str, StringConstraints(max_length=512)]


class TdamBody(BaseModel):
    """A TDAM request body: unknown fields are ignored (as TDAM's zod objects strip them)."""

    model_config = ConfigDict(extra="ignore")
    team_id: IdText | None = None
    agent_id: IdText | None = None
    user_id: IdText | None = None
    task_id: IdText | None = None

    @model_validator(mode="after")
    def _unicode(self) -> TdamBody:
        for name in type(self).model_fields:
            _check_text(getattr(self, name), name)
        return self


def _pick(request: Request, value: str | None, name: str) -> str | None:
    if value:
        return value
    found = request.headers.get(f"x-tdai-{name}-id")
    if found is not None and len(found) > 512:
        raise InputError("must be at most 512 characters", item=f"x-tdai-{name}-id")
    return found or None


def _owner(team: str | None, user: str | None) -> str | None:
    return team if team and team != DEFAULT else user or None


def tenant(request: Request, body: TdamBody | None = None) -> Tenant:
    """memstrata's tenant for a TDAM request (see the module docstring)."""
    principal = principal_of(request.scope)
    sent = {n: _pick(request, None, n) for n in ("team", "user", "agent")}
    owners = {
        "body": _owner(body.team_id, body.user_id) if body else None,
        "headers": _owner(sent["team"], sent["user"]),
    }
    agents = {"body": body.agent_id or None if body else None, "headers": sent["agent"]}
    # A scoped key must reach every tenant the request names (its team and its user alike) before
    # anything else is said about them: 403, never 400, for a name it may not know of.
    named = (
        [("user", body.team_id if body.team_id != DEFAULT else None), ("user", body.user_id)] if body else []
    )
    named += [("agent", agents["body"])]
    also = [(kind, value) for kind, value in named if value]
    check_names(principal, [*names_in(request.scope), *also])
    for what, found in (("user", owners), ("agent", agents)):
        if found["body"] and found["headers"] and found["body"] != found["headers"]:
            raise InputError(
                f"the body and the x-tdai-* headers name different {what}s "
                f"({found['body']!r}, {found['headers']!r})",
                item=f"{what}_id",
            )
    owner = owners["body"] or owners["headers"]
    return scope_tenant(request.scope, owner, agents["body"] or agents["headers"], also)


def ids(request: Request, body: TdamBody | None = None) -> dict[str, str]:
    """The ``team_id``/``agent_id``/``user_id`` TDAM echoes in its answers."""
    out = {
        name: found
        for name in ("team", "agent", "user")
        if (found := _pick(request, getattr(body, f"{name}_id", None) if body else None, name))
    }
    return {f"{k}_id": v for k, v in out.items()}


def ok(data: Any = None) -> dict[str, Any]:
    """TDAM's success envelope; ``data`` is left out when None (as ``scenario/rm`` answers)."""
    body: dict[str, Any] = {"code": 0, "message": "ok", "request_id": request_id.get()}
    if data is not None:
        body["data"] = data
    return body


def iso(ms: int | None) -> str | None:
    """Epoch ms as TDAM's ISO 8601 (``2026-03-01T10:00:00.000Z``)."""
    if ms is None:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def millis(text: str | None, item: str) -> int | None:
    """An ISO 8601 time as epoch ms (UTC when it names no zone)."""
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return round(moment.timestamp() * 1000)
    except (ValueError, OverflowError):
        raise InputError(f"not an ISO 8601 time: {text!r}", item=item) from None
