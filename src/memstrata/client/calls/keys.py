"""Scoped API keys over the admin routes (``/v1/keys``): they need the admin key."""

from __future__ import annotations

from collections.abc import Sequence
from urllib.parse import quote

from memstrata.client.calls.base import Call
from memstrata.client.decode import decode, record
from memstrata.models import ApiKey, IssuedKey


class KeysCalls:
    def create_key(self, tenants: Sequence[Sequence[str | None]], *, label: str = "") -> Call[IssuedKey]:
        body = {"tenants": [list(t) for t in tenants], "label": label}
        return Call("POST", "/v1/keys", lambda d: record(IssuedKey, d), body, idempotent=False)

    def keys(self) -> Call[list[ApiKey]]:
        return Call("GET", "/v1/keys", lambda d: list(decode(list[ApiKey], d)))

    def revoke_key(self, key_id: str) -> Call[ApiKey]:
        return Call("DELETE", f"/v1/keys/{quote(key_id, safe='')}", lambda d: record(ApiKey, d))

    def verify_key(self, token: str) -> Call[ApiKey | None]:
        return Call(
            "POST", "/v1/keys/verify", lambda d: None if d is None else record(ApiKey, d), {"token": token}
        )
