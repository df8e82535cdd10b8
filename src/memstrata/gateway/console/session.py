"""Console sessions: who a browser is, kept on the server, named by a signed cookie.

The login form takes a key and asks the server's ``KeyRing`` which principal it stands for; the
key itself is then dropped. The browser gets a random session id signed with a secret made when
the server starts (HMAC-SHA256), in an HttpOnly, SameSite=Strict cookie scoped to ``/ui``; the
principal stays here, in memory. So a stolen cookie names nothing outside this process, a
restart logs everyone out, and no key is ever in a cookie, a URL or the browser's storage.

Every form carries a CSRF token derived from the session id with the same secret: a page of
another site can make the browser post, but cannot read the token to post with.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass

from memstrata.gateway.access import Principal

COOKIE = "memstrata_console"
LIFETIME_S = 12 * 3600  # a session this old must log in again
MAX_SESSIONS = 10_000  # the oldest are dropped past this (a flood of logins cannot grow memory)


@dataclass(frozen=True, slots=True)
class Session:
    """A live session: its id (the cookie's unsigned part), who it acts for, since when."""

    id: str
    principal: Principal
    started: float


class Sessions:
    """The live sessions of one server, and the signatures of their cookies and CSRF tokens."""

    def __init__(self, secret: bytes | None = None, lifetime_s: float = LIFETIME_S) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self._lifetime = lifetime_s
        self._live: dict[str, Session] = {}

    def _sign(self, purpose: str, value: str) -> str:
        return hmac.new(self._secret, f"{purpose}:{value}".encode(), hashlib.sha256).hexdigest()

    def open(self, principal: Principal) -> tuple[Session, str]:
        """A new session for ``principal`` and the cookie value that names it."""
        while len(self._live) >= MAX_SESSIONS:
            self._live.pop(next(iter(self._live)))
        sid = secrets.token_urlsafe(24)
        session = Session(sid, principal, time.monotonic())
        self._live[sid] = session
        return session, f"{sid}.{self._sign('session', sid)}"

    def find(self, cookie: str | None) -> Session | None:
        """The live session a cookie names, or None (no cookie, bad signature, expired, closed)."""
        if not cookie:
            return None
        sid, _, signature = cookie.partition(".")
        if not hmac.compare_digest(signature, self._sign("session", sid)):
            return None
        found = self._live.get(sid)
        if found is None:
            return None
        if time.monotonic() - found.started > self._lifetime:
            self._live.pop(sid, None)
            return None
        return found

    def close(self, session: Session) -> None:
        self._live.pop(session.id, None)

    def csrf(self, session: Session) -> str:
        """The token every form of this session carries."""
        return self._sign("csrf", session.id)

    def csrf_ok(self, session: Session, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(str(token), self.csrf(session))
