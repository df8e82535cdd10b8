"""Admin routes for scoped API keys: create, list, revoke, verify, each built from its
declaration (``routes.declared``). Every one needs the admin key."""

from __future__ import annotations

from fastapi import APIRouter

from memstrata import operations as ops
from memstrata.gateway.requests import CreateKeyIn, VerifyKeyIn
from memstrata.gateway.responses import IssuedKeyOut, KeyOut
from memstrata.gateway.routes.declared import body_route, query_route

router = APIRouter(prefix="/v1", tags=["keys"])
ADMIN = "managing keys"

body_route(
    router,
    ops.CreateKey,
    CreateKeyIn,
    IssuedKeyOut,
    "Create a key reaching the given tenants; the answer holds the key, shown this once.",
    admin=ADMIN,
)
query_route(router, ops.Keys, KeyOut, "Every key (revoked ones with their time), oldest first.", admin=ADMIN)
query_route(
    router,
    ops.RevokeKey,
    KeyOut,
    "Revoke a key: its next request fails, on every server of this store.",
    admin=ADMIN,
)
body_route(
    router, ops.VerifyKey, VerifyKeyIn, KeyOut, "The active key a token is, else ``null``.", admin=ADMIN
)
