"""Which connections the server keeps: room under ``server.max_connections`` stays for clients
with a key, however many connections others open without one.

1,000 idle connections without a key had filled the cap (every other request got 503; the
attacker reconnected each time the read timeout closed them). Now a connection is **pending**
until it has carried a complete, authenticated request (the principal ``BearerAuth``, the proxy
or the console attached to the request's scope is not ``NOBODY``), then **trusted**:

    within      a pending connection is closed ``server.authenticate_within_seconds`` after it
                opened (5): sending nothing, half a request, or only requests without a key
                (health probes, 401s) keeps nobody's connection open longer
    room        pending connections are at most ``max_connections - reserved_connections``: one
                more closes the oldest pending one, so ``reserved_connections`` (100) stay for
                trusted ones whatever the flood. A per-address cap would not do: behind a
                reverse proxy, or on loopback, every client shares one address
    vouched     a request still streaming its body when the time is up (a large first upload)
                keeps its connection when its headers carry a key of this server (``vouch``):
                ``x-memstrata-key``, ``Authorization: Bearer``, ``x-api-key`` or a console
                session cookie; the proxy and the console authenticate after reading the body

Trusted connections then live by uvicorn's rules and ``server.request_read_timeout_seconds``
(``serving``). The counts (``evicted``, ``expired``) are for tests and the log.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Protocol

from starlette.requests import cookie_parser

from memstrata.errors import TooManyFailuresError
from memstrata.gateway.access import STATE_KEY, KeyRing, Principal
from memstrata.gateway.console.session import COOKIE

log = logging.getLogger("memstrata.gateway")
Scope = MutableMapping[str, Any]
Vouch = Callable[[Scope], Awaitable[bool]]
KEY_HEADERS = (b"x-memstrata-key", b"authorization", b"x-api-key")


class Connection(Protocol):
    """What admission needs of a connection (an uvicorn HTTP protocol, ``serving``)."""

    def authenticated_now(self) -> bool: ...

    def trust(self) -> None: ...

    def close(self) -> None: ...


class Admission:
    """The pending connections of one server, oldest first (see the module docstring)."""

    def __init__(self, within_s: float, most_pending: int, vouch: Vouch | None = None) -> None:
        self.within_s = within_s
        self.most_pending = max(1, most_pending)
        self.vouch = vouch
        self._pending: dict[Connection, None] = {}  # insertion order: oldest first
        self.evicted = 0  # pending connections closed to make room for a newer one
        self.expired = 0  # pending connections closed at the end of their time

    def opened(self, conn: Connection) -> None:
        """A new connection: pending; the oldest pending ones go when there are too many (one
        whose request turned out authenticated meanwhile is trusted instead)."""
        self._pending[conn] = None
        while len(self._pending) > self.most_pending:
            oldest = next(iter(self._pending))
            if oldest.authenticated_now():
                oldest.trust()
                continue
            del self._pending[oldest]
            self.evicted += 1
            oldest.close()

    def pending(self, conn: Connection) -> bool:
        return conn in self._pending

    def trusted(self, conn: Connection) -> None:
        self._pending.pop(conn, None)

    def gone(self, conn: Connection) -> None:
        self._pending.pop(conn, None)

    def count(self) -> int:
        return len(self._pending)


def authenticated(scope: Scope | None) -> bool:
    """Whether the request of ``scope`` was found to carry a key (or the server is open). Not
    ``principal_of``: a request refused before any principal was attached (a 401) counts there as
    the admin's, here as nobody's."""
    found = scope.get("state", {}).get(STATE_KEY) if scope is not None else None
    return isinstance(found, Principal) and found.authenticated


def vouch_with(app: Any) -> Vouch:
    """``vouch`` over ``app``'s key ring and console sessions (read when a request comes)."""

    async def vouch(scope: Scope) -> bool:
        ring: KeyRing = app.state.keyring
        if not ring.required:
            return True
        headers = {bytes(k).lower(): bytes(v).decode("latin-1") for k, v in scope.get("headers", ())}
        for name in KEY_HEADERS:
            value = headers.get(name, "").strip()
            scheme, _, token = value.partition(" ")
            token = token.strip() if name == b"authorization" and scheme.lower() == "bearer" else value
            if name == b"authorization" and scheme.lower() != "bearer":
                continue
            try:
                if token and await ring.principal_for(token) is not None:
                    return True
            except TooManyFailuresError:
                return False
        sessions = getattr(app.state, "console_sessions", None)
        cookie = cookie_parser(headers.get(b"cookie", "")).get(COOKIE)
        return sessions is not None and sessions.find(cookie) is not None

    return vouch
