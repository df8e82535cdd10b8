"""The upstream client: one pooled ``httpx.AsyncClient`` per server (keeping no cookies), and
which headers cross.

Requests go upstream with the client's headers except hop-by-hop ones, memstrata's own
(``x-memstrata-*``) and, in gateway mode, the client's key (replaced by the provider key).
Answers come back with the upstream's headers except hop-by-hop ones and the body's encoding
and length: httpx decodes a compressed body so the SSE tap can read it, and the body is sent
on as it was decoded.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterable, Mapping
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy

import httpx

from memstrata.settings import ProxySettings

_HOP = frozenset(
    {
        "host",
        "connection",
        "keep-alive",
        "proxy-authorization",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "content-length",
        "accept-encoding",  # httpx asks for what it can decode
    }
)
_ANSWER_DROPPED = frozenset(
    {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
)
KEY_HEADERS = ("authorization", "x-api-key")


class _NoCookies(DefaultCookiePolicy):
    """Keeps no cookie: the client is shared by every proxied request, whoever makes it, so a
    cookie one answer sets (providers' edges set them) would go out with every later request.
    The answer's ``set-cookie`` reaches its own client, which sends it back itself if it likes."""

    def set_ok(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        return False


def client(settings: ProxySettings) -> httpx.AsyncClient:
    """The pooled client every proxied request shares (HTTP keep-alive to the upstream)."""
    timeout = httpx.Timeout(settings.read_timeout_seconds, connect=settings.connect_timeout_seconds)
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    return httpx.AsyncClient(
        timeout=timeout,
        limits=limits,
        follow_redirects=False,
        cookies=CookieJar(policy=_NoCookies()),
    )


def request_headers(
    given: Iterable[tuple[str, str]], replace_key: Mapping[str, str] | None
) -> list[tuple[str, str]]:
    """The client's headers as they go upstream. ``replace_key``: in gateway mode, the provider
    key's header(s), which replace whatever key the client sent."""
    drop = _HOP | (set(KEY_HEADERS) if replace_key is not None else set())
    kept = [(k, v) for k, v in given if k.lower() not in drop and not k.lower().startswith("x-memstrata-")]
    return kept + list((replace_key or {}).items())


def answer_headers(given: Iterable[tuple[str, str]]) -> list[tuple[bytes, bytes]]:
    """The upstream's answer headers as they go back to the client."""
    return [
        (k.lower().encode("latin-1"), v.encode("latin-1"))
        for k, v in given
        if k.lower() not in _ANSWER_DROPPED
    ]


def url(base: str, path: str, query: str) -> str:
    """``base`` + ``/path`` (+ ``?query``)."""
    joined = f"{base.rstrip('/')}/{path.lstrip('/')}"
    return f"{joined}?{query}" if query else joined
