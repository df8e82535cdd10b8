"""A server's scoped API keys: create one for a tenant (or a few), list them, revoke one, and
find the key a presented token is. A key is ``msk_<id>_<secret>``; only its SHA-256 digest is
stored (the secret is 256 random bits, so a plain digest is as strong as a slow hash and costs
one lookup per request)."""

from __future__ import annotations

import asyncio
import hashlib
import secrets
from collections.abc import Sequence

from memstrata import operations as ops
from memstrata.errors import InputError, NotFoundError
from memstrata.facade.core import FacadeCore, operation
from memstrata.models import ApiKey, IssuedKey, Reach
from memstrata.operations import arguments as args

PREFIX = "msk_"
MAX_TENANTS = 100
MAX_LABEL = 200
MAX_ID = 512  # as the HTTP routes' tenant fields: a key reaches only what a request can name


def digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def reach(tenants: Sequence[Sequence[str | None]]) -> Reach:
    """``[(user, agent or None), ...]`` checked: one to ``MAX_TENANTS`` valid tenants."""
    if not tenants or len(tenants) > MAX_TENANTS:
        raise InputError(f"a key reaches 1 to {MAX_TENANTS} tenants", item="tenants")
    out: list[tuple[str, str | None]] = []
    for i, pair in enumerate(tenants):
        if isinstance(pair, str) or len(pair) != 2:
            raise InputError("each tenant is [user_id, agent_id or null]", item=f"tenants[{i}]")
        user, agent = pair
        if any(isinstance(v, str) and len(v) > MAX_ID for v in pair):
            raise InputError(f"a tenant id a key names is 1 to {MAX_ID} characters", item=f"tenants[{i}]")
        out.append(
            (
                args.name(user, f"tenants[{i}].user_id"),
                None if agent is None else args.name(agent, f"tenants[{i}].agent_id"),
            )
        )
    return tuple(dict.fromkeys(out))


class KeyMethods(FacadeCore):
    @operation(ops.CreateKey)
    async def create_key(self, op: ops.CreateKey) -> IssuedKey:
        self._writable("create a key")
        label = op.label
        if len(label) > MAX_LABEL or "\x00" in label:
            raise InputError(f"a label is at most {MAX_LABEL} characters, without NUL", item="label")
        key_id = secrets.token_hex(6)
        secret = f"{PREFIX}{key_id}_{secrets.token_urlsafe(32)}"
        key = ApiKey(key_id, label or f"key {key_id}", reach(op.tenants), self._clock.now_ms())
        await asyncio.to_thread(self._store.keys.add, key, digest(secret))
        return IssuedKey(key, secret)

    @operation(ops.Keys)
    async def keys(self, op: ops.Keys) -> list[ApiKey]:
        return await asyncio.to_thread(self._store.keys.list)

    @operation(ops.RevokeKey)
    async def revoke_key(self, op: ops.RevokeKey) -> ApiKey:
        self._writable("revoke a key")
        found = await asyncio.to_thread(self._store.keys.revoke, op.key_id, self._clock.now_ms())
        if found is None:
            raise NotFoundError("key", op.key_id)
        return found

    @operation(ops.VerifyKey)
    async def verify_key(self, op: ops.VerifyKey) -> ApiKey | None:
        token = op.token
        if not token.startswith(PREFIX) or len(token) > 200:
            return None
        found = await asyncio.to_thread(self._store.keys.find, digest(token))
        return found if found is not None and found.active else None
