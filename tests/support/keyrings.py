"""A key ring with an admin key and scoped keys, behind the gateway's ``KeyRing`` interface
(until store-backed scoped keys land, tests install this one on ``app.state.keyring``)."""

from __future__ import annotations

import hmac

from memstrata.gateway.access import ADMIN, Principal


class ScopedKeys:
    """``admin`` stands for the admin; each of ``scoped`` for a principal of its own."""

    def __init__(self, admin: str, scoped: dict[str, Principal]) -> None:
        self._admin = admin
        self._scoped = scoped

    @property
    def required(self) -> bool:
        return True

    async def principal_for(self, token: str) -> Principal | None:
        if hmac.compare_digest(token.encode(), self._admin.encode()):
            return ADMIN
        return next(
            (p for k, p in self._scoped.items() if hmac.compare_digest(token.encode(), k.encode())), None
        )
