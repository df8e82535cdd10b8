"""Bad keys slowed per client, without locking the rightful owner out.

``Throttled`` wraps the server's ``KeyRing``, so every surface that asks it (``BearerAuth`` for
the API and MCP, the proxy's provider-style keys, the console's login form) is slowed alike. The
client is the peer address (``RequestIds`` records it per request in ``client_address``; behind
a reverse proxy uvicorn takes it from ``X-Forwarded-For`` when the proxy's address is in
``FORWARDED_ALLOW_IPS``: docs/deploy.md).

    free        the first ``free`` failures of a client (within ``window_s`` of its previous
                one) are answered at once: a mistyped key costs nothing
    slowed      past them, each failure makes that client wait before its next unknown key is
                checked: ``base_s``, doubled per further failure, at most ``most_s``; a key sent
                in the wait is not checked at all (``TooManyFailuresError``: 429 with
                ``Retry-After``), so the wait bounds how fast keys can be tried
    known keys  a key that worked here before (its HMAC, under a secret made at start) is checked
                at once whatever the client's failures: behind one shared address an attacker's
                flood never locks its owner out. A key never used since the server started waits
                its turn like any other, and is checked once the wait is over

Nothing is locked per key (an attacker could lock any key out that way), and the state is
bounded: ``clients`` addresses and ``known`` fingerprints, least recently used forgotten first.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from memstrata.errors import TooManyFailuresError
from memstrata.gateway.access import KeyRing, Principal
from memstrata.lru import Lru

client_address: contextvars.ContextVar[str] = contextvars.ContextVar("memstrata_client", default="-")


@dataclass(slots=True)
class _Record:
    failures: int = 0
    last: float = 0.0
    wait_until: float = 0.0
    checking: int = 0  # unknown keys of this client being checked now


class Throttled:
    """``ring`` with per-client slowing of failed keys (see the module docstring)."""

    def __init__(
        self,
        ring: KeyRing,
        *,
        free: int = 10,
        window_s: float = 60.0,
        base_s: float = 0.5,
        most_s: float = 8.0,
        clients: int = 10_000,
        known: int = 10_000,
        clock: Callable[[], float] = time.monotonic,  # seconds; a test steps its own
    ) -> None:
        self._ring = ring
        self._clock = clock
        self._free, self._window, self._base, self._most = free, window_s, base_s, most_s
        self._clients: Lru[_Record] = Lru(clients)
        self._known: Lru[bool] = Lru(known)
        self._secret = secrets.token_bytes(32)

    @property
    def required(self) -> bool:
        return self._ring.required

    async def principal_for(self, token: str) -> Principal | None:
        """The ring's answer; ``TooManyFailuresError`` when this client must wait first."""
        mark = hmac.new(self._secret, token.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        client = client_address.get()
        if mark in self._known:
            found = await self._ring.principal_for(token)
        else:
            record = self._wait_over(client)
            record.checking += 1
            try:
                found = await self._ring.principal_for(token)
            finally:
                record.checking -= 1
        if found is None:
            self._failed(client)
        else:
            self._known.put(mark, True)
        return found

    def _wait_over(self, client: str) -> _Record:
        """The client's record, when it may have an unknown key checked now: not in a wait, and
        (once slowed) not while another of its unknown keys is being checked, so concurrent
        requests do not multiply the rate."""
        record = self._record(client)
        left = record.wait_until - self._clock()
        slowed = record.failures >= self._free and record.checking > 0
        if left > 0 or slowed:
            wait = max(1, math.ceil(left))
            raise TooManyFailuresError(
                f"too many keys from this client were not keys of this server: try again in {wait} s",
                retry_after=wait,
            )
        return record

    def _record(self, client: str) -> _Record:
        return self._clients.update(client, lambda record: record or _Record())  # now most recently used

    def _failed(self, client: str) -> None:
        now = self._clock()
        record = self._record(client)
        if now - record.last > self._window:
            record.failures = 0
        record.failures += 1
        record.last = now
        excess = record.failures - self._free
        if excess > 0:
            record.wait_until = now + min(self._most, self._base * 2 ** min(excess - 1, 30))
