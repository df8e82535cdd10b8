"""Admin routes for scoped API keys: create, list, revoke, verify. Every one needs the admin key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, Request, Response
from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply, reply_list
from memstrata.gateway.records import Wire

router = APIRouter(prefix="/v1", tags=["keys"])
Id = Annotated[str, StringConstraints(min_length=1, max_length=512)]


class KeyIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tenants: Annotated[
        list[Annotated[list[Id | None], Field(min_length=2, max_length=2)]],
        Field(min_length=1, max_length=100, description="[user_id, agent_id or null (every agent)] pairs."),
    ]
    label: Annotated[str, StringConstraints(max_length=200)] = ""


class TokenIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    token: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class KeyOut(Wire):
    """A scoped key as stored (never the key itself). Times are epoch milliseconds."""

    id: str
    label: str
    tenants: list[list[str | None]] = Field(description="[user_id, agent_id or null] pairs.")
    created_at: int
    revoked_at: int | None = None


class IssuedKeyOut(Wire):
    """A new key: ``secret`` is the key, shown this once (only its digest is stored)."""

    key: KeyOut
    secret: str


def _admin(request: Request) -> None:
    require_admin(principal_of(request.scope), "managing keys")


@router.post("/keys", response_model=IssuedKeyOut)
async def create_key(mem: Mem, body: KeyIn, request: Request) -> Response:
    """Create a key reaching the given tenants; the answer holds the key, shown this once."""
    _admin(request)
    return reply(IssuedKeyOut, await mem.create_key(body.tenants, label=body.label))


@router.get("/keys", response_model=list[KeyOut])
async def list_keys(mem: Mem, request: Request) -> Response:
    """Every key (revoked ones with their time), oldest first."""
    _admin(request)
    return reply_list(KeyOut, await mem.keys())


@router.delete("/keys/{key_id}", response_model=KeyOut)
async def revoke_key(mem: Mem, key_id: Annotated[str, Path(max_length=64)], request: Request) -> Response:
    """Revoke a key: its next request fails, on every server of this store."""
    _admin(request)
    return reply(KeyOut, await mem.revoke_key(key_id))


@router.post("/keys/verify", response_model=KeyOut | None)
async def verify_key(mem: Mem, body: TokenIn, request: Request) -> Response:
    """The active key a token is, else ``null``."""
    _admin(request)
    return reply(KeyOut, await mem.verify_key(body.token))
