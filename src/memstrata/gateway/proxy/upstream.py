"""The upstream client: one pooled ``httpx.AsyncClient`` per server (keeping no cookies), and
which headers cross.

Requests go upstream with the client's headers except hop-by-hop ones, memstrata's own
(``x-memstrata-*``) and, in gateway mode, the client's key (replaced by the provider key).
Answers come back with the upstream's headers except hop-by-hop ones and the body's encoding
and length: httpx decodes a compressed body so the SSE tap can read it, and the body is sent
on as it was decoded.
"""

from __future__ import annotations

import re
import urllib.request
from collections.abc import Iterable, Mapping
from http.cookiejar import Cookie, CookieJar, DefaultCookiePolicy
from urllib.parse import unquote

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


class PathRefused(ValueError):
    """A forwarded path that could leave the upstream's base path (the message says why)."""


def forwarded_path(raw_path: bytes, prefix: str) -> str:
    """The part of a request's path (as sent, percent-encoded: ``scope["raw_path"]``) after the
    route's ``prefix``, decoded once, when it can only name something under the upstream's base
    path; else ``PathRefused``. Refused: dot segments (``..``, ``.``) however spelled (``%2e``),
    encoded slashes and backslashes (``%2f``, ``%5c``, which a server behind may decode into
    more segments), anything still percent-encoded after one decoding (``%252e``: a second
    decoding anywhere would make it a dot), backslashes, ``?``, ``#`` and control characters.
    Real provider paths need none of these (``v1/models``, ``v1/messages/count_tokens``)."""
    try:
        given = raw_path.decode("ascii")
    except UnicodeDecodeError as exc:
        raise PathRefused("the path is not ASCII (percent-encode it)") from exc
    rest = _after_prefix(given, prefix)
    if re.search(r"%(?:2f|5c)", rest, re.IGNORECASE):
        raise PathRefused("an encoded slash or backslash in the path")
    path = unquote(rest, errors="strict")
    if "%" in path:
        raise PathRefused("a percent-encoded character encoded twice in the path")
    if any(c in path for c in "\\?#") or any(ord(c) < 0x20 or ord(c) == 0x7F for c in path):
        raise PathRefused("a backslash, '?', '#' or control character in the path")
    if any(segment in (".", "..") for segment in path.split("/")):
        raise PathRefused("a '.' or '..' segment in the path")
    return path


def _after_prefix(given: str, prefix: str) -> str:
    # The route matched the decoded path, so the raw one starts with the prefix spelled some way:
    # compare decoded prefixes segment by segment (``/proxy/%6fpenai/v1/x`` names ``openai``).
    parts, want = given.split("/"), prefix.strip("/").split("/")
    head = parts[1 : 1 + len(want)]
    if [unquote(p) for p in head] != want:
        raise PathRefused("the path does not start with its route's prefix")
    return "/".join(parts[1 + len(want) :])


def url(base: str, path: str, query: str) -> httpx.URL:
    """``base`` + ``/path`` (+ ``?query``), checked to stay on ``base``'s server under its path
    (``forwarded_path`` already refused what could leave it: this is the last guard before the
    provider key goes out with the request)."""
    joined = f"{base.rstrip('/')}/{path.lstrip('/')}"
    target, root = httpx.URL(f"{joined}?{query}" if query else joined), httpx.URL(base)
    inside = root.raw_path.split(b"?")[0].rstrip(b"/") + b"/"
    same = (target.scheme, target.host, target.port) == (root.scheme, root.host, root.port)
    if not same or not target.raw_path.split(b"?")[0].startswith(inside):
        raise PathRefused("the path leaves the upstream's base path")
    return target
