"""Admin routes for scoped API keys: create, list, revoke, verify. Every one needs the admin key."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Depends, Path, Request, Response

from memstrata.gateway.access import principal_of, require_admin
from memstrata.gateway.context import Mem, reply, reply_list
from memstrata.gateway.records import IssuedKeyOut, KeyOut
from memstrata.gateway.requests import AdminBody, CreateKeyIn, VerifyKeyIn, parsed

router = APIRouter(prefix="/v1", tags=["keys"])


def _admin(request: Request) -> None:
    require_admin(principal_of(request.scope), "managing keys")


@router.post("/keys", response_model=IssuedKeyOut)
async def create_key(
    mem: Mem, body: Annotated[AdminBody, Depends(parsed(CreateKeyIn))], request: Request
) -> Response:
    """Create a key reaching the given tenants; the answer holds the key, shown this once."""
    _admin(request)
    return reply(IssuedKeyOut, await mem.create_key(**body.arguments()))


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
async def verify_key(
    mem: Mem, body: Annotated[AdminBody, Depends(parsed(VerifyKeyIn))], request: Request
) -> Response:
    """The active key a token is, else ``null``."""
    _admin(request)
    return reply(KeyOut, await mem.verify_key(**body.arguments()))
