"""Console sessions: who a browser is, kept on the server, named by a signed cookie.

The login form takes a key and asks the server's ``KeyRing`` which principal it stands for; the
key itself is then dropped. The browser gets a random session id signed with a secret made when
the server starts (HMAC-SHA256), in an HttpOnly, SameSite=Strict cookie scoped to ``/ui``; the
principal stays here, in memory. So a stolen cookie names nothing outside this process, a
restart logs everyone out, and no key is ever in a cookie, a URL or the browser's storage.

Every form carries a CSRF token derived from the session id with the same secret: a page of
another site can make the browser post, but cannot read the token to post with.

Each key holds at most ``PER_KEY`` sessions: its next login ends its own oldest. So a flood of
logins with one key (10,050 in 55 s with a scoped key had emptied the whole table, the admin's
sessions with it) only ever logs out that key's own browsers. Past ``MAX_SESSIONS`` in all, the
key holding the most loses its oldest. A cookie or token that is not ASCII names no session.
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
MAX_SESSIONS = 10_000  # in all (a flood of logins cannot grow memory)
PER_KEY = 32  # sessions one key may hold: its own oldest goes first


@dataclass(frozen=True, slots=True)
class Session:
    """A live session: its id (the cookie's unsigned part), who it acts for, since when."""

    id: str
    principal: Principal
    started: float


class Sessions:
    """The live sessions of one server, and the signatures of their cookies and CSRF tokens."""

    def __init__(
        self,
        secret: bytes | None = None,
        lifetime_s: float = LIFETIME_S,
        *,
        per_key: int = PER_KEY,
        most: int = MAX_SESSIONS,
    ) -> None:
        self._secret = secret or secrets.token_bytes(32)
        self._lifetime = lifetime_s
        self.per_key = per_key
        self._most = most
        self._live: dict[str, Session] = {}
        self._by_key: dict[str, dict[str, None]] = {}  # key identity -> its session ids, oldest first

    def _sign(self, purpose: str, value: str) -> str:
        return hmac.new(self._secret, f"{purpose}:{value}".encode(), hashlib.sha256).hexdigest()

    def open(self, principal: Principal) -> tuple[Session, str]:
        """A new session for ``principal`` and the cookie value that names it."""
        own = self._by_key.setdefault(principal.identity, {})
        while len(own) >= self.per_key:
            self._drop(next(iter(own)))
        while len(self._live) >= self._most:
            busiest = max(self._by_key.values(), key=len)
            self._drop(next(iter(busiest)))
        sid = secrets.token_urlsafe(24)
        session = Session(sid, principal, time.monotonic())
        self._live[sid] = session
        self._by_key.setdefault(principal.identity, {})[sid] = None
        return session, f"{sid}.{self._sign('session', sid)}"

    def count(self, principal: Principal) -> int:
        """How many live sessions ``principal``'s key holds."""
        return len(self._by_key.get(principal.identity, ()))

    def _drop(self, sid: str) -> None:
        session = self._live.pop(sid, None)
        if session is None:
            return
        own = self._by_key.get(session.principal.identity)
        if own is not None:
            own.pop(sid, None)
            if not own:
                del self._by_key[session.principal.identity]

    def find(self, cookie: str | None) -> Session | None:
        """The live session a cookie names, or None (no cookie, bad signature, expired, closed)."""
        if not cookie:
            return None
        if not cookie.isascii():  # no cookie this server made (and compare_digest refuses it)
            return None
        sid, _, signature = cookie.partition(".")
        if not hmac.compare_digest(signature, self._sign("session", sid)):
            return None
        found = self._live.get(sid)
        if found is None:
            return None
        if time.monotonic() - found.started > self._lifetime:
            self._drop(sid)
            return None
        return found

    def close(self, session: Session) -> None:
        self._drop(session.id)

    def csrf(self, session: Session) -> str:
        """The token every form of this session carries."""
        return self._sign("csrf", session.id)

    def csrf_ok(self, session: Session, token: str | None) -> bool:
        text = str(token or "")
        return bool(text) and text.isascii() and hmac.compare_digest(text, self.csrf(session))
